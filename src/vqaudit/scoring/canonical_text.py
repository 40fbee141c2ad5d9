"""The string steps of the canonical layer: dashes, trailing punctuation, wrappers, spans and normal forms.

Fault kinds 1-4 and 9 of :mod:`vqaudit.scoring.canonical` (whose docstring states the rules): Unicode dash
unification, trailing punctuation and enclosing quotes, answer wrappers, digit commas, list spans and the
single-entity test, and the two normal forms the matching compares (the vqaEval form without its destructive
steps, :func:`_vqaeval`, and the ANLS light form, :func:`_light`), with :func:`_forms`, which computes every
step's forms of one text once. :mod:`vqaudit.scoring.canonical` re-exports the public names.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache

from vqaudit.scoring.vqa_normalize import (
    ARTICLES,
    CONTRACTIONS,
    NUMBER_WORDS,
    PERIOD_STRIP_COUNT,
    PUNCTUATION,
    fast_vqaeval_process,
    process_digit_article,
)

_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"), "-")
_TRAIL = re.compile(r"^[\s\"'`*]+|(?<!\b[A-Za-z]\.)(?<!\b[A-Za-z])[\s\"'`*.,;:!?]+$|(?<=\b[A-Za-z]\.)[\s\"'`*,;:!?]+$")
_WRAPPER = re.compile(
    r"^(?:(?:the\s+)?(?:final\s+|correct\s+|short\s+)?(?:answer|result)\s*(?:is\s*:?|:)\s*"
    r"|(?:it|this|that)\s+(?:is|says|reads)\s*:?\s+|(?:it's|its)\s+)",
    re.IGNORECASE,
)
_SPAN_SPLIT = re.compile(r"\s*(?:,|;|/|&|\band\b)\s*")


def unify_dashes(text: str) -> str:
    """NFKC-normalize and map Unicode minus/dashes to ASCII ``-`` (fault kind 2); ASCII text is returned as is."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text).translate(_DASHES)


# Pieces of _TRAIL, which stays the definition: a leading run, and a trailing run (the two "$" alternatives).
_LEAD = re.compile(r"[\s\"'`*]+")
_TAIL = re.compile(r"(?<!\b[A-Za-z]\.)(?<!\b[A-Za-z])[\s\"'`*.,;:!?]+$|(?<=\b[A-Za-z]\.)[\s\"'`*,;:!?]+$")
_LEAD_CHARS = frozenset("\"'`*")
_TAIL_CHARS = frozenset("\"'`*.,;:!?")


def strip_trailing(text: str) -> str:
    r"""Remove trailing punctuation and enclosing quotes/backticks/asterisks (fault kind 3); keep brackets.

    Exactly ``_TRAIL.sub("", text)``, without running the lookbehinds at every position of a long answer: a
    trailing match can only start inside the final run of trailing characters, so the search starts there
    (``search(text, pos)`` keeps the real string start for ``\b`` and the lookbehinds).
    """
    end = len(text)
    j = end
    while j and (text[j - 1] in _TAIL_CHARS or text[j - 1].isspace()):
        j -= 1
    start = 0
    if text and (text[0] in _LEAD_CHARS or text[0].isspace()):
        lead = _LEAD.match(text)
        start = lead.end() if lead else 0
    if j == end:
        return text[start:] if start else text
    tail = _TAIL.search(text, max(start, j))
    return text[start : tail.start() if tail else end]


MAX_CLOSING_CHARS = 60
"""Longest answer taken from a closing "... so the answer is X" (characters); a longer tail is left alone."""
_CLOSING_LEAD = re.compile(
    r"(?:^|[.,;:!?]\s*|\b(?:so|thus|therefore|hence)\s*,?\s*)the\s+(?:final\s+)?$", re.IGNORECASE
)
_BOXED = re.compile(r"^\\boxed\{([^{}]*)\}$")


def _closing(t: str) -> str | None:
    low = t.lower()
    i = low.rfind("answer is")
    if i <= 0:
        return None
    if not _CLOSING_LEAD.search(low[max(0, i - 24) : i]):
        return None
    tail = strip_trailing(t[i + len("answer is") :].strip().lstrip(":").strip())
    if not tail or len(tail) > MAX_CLOSING_CHARS or re.search(r"[!?\n]|\.(?!\d)\s", tail):
        return None
    return tail


def strip_wrapper(text: str) -> str:
    r"""Remove an answer wrapper (fault kind 4); idempotent for plain answers.

    A leading wrapper ("The answer is", "The answer is:", "Answer:", "The result is", "It is", "It's") is
    removed (``_WRAPPER``, anchored); a closing "..., so the answer is X" / "... Thus the final answer is X."
    keeps X (one clause, at most :data:`MAX_CLOSING_CHARS` characters); ``\boxed{X}`` keeps X.
    """
    t = text.strip()
    m = _WRAPPER.match(t)
    if m:
        t = t[m.end() :]
    elif "answer is" in t.lower():
        closing = _closing(t)
        if closing is not None:
            t = closing
    boxed = _BOXED.match(t) if t.startswith("\\boxed{") else None
    return boxed.group(1).strip() if boxed else t


