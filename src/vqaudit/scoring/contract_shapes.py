"""Answer-shape rules of the contract buckets: the gold shapes alone, no question and no metadata (seed 002 §3.2).

The paper names what each named bucket holds (Table 1, §3.2's bullet list) and the Appendix C subtypes (Table 8);
this module turns those words into shape tests of one gold string:

- scalar (Table 1: "numbers, dates, yes/no"; §3.2: "numeric, boolean, or otherwise tightly closed answers"):
  :func:`is_scalar_answer` - a number (sign, ``$``, thousands separators in the Western or the Indian grouping,
  decimals, ``%``, enclosing parentheses, a scale word such as ``million``), a number word (§1: for "How many
  people?" the acceptable strings are "4", perhaps "four"), a year, a date with or without its year or weekday,
  or yes/no;
- identifier (Table 1: "codes, room IDs, alphanumeric strings"; §3.2: "code-like, uppercase, or short
  alphanumeric answers"): :func:`identifier_subtype`, the Table 8 subtypes;
- multi-span (Table 1: "lists, conjunctive answers, multi-span lookups"; §3.2: "composed answers that aggregate
  multiple spans or list items"): :func:`multispan_subtype`, the Table 8 subtypes.

Which of these wins, and what the question and the benchmark metadata add, is :mod:`vqaudit.scoring.contracts`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from vqaudit.scoring.canonical import is_single_entity

BUCKETS: tuple[str, ...] = ("scalar", "readout", "identifier", "multi-span", "other-open")
SUBTYPES: dict[str, tuple[str, ...]] = {
    "identifier": ("hyphenated code", "alnum code", "compact num+unit", "short upper"),
    "multi-span": ("slash pair", "conjunctive", "list-2", "list-3plus"),
}

# A number: Western thousands groups (1,234,567), the Indian grouping of Indian documents (1,08,35,696), or plain
# digits; a "$" may be followed by a space ("$ 7,265,516"); accounting parentheses "(69)" enclose it.
_DIGITS = r"(?:\d{1,3}(?:,\d{3})+|\d{1,2}(?:,\d{2})+,\d{3}|\d+)"
_NUMBER = re.compile(rf"^[-+\u2212]?\$?(?:{_DIGITS})?(?:\.\d+)?\s*(?:%|percent)?$", re.IGNORECASE)
_NUMBER_WORD = (
    r"(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen"
    r"|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand"
    r"|million|billion)"
)
_WIDE_NUMBER = re.compile(
    rf"^[-+\u2212]?\$?\s*{_DIGITS}(?:\.\d+)?(?:\s*(?:%|percent)|\s+(?:hundred|thousand|million|billion))?$",
    re.IGNORECASE,
)
_NUMBER_WORDS = re.compile(rf"^{_NUMBER_WORD}(?:[\s-]+{_NUMBER_WORD})*$", re.IGNORECASE)
# Month and weekday names, full or abbreviated (with an optional period); whole words only, so "market 5" or
# "octane 95" is no date.
_MONTHS = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_WEEKDAY = (
    r"(?:(?:mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?|thu(?:r(?:s(?:day)?)?)?|fri(?:day)?|sat(?:urday)?"
    r"|sun(?:day)?)\.?,?\s+)?"
)
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_DATE = re.compile(
    rf"^(?:\d{{1,2}}[/.-]\d{{1,2}}[/.-]\d{{2,4}}|\d{{4}}-\d{{2}}-\d{{2}}|\d{{4}}\s*[-\u2013]\s*\d{{2,4}}"
    rf"|{_WEEKDAY}{_MONTHS}\s+{_DAY},?(?:\s+\d{{2,4}})?|{_WEEKDAY}{_DAY}\s+(?:of\s+)?{_MONTHS},?(?:\s+\d{{2,4}})?"
    rf"|{_MONTHS},?\s+\d{{4}}|\d{{1,2}}[-/ ]{_MONTHS}[-/ ]\d{{2,4}}|{_MONTHS}-\d{{2,4}})$",
    re.IGNORECASE,
)
_YES_NO = frozenset({"yes", "no"})
MAX_SPAN_WORDS = 4
"""A comma/semicolon list counts as multi-span only when every item has at most this many words (else prose)."""
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
    """True for the scalar bucket's gold shape (module docstring): a number, number word, date or yes/no.

    Numbers: ``42``, ``-3.5``, ``$1,000``, ``$ 7,265,516``, ``45%``, ``24,26,435`` (Indian grouping), ``(69)``,
    ``18 million``; number words: ``four``, ``TEN``, ``twenty five``, ``one million``; dates: ``2014``,
    ``12/03/2019``, ``2019-03-12``, ``1990-91``, ``March 1968``, ``Jan 12, 2020``, ``12 Jan 2020``,
    ``February 24``, ``25th May, 2010``, ``SATURDAY, JUNE 8, 1968``, ``31-AUG-2014``. A trailing period and
    surrounding space are ignored. Times of day (``13:57``), ranges of dates and quantities with a unit
    (``2 years``, ``5kg``: Table 8 files ``5kg`` under identifier) are not scalar: the paper does not name them.
    """
    g = gold.strip().rstrip(".")
    if not g:
        return False
    if g.lower() in _YES_NO:
        return True
    if g[0] == "(" and g[-1] == ")":  # accounting parentheses around a number: "(69)", "(79.23%)"
        g = g[1:-1].strip()
    if _DIGIT.search(g) is None:  # digit-free: only number words (every number and date shape else has a digit)
        return g[:1].isalpha() and _NUMBER_WORDS.match(g) is not None
    return _NUMBER.match(g) is not None or _WIDE_NUMBER.match(g) is not None or _DATE.match(g) is not None


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
    """Table 8 multi-span subtype of a gold string, or None when it is not list shaped.

    ``answer_type``: the InfographicVQA answer type; ``multiple spans`` (the official label) or ``multi-span`` (the
    paper's name) in it makes any gold a ``list-2`` when its
    shape names no other subtype (Appendix A: the answer type "anchors" the compositional-multispan bucket).
    """
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
    if answer_type is not None and ("multiple spans" in answer_type or "multi-span" in answer_type):
        return "list-2"
    return None


def list_shape(gold: str) -> str | None:
    """:func:`multispan_subtype` without answer type, skipped (None) when the gold holds no list mark at all."""
    if "[" in gold or "/" in gold or "," in gold or ";" in gold or _CONJ.search(gold):
        return multispan_subtype(gold)
    return None
