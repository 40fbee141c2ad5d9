"""AAD, IASD and IVQD pairs from preprocessed items (seed 001, §4 "MM-UPD Bench" and appendix 0.B.2-0.B.4).

A :class:`UPDPair` is one item's standard question and its unsolvable counterpart. The paper's manual checks
are replaced by the rules below, which are deterministic and stated in full (also in ``docs/upd.md``).

**AAD** (0.B.2): remove the correct option. Drop items with two options (one would be left), items whose answer is
"all of these" / "both ..." (:func:`is_all_of_these`), and items where a remaining option is nearly the removed
one: the same words in any order once case, punctuation and the articles a/an/the are ignored
(:func:`same_words`). The paper's "Friends"/"Colleagues" ambiguity needs a human; this rule only catches
duplicates in wording (and keeps "Solution A" vs "Solution B").

**IASD** (0.B.3): pair each question with another item's option set, drawn uniformly from the *eligible*
donors (the first eligible donor of a permutation drawn with ``numpy.random.default_rng([seed, 2, index])``).
A donor is eligible (:func:`iasd_rejection` returns None) when (1) it comes from another answer domain (the
``answer_domain`` column, else the category); (2) none of its option texts equals, contains or is contained in
(normalised, at word boundaries) any option text of the item -- so an IASD pair never shares an option with the
original set; (3) none of its options is an "it cannot be judged/determined" or "neither" option, which could
answer any question; (4) for items with a closed answer vocabulary (easy-VQA colours and shapes) no donor option
mentions a word of that vocabulary.

**IVQD** (0.B.4): pair the question (and its options, minus "Can't judge ..." and "It cannot be determined"
options, which would be right for any mismatched image) with another item's image, drawn like IASD with
``[seed, 3, index]``. Excluded as fitting any image (:func:`ivqd_generic`): abilities without IVQD questions in
Table B, and questions matching :data:`GENERIC_QUESTION_PATTERNS` (counting, yes/no existence, captions,
mood/emotion, style, "what happens next", profession, code, ...). For easy-VQA items (with ``image_shape`` /
``image_color``) a question is specific only if it names a shape or a colour, and a donor image is eligible only
if it lacks that shape/colour (:func:`ivqd_rejection`); such questions take easy-VQA donors only. Other questions
take donors of another category with different image bytes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from vqaudit.suites.upd.abilities import NO_IVQD_ABILITIES
from vqaudit.suites.upd.easyvqa import COLORS, SHAPES
from vqaudit.suites.upd.preprocess import is_cant_judge, normalize
from vqaudit.suites.upd.tsv import MCItem

VARIANTS = ("aad", "iasd", "ivqd")
_VARIANT_CODE = {"aad": 1, "iasd": 2, "ivqd": 3}

GENERIC_QUESTION_PATTERNS: tuple[str, ...] = (
    r"\bhow many\b",
    r"^(is|are|does|do|can) (there|the image|this image|the picture)\b",
    r"\bcaptions?\b",
    r"\bmood\b",
    r"\bemotions?\b",
    r"\bfeel(s|ing)?\b",
    r"\bstyle\b",
    r"\bhappen next\b|\bwhat will happen\b|\bpredict\b",
    r"\bprofession\b|\boccupation\b|\bjob\b",
    r"\bcode\b",
    r"\bwant to express\b|\bassociated text\b|\bposted on\b",
    r"\bdescribes? (this|the) (image|picture)\b|\bwhat is (this|the) (image|picture) about\b",
)
"""Questions that fit (almost) any image (Table C and §4), excluded from IVQD."""

_UNDETERMINED = re.compile(r"\b(can'?t|cannot|can not) (be )?(judge|judged|determined|tell|told)\b")
_ANY_ANSWER = re.compile(_UNDETERMINED.pattern + r"|\bneither\b")
_ALL_OF_THESE = re.compile(
    r"^both\b|\ball of (these|the above|them|the options)\b|\ball (the )?(above|options) (are )?"
    r"(correct|right)\b"
)
_VOCAB = {"color": COLORS, "shape": SHAPES}


@dataclass(frozen=True)
class UPDPair:
    """One item's standard question and its unsolvable counterpart.

    Attributes:
        variant: ``aad``, ``iasd`` or ``ivqd``.
        item: the standard item (for IVQD without its "Can't judge ..." option).
        upd_options: option texts of the UPD question (2-5).
        upd_image: image bytes of the UPD question.
        removed_text: the correct option text the UPD question lacks (AAD, IASD); None for IVQD.
        donor_index: index of the item whose options (IASD) or image (IVQD) were borrowed; None for AAD.
    """

    variant: str
    item: MCItem
    upd_options: tuple[str, ...]
    upd_image: bytes
    removed_text: str | None
    donor_index: int | None


@lru_cache(maxsize=65536)
def _words(text: str) -> str:
    """The normalised words of ``text``, space-joined and space-padded (``" red shape "``).

    Word-boundary containment then is a plain substring test.
    """
    words = re.findall(r"\w+", normalize(text))
    return f" {' '.join(words)} " if words else ""


def _mentions(a: str, b: str) -> bool:
    wa, wb = _words(a), _words(b)
    return bool(wa and wb) and (wb in wa or wa in wb)


@lru_cache(maxsize=4096)
def _option_words(options: tuple[str, ...]) -> frozenset[str]:
    return frozenset(w for o in options for w in _words(o).split())


@lru_cache(maxsize=4096)
def _named(question: str, words: tuple[str, ...]) -> tuple[str, ...]:
    """The words of ``words`` that ``question`` names (whole words, normalised)."""
    q = _words(question)
    return tuple(w for w in words if f" {w} " in q)


@lru_cache(maxsize=65536)
def _answers_anything(text: str) -> bool:
    return _ANY_ANSWER.search(normalize(text)) is not None or is_cant_judge(text)


def _undetermined(text: str) -> bool:
    return is_cant_judge(text) or _UNDETERMINED.search(normalize(text)) is not None


def same_words(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` have the same words in any order, ignoring case, punctuation and a/an/the."""

    def bag(text: str) -> list[str]:
        return sorted(w for w in _words(text).split() if w not in ("a", "an", "the"))

    return bag(a) == bag(b)


