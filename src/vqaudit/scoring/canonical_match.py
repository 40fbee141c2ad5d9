"""The matching rules of the canonical layer on precomputed features of one prediction and one reference.

:func:`_match` is the definition of :func:`vqaudit.scoring.canonical.canonical_match` (whose docstring, and the
module docstring of :mod:`vqaudit.scoring.canonical`, state the rules: fault kinds 1-9 and never destroying an
answer), on :class:`_Pred` / :class:`_Ref` features computed once per distinct string;
:func:`_score_row` is the definition of one row's canonical score (``canonical_score``). The batch layer
(:mod:`vqaudit.scoring.canonical_batch`) is tested against these.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence

from vqaudit.scoring.canonical_numbers import (
    _DIGIT,
    _THOUSANDS,
    _exact_kind,
    _number_format,
    _number_of,
    _parsed_numbers_equal,
)
from vqaudit.scoring.canonical_text import (
    _SPAN_SPLIT,
    _forms,
    _light,
    _sorted_spans,
    _vqaeval,
    is_single_entity,
    split_spans,
    strip_trailing,
    strip_wrapper,
    unify_dashes,
)
from vqaudit.scoring.leave_one_out import hit_pattern_score
from vqaudit.scoring.official import anls
from vqaudit.scoring.vqa_normalize import contains_at_word_boundaries

FAULT_KINDS: tuple[str, ...] = (
    "one-sided-normalization",
    "unicode-nfkc",
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
UNICODE_NFKC, UNICODE_DASHES = FAULT_KINDS[1:3]
STEP_KINDS: tuple[str, str, str, str] = (
    "one-sided-normalization",
    UNICODE_DASHES,
    "trailing-punctuation",
    "sentence-wrapper",
)
"""The kind of each of the four string steps (the forms ``_forms`` computes): step 2 (NFKC and dashes) is named
``unicode-dashes`` here and :func:`_unicode_kind` tells it from ``unicode-nfkc`` where it decides a pair."""


def _unicode_kind(p: str, r: str, form: Callable[[str], str]) -> str:
    """The label of a pair whose step-2 forms agree (and step-1 forms do not): which part of step 2 it needed.

    Step 2 reads both texts in NFKC (full-width digits, ligatures, compatibility characters) and maps the Unicode
    dashes and minus to ``-``; the pair is ``unicode-nfkc`` when the forms (``form``: the vqaEval form
    ``_vqaeval`` or the ANLS light form ``_light``) of the NFKC texts alone already agree, else
    ``unicode-dashes``. Only labels: whether step 2 matches is decided by the step-2 forms, as before.
    """
    nfkc = unicodedata.normalize
    return UNICODE_NFKC if form(nfkc("NFKC", p)) == form(nfkc("NFKC", r)) else UNICODE_DASHES


class _Pred:
    """What matching needs of a prediction, computed once per distinct prediction.

    ``prepared`` (dashes unified, wrapper and trailing punctuation removed) and ``number`` are computed on first
    use: matching reads them only against a numeric reference or a list reference. ``may_number`` is False when
    ``number`` is surely None (an ASCII text without a digit: stripping adds none, see ``_number_of``).
    """

    __slots__ = (
        "_number",
        "_number_done",
        "_prepared",
        "dashed",
        "light",
        "may_number",
        "maybe_list",
        "raw",
        "stripped",
        "surfaces",
    )

    def __init__(
        self, raw: str, dashed: str, surfaces: tuple[str, str, str, str], light: tuple[str, str, str, str] | None
    ) -> None:
        self.raw = raw
        self.stripped = raw.strip()
        self.dashed = dashed
        self.surfaces = surfaces
        self.light = light  # None when the caller's metric never compares the light forms (not ANLS)
        self.may_number = not dashed.isascii() or _DIGIT.search(dashed) is not None
        # Whether split_spans(prepared) can find 2 spans: prepared is a substring of dashed, so a separator
        # (``, ; / &`` or "and") in it is one in dashed.
        self.maybe_list = "," in dashed or ";" in dashed or "/" in dashed or "&" in dashed or "and" in dashed
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

    __slots__ = (
        "_number",
        "_number_done",
        "_spans",
        "_spans_done",
        "_vqaeval",
        "dashed",
        "light",
        "prepared",
        "raw",
        "stripped",
        "surfaces",
    )

    def __init__(
        self,
        raw: str,
        dashed: str,
        prepared: str,
        surfaces: tuple[str, str, str, str],
        light: tuple[str, str, str, str] | None,
        vqaeval: Callable[[str], str],
    ) -> None:
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
        return _unicode_kind(p.raw, r.raw, _light if light else _vqaeval)
    if ps[2] == rs[2]:
        return "trailing-punctuation"
    if ps[3] == rs[3]:
        return "sentence-wrapper"
    if p.maybe_list and r.spans is not None:
        spans = split_spans(p.prepared)  # compare the counts before normalizing the spans
        if len(spans) == len(r.spans) and _sorted_spans(spans) == r.spans:
            return "multi-span"
    return None


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
    for kind, ps, rs in zip(STEP_KINDS, p.surfaces, r.surfaces, strict=True):
        if ps == rs:
            return _unicode_kind(p.raw, r.raw, _vqaeval) if kind == UNICODE_DASHES else kind
    return "exact-year-identifier" if _exact_kind(rn[2]) else "numeric-equal"


def _score_row(
    p: _Pred, answers: Sequence[str], metric: str, ref_of: Callable[[str], _Ref]
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
            return hit_pattern_score(tuple([by_ref[a] is not None for a in answers])), kind
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
            # identical: there the light forms, which keep the punctuation, are compared (never destroy an answer).
            value = (
                anls(p.light[3], [r.light[3]])
                if p.surfaces[3] == r.surfaces[3]
                else anls(p.surfaces[3], [r.surfaces[3]])
            )
            best = value if value > best else best
        return best, None
    return 0.0, None


def _contained_kind(p: _Pred, refs: Sequence[_Ref]) -> str | None:
    """The first string step at which some reference's form occurs at word boundaries in the prediction's form.

    The canonical counterpart of whole-word containment (MultimodalOCR ``VQAEval.evaluate``, see
    :func:`vqaudit.shortanswer.benchmarks.mocr_containment`): the same test on the step-k surfaces.
    """
    for step, kind in enumerate(STEP_KINDS):
        if any(r.surfaces[step] and contains_at_word_boundaries(p.surfaces[step], r.surfaces[step]) for r in refs):
            if kind != UNICODE_DASHES:
                return kind
            nfkc = unicodedata.normalize  # which part of step 2 was needed (see _unicode_kind)
            pn = _vqaeval(nfkc("NFKC", p.raw))
            return (
                UNICODE_NFKC
                if any((rn := _vqaeval(nfkc("NFKC", r.raw))) and contains_at_word_boundaries(pn, rn) for r in refs)
                else UNICODE_DASHES
            )
    return None
