r"""The canonical scoring layer: string-level scoring with its known fault kinds fixed, reported beside official.

Seed 002 §4 "Metric layers" keeps the benchmark-facing official score and a canonical score apart; the fault
kinds of string-level scoring that the canonical layer fixes are listed below. Each kind is one step of
:data:`FAULT_KINDS`; :func:`canonical_match` applies the steps cumulatively, in that order, to *both* sides and
returns the first step at which prediction and reference agree, so every recovered row is attributed to one
fault kind.

Fault kinds (step name: what it fixes):

1. ``one-sided-normalization``: the official VQA normalization (vqaEval.py ``processPunctuation`` +
   ``processDigitArticle``) applied to both sides, whatever the official script did (vqaEval.py at a013f00
   skips it for unanimous references; c4e6a0e normalizes one side only; ANLS and relaxed accuracy only
   lower-case);
2. ``unicode-nfkc`` / ``unicode-dashes``: one step, two labels. The texts are read in NFKC (compatibility
   forms: full-width digits ``\uff11\uff12`` = ``12``, ligatures ``\ufb01`` = ``fi``) and the U+2212 minus and
   U+2010..U+2015 dashes as ``-``; a pair the step decides is labelled ``unicode-nfkc`` when NFKC alone makes
   the two forms agree, else ``unicode-dashes`` (the dash mapping was needed);
3. ``trailing-punctuation``: trailing ``. , ; : ! ?`` and enclosing quotes/backticks/asterisks removed
   (brackets are kept: ``[A, B]`` is a list; the period of an abbreviation such as ``U.S.`` is kept);
4. ``sentence-wrapper``: a leading answer wrapper ("the answer is", "answer:", "it is", "it says") removed;
5. ``thousands-separator``: ``1,234,567`` read as one number, while ``3, 4`` stays a two-item list;
6. ``percent-unit``: ``45%``, ``45 %`` and ``45 percent`` equal ``45`` (percent-unit gold), and vice versa;
6b. ``number-format``: a number written with a currency sign (``$1,200``), a magnitude word (``1.2 million``),
   a hedge (``approximately 12``, ``about 12``, ``~12``), a parenthesised spelling (``12 (twelve)``), in
   ``\boxed{...}``, or as a fraction (``3/4`` against ``0.75``) read as that number;
7. ``zero-gold``: a gold of 0 compared numerically (pix2struct falls back to string equality: "0.0" != "0");
8. ``exact-year-identifier``: years (integers 1000..2999 written with 4 digits) and identifiers (digit strings
   with a leading zero, such as ``02139``) compared *exactly*; relaxed accuracy's 5%
   tolerance accepts 2016 for 2014 (0.1%), which this step refuses (it can remove official hits);
9. ``multi-span``: list-like answers split on ``,``/``;``/``/``/``&``/``and`` (and Python list literals
   ``[Austria, Chile]``) and compared as sets, so order and separator do not matter; a reference whose commas
   punctuate one entity (a name suffix, a date, an address; :func:`is_single_entity`) is not split.

Never destroying an answer: the string steps use the vqaEval normalization with two of its
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

The canonical number reading is narrower than Python's ``float()``, which the official relaxed accuracy uses
(pix2struct ``_to_float``): it reads digits with one decimal point, thousands commas in groups of three, a sign,
``%``/``percent`` and the formats of kind 6b, but no exponent (``1e3``), no digit-group underscore (``1_000``,
Python syntax, which ``float()`` accepts), no ``nan``/``inf``; and it reads ``%`` as a unit (``50%`` = ``50``, kind
6), where pix2struct divides by 100 (``50%`` = ``0.5``). Rows official accepts on such a reading are lost rows,
labelled ``number-notation`` and ``percent-as-fraction`` by :func:`refusal_cause`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

from vqaudit.scoring.canonical_batch import canonical_scores
from vqaudit.scoring.canonical_match import FAULT_KINDS as FAULT_KINDS
from vqaudit.scoring.canonical_match import _make_pred, _make_ref, _match, _Pred, _Ref, _score_row
from vqaudit.scoring.canonical_numbers import _DIGIT as _DIGIT
from vqaudit.scoring.canonical_numbers import _THOUSANDS as _THOUSANDS
from vqaudit.scoring.canonical_numbers import (
    _exact_kind,
    numbers_equal,
    parse_number,
    parse_plain_number,
)
from vqaudit.scoring.canonical_text import (
    _DIGIT_COMMA,
    MAX_CLOSING_CHARS,
    _light,
    _vqaeval,
    is_single_entity,
    separate_digit_commas,
    split_spans,
    strip_trailing,
    strip_wrapper,
    unify_dashes,
)
from vqaudit.scoring.canonical_text import _TRAIL as _TRAIL
from vqaudit.scoring.canonical_text import _WRAPPER as _WRAPPER
from vqaudit.scoring.official import _to_float
from vqaudit.scoring.vqa_normalize import fast_vqaeval_process

__all__ = [
    "FAULT_KINDS",
    "GAIN_KINDS",
    "MAX_CLOSING_CHARS",
    "PARTIAL",
    "REFUSAL_CAUSES",
    "canonical_match",
    "canonical_score",
    "canonical_scores",
    "gain_kind",
    "is_single_entity",
    "numbers_equal",
    "parse_number",
    "parse_plain_number",
    "refusal_cause",
    "separate_digit_commas",
    "split_spans",
    "strip_trailing",
    "strip_wrapper",
    "unify_dashes",
]


@lru_cache(maxsize=1 << 17)
def _pred_features(pred: str) -> _Pred:
    return _make_pred(pred, _vqaeval, _light)


@lru_cache(maxsize=1 << 17)
def _ref_features(ref: str) -> _Ref:
    return _make_ref(ref, _vqaeval, _light)


def canonical_match(pred: str, ref: str, tolerance: float = 0.0) -> str | None:
    """Return the fault kind under which ``pred`` matches ``ref`` canonically, ``"exact"``, or None.

    ``"exact"`` means the raw strings are equal after ``strip()``. Otherwise the string steps (kinds 1-4; step 2
    labelled ``unicode-nfkc`` or ``unicode-dashes``) are tried cumulatively, then the numeric reading (kinds 5-8:
    the first numeric kind that the pair needs is named), then the multi-span comparison (kind 9). A numeric pair
    that differs (e.g. a year off by 2) is a canonical *miss* even if a string step would not have matched
    either.

    Args:
        pred: the model output.
        ref: one reference answer.
        tolerance: relative numeric tolerance (0.05 for relaxed accuracy, else 0).

    Returns:
        ``"exact"``, one of :data:`FAULT_KINDS`, or None when the pair does not match canonically.
    """
    return _match(_pred_features(pred), _ref_features(ref), tolerance)


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


PARTIAL = "partial-similarity"
"""The label of a row gained without a canonical match: a higher graded score (ANLS) of the canonical forms."""
GAIN_KINDS: tuple[str, ...] = (*FAULT_KINDS, "numeric-equal", "exact", PARTIAL)
"""Every label a row the canonical layer gains can carry (all of them are reported)."""


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


REFUSAL_CAUSES: tuple[str, ...] = (
    "exact-year-identifier",
    "relative-to-prediction",
    "number-notation",
    "percent-as-fraction",
    "list-literal-gold",
    "empty-normalized-gold",
    "digit-comma",
    "punctuation-kept",
    "other",
)
"""Why the canonical layer scores a row below the official score, by cause (the report names each cause)."""


def _float_only(text: str) -> bool:
    """Whether the official relaxed accuracy reads ``text`` as a finite number and the canonical layer does not.

    The official reading is pix2struct's ``_to_float`` (Python ``float()``, a ``%`` suffix divided by 100;
    :func:`vqaudit.scoring.official.relaxed_accuracy`); the canonical one :func:`parse_number` of the text with
    dashes unified, answer wrapper and trailing punctuation removed (as matching reads it). True for ``1e3``,
    ``5E-1``, ``1_000``, ``1_000%``; False for ``1000``, ``50%``, ``nan``, ``inf`` (no official hit reads these).
    """
    value = _to_float(text)
    return (
        value is not None
        and math.isfinite(value)
        and parse_number(strip_trailing(strip_wrapper(unify_dashes(text)))) is None
    )


def _as_fraction(number: tuple[float, bool, str]) -> float:
    """A canonical number as pix2struct reads it: a percent divided by 100 (``50%`` -> 0.5)."""
    return number[0] / 100.0 if number[1] else number[0]


def refusal_cause(prediction: str, answers: Sequence[str], metric: str) -> str:
    """Name the cause of a row the canonical layer scores below official (one of :data:`REFUSAL_CAUSES`).

    In order (relaxed accuracy first, the one official metric that reads numbers):

    - ``exact-year-identifier``: a year or leading-zero identifier that relaxed accuracy's 5% tolerance accepts
      and fault kind 8 refuses (2016 for 2014);
    - ``relative-to-prediction``: the relative error measured against the prediction, ``|p - r| / |p| <= 5%``
      while ``|p - r| / |r| > 5%`` (VLMEvalKit's ``relaxed_correctness`` before commit 677e30a5), a fault of an
      official harness that the canonical layer does not copy;
    - ``number-notation``: the prediction or a reference is a number to Python ``float()`` (the official
      reading) in a notation the canonical number reading refuses: an exponent (``1e3`` for ``1000``) or digit
      groups with underscores (``1_000``, Python literal syntax); the canonical layer reads such a text as no
      number, and its string forms differ from the other side's;
    - ``percent-as-fraction``: a percent against a plain number that pix2struct equates by dividing the percent
      by 100 (``50%`` for ``0.5``: official 0.5 vs 0.5); the canonical layer reads ``%`` as a unit (fault kind 6:
      ``50%`` = ``50``), so the two numbers differ (50 vs 0.5);

    then for every metric: ``list-literal-gold`` (a ``[a, b]`` gold that the harness expands into separate
    references, so one item alone scores); ``empty-normalized-gold`` (a reference that vqaEval normalizes to
    nothing, now compared raw); ``digit-comma`` (a comma between digits outside groups of three, which vqaEval
    deletes and the canonical layer reads as an item separator); ``punctuation-kept`` (ANLS: the canonical
    layer no longer drops punctuation to make two strings equal); else ``other``.
    """
    relaxed = metric == "relaxed_accuracy"
    p = parse_number(strip_trailing(strip_wrapper(unify_dashes(prediction))))
    if relaxed and p is not None:
        for a in answers:
            r = parse_number(strip_trailing(unify_dashes(a)))
            if r is not None and (_exact_kind(r[2]) or _exact_kind(p[2])):
                return "exact-year-identifier"
            if (
                r is not None
                and p[0] != 0
                and r[0] != 0
                and (abs(p[0] - r[0]) / abs(p[0]) <= 0.05 < abs(p[0] - r[0]) / abs(r[0]))
            ):
                return "relative-to-prediction"
    if relaxed and any(_float_only(t) for t in (prediction, *answers)):
        return "number-notation"
    if relaxed and p is not None:
        for a in answers:
            r = parse_number(strip_trailing(unify_dashes(a)))
            if (
                r is not None
                and r[1] != p[1]
                and (rv := _as_fraction(r)) != 0
                and abs(_as_fraction(p) - rv) / abs(rv) <= 0.05 + 1e-12
            ):
                return "percent-as-fraction"
    if any(a.strip().startswith("[") and a.strip().endswith("]") for a in answers):
        return "list-literal-gold"
    if any(a.strip() and not fast_vqaeval_process(a) for a in answers):
        return "empty-normalized-gold"
    if any(_DIGIT_COMMA.search(t) and separate_digit_commas(t) != t.replace(",", "") for t in (prediction, *answers)):
        return "digit-comma"
    if metric == "anls":
        return "punctuation-kept"
    return "other"