def is_all_of_these(text: str) -> bool:
    """True for answers such as "both A, B, and C" or "All of these options are correct" (0.B.2)."""
    return _ALL_OF_THESE.search(normalize(text)) is not None


def build_aad(items: list[MCItem]) -> tuple[list[UPDPair], list[tuple[int, str]]]:
    """AAD pairs: the correct option removed (rules in the module docstring).

    Returns:
        The pairs (input order) and ``(index, reason)`` for every dropped item.
    """
    pairs: list[UPDPair] = []
    dropped: list[tuple[int, str]] = []
    for item in items:
        rest = tuple(o for k, o in enumerate(item.options) if k != item.answer)
        removed = item.answer_text
        if len(item.options) < 3:
            dropped.append((item.index, "AAD needs at least three options"))
        elif is_all_of_these(removed):
            dropped.append((item.index, "the answer is an 'all of these' / 'both' option"))
        elif any(same_words(o, removed) for o in rest):
            dropped.append((item.index, "a remaining option nearly equals the removed correct option"))
        else:
            pairs.append(UPDPair("aad", item, rest, item.image, removed, None))
    return pairs, dropped


def iasd_rejection(item: MCItem, donor: MCItem) -> str | None:
    """Why ``donor``'s option set may not replace ``item``'s in IASD, or None when it may (rules 1-4)."""
    if donor.index == item.index or donor.answer_domain == item.answer_domain:
        return "same answer domain"
    if _option_words(donor.options) & _option_words(item.options) and any(
        _mentions(d, o) for d in donor.options for o in item.options
    ):
        return "shares an option text"
    if any(_answers_anything(d) for d in donor.options):
        return "has an option that answers any question"
    vocab = _VOCAB.get(item.extra.get("answer_domain", ""), ())
    if any(f" {w} " in _words(d) for d in donor.options for w in vocab):
        return "mentions a word of the item's answer vocabulary"
    return None


