"""Rule-based answer-contract buckets and the Table 8 subtypes (seed 002 §3.2, Table 1, Table 8, appendix A).

Buckets, tested in this priority order (papers.md; seed 002 §3.2 "applied in priority order using question form,
answer shape, and benchmark-native metadata"); the first rule that fires wins:

1. ``scalar`` (Table 1: numbers, dates, yes/no): the gold is a number (sign, ``$``, thousands separators,
   decimals, ``%``), a year or date, or yes/no;
2. ``readout`` (OCR spans, names, written text): the gold is one of the image's OCR tokens/spans (TextVQA
   metadata, appendix A), or InfographicVQA marks it ``single span`` / ``question span`` and it is not code
   shaped, or the question asks to read text or a name ("what is the name", "what does ... say", "what is
   written", "what brand", "who", "what word", "title");
3. ``identifier`` (codes, room IDs, alphanumeric strings), with the Table 8 subtypes, first match wins:
   ``hyphenated code`` (``C-5``, ``A-12B``), ``alnum code`` (letters and digits mixed, ``B12``),
   ``compact num+unit`` (``5kg``, ``12ml``, ``3.5in``), ``short upper`` (2-5 upper-case letters, ``USA``);
4. ``multi-span`` (lists, conjunctive answers), with the Table 8 subtypes: ``slash pair`` (``a/b``, a letter
   on each side, so the fraction or date ``3/25`` is none), ``conjunctive`` (``x and y``, ``x & y``, each side of
   at most :data:`MAX_SPAN_WORDS` words, so a title such as "Comparison of wage rates for male workers and
   cost of living" is none), ``list-2`` / ``list-3plus`` (Python list literals as in ChartQA's
   ``[Austria, Chile]``, comma or semicolon lists of short items, except answers whose commas punctuate one
   entity - a name suffix, a date, an address, see :func:`vqaudit.scoring.canonical.is_single_entity`);
   InfographicVQA ``multi-span`` metadata always qualifies;
5. ``other-open``: the remainder (§3.2: "a remainder rather than a fifth symmetric bucket").

The bucket is decided by the *representative gold*: the most frequent answer, compared case- and
space-insensitively (ties: first in file order), which for a single-reference benchmark is its one answer.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from vqaudit.scoring.canonical import is_single_entity
from vqaudit.scoring.columns import gc_paused, repeated_rows
from vqaudit.scoring.vqa_normalize import fast_vqaeval_process

BUCKETS: tuple[str, ...] = ("scalar", "readout", "identifier", "multi-span", "other-open")
SUBTYPES: dict[str, tuple[str, ...]] = {
    "identifier": ("hyphenated code", "alnum code", "compact num+unit", "short upper"),
    "multi-span": ("slash pair", "conjunctive", "list-2", "list-3plus"),
}

_NUMBER = re.compile(r"^[-+\u2212]?\$?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?\s*(?:%|percent)?$", re.IGNORECASE)
_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DATE = re.compile(
    rf"^(?:\d{{1,2}}[/.-]\d{{1,2}}[/.-]\d{{2,4}}|\d{{4}}-\d{{2}}-\d{{2}}|{_MONTHS}\s+\d{{1,2}},?\s+\d{{4}}"
    rf"|\d{{1,2}}\s+{_MONTHS},?\s+\d{{4}}|{_MONTHS},?\s+\d{{4}}|\d{{4}}\s*[-\u2013]\s*\d{{2,4}})$",
    re.IGNORECASE,
)
_YES_NO = frozenset({"yes", "no"})
MAX_SPAN_WORDS = 4
"""A comma/semicolon list counts as multi-span only when every item has at most this many words (else prose)."""
_READOUT_Q = re.compile(
    r"^\s*(?:what\s+is\s+(?:the\s+)?(?:\w+\s+)?name|what\s+(?:does|do)\b.*\b(?:say|read)|what\s+is\s+written|"
    r"what\s+(?:word|words|text|letters?|brand|company|title)|which\s+(?:brand|company)|who\b|whose\b|"
    r"what\s+is\s+the\s+(?:title|brand|heading)|name\s+the\b)",
    re.IGNORECASE,
)
_HYPHEN_CODE = re.compile(r"^[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+$")
_ALNUM_CODE = re.compile(r"^(?=[A-Za-z0-9]*[A-Za-z])(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{2,12}$")
_NUM_UNIT = re.compile(r"^\d+(?:\.\d+)?(?:[a-z]{1,3}|\"|')$", re.IGNORECASE)
_SHORT_UPPER = re.compile(r"^[A-Z]{2,5}$")
_LIST_LITERAL = re.compile(r"^\[(.+)\]$")
_CONJ = re.compile(r"\s(?:and|&)\s", re.IGNORECASE)
_SLASH = re.compile(r"^[^/\s]*[A-Za-z][^/\s]*/[^/\s]*[A-Za-z][^/\s]*$")  # a letter on each side: 3/25 is no pair
_DIGIT = re.compile(r"\d")
_COMMA = re.compile(r"\s*,\s*")
_ITEM_SPLIT = re.compile(r"\s*[,;]\s+|\s*;\s*")


_vqaeval = fast_vqaeval_process


@dataclass(frozen=True)
class Contract:
    """The contract of one item: bucket, Table 8 subtype (identifier / multi-span only) and the deciding rule."""

    bucket: str
    subtype: str | None
    rule: str


_SCALAR = Contract("scalar", None, "scalar:gold-shape")
_READOUT_OCR = Contract("readout", None, "readout:ocr-token")
_READOUT_TYPE = Contract("readout", None, "readout:answer-type")
_READOUT_QUESTION = Contract("readout", None, "readout:question")
_OTHER = Contract("other-open", None, "other-open:remainder")


def _light(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".")


def representative_gold(answers: Sequence[str]) -> str:
    """The most frequent answer, compared case- and space-insensitively without a trailing period.

    Ties go to the first in order; no answers give "". (A light normalization: the full vqaEval one would cost
    ten normalizer calls per item.)
    """
    if not answers:
        return ""
    n = len(answers)
    if 2 * answers.count(answers[0]) >= n:
        # The first answer holds at least half of them: its light form gathers at least as many as any other
        # (the others hold at most the rest) and comes first, so it wins ties too; and it is the first answer with
        # that form. (One answer; two answers, whatever they are.)
        return answers[0].strip()
    distinct = list(dict.fromkeys(answers))
    raw_counts = list(map(answers.count, distinct))
    top = max(raw_counts)
    if 2 * top > n:
        # A raw majority: its light form wins whatever merges (the others hold n - top < top answers), and the
        # answer kept is the first one in file order with that light form.
        i = raw_counts.index(top)
        if i == 0:
            return answers[0].strip()
        key = _light(distinct[i])
        return next((a for a in distinct[:i] if _light(a) == key), distinct[i]).strip()
    # Count the distinct raw strings first (annotators repeat each other), then merge them by their light form.
    # Dicts keep first-occurrence order, so ``max`` (first maximum wins) picks the first answer in file order.
    keys = [" ".join(a.lower().split()).rstrip(".") for a in distinct]  # _light, inline
    if len(set(keys)) == len(keys):
        # No two answers share a light form: the counts are the raw ones, and the first maximum wins.
        return distinct[raw_counts.index(top)].strip()
    counts: dict[str, int] = {}
    first: dict[str, str] = {}
    for a, key, count in zip(distinct, keys, raw_counts, strict=True):
        if key in counts:
            counts[key] += count
        else:
            counts[key] = count
            first[key] = a
    return first[max(counts, key=counts.__getitem__)].strip()


def is_scalar_answer(gold: str) -> bool:
    """True for a number, percentage, money amount, year/date or yes/no (the scalar bucket's gold shape)."""
    g = gold.strip().rstrip(".")
    if not g:
        return False
    if g.lower() in _YES_NO:
        return True
    # Every number and date shape holds a digit (``\d``; within a _NUMBER match it is the same as isdigit).
    return _DIGIT.search(g) is not None and (_NUMBER.match(g) is not None or _DATE.match(g) is not None)


def identifier_subtype(gold: str) -> str | None:
    """Table 8 identifier subtype of a gold string, or None when it is not identifier shaped."""
    g = gold.strip()
    if " " in g:
        return None
    if _HYPHEN_CODE.match(g) and any(c.isdigit() for c in g):
        return "hyphenated code"
    if _NUM_UNIT.match(g):
        return "compact num+unit"
    if _ALNUM_CODE.match(g):
        return "alnum code"
    if _SHORT_UPPER.match(g):
        return "short upper"
    return None


def multispan_subtype(gold: str, answer_type: str | None = None) -> str | None:
    """Table 8 multi-span subtype of a gold string, or None when it is not list shaped."""
    g = gold.strip()
    literal = _LIST_LITERAL.match(g)
    if literal:
        items = [p for p in _COMMA.split(literal.group(1)) if p.strip()]
        return "list-3plus" if len(items) >= 3 else "list-2"
    if "/" in g and " " not in g and _SLASH.match(g):
        return "slash pair"
    if _CONJ.search(g) and all(len(p.split()) <= MAX_SPAN_WORDS for p in _CONJ.split(g)):
        return "conjunctive"
    if ("," in g or ";" in g) and not is_single_entity(g):  # else _ITEM_SPLIT finds no separator: one item
        items = [p for p in _ITEM_SPLIT.split(g) if p.strip()]
        if len(items) >= 2 and not _NUMBER.match(g) and all(len(p.split()) <= MAX_SPAN_WORDS for p in items):
            return "list-3plus" if len(items) >= 3 else "list-2"
    if answer_type is not None and "multi-span" in answer_type:
        return "list-2"
    return None


@lru_cache(maxsize=1 << 14)
def _ocr_index(ocr_tokens: tuple[str, ...]) -> tuple[frozenset[str], str]:
    """The normalized OCR tokens of one image as a set, and joined with single spaces (padded with spaces)."""
    tokens = [_vqaeval(t) for t in ocr_tokens]
    return frozenset(tokens), f" {' '.join(tokens)} "


def _in_ocr(gold: str, ocr_tokens: Sequence[str]) -> bool:
    """True when the normalized gold is one normalized OCR token, or a run of consecutive tokens."""
    if not ocr_tokens:
        return False
    g = _vqaeval(gold)
    if not g:
        return False
    tokens, joined = _ocr_index(tuple(ocr_tokens))
    return g in tokens or f" {g} " in joined


@lru_cache(maxsize=1 << 16)
def _readout_question(question: str) -> bool:
    """The question asks to read text or a name (``_READOUT_Q``); memoized, as questions repeat across models."""
    return _READOUT_Q.match(question) is not None


def classify(
    question: str,
    answers: Sequence[str],
    *,
    answer_type: str | None = None,
    ocr_tokens: Sequence[str] = (),
) -> Contract:
    """Put one item in its contract bucket; memoized wrapper of :func:`classify_item` (same arguments)."""
    return _classify_cached(question, tuple(answers), answer_type, tuple(ocr_tokens))


@lru_cache(maxsize=1 << 18)
def _classify_cached(
    question: str, answers: tuple[str, ...], answer_type: str | None, ocr_tokens: tuple[str, ...]
) -> Contract:
    return _classify(question, answers, answer_type, ocr_tokens)


def classify_item(
    question: str,
    answers: Sequence[str],
    *,
    answer_type: str | None = None,
    ocr_tokens: Sequence[str] = (),
) -> Contract:
    """Put one item in its contract bucket (module docstring rules, in priority order).

    Args:
        question: the question text.
        answers: the gold answers (the representative one decides).
        answer_type: benchmark-native answer type (InfographicVQA ``answer_type``), if any.
        ocr_tokens: OCR tokens of the image (TextVQA), if any.

    Returns:
        The :class:`Contract`; ``rule`` names the rule that fired (e.g. ``"scalar:number"``).
    """
    return _classify(question, answers, answer_type, ocr_tokens)


def _classify(question: str, answers: Sequence[str], answer_type: str | None, ocr_tokens: Sequence[str]) -> Contract:
    gold = representative_gold(answers)  # stripped
    # Without a digit, the only scalar shape is yes/no and the only identifier shape is "short upper" (every
    # other rule of is_scalar_answer and identifier_subtype needs one).
    if _DIGIT.search(gold) is None:
        if gold.rstrip(".").lower() in _YES_NO:
            return _SCALAR
        ident = "short upper" if _SHORT_UPPER.match(gold) else None
    elif is_scalar_answer(gold):
        return _SCALAR
    else:
        ident = identifier_subtype(gold)
    info_span = answer_type is not None and ("single span" in answer_type or "question span" in answer_type)
    if ident is None and ocr_tokens and _in_ocr(gold, ocr_tokens):
        return _READOUT_OCR
    # The shape alone (no answer type), as the readout rules ask; every list shape needs one of these marks.
    shape = (
        multispan_subtype(gold)
        if "[" in gold or "/" in gold or "," in gold or ";" in gold or _CONJ.search(gold)
        else None
    )
    if info_span and ident is None and shape is None:
        return _READOUT_TYPE
    if shape is None and _readout_question(question):
        return _READOUT_QUESTION
    if ident is not None:
        return Contract("identifier", ident, "identifier:shape")
    multi = shape if shape is not None else multispan_subtype(gold, answer_type)
    if multi is not None:
        return Contract("multi-span", multi, "multi-span:shape")
    return _OTHER


def classify_many(
    questions: Sequence[str],
    answers: Sequence[Sequence[str]],
    answer_types: Sequence[str | None] | None = None,
    ocr_tokens: Sequence[Sequence[str]] | None = None,
) -> list[Contract]:
    """``classify(q, a, answer_type=t, ocr_tokens=o)`` of every row, in row order (equal contracts, no memo).

    The rules of :func:`classify_item` (module docstring, in priority order), with what depends on the
    representative gold alone (its scalar, identifier and list shapes) computed once per distinct gold, what
    depends on the question once per distinct question, and the normalized OCR index once per OCR token list;
    the rest runs inline, row by row. The representative gold takes the shortcut of
    :func:`representative_gold` inline (the first answer holding at least half of them). Rows made of the same
    objects as an earlier row (a resampled pool) are classified once; the cyclic garbage collector is paused
    meanwhile (:func:`vqaudit.scoring.columns.gc_paused`).

    Args:
        questions: the question of each row.
        answers: the gold answers of each row.
        answer_types: benchmark-native answer types (None: none for every row).
        ocr_tokens: OCR tokens per row (None: none for every row).

    Returns:
        One :class:`Contract` per row.

    Raises:
        ValueError: columns of different lengths.
    """
    n = len(questions)
    types: Sequence[str | None] = [None] * n if answer_types is None else answer_types
    ocrs: Sequence[Sequence[str]] = [()] * n if ocr_tokens is None else ocr_tokens
    if not len(answers) == len(types) == len(ocrs) == n:
        raise ValueError("questions, answers, answer types and OCR tokens must have one entry per row")
    with gc_paused():
        return _classify_rows(questions, answers, types, ocrs)


def _classify_rows(
    questions: Sequence[str],
    answers: Sequence[Sequence[str]],
    types: Sequence[str | None],
    ocrs: Sequence[Sequence[str]],
) -> list[Contract]:
    shared = repeated_rows(answers, questions, types, ocrs)
    if shared is not None:  # the same row objects again (a resampled pool): each is classified once
        firsts, where = shared
        found = _classify_rows(
            [questions[k] for k in firsts],
            [answers[k] for k in firsts],
            [types[k] for k in firsts],
            [ocrs[k] for k in firsts],
        )
        by_first = dict(zip(firsts, found, strict=True))
        return [by_first[k] for k in where]
    golds = [a[0].strip() if len(a) and 2 * a.count(a[0]) >= len(a) else representative_gold(a) for a in answers]
    shape_of = {g: _gold_shape(g) for g in set(golds)}
    readout_q = {q: _READOUT_Q.match(q) is not None for q in set(questions)}
    ocr_index: dict[int, tuple[frozenset[str], str]] = {}  # by id: the input columns keep every list alive
    normalized: dict[str, str] = {}
    out: list[Contract] = []
    append = out.append
    for gold, question, answer_type, ocr in zip(golds, questions, types, ocrs, strict=True):
        scalar, ident, shape = shape_of[gold]
        if scalar:
            append(_SCALAR)
            continue
        if ident is None and ocr:
            index = ocr_index.get(id(ocr))
            if index is None:
                index = ocr_index[id(ocr)] = _ocr_index(ocr if type(ocr) is tuple else tuple(ocr))
            g = normalized.get(gold)
            if g is None:
                g = normalized[gold] = _vqaeval(gold)
            if g and (g in index[0] or f" {g} " in index[1]):
                append(_READOUT_OCR)
                continue
        if (
            answer_type is not None
            and ident is None
            and shape is None
            and ("single span" in answer_type or "question span" in answer_type)
        ):
            append(_READOUT_TYPE)
        elif shape is None and readout_q[question]:
            append(_READOUT_QUESTION)
        elif ident is not None:
            append(Contract("identifier", ident, "identifier:shape"))
        else:
            multi = shape if shape is not None or answer_type is None else multispan_subtype(gold, answer_type)
            append(_OTHER if multi is None else Contract("multi-span", multi, "multi-span:shape"))
    return out


def _gold_shape(gold: str) -> tuple[bool, str | None, str | None]:
    """``(True, None, None)`` for a scalar gold, else False, its identifier subtype and its list shape.

    The first steps of :func:`_classify`, which depend on the (stripped) representative gold alone (the list
    shape is the one without answer type).
    """
    if _DIGIT.search(gold) is None:
        if gold.rstrip(".").lower() in _YES_NO:
            return True, None, None
        ident = "short upper" if _SHORT_UPPER.match(gold) else None
    elif is_scalar_answer(gold):
        return True, None, None
    else:
        ident = identifier_subtype(gold)
    shape = (
        multispan_subtype(gold)
        if "[" in gold or "/" in gold or "," in gold or ";" in gold or _CONJ.search(gold)
        else None
    )
    return False, ident, shape


def subtype_counts(contracts: Sequence[Contract]) -> dict[str, dict[str, int]]:
    """Counts of the Table 8 subtypes within identifier and multi-span (every subtype present)."""
    out: dict[str, dict[str, int]] = {}
    for parent, names in SUBTYPES.items():
        counts = Counter(c.subtype for c in contracts if c.bucket == parent)
        out[parent] = {n: counts.get(n, 0) for n in names}
    return out
