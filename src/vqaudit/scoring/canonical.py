r"""The canonical scoring layer: string-level scoring with its known fault kinds fixed, reported beside official.

Seed 002 §4 "Metric layers" keeps the benchmark-facing official score and a canonical score apart; issue 5
item 2 lists the fault kinds of string-level scoring that the canonical layer fixes. Each kind is one step of
:data:`FAULT_KINDS`; :func:`canonical_match` applies the steps cumulatively, in that order, to *both* sides and
returns the first step at which prediction and reference agree, so every recovered row is attributed to one
fault kind.

Fault kinds (step name: what it fixes):

1. ``one-sided-normalization``: the official VQA normalization (vqaEval.py ``processPunctuation`` +
   ``processDigitArticle``) applied to both sides, whatever the official script did (vqaEval.py at a013f00
   skips it for unanimous references; c4e6a0e normalizes one side only; ANLS and relaxed accuracy only
   lower-case);
2. ``unicode-dashes``: NFKC, and U+2212 minus and the U+2010..U+2015 dashes read as ``-``;
3. ``trailing-punctuation``: trailing ``. , ; : ! ?`` and enclosing quotes/backticks/asterisks removed
   (brackets are kept: ``[A, B]`` is a list; the period of an abbreviation such as ``U.S.`` is kept);
4. ``sentence-wrapper``: a leading answer wrapper ("the answer is", "answer:", "it is", "it says") removed;
5. ``thousands-separator``: ``1,234,567`` read as one number, while ``3, 4`` stays a two-item list;
6. ``percent-unit``: ``45%``, ``45 %`` and ``45 percent`` equal ``45`` (percent-unit gold), and vice versa;
6b. ``number-format``: a number written with a currency sign (``$1,200``), a magnitude word (``1.2 million``),
   a hedge (``approximately 12``, ``about 12``, ``~12``), a parenthesised spelling (``12 (twelve)``), in
   ``\boxed{...}``, or as a fraction (``3/4`` against ``0.75``) read as that number (issue 17 item 4);
7. ``zero-gold``: a gold of 0 compared numerically (pix2struct falls back to string equality: "0.0" != "0");
8. ``exact-year-identifier``: years (integers 1000..2999 written with 4 digits) and identifiers (digit strings
   with a leading zero, such as ``02139``) compared *exactly*; relaxed accuracy's 5%
   tolerance accepts 2016 for 2014 (0.1%), which this step refuses (it can remove official hits);
9. ``multi-span``: list-like answers split on ``,``/``;``/``/``/``&``/``and`` (and Python list literals
   ``[Austria, Chile]``) and compared as sets, so order and separator do not matter; a reference whose commas
   punctuate one entity (a name suffix, a date, an address; :func:`is_single_entity`) is not split.

Never destroying an answer (issue 17 item 4): the string steps use the vqaEval normalization with two of its
destructive steps undone. When it leaves nothing of a nonempty text (an article or a letter that is the whole
answer: "a", "The", "A"), the text is compared raw (lower-cased, spaces folded), so an empty output no longer
matches gold "a" and the letter answer "A" matches gold "a". A comma between digits is a thousands separator
only in groups of three (``1,234,567`` -> ``1234567``); any other (``0,1``) separates items, so "0,1" and "01"
differ (vqaEval deletes every comma once any digit-comma-digit occurs). The canonical ANLS compares the
wrapper- and punctuation-trimmed texts lower-cased, never the vqaEval forms, so it cannot make two different
strings identical by dropping their punctuation. Wrappers: "The answer is:", "The result is", "It is", and a
closing "... so the answer is X" (X kept, at most :data:`MAX_CLOSING_CHARS` characters, one clause).

Numbers compare with the metric's tolerance (relaxed accuracy: 5% relative; others: exact); a numeric pair that
needs none of the kinds (``12`` vs ``12.4`` under 5%) is labelled ``numeric-equal``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from functools import lru_cache

from vqaudit.scoring.official import anls
from vqaudit.scoring.vqa_normalize import (
    ARTICLES,
    CONTRACTIONS,
    NUMBER_WORDS,
    PERIOD_STRIP_COUNT,
    PUNCTUATION,
    contains_at_word_boundaries,
    fast_vqaeval_process,
    process_digit_article,
)

FAULT_KINDS: tuple[str, ...] = (
    "one-sided-normalization",
    "unicode-dashes",
    "trailing-punctuation",
    "sentence-wrapper",
    "thousands-separator",
    "percent-unit",
    "number-format",
    "zero-gold",
    "exact-year-identifier",
    "multi-span",
)

_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"), "-")
_TRAIL = re.compile(r"^[\s\"'`*]+|(?<!\b[A-Za-z]\.)(?<!\b[A-Za-z])[\s\"'`*.,;:!?]+$|(?<=\b[A-Za-z]\.)[\s\"'`*,;:!?]+$")
_WRAPPER = re.compile(
    r"^(?:(?:the\s+)?(?:final\s+|correct\s+|short\s+)?(?:answer|result)\s*(?:is\s*:?|:)\s*"
    r"|(?:it|this|that)\s+(?:is|says|reads)\s*:?\s+|(?:it's|its)\s+)",
    re.IGNORECASE,
)
_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_NUMBER = re.compile(r"^(?P<sign>[-+])?\$?(?P<num>\d+(?:\.\d+)?|\.\d+)\s*(?P<pct>%|percent)?$")
_SPAN_SPLIT = re.compile(r"\s*(?:,|;|/|&|\band\b)\s*")
_EXACT_ID = re.compile(r"^0\d+$")
_YEAR = re.compile(r"^[12]\d{3}$")
_DIGIT = re.compile(r"\d")


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
    return text[start:tail.start() if tail else end]


MAX_CLOSING_CHARS = 60
"""Longest answer taken from a closing "... so the answer is X" (characters); a longer tail is left alone."""
_CLOSING_LEAD = re.compile(r"(?:^|[.,;:!?]\s*|\b(?:so|thus|therefore|hence)\s*,?\s*)the\s+(?:final\s+)?$",
                           re.IGNORECASE)
_BOXED = re.compile(r"^\\boxed\{([^{}]*)\}$")


def _closing(t: str) -> str | None:
    low = t.lower()
    i = low.rfind("answer is")
    if i <= 0:
        return None
    if not _CLOSING_LEAD.search(low[max(0, i - 24):i]):
        return None
    tail = strip_trailing(t[i + len("answer is"):].strip().lstrip(":").strip())
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
        t = t[m.end():]
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


_HEDGE = re.compile(r"^(?:approximately|approx\.?|about|around|roughly|~|\u2248)\s*")
_SPELLED = re.compile(r"[a-z][a-z -]*")
_CURRENCY = re.compile(r"^([-+]?)\s*[$\u20ac\u00a3\u00a5]\s*")
_MAGNITUDE = re.compile(r"^(?P<num>[-+]?\d+(?:\.\d+)?|[-+]?\d{1,3}(?:,\d{3})+)\s*"
                        r"(?P<word>thousand|million|billion|trillion)$")
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_FRACTION = re.compile(r"^(?P<sign>[-+]?)(?P<a>\d+)\s*/\s*(?P<b>\d+)$")


def _number_format(t: str) -> tuple[str, tuple[float, bool, str] | None]:
    """Undo the number formats of fault kind 6b: the plain text, and the number itself for a magnitude/fraction."""
    if t.startswith("\\boxed{"):
        boxed = _BOXED.match(t)
        t = boxed.group(1).strip() if boxed else t
    t = _HEDGE.sub("", t)
    if t.endswith(")") and (i := t.rfind("(")) > 0 and _SPELLED.fullmatch(t[i + 1:-1]):
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


def _parsed_numbers_equal(p: tuple[float, bool, str] | None, r: tuple[float, bool, str] | None,
                          tolerance: float) -> bool | None:
    if p is None or r is None:
        return None
    if _exact_kind(r[2]) or _exact_kind(p[2]):
        same = p[2] == r[2] or (p[0] == r[0] and not _EXACT_ID.match(p[2]) and not _EXACT_ID.match(r[2]))
        return same and p[1] == r[1]
    if r[0] == 0.0:
        return abs(p[0]) <= 1e-9
    return abs(p[0] - r[0]) / abs(r[0]) <= tolerance + 1e-12


def split_spans(text: str) -> tuple[str, ...]:
    """Split a list-like answer into its spans (fault kind 9): list literal brackets, ``, ; / &`` and "and"."""
    t = text.strip()
    if t.startswith("[") and t.endswith("]"):
        t = t[1:-1]
    parts = [p.strip(" '\"") for p in _SPAN_SPLIT.split(t)]
    return tuple(p for p in parts if p)


_NAME_SUFFIX = re.compile(r",\s*(?:jr|sr|inc|ltd|llc|co|corp|plc|l\.?p|m\.?d|ph\.?\s?d|esq|ii|iii|iv)\.?\s*$",
                          re.IGNORECASE)
_CALENDAR = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|mon|tue|tues|wed|thu|thur|thurs|"
                       r"fri|sat|sun)(?:[a-z]*)\.?(?=[\s,]|$)", re.IGNORECASE)
_STREET_OR_POSTCODE = re.compile(r"(?:^|,\s*)\d{1,6}\s+[A-Za-z]|\b\d{5}(?:-\d{4})?\b|\bp\.?\s?o\.?\s+box\b",
                                 re.IGNORECASE)
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
    return bool(_NAME_SUFFIX.search(text) or _CALENDAR.search(text) or _STREET_OR_POSTCODE.search(text)
                or _STATE_CODE_LAST.search(text))


def _sorted_spans(spans: tuple[str, ...], vqaeval: Callable[[str], str] | None = None) -> list[str]:
    return sorted(map(_vqaeval if vqaeval is None else vqaeval, spans))


class _Pred:
    """What matching needs of a prediction, computed once per distinct prediction.

    ``prepared`` (dashes unified, wrapper and trailing punctuation removed) is computed on first use: matching
    reads it only for a numeric prediction (whose ``number`` needs it anyway) or against a list reference.
    """

    __slots__ = ("_prepared", "dashed", "light", "maybe_list", "number", "stripped", "surfaces")

    def __init__(self, stripped: str, dashed: str, prepared: str | None, number: tuple[float, bool, str] | None,
                 surfaces: tuple[str, str, str, str], light: tuple[str, str, str, str] | None) -> None:
        self.stripped = stripped
        self.dashed = dashed
        self._prepared = prepared
        self.number = number
        self.surfaces = surfaces
        self.light = light  # None when the caller's metric never compares the light forms (not ANLS)
        # Whether split_spans(prepared) can find 2 spans: prepared is a substring of dashed, so a separator
        # (``, ; / &`` or "and") in it is one in dashed.
        self.maybe_list = ("," in dashed or ";" in dashed or "/" in dashed or "&" in dashed or "and" in dashed)

    @property
    def prepared(self) -> str:
        if self._prepared is None:
            self._prepared = strip_trailing(strip_wrapper(self.dashed))
        return self._prepared


class _Ref:
    """What matching needs of a reference answer, computed once per distinct reference.

    ``spans`` (the sorted normalized spans of a list-like reference, 2 or more, else None) is computed on first
    use: matching reads it only against a prediction that could be a list (:attr:`_Pred.maybe_list`).
    """

    __slots__ = ("_spans", "_spans_done", "_vqaeval", "dashed", "light", "number", "prepared", "raw", "stripped",
                 "surfaces")

    def __init__(self, raw: str, dashed: str, prepared: str, number: tuple[float, bool, str] | None,
                 surfaces: tuple[str, str, str, str], light: tuple[str, str, str, str] | None,
                 vqaeval: Callable[[str], str]) -> None:
        self.raw = raw
        self.stripped = raw.strip()
        self.dashed = dashed
        self.prepared = prepared  # dashes unified, trailing punctuation removed
        self.number = number
        self.surfaces = surfaces
        self.light = light
        self._vqaeval = vqaeval
        self._spans: list[str] | None = None
        self._spans_done = False

    @property
    def spans(self) -> list[str] | None:
        if not self._spans_done:
            self._spans_done = True
            if _SPAN_SPLIT.search(self.dashed):  # else split_spans finds one span at most
                rs = split_spans(self.dashed)
                if len(rs) >= 2 and not _THOUSANDS.match(self.stripped) and not is_single_entity(self.raw):
                    self._spans = _sorted_spans(rs, self._vqaeval)
        return self._spans


_Forms = tuple[str, str, str, str]


def _forms(text: str, vqaeval: Callable[[str], str], light: Callable[[str], str] | None
           ) -> tuple[str, str, _Forms, _Forms | None]:
    """The steps of :func:`_surfaces` and :func:`_light_surfaces` computed once: ``(t2, t3, surfaces, light)``.

    ``t2`` is the dash-unified text, ``t3`` the text after trailing punctuation; ``vqaeval`` must be
    :func:`_vqaeval` and ``light`` :func:`_light` (or memos of them; None: no light forms). Equal step texts
    share one normalization, and two more normalizations are skipped where their result is known:

    - a step that only drops one final period (``t3 + "." == t2``, ``t3`` not ending in a space, at most
      :data:`~vqaudit.scoring.vqa_normalize.PERIOD_STRIP_COUNT` periods): vqaEval deletes that period anyway
      (it is followed by no digit, adds no punctuation condition and is within the script's period count), so
      the vqaEval form is unchanged unless it was empty (then the raw fallback differs);
    - a text without any vqaEval punctuation mark or period: its light form is its vqaEval form (the
      punctuation step is the identity there, and both fall back to the same raw form).
    """
    t2 = unify_dashes(text)
    t3 = strip_trailing(t2)
    t4 = strip_trailing(strip_wrapper(t3))
    s1 = vqaeval(text)
    s2 = s1 if t2 == text else vqaeval(t2)
    final_period = (t3 and len(t2) == len(t3) + 1 and t2[-1] == "." and t2.startswith(t3)
                    and not t3[-1].isspace())
    if t3 == t2 or (final_period and s2 and t2.count(".") <= PERIOD_STRIP_COUNT):
        s3 = s2
    else:
        s3 = vqaeval(t3)
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


def _number_of(prepared: str) -> tuple[float, bool, str] | None:
    """:func:`parse_number` of a dash-unified text; an ASCII text without a digit is no number (its early exit)."""
    if prepared.isascii() and _DIGIT.search(prepared) is None:
        return None
    return parse_number(prepared)


def _make_pred(pred: str, vqaeval: Callable[[str], str], light: Callable[[str], str] | None) -> _Pred:
    t2, t3, surfaces, lights = _forms(pred, vqaeval, light)
    if t2.isascii() and _DIGIT.search(t2) is None:  # stripping leaves no digit: no number (see _number_of)
        return _Pred(pred.strip(), t2, None, None, surfaces, lights)
    prepared = strip_trailing(strip_wrapper(t2))
    return _Pred(pred.strip(), t2, prepared, _number_of(prepared), surfaces, lights)


def _make_ref(ref: str, vqaeval: Callable[[str], str], light: Callable[[str], str] | None) -> _Ref:
    dashed, prepared, surfaces, lights = _forms(ref, vqaeval, light)
    return _Ref(ref, dashed, prepared, _number_of(prepared), surfaces, lights, vqaeval)


@lru_cache(maxsize=1 << 17)
def _pred_features(pred: str) -> _Pred:
    return _make_pred(pred, _vqaeval, _light)


@lru_cache(maxsize=1 << 17)
def _ref_features(ref: str) -> _Ref:
    return _make_ref(ref, _vqaeval, _light)


def _match(p: _Pred, r: _Ref, tolerance: float, light: bool = False) -> str | None:
    """:func:`canonical_match` on precomputed features (the rules are documented there).

    ``light`` (ANLS): the string steps compare the :func:`_light_surfaces`, not the vqaEval forms.
    """
    if p.stripped == r.stripped:
        return "exact"
    if p.number is not None and r.number is not None:
        return _numeric_kind(p, r) if _parsed_numbers_equal(p.number, r.number, tolerance) else None
    ps, rs = (p.light, r.light) if light else (p.surfaces, r.surfaces)
    assert ps is not None and rs is not None  # light forms are computed wherever light matching is asked for
    if ps[0] == rs[0]:
        return "one-sided-normalization"
    if ps[1] == rs[1]:
        return "unicode-dashes"
    if ps[2] == rs[2]:
        return "trailing-punctuation"
    if ps[3] == rs[3]:
        return "sentence-wrapper"
    if p.maybe_list and r.spans is not None:
        spans = split_spans(p.prepared)  # compare the counts before normalizing the spans
        if len(spans) == len(r.spans) and _sorted_spans(spans) == r.spans:
            return "multi-span"
    return None


def canonical_match(pred: str, ref: str, tolerance: float = 0.0) -> str | None:
    """Return the fault kind under which ``pred`` matches ``ref`` canonically, ``"exact"``, or None.

    ``"exact"`` means the raw strings are equal after ``strip()``. Otherwise the string steps (kinds 1-4) are
    tried cumulatively, then the numeric reading (kinds 5-8: the first numeric kind that the pair needs is
    named), then the multi-span comparison (kind 9). A numeric pair that differs (e.g. a year off by 2) is a
    canonical *miss* even if a string step would not have matched either.

    Args:
        pred: the model output.
        ref: one reference answer.
        tolerance: relative numeric tolerance (0.05 for relaxed accuracy, else 0).

    Returns:
        ``"exact"``, one of :data:`FAULT_KINDS`, or None when the pair does not match canonically.
    """
    return _match(_pred_features(pred), _ref_features(ref), tolerance)


def _needs_format(text: str) -> bool:
    """Whether reading ``text`` as a number needed fault kind 6b (currency, magnitude, hedge, boxed, fraction)."""
    t = unify_dashes(text).strip().lower()
    plain, direct = _number_format(t)
    return direct is not None or plain != t


def _numeric_kind(p: _Pred, r: _Ref) -> str:
    # Numeric pairs name the numeric fault first (a separator, a percent sign, a zero gold), then the string
    # steps that were needed to read the number.
    pn, rn = p.number, r.number
    assert pn is not None and rn is not None
    if _needs_format(p.prepared) or _needs_format(r.prepared):
        return "number-format"
    if _THOUSANDS.match(p.prepared.rstrip("%").strip()) or _THOUSANDS.match(r.prepared.rstrip("%").strip()):
        return "thousands-separator"
    if pn[1] != rn[1] or "percent" in p.prepared.lower() + r.prepared.lower():
        return "percent-unit"
    if rn[0] == 0.0:
        return "zero-gold"
    for kind, ps, rs in zip(FAULT_KINDS[:4], p.surfaces, r.surfaces, strict=True):
        if ps == rs:
            return kind
    return "exact-year-identifier" if _exact_kind(rn[2]) else "numeric-equal"


def canonical_score(prediction: str, answers: Sequence[str], metric: str) -> tuple[float, str | None]:
    """Score one row on the canonical layer, with the fault kind that decided it.

    Per metric (same aggregation as the official scorer, canonical comparison inside):

    - ``vqa_accuracy``: the leave-one-out average of min(#canonical matches among the other answers / 3, 1);
    - ``anls``: 1.0 on a canonical match (string steps on the light forms of :func:`_light`: vqaEval's
      digit/article step without its punctuation step), else the paper-rule ANLS of the step-4 vqaEval forms,
      or of the light forms for a reference whose vqaEval form equals the prediction's (so dropping punctuation
      never makes two different strings identical);
    - ``relaxed_accuracy``: 1.0 on a canonical match with 5% numeric tolerance (years/identifiers exact);
    - ``exact_match`` / ``containment``: 1.0 on a canonical match.

    Args:
        prediction: the model output.
        answers: the reference answers (at least one).
        metric: official metric name (see :mod:`vqaudit.shortanswer.benchmarks`).

    Returns:
        ``(score in [0, 1], kind)``: kind is the fault kind of the best-matching reference (``"exact"`` for a
        raw match, None for no canonical match).

    Raises:
        ValueError: no answers.
    """
    if not answers:
        raise ValueError("at least one reference answer is required")
    return _score_row(_pred_features(prediction), answers, metric, _ref_features)


@lru_cache(maxsize=4096)
def _loo_score(hits: tuple[bool, ...]) -> float:
    """The leave-one-out VQA accuracy of canonical hits, summed in answer order (vqaEval.py's order).

    Memoized by hit pattern (TextVQA rows have 10 answers, so few patterns occur).
    """
    n, m = len(hits), sum(hits)
    if n == 1:
        return 0.0
    total = sum(min(1.0, (m - (1 if h else 0)) / 3) for h in hits)
    return total / n


def _score_row(p: _Pred, answers: Sequence[str], metric: str, ref_of: Callable[[str], _Ref]
               ) -> tuple[float, str | None]:
    """:func:`canonical_score` of one row on precomputed features (``ref_of`` gives a reference's features)."""
    tol = 0.05 if metric == "relaxed_accuracy" else 0.0
    light = metric == "anls"
    if len(answers) == 1:
        kind = _match(p, ref_of(answers[0]), tol, light)
        if metric == "vqa_accuracy":
            return 0.0, kind
        by_ref = {answers[0]: kind}
    else:
        by_ref = {a: _match(p, ref_of(a), tol, light) for a in dict.fromkeys(answers)}  # annotators repeat
        # The first "exact" kind, else the first matched kind, in answer order (first occurrences decide).
        values = by_ref.values()
        kind = "exact" if "exact" in values else next((k for k in values if k is not None), None)
        if metric == "vqa_accuracy":
            if kind is None:
                return 0.0, None
            return _loo_score(tuple([by_ref[a] is not None for a in answers])), kind
    if kind is not None:
        return 1.0, kind
    if metric == "containment":
        contained = _contained_kind(p, [ref_of(a) for a in by_ref])
        return (1.0, contained) if contained is not None else (0.0, None)
    if metric == "anls":
        assert p.light is not None
        best = 0.0
        for a in by_ref:
            r = ref_of(a)
            assert r.light is not None
            # vqaEval forms (articles and punctuation gone), except where they would make the two texts
            # identical: there the light forms, which keep the punctuation, are compared (issue 17 item 4).
            value = (anls(p.light[3], [r.light[3]]) if p.surfaces[3] == r.surfaces[3]
                     else anls(p.surfaces[3], [r.surfaces[3]]))
            best = value if value > best else best
        return best, None
    return 0.0, None


def canonical_scores(predictions: Sequence[str], answers: Sequence[Sequence[str]], metric: str, *,
                     vqaeval: Callable[[str], str] | None = None) -> list[tuple[float, str | None]]:
    """:func:`canonical_score` of many rows: the same ``(score, kind)`` per row, each distinct string read once.

    The forms of each distinct prediction and reference are computed once, in memos local to the call (so
    nothing outlives it and no cache needs clearing), and the light forms only for ANLS, the one metric that
    compares them.

    Args:
        predictions: the model outputs, one per row.
        answers: the reference answers per row (each at least one).
        metric: official metric name.
        vqaeval: the vqaEval normalization to use, e.g. a memo the caller shares with other layers; it must
            equal :func:`vqaudit.scoring.vqa_normalize.fast_vqaeval_process` (the default).

    Returns:
        One ``(score in [0, 1], kind)`` per row, as :func:`canonical_score` returns it.

    Raises:
        ValueError: a row without answers, or ``predictions`` and ``answers`` of different lengths.
    """
    if len(predictions) != len(answers):
        raise ValueError(f"{len(predictions)} predictions but {len(answers)} answer lists")
    base = fast_vqaeval_process if vqaeval is None else vqaeval
    normal: dict[str, str] = {}

    def vq(text: str) -> str:  # _vqaeval, memoized in this call
        out = normal.get(text)
        if out is None:
            out = base(text if "," not in text else separate_digit_commas(text))
            if not out and text.strip():
                out = " ".join(text.lower().split())
            normal[text] = out
        return out

    light: Callable[[str], str] | None = None
    if metric == "anls":
        lights: dict[str, str] = {}

        def light_memo(text: str) -> str:
            out = lights.get(text)
            if out is None:
                out = lights[text] = _light.__wrapped__(text)
            return out

        light = light_memo
    preds: dict[str, _Pred] = {}
    refs: dict[str, _Ref] = {}

    def ref_of(ref: str) -> _Ref:
        r = refs.get(ref)
        if r is None:
            r = refs[ref] = _make_ref(ref, vq, light)
        return r

    out: list[tuple[float, str | None]] = []
    for prediction, row in zip(predictions, answers, strict=True):
        if not row:
            raise ValueError("at least one reference answer is required")
        p = preds.get(prediction)
        if p is None:
            p = preds[prediction] = _make_pred(prediction, vq, light)
        out.append(_score_row(p, row, metric, ref_of))
    return out


def _contained_kind(p: _Pred, refs: Sequence[_Ref]) -> str | None:
    """The first string step at which some reference's form occurs at word boundaries in the prediction's form.

    The canonical counterpart of whole-word containment (MultimodalOCR ``VQAEval.evaluate``, see
    :func:`vqaudit.shortanswer.benchmarks.mocr_containment`): the same test on the step-k surfaces.
    """
    for step, kind in enumerate(FAULT_KINDS[:4]):
        if any(r.surfaces[step] and contains_at_word_boundaries(p.surfaces[step], r.surfaces[step]) for r in refs):
            return kind
    return None


PARTIAL = "partial-similarity"
"""The label of a row gained without a canonical match: a higher graded score (ANLS) of the canonical forms."""
GAIN_KINDS: tuple[str, ...] = (*FAULT_KINDS, "numeric-equal", "exact", PARTIAL)
"""Every label a row the canonical layer gains can carry (issue 17 item 4: all of them are reported)."""


def gain_kind(prediction: str, answers: Sequence[str], metric: str) -> str:
    """The fault kind that explains a gained row: the first reference matched under a kind other than ``exact``.

    :func:`canonical_score` names the best-matching reference's kind, ``exact`` when one reference is equal; a
    VQA-accuracy row then gains from its *other* references, whose kind this returns (``exact`` when every
    match is exact).

    Args:
        prediction: the model output.
        answers: the reference answers.
        metric: official metric name.

    Returns:
        One of :data:`GAIN_KINDS`.
    """
    tol = 0.05 if metric == "relaxed_accuracy" else 0.0
    p = _pred_features(prediction)
    for a in dict.fromkeys(answers):
        kind = _match(p, _ref_features(a), tol, metric == "anls")
        if kind is not None and kind != "exact":
            return kind
    return "exact"


REFUSAL_CAUSES: tuple[str, ...] = ("exact-year-identifier", "relative-to-prediction", "list-literal-gold",
                                   "empty-normalized-gold", "digit-comma", "punctuation-kept", "other")
"""Why the canonical layer scores a row below the official score, by cause (issue 17 item 4)."""


def refusal_cause(prediction: str, answers: Sequence[str], metric: str) -> str:
    """Name the cause of a row the canonical layer scores below official (one of :data:`REFUSAL_CAUSES`).

    In order: ``exact-year-identifier`` (a year or leading-zero identifier that relaxed accuracy's 5% tolerance
    accepts and fault kind 8 refuses); ``empty-normalized-gold`` (a reference that vqaEval normalizes to
    nothing, now compared raw); ``digit-comma`` (a comma between digits outside groups of three, which vqaEval
    deletes and the canonical layer reads as an item separator); ``punctuation-kept`` (ANLS: the canonical
    layer no longer drops punctuation to make two strings equal); else ``other``. Two causes are faults of an
    official harness that the canonical layer does not copy: ``relative-to-prediction`` (the relative error
    measured against the prediction, ``|p - r| / |p| <= 5%`` while ``|p - r| / |r| > 5%``: VLMEvalKit's
    ``relaxed_correctness`` before commit 677e30a5) and ``list-literal-gold`` (a ``[a, b]`` gold that the
    harness expands into separate references, so one item alone scores).
    """
    p = parse_number(strip_trailing(strip_wrapper(unify_dashes(prediction))))
    if metric == "relaxed_accuracy" and p is not None:
        for a in answers:
            r = parse_number(strip_trailing(unify_dashes(a)))
            if r is not None and (_exact_kind(r[2]) or _exact_kind(p[2])):
                return "exact-year-identifier"
            if r is not None and p[0] != 0 and r[0] != 0 and (abs(p[0] - r[0]) / abs(p[0]) <= 0.05
                                                               < abs(p[0] - r[0]) / abs(r[0])):
                return "relative-to-prediction"
    if any(a.strip().startswith("[") and a.strip().endswith("]") for a in answers):
        return "list-literal-gold"
    if any(a.strip() and not fast_vqaeval_process(a) for a in answers):
        return "empty-normalized-gold"
    if any(_DIGIT_COMMA.search(t) and separate_digit_commas(t) != t.replace(",", "") for t in (prediction, *answers)):
        return "digit-comma"
    if metric == "anls":
        return "punctuation-kept"
    return "other"
