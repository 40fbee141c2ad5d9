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

from collections.abc import Callable, Sequence
from functools import lru_cache

from vqaudit.scoring.canonical_numbers import _DIGIT as _DIGIT
from vqaudit.scoring.canonical_numbers import _THOUSANDS as _THOUSANDS
from vqaudit.scoring.canonical_numbers import (
    _exact_kind,
    _number_format,
    _number_of,
    _parsed_numbers_equal,
    numbers_equal,
    parse_number,
    parse_plain_number,
)
from vqaudit.scoring.canonical_text import (
    _DIGIT_COMMA,
    _SPAN_SPLIT,
    MAX_CLOSING_CHARS,
    _forms,
    _light,
    _sorted_spans,
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
from vqaudit.scoring.official import anls
from vqaudit.scoring.vqa_normalize import contains_at_word_boundaries, fast_vqaeval_process

__all__ = ["FAULT_KINDS", "GAIN_KINDS", "MAX_CLOSING_CHARS", "PARTIAL", "REFUSAL_CAUSES", "canonical_match",
           "canonical_score", "canonical_scores", "gain_kind", "is_single_entity", "numbers_equal", "parse_number",
           "parse_plain_number", "refusal_cause", "separate_digit_commas", "split_spans", "strip_trailing",
           "strip_wrapper", "unify_dashes"]

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


class _Pred:
    """What matching needs of a prediction, computed once per distinct prediction.

    ``prepared`` (dashes unified, wrapper and trailing punctuation removed) and ``number`` are computed on first
    use: matching reads them only against a numeric reference or a list reference. ``may_number`` is False when
    ``number`` is surely None (an ASCII text without a digit: stripping adds none, see ``_number_of``).
    """

    __slots__ = ("_number", "_number_done", "_prepared", "dashed", "light", "may_number", "maybe_list", "stripped",
                 "surfaces")

    def __init__(self, raw: str, dashed: str, surfaces: tuple[str, str, str, str],
                 light: tuple[str, str, str, str] | None) -> None:
        self.stripped = raw.strip()
        self.dashed = dashed
        self.surfaces = surfaces
        self.light = light  # None when the caller's metric never compares the light forms (not ANLS)
        self.may_number = not dashed.isascii() or _DIGIT.search(dashed) is not None
        # Whether split_spans(prepared) can find 2 spans: prepared is a substring of dashed, so a separator
        # (``, ; / &`` or "and") in it is one in dashed.
        self.maybe_list = ("," in dashed or ";" in dashed or "/" in dashed or "&" in dashed or "and" in dashed)
        self._prepared: str | None = None
        self._number: tuple[float, bool, str] | None = None
        self._number_done = not self.may_number

    @property
    def prepared(self) -> str:
        if self._prepared is None:
            self._prepared = strip_trailing(strip_wrapper(self.dashed))
        return self._prepared

    @property
    def number(self) -> tuple[float, bool, str] | None:
        if not self._number_done:
            self._number_done = True
            self._number = _number_of(self.prepared)
        return self._number


class _Ref:
    """What matching needs of a reference answer, computed once per distinct reference.

    Two fields are computed on first use: ``spans`` (the sorted normalized spans of a list-like reference, 2 or
    more, else None), which matching reads only against a prediction that could be a list
    (:attr:`_Pred.maybe_list`), and ``number``, read only against a numeric prediction.
    """

    __slots__ = ("_number", "_number_done", "_spans", "_spans_done", "_vqaeval", "dashed", "light", "prepared",
                 "raw", "stripped", "surfaces")

    def __init__(self, raw: str, dashed: str, prepared: str, surfaces: tuple[str, str, str, str],
                 light: tuple[str, str, str, str] | None, vqaeval: Callable[[str], str]) -> None:
        self.raw = raw
        self.stripped = raw.strip()
        self.dashed = dashed
        self.prepared = prepared  # dashes unified, trailing punctuation removed
        self.surfaces = surfaces
        self.light = light
        self._vqaeval = vqaeval
        self._number: tuple[float, bool, str] | None = None
        self._number_done = False
        self._spans: list[str] | None = None
        self._spans_done = False

    @property
    def number(self) -> tuple[float, bool, str] | None:
        if not self._number_done:
            self._number_done = True
            self._number = _number_of(self.prepared)
        return self._number

    @property
    def spans(self) -> list[str] | None:
        if not self._spans_done:
            self._spans_done = True
            if _SPAN_SPLIT.search(self.dashed):  # else split_spans finds one span at most
                rs = split_spans(self.dashed)
                if len(rs) >= 2 and not _THOUSANDS.match(self.stripped) and not is_single_entity(self.raw):
                    self._spans = _sorted_spans(rs, self._vqaeval)
        return self._spans


def _make_pred(pred: str, vqaeval: Callable[[str], str], light: Callable[[str], str] | None) -> _Pred:
    t2, _, surfaces, lights = _forms(pred, vqaeval, light)
    return _Pred(pred, t2, surfaces, lights)


def _make_ref(ref: str, vqaeval: Callable[[str], str], light: Callable[[str], str] | None) -> _Ref:
    dashed, prepared, surfaces, lights = _forms(ref, vqaeval, light)
    return _Ref(ref, dashed, prepared, surfaces, lights, vqaeval)


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
    if p.may_number and r.number is not None and p.number is not None:
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