_DIGIT_RUN = re.compile(r"(?<![\d,])\d+(?:,\d+)+(?![\d,])")
_GROUPS_OF_THREE = re.compile(r"^\d{1,3}(?:,\d{3})+$")
_DIGIT_COMMA = re.compile(r"\d,\d")


def separate_digit_commas(text: str) -> str:
    """Read each comma between digits: a thousands separator in groups of three, else an item separator.

    ``1,234,567`` -> ``1234567``; ``0,1`` -> ``0, 1``; ``12,34`` -> ``12, 34``; text without a digit-comma-digit
    is returned unchanged. (vqaEval.py deletes every comma - and every other punctuation mark - as soon as one
    digit-comma-digit occurs, so "0,1" and "01" are equal there; the canonical layer keeps them apart.)
    """
    if "," not in text or not _DIGIT_COMMA.search(text):
        return text

    def _one(m: re.Match[str]) -> str:
        run = m.group(0)
        return run.replace(",", "") if _GROUPS_OF_THREE.match(run) else run.replace(",", ", ")

    return _DIGIT_RUN.sub(_one, text)


@lru_cache(maxsize=1 << 18)
def _vqaeval(text: str) -> str:
    """The vqaEval normalization without its destructive steps (module docstring).

    Never empty for a text with a visible character; digit commas are read by :func:`separate_digit_commas` first.
    """
    out = fast_vqaeval_process(separate_digit_commas(text))
    if out or not text.strip():
        return out
    return " ".join(text.lower().split())


@lru_cache(maxsize=1 << 18)
def _light(text: str) -> str:
    """The form the canonical ANLS compares: vqaEval's digit/article step without its punctuation step.

    Number words, articles, contractions, lower case, spaces folded; never empty for a visible text.
    """
    out = process_digit_article(text)
    return out if out or not text.strip() else " ".join(text.lower().split())


def _surfaces(text: str) -> tuple[str, str, str, str]:
    """The normalized forms of ``text`` after string steps 1..4 of FAULT_KINDS (cumulative, in order).

    The definition that :func:`_forms` computes faster (the tests compare the two on every fixture string).

    Step 1 is the vqaEval normalization of the raw text; step 2 adds dash unification, step 3 trailing
    punctuation, step 4 the answer wrapper (``strip_trailing(strip_wrapper(strip_trailing(...)))``). The vqaEval
    output is already single-spaced, so no further whitespace folding is needed. Equal inputs share one
    normalization.
    """
    t2 = unify_dashes(text)
    t3 = strip_trailing(t2)
    t4 = strip_trailing(strip_wrapper(t3))
    s1 = _vqaeval(text)
    s2 = s1 if t2 == text else _vqaeval(t2)
    s3 = s2 if t3 == t2 else _vqaeval(t3)
    s4 = s3 if t4 == t3 else _vqaeval(t4)
    return s1, s2, s3, s4


def _light_surfaces(text: str) -> tuple[str, str, str, str]:
    """The ANLS counterparts of :func:`_surfaces`: the same cumulative steps through :func:`_light`.

    No punctuation mark is dropped or merged, so two strings that differ in punctuation never become identical.
    """
    t2 = unify_dashes(text)
    t3 = strip_trailing(t2)
    t4 = strip_trailing(strip_wrapper(t3))
    return _light(text), _light(t2), _light(t3), _light(t4)


def split_spans(text: str) -> tuple[str, ...]:
    """Split a list-like answer into its spans (fault kind 9): list literal brackets, ``, ; / &`` and "and"."""
    t = text.strip()
    if t.startswith("[") and t.endswith("]"):
        t = t[1:-1]
    parts = [p.strip(" '\"") for p in _SPAN_SPLIT.split(t)]
    return tuple(p for p in parts if p)


_NAME_SUFFIX = re.compile(
    r",\s*(?:jr|sr|inc|ltd|llc|co|corp|plc|l\.?p|m\.?d|ph\.?\s?d|esq|ii|iii|iv)\.?\s*$", re.IGNORECASE
)
_CALENDAR = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|mon|tue|tues|wed|thu|thur|thurs|"
    r"fri|sat|sun)(?:[a-z]*)\.?(?=[\s,]|$)",
    re.IGNORECASE,
)
_STREET_OR_POSTCODE = re.compile(
    r"(?:^|,\s*)\d{1,6}\s+[A-Za-z]|\b\d{5}(?:-\d{4})?\b|\bp\.?\s?o\.?\s+box\b", re.IGNORECASE
)
_STATE_CODE_LAST = re.compile(r",\s*[A-Z]{2}\.?\s*$")


