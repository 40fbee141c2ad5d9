"""Answer matching for answerability views: exact rational equality and normalized string match.

Charts (papers.md; seed 000, §4): both sides are parsed to an exact :class:`fractions.Fraction` and compared
exactly, so "12.5" = "12.50" = "25/2" and "12.49" != "12.5". Thousands separators ("1,500") are accepted only
in well-formed groups of three; a trailing unit is accepted only when it is the axis unit of the view (or "%"
for a percent axis). Scenes and photos: rational equality when both sides are numbers, else normalized exact
string match (Unicode NFKC, case-folded, surrounding punctuation stripped, whitespace collapsed).
"""

from __future__ import annotations

import re
import unicodedata
from fractions import Fraction

from vqaudit.schema import Obligation

_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE](?P<exp>[+-]?\d+))?")
_RATIO = re.compile(r"[+-]?\d+/\d+")
_GROUPED = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
MAX_NUMBER_CHARS = 200
"""Longest number text parsed (after removing a unit); longer answers are not numbers. No chart or count answer
is this long, and it keeps ``int()`` below Python's 4300-digit limit."""
MAX_EXPONENT = 400
"""Largest decimal exponent magnitude parsed: ``1e400`` is a number, ``1e401`` (or ``1e100000000``, whose exact
value has 10^8 digits and would take hours to build) is not, so it is a wrong answer, never a hang. 400 is past
the float range (about 1.8e308) and far past any chart or count answer."""
_MINUS = str.maketrans({"\u2212": "-", "\u2013": "-", "\u2012": "-", "\ufe63": "-", "\uff0d": "-"})


def parse_number(text: str, unit: str | None = None) -> Fraction | None:
    """Parse an answer to an exact rational, or None if it is not a number.

    Args:
        text: the answer text, e.g. "12.5", "25/2", "1,500", "-3", "40 %", "2.5 births per woman".
        unit: the view's axis unit; when given, a trailing copy of it (case-insensitive) is removed first.

    Returns:
        The exact value (``Fraction``), or None. A zero denominator, a malformed grouping, a text over
        :data:`MAX_NUMBER_CHARS` characters or an exponent beyond :data:`MAX_EXPONENT` gives None. Time is linear
        in ``len(text)`` (the exact value is built only within those bounds).
    """
    s = unicodedata.normalize("NFKC", text).translate(_MINUS).strip().rstrip(".").strip()
    if unit:
        u = unit.strip().lower()
        if s.lower().endswith(u) and len(s) > len(u):
            s = s[: -len(u)].strip()
    if s.endswith("%") and unit == "%":
        s = s[:-1].strip()
    if _GROUPED.fullmatch(s):
        s = s.replace(",", "")
    if len(s) > MAX_NUMBER_CHARS:
        return None
    if _RATIO.fullmatch(s):
        num, den = s.split("/")
        return None if int(den) == 0 else Fraction(int(num), int(den))
    decimal = _DECIMAL.fullmatch(s)
    if decimal:
        exp = decimal["exp"]
        return None if exp is not None and abs(int(exp)) > MAX_EXPONENT else Fraction(s)
    return None


def normalize_text(text: str) -> str:
    """Normalize a text answer: NFKC, case-fold, strip surrounding punctuation and spaces, collapse spaces."""
    s = unicodedata.normalize("NFKC", text).casefold()
    s = " ".join(s.split())
    return s.strip(" .,;:!?\"'()[]{}")


def answer_matches(answer: str | None, obligation: Obligation) -> bool:
    """Whether ``answer`` matches any gold answer of a supported view.

    Args:
        answer: the parsed answer text (None when the model answered null).
        obligation: an ``answer`` obligation with gold answers and an answer type.

    Returns:
        False for a null answer or an ``abstain`` obligation. ``number``: exact rational equality (a non-number
        answer is wrong). ``text``/``choice``: rational equality when both sides are numbers, else normalized
        exact match.
    """
    if answer is None or obligation.kind != "answer":
        return False
    if obligation.answer_type == "number":
        got = parse_number(answer, obligation.unit)
        return got is not None and any(parse_number(g, obligation.unit) == got for g in obligation.gold)
    got_num = parse_number(answer)
    for gold in obligation.gold:
        gold_num = parse_number(gold)
        if got_num is not None and gold_num is not None:
            if got_num == gold_num:
                return True
        elif normalize_text(answer) == normalize_text(gold):
            return True
    return False
