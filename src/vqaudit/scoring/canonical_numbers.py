"""The numeric reading of the canonical layer (fault kinds 5-8).

Thousands separators, percent units, number formats, zero gold, exact years and identifiers. The rules are
stated in :mod:`vqaudit.scoring.canonical`, which re-exports the public names.
"""

from __future__ import annotations

import re
from functools import lru_cache

from vqaudit.scoring.canonical_text import _BOXED, unify_dashes

_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_NUMBER = re.compile(r"^(?P<sign>[-+])?\$?(?P<num>\d+(?:\.\d+)?|\.\d+)\s*(?P<pct>%|percent)?$")
_EXACT_ID = re.compile(r"^0\d+$")
_YEAR = re.compile(r"^[12]\d{3}$")
_DIGIT = re.compile(r"\d")


_HEDGE = re.compile(r"^(?:approximately|approx\.?|about|around|roughly|~|\u2248)\s*")
_SPELLED = re.compile(r"[a-z][a-z -]*")
_CURRENCY = re.compile(r"^([-+]?)\s*[$\u20ac\u00a3\u00a5]\s*")
_MAGNITUDE = re.compile(
    r"^(?P<num>[-+]?\d+(?:\.\d+)?|[-+]?\d{1,3}(?:,\d{3})+)\s*"
    r"(?P<word>thousand|million|billion|trillion)$"
)
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_FRACTION = re.compile(r"^(?P<sign>[-+]?)(?P<a>\d+)\s*/\s*(?P<b>\d+)$")


def _number_format(t: str) -> tuple[str, tuple[float, bool, str] | None]:
    """Undo the number formats of fault kind 6b: the plain text, and the number itself for a magnitude/fraction."""
    if t.startswith("\\boxed{"):
        boxed = _BOXED.match(t)
        t = boxed.group(1).strip() if boxed else t
    t = _HEDGE.sub("", t)
    if t.endswith(")") and (i := t.rfind("(")) > 0 and _SPELLED.fullmatch(t[i + 1 : -1]):
        t = t[:i].rstrip()  # "12 (twelve)"
    t = _CURRENCY.sub(r"\1", t)
    m = _MAGNITUDE.match(t)
    if m:
        value = float(m["num"].replace(",", "")) * _SCALE[m["word"]]
        return t, (value, False, str(int(value)) if value.is_integer() else repr(value))
    f = _FRACTION.match(t)
    if f and int(f["b"]) != 0:
        value = int(f["a"]) / int(f["b"])
        return t, (-value if f["sign"] == "-" else value, False, f"{f['a']}/{f['b']}")
    return t, None


@lru_cache(maxsize=262144)
def parse_plain_number(text: str) -> tuple[float, bool, str] | None:
    """:func:`parse_number` without the formats of fault kind 6b (the reading the reference overlays use)."""
    return _parse_number(text, formats=False)


@lru_cache(maxsize=262144)
def parse_number(text: str) -> tuple[float, bool, str] | None:
    """Read a canonical number: ``(value, had_percent, digits)`` or None.

    Accepts an optional sign (after dash unification), ``$``, thousands separators in the ``1,234`` pattern
    (fault kind 5), decimals, a ``%`` / ``percent`` suffix (fault kind 6), and the formats of fault kind 6b
    (:func:`_number_format`). ``digits`` is the digit string as written (used by the exact year/identifier
    rule; a magnitude gives the scaled integer, a fraction ``a/b``).
    """
    return _parse_number(text, formats=True)


_MAX_NUMBER_TOKENS = 8
"""The most whitespace-separated tokens a number text can have without a parenthesised spelling:
``\\boxed{ approximately - $ 3 / 4 }`` (a boxed hedge, a sign and a currency sign apart, a spaced fraction; no
format of :func:`_number_format`, ``_NUMBER``, ``_MAGNITUDE`` or ``_FRACTION`` allows more). A longer text is a
sentence, never a number, and is rejected before the format regexes run."""


def _parse_number(text: str, *, formats: bool) -> tuple[float, bool, str] | None:
    t = unify_dashes(text)
    if not _DIGIT.search(t):  # early exit: _NUMBER needs a digit
        return None
    t = t.strip().lower()
    if "(" not in t and len(t.split(maxsplit=_MAX_NUMBER_TOKENS)) > _MAX_NUMBER_TOKENS:
        return None  # a sentence (see _MAX_NUMBER_TOKENS)
    if formats:
        t, direct = _number_format(t)
        if direct is not None:
            return direct
    if _THOUSANDS.match(t.rstrip("%").strip()):
        t = t.replace(",", "")
    m = _NUMBER.match(t)
    if m is None:
        return None
    value = float(m["num"])
    if m["sign"] == "-":
        value = -value
    return value, m["pct"] is not None, m["num"]


def _exact_kind(digits: str) -> bool:
    return bool(_YEAR.match(digits) or _EXACT_ID.match(digits))


def numbers_equal(pred: str, ref: str, tolerance: float = 0.0) -> bool | None:
    """Compare two answers as numbers (fault kinds 5-8); None when either is not a number.

    Years and identifiers compare exactly; a zero reference compares with absolute tolerance 1e-9; otherwise
    ``|p - r| / |r| <= tolerance`` (relaxed accuracy: 0.05; exact metrics: 0).
    """
    return _parsed_numbers_equal(parse_number(pred), parse_number(ref), tolerance)


def _parsed_numbers_equal(
    p: tuple[float, bool, str] | None, r: tuple[float, bool, str] | None, tolerance: float
) -> bool | None:
    if p is None or r is None:
        return None
    if _exact_kind(r[2]) or _exact_kind(p[2]):
        same = p[2] == r[2] or (p[0] == r[0] and not _EXACT_ID.match(p[2]) and not _EXACT_ID.match(r[2]))
        return same and p[1] == r[1]
    if r[0] == 0.0:
        return abs(p[0]) <= 1e-9
    return abs(p[0] - r[0]) / abs(r[0]) <= tolerance + 1e-12


def _number_of(prepared: str) -> tuple[float, bool, str] | None:
    """:func:`parse_number` of a dash-unified text; an ASCII text without a digit is no number (its early exit)."""
    if prepared.isascii() and _DIGIT.search(prepared) is None:
        return None
    return parse_number(prepared)