def is_single_entity(text: str) -> bool:
    """True when the commas of ``text`` punctuate one entity rather than separate list items.

    Four shapes, all from the DocVQA val golds (``tests/fixtures/shortanswer``): a name or company suffix after
    the last comma ("Walter F. Wrenn, Jr.", "Laman for Letters, INC.", "William J. Darby, M.D."); a date or
    weekday ("SATURDAY, JUNE 8, 1968", "Monday, May 10"); a street address or postal code ("Atlanta, Georgia
    30301", "1420 K Street, N.W."); a city with a two-letter state code ("Lexington, KY"). Such answers are not
    split into spans: reordering their parts does not give the same answer. ("Dayton, Ohio" still reads as a
    two-item list; telling a place from a list of places needs a gazetteer.)
    """
    if "," not in text:
        return False
    return bool(
        _NAME_SUFFIX.search(text)
        or _CALENDAR.search(text)
        or _STREET_OR_POSTCODE.search(text)
        or _STATE_CODE_LAST.search(text)
    )


def _sorted_spans(spans: tuple[str, ...], vqaeval: Callable[[str], str] | None = None) -> list[str]:
    return sorted(map(_vqaeval if vqaeval is None else vqaeval, spans))


_Forms = tuple[str, str, str, str]


def _forms(
    text: str, vqaeval: Callable[[str], str], light: Callable[[str], str] | None
) -> tuple[str, str, _Forms, _Forms | None]:
    """The steps of :func:`_surfaces` and :func:`_light_surfaces` computed once: ``(t2, t3, surfaces, light)``.

    ``t2`` is the dash-unified text, ``t3`` the text after trailing punctuation; ``vqaeval`` must be
    :func:`_vqaeval` and ``light`` :func:`_light` (or memos of them; None: no light forms). Equal step texts
    share one normalization, and two more normalizations are skipped where their result is known:

    - a step that only drops one final period (``t3 + "." == t2``, ``t3`` not ending in a space, at most
      :data:`~vqaudit.scoring.vqa_normalize.PERIOD_STRIP_COUNT` periods): vqaEval deletes that period anyway
      (it is followed by no digit, adds no punctuation condition and is within the script's period count), so
      the vqaEval form is unchanged unless it was empty (then the raw fallback, which ends in that period,
      differs);
    - a text without any vqaEval punctuation mark or period: its light form is its vqaEval form (the
      punctuation step is the identity there, and both fall back to the same raw form).
    """
    t2 = unify_dashes(text)
    t3 = strip_trailing(t2)
    t4 = strip_trailing(strip_wrapper(t3))
    s1 = vqaeval(text)
    s2 = s1 if t2 == text else vqaeval(t2)
    final_period = t3 and len(t2) == len(t3) + 1 and t2[-1] == "." and t2.startswith(t3) and not t3[-1].isspace()
    # s2 ending in "." is the raw fallback of an empty vqaEval form (which never ends in a period here: vqaEval
    # deletes the final one and keeps only periods followed by a digit).
    s3 = (
        s2
        if t3 == t2 or (final_period and s2 and s2[-1] != "." and t2.count(".") <= PERIOD_STRIP_COUNT)
        else vqaeval(t3)
    )
    s4 = s3 if t4 == t3 else vqaeval(t4)
    if light is None:
        return t2, t3, (s1, s2, s3, s4), None
    l1 = s1 if _PUNCT_OR_PERIOD.search(text) is None else light(text)
    l2 = l1 if t2 == text else s2 if _PUNCT_OR_PERIOD.search(t2) is None else light(t2)
    if t3 == t2:
        l3 = l2
    elif _PUNCT_OR_PERIOD.search(t3) is None:
        l3 = s3
    else:
        l3 = (_light_without_final_period(l2, t3) if final_period and t2.isascii() else None) or light(t3)
    l4 = l3 if t4 == t3 else s4 if _PUNCT_OR_PERIOD.search(t4) is None else light(t4)
    return t2, t3, (s1, s2, s3, s4), (l1, l2, l3, l4)


def _light_without_final_period(light_t2: str, t3: str) -> str | None:
    """:func:`_light` of ``t3`` from that of ``t3 + "."`` (ASCII, ``t3`` not ending in a space), or None.

    The digit/article step maps words one by one (vqaEval.py ``processDigitArticle``: number word, then article,
    then contraction), so the two forms differ only in the last word: ``w.`` (no table entry holds a period) in
    the one, the mapped ``w`` or nothing (an article) in the other. None when ``light_t2`` does not end in
    ``w.`` (then the caller normalizes ``t3`` itself).
    """
    last = t3.rsplit(None, 1)[-1].lower()
    tail = last + "."
    if not light_t2.endswith(tail):
        return None
    prefix = light_t2[: len(light_t2) - len(tail)]  # "" or the other words and one space
    if prefix and not prefix.endswith(" "):
        return None
    word = NUMBER_WORDS.get(last, last)
    out = prefix[:-1] if word in ARTICLES else prefix + CONTRACTIONS.get(word, word)
    return out if out else None  # an empty form falls back to the raw text (computed by the caller)


_PUNCT_OR_PERIOD = re.compile("[" + re.escape("".join(PUNCTUATION)) + ".]")