def ivqd_generic(item: MCItem) -> str | None:
    """Why ``item``'s question fits any image (so IVQD excludes it), or None when it is specific."""
    if item.category in NO_IVQD_ABILITIES:
        return f"ability {item.category} has no IVQD questions (Table B)"
    q = normalize(item.question)
    if "image_shape" in item.extra:
        named = _named(item.question, (*SHAPES, *COLORS))
        return None if named else "names no shape or colour, so it fits any easy-VQA image"
    for pattern in GENERIC_QUESTION_PATTERNS:
        if re.search(pattern, q):
            return f"generic question (matches {pattern!r})"
    return None


def ivqd_rejection(item: MCItem, donor: MCItem) -> str | None:
    """Why ``donor``'s image may not replace ``item``'s in IVQD, or None when it may."""
    if donor.index == item.index or donor.image == item.image:
        return "same image"
    if "image_shape" in item.extra:
        if "image_shape" not in donor.extra:
            return "easy-VQA questions take easy-VQA images only"
        for key, words in (("image_shape", SHAPES), ("image_color", COLORS)):
            if donor.extra[key] in _named(item.question, words):
                return f"donor image has the {key.split('_')[1]} the question names"
        return None
    if donor.category == item.category:
        return "same category"
    return None


def _pick(
    item: MCItem, pool: list[MCItem], seed: int, variant: str, reject: Callable[[MCItem, MCItem], str | None]
) -> MCItem | None:
    """The first eligible donor in a seeded permutation of ``pool``: a uniform draw among the eligible ones."""
    rng = np.random.default_rng([seed, _VARIANT_CODE[variant], item.index])
    for k in rng.permutation(len(pool)):
        if reject(item, pool[int(k)]) is None:
            return pool[int(k)]
    return None


def build_iasd(items: list[MCItem], seed: int) -> tuple[list[UPDPair], list[tuple[int, str]]]:
    """IASD pairs: each question with an eligible donor's option set (module docstring, rules 1-4)."""
    pool = sorted(items, key=lambda i: i.index)
    pairs: list[UPDPair] = []
    dropped: list[tuple[int, str]] = []
    for item in items:
        donor = _pick(item, pool, seed, "iasd", iasd_rejection)
        if donor is None:
            dropped.append((item.index, "no eligible donor option set"))
            continue
        pairs.append(UPDPair("iasd", item, donor.options, item.image, item.answer_text, donor.index))
    return pairs, dropped


def build_ivqd(items: list[MCItem], seed: int) -> tuple[list[UPDPair], list[tuple[int, str]]]:
    """IVQD pairs: each specific question with an eligible donor's image; "Can't judge ..." options dropped."""
    pool = sorted(items, key=lambda i: i.index)
    pairs: list[UPDPair] = []
    dropped: list[tuple[int, str]] = []
    for item in items:
        why = ivqd_generic(item)
        if why is None and _undetermined(item.answer_text):
            why = "the answer is the 'Can't judge' option"
        keep = tuple(o for o in item.options if not _undetermined(o))
        if why is None and len(keep) < 2:
            why = "fewer than two options without 'Can't judge'"
        if why is not None:
            dropped.append((item.index, why))
            continue
        answer = keep.index(item.answer_text)
        base = replace(item, options=keep, answer=answer)
        donor = _pick(item, pool, seed, "ivqd", ivqd_rejection)
        if donor is None:
            dropped.append((item.index, "no eligible donor image"))
            continue
        pairs.append(UPDPair("ivqd", base, keep, donor.image, None, donor.index))
    return pairs, dropped


def build_pairs(variant: str, items: list[MCItem], seed: int) -> tuple[list[UPDPair], list[tuple[int, str]]]:
    """Dispatch to :func:`build_aad`, :func:`build_iasd` or :func:`build_ivqd`.

    Raises:
        ValueError: an unknown variant.
    """
    if variant == "aad":
        return build_aad(items)
    if variant == "iasd":
        return build_iasd(items, seed)
    if variant == "ivqd":
        return build_ivqd(items, seed)
    raise ValueError(f"unknown UPD variant {variant!r}; expected one of {', '.join(VARIANTS)}")
