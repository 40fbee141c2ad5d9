"""The canonical pair rule of :func:`vqaudit.scoring.canonical_batch.canonical_scores` on dict features.

:class:`PairRule` is ``_match`` of :mod:`vqaudit.scoring.canonical_match` (the definition) for one call's pairs:
the features of each distinct string read lazily from the batch forms, and each metric's rows scored in one loop
with the pair rule inlined (``rows``). One instance per call; nothing outlives it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rapidfuzz.distance import Levenshtein

from vqaudit.scoring.canonical_forms import (
    _ASCII_SPACE,
    FormsOf,
    _wrapper_hint,
    forms_many,
)
from vqaudit.scoring.canonical_match import (
    STEP_KINDS,
    _contained_kind,
    _numeric_kind,
    _Pred,
    _Ref,
    _unicode_kind,
)
from vqaudit.scoring.canonical_numbers import (
    _DIGIT,
    _MAX_NUMBER_TOKENS,
    _THOUSANDS,
    _number_of,
    _parsed_numbers_equal,
)
from vqaudit.scoring.canonical_text import (
    _SPAN_SPLIT,
    _Forms,
    _light,
    _vqaeval,
    is_single_entity,
    separate_digit_commas,
    split_spans,
    strip_trailing,
    strip_wrapper,
)
from vqaudit.scoring.leave_one_out import hit_pattern_score
from vqaudit.scoring.vqa_normalize import vqaeval_many

_ONE_SIDED, _, _TRAILING, _WRAPPER_KIND = STEP_KINDS  # step 2 is named by _PairRule.unicode_kind
_MULTI_SPAN = "multi-span"
_ANLS_THRESHOLD = 0.5  # official.anls's default tau (paper rule), which canonical ANLS uses
_normalized_distance = Levenshtein.normalized_distance  # official.anls's distance
_UNSET: object = object()

Kind = str | None


def _may_number(dashed: str) -> bool:
    """``_Pred.may_number``: False when the prediction is surely no number (ASCII without a digit)."""
    return not dashed.isascii() or _DIGIT.search(dashed) is not None


def _maybe_list(dashed: str) -> bool:
    """``_Pred.maybe_list``: whether ``split_spans`` of the prepared prediction can find 2 spans."""
    return "," in dashed or ";" in dashed or "/" in dashed or "&" in dashed or "and" in dashed


class PairRule:
    """``_match`` of the call's pairs on dict features (one instance per call; nothing outlives it).

    ``pred_features[p]`` is ``(stripped, compared forms, may_number, maybe_list)`` (``_Pred``'s fields; the
    compared forms are the light forms for ANLS, else the vqaEval surfaces: ``forms[r][at]``).
    """

    def __init__(
        self,
        forms: dict[str, FormsOf],
        canon: dict[str, str],
        light: bool,
        tolerance: float,
        predictions: Sequence[str],
        deferred: set[str],
        vqaeval: Callable[[str], str],
        steps: dict[str, tuple[str, str]],
    ) -> None:
        self.forms = forms
        self.canon = canon
        self.light = light
        self.deferred = deferred  # predictions without forms (_unmatchable)
        self.steps = steps  # their step texts
        self.base = vqaeval
        self.normal: dict[str, str] = {}
        self.tolerance = tolerance
        self.at = 3 if light else 2
        self.pred_prepared: dict[str, str] = {}
        self.pred_numbers: dict[str, object] = {}
        self.pred_features = {
            p: (f[4], f[3] if light else f[2], _may_number(f[0]), _maybe_list(f[0]))
            for p, f in ((p, forms[p]) for p in dict.fromkeys(predictions) if p not in deferred)
        }
        # A deferred prediction is ASCII (so its dash-unified text is itself) and has no compared forms.
        self.pred_features.update({p: (p.strip(), None, _may_number(p), _maybe_list(p)) for p in deferred})
        # A prediction that may be a number but is none reads no reference as a number (_match's numeric step).
        for p, (pst, ps, may_number, maybe_list) in self.pred_features.items():
            if may_number and self.pred_number(p) is None:
                self.pred_features[p] = (pst, ps, False, maybe_list)
        self.ref_numbers: dict[str, object] = {}
        self.ref_splits: dict[str, object] = {}
        self.ref_spans: dict[str, list[str]] = {}
        self.pred_splits: dict[str, tuple[str, ...]] = {}
        self.pred_objects: dict[str, _Pred] = {}
        self.ref_objects: dict[str, _Ref] = {}

    # --- the lazily read features (the _Pred / _Ref properties) ---

    def vq(self, text: str) -> str:
        """``canonical_text._vqaeval`` of one text (a list span), memoized in the call."""
        out = self.canon.get(text)
        if out is None:
            source = separate_digit_commas(text) if "," in text else text
            out = vqaeval_many((source,), self.normal)[source]
            if not out and text.strip():
                out = " ".join(text.lower().split())
            self.canon[text] = out
        return out

    def prepared(self, p: str) -> str:
        """``_Pred.prepared``: ``strip_trailing(strip_wrapper(dashed))``."""
        out = self.pred_prepared.get(p)
        if out is None:
            if not p.isascii():
                out = strip_trailing(strip_wrapper(self.forms[p][0]))
            elif p[:1] in _ASCII_SPACE or p[-1:] in _ASCII_SPACE or _wrapper_hint(p.lower()):
                out = strip_trailing(strip_wrapper(p))
            else:  # strip_wrapper leaves p as it is, so this is step 3's text strip_trailing(p)
                out = self.steps[p][0] if p in self.deferred else self.forms[p][1]
            self.pred_prepared[p] = out
        return out

    def pred_object(self, p: str) -> _Pred:
        """The ``_Pred`` of the definition for ``p`` (a deferred prediction gets its forms first), memoized."""
        out = self.pred_objects.get(p)
        if out is None:
            if p in self.deferred:
                forms_many((p,), self.light, self.base, self.canon, self.forms)
            f = self.forms[p]
            out = self.pred_objects[p] = _Pred(p, f[0], f[2], f[3])
        return out

    def ref_object(self, r: str) -> _Ref:
        """The ``_Ref`` of the definition for ``r`` (it holds :meth:`vq`: cleared by the caller), memoized."""
        out = self.ref_objects.get(r)
        if out is None:
            f = self.forms[r]
            out = self.ref_objects[r] = _Ref(r, f[0], f[1], f[2], f[3], self.vq)
        return out

    def ref_split(self, r: str) -> tuple[str, ...] | None:
        """The raw spans behind ``_Ref.spans`` (2 or more, a list-like reference), else None."""
        out = self.ref_splits.get(r, _UNSET)
        if out is _UNSET:
            out = None
            dashed = self.forms[r][0]
            if _SPAN_SPLIT.search(dashed):  # else split_spans finds one span at most
                rs = split_spans(dashed)
                if len(rs) >= 2 and not _THOUSANDS.match(self.forms[r][4]) and not is_single_entity(r):
                    out = rs
            self.ref_splits[r] = out
        return out  # type: ignore[return-value]

    def pred_number(self, p: str) -> object:
        """``_Pred.number`` (``_number_of`` of the prepared prediction), memoized."""
        pn = self.pred_numbers.get(p, _UNSET)
        if pn is _UNSET:
            x = self.prepared(p)
            # _number_of's and parse_number's early exits (an ASCII text: no digit, or a sentence of many words)
            pn = self.pred_numbers[p] = (
                None
                if x.isascii()
                and (
                    _DIGIT.search(x) is None
                    or ("(" not in x and len(x.split(None, _MAX_NUMBER_TOKENS)) > _MAX_NUMBER_TOKENS)
                )
                else _number_of(x)
            )
        return pn

    def numeric(self, p: str, r: str) -> Kind | object:
        """The numeric reading of the pair: its kind or None when both are numbers, else ``_UNSET``.

        The prediction's number is read first: a prediction that is no number needs no reference read.
        """
        pn = self.pred_number(p)
        if pn is None:
            return _UNSET
        rn = self.ref_numbers.get(r, _UNSET)
        if rn is _UNSET:
            rn = self.ref_numbers[r] = _number_of(self.forms[r][1])
        if rn is None:
            return _UNSET
        if _parsed_numbers_equal(pn, rn, self.tolerance):  # type: ignore[arg-type]
            return _numeric_kind(self.pred_object(p), self.ref_object(r))
        return None

    def multi_span(self, p: str, r: str) -> bool:
        """Whether the pair matches as lists (``_match``'s last step; ``p`` may be a list).

        The span counts are compared before any span is normalized (sorting keeps the count).
        """
        spans = self.ref_split(r)
        if spans is None:
            return False
        mine = self.pred_splits.get(p)
        if mine is None:
            mine = self.pred_splits[p] = split_spans(self.prepared(p))
        if len(mine) != len(spans):
            return False
        normal = self.ref_spans.get(r)
        if normal is None:
            normal = self.ref_spans[r] = sorted(map(self.vq, spans))
        return sorted(map(self.vq, mine)) == normal

    def kind(self, p: str, pf: tuple[str, _Forms | None, bool, bool], r: str) -> Kind:
        """``_match(pred features of p, ref features of r, tolerance, light)``; ``pf`` is ``pred_features[p]``."""
        pst, ps, may_number, maybe_list = pf
        rf = self.forms[r]
        rst = rf[4]
        rs: _Forms = rf[self.at]  # type: ignore[assignment]
        if pst == rst:
            return "exact"
        if may_number:
            k = self.numeric(p, r)
            if k is not _UNSET:
                return k  # type: ignore[return-value]
        assert rs is not None
        if ps is None:  # a deferred prediction: no string step can match (_unmatchable)
            pass
        elif ps[0] == rs[0]:
            return _ONE_SIDED
        elif ps[1] == rs[1]:
            return self.unicode_kind(p, r)
        elif ps[2] == rs[2]:
            return _TRAILING
        elif ps[3] == rs[3]:
            return _WRAPPER_KIND
        if maybe_list and self.multi_span(p, r):
            return _MULTI_SPAN
        return None

    def unicode_kind(self, p: str, r: str) -> str:
        """``_unicode_kind`` of a pair whose step-2 forms agree (``unicode-nfkc`` or ``unicode-dashes``)."""
        return _unicode_kind(p, r, _light if self.light else _vqaeval)

    # --- rows ---

    def rows(
        self, predictions: Sequence[str], answers: Sequence[Sequence[str]], metric: str
    ) -> list[tuple[float, str | None]]:
        """``_score_row`` of every row (same aggregation per metric).

        The pair rule is inlined for a prediction that is surely neither a number nor a list (``kind``'s
        numeric and list steps cannot apply): the raw equality, then the four string steps.
        """
        kind = self.kind
        features = self.pred_features
        forms = self.forms
        at = self.at
        out: list[tuple[float, str | None]] = []
        append = out.append
        vqa = metric == "vqa_accuracy"
        loo: dict[tuple[Kind, ...], float] = {}  # the leave-one-out score by the row's kinds (answer order)
        for p, row in zip(predictions, answers, strict=True):
            pf = features[p]
            pst, ps, may_number, maybe_list = pf
            if len(row) == 1:
                k = kind(p, pf, row[0])
                if vqa:
                    append((0.0, k))
                    continue
                refs: Sequence[str] = row
            else:
                by_ref: dict[str, Kind] = {}
                if may_number or maybe_list:
                    for a in dict.fromkeys(row):
                        by_ref[a] = kind(p, pf, a)
                elif ps is None:  # deferred: only the raw equality can hold
                    for a in dict.fromkeys(row):
                        by_ref[a] = "exact" if pst == forms[a][4] else None
                else:
                    ps0, ps1, ps2, ps3 = ps
                    for a in dict.fromkeys(row):
                        rf = forms[a]
                        rs: _Forms = rf[at]  # type: ignore[assignment]
                        by_ref[a] = (
                            "exact"
                            if pst == rf[4]
                            else _ONE_SIDED
                            if ps0 == rs[0]
                            else self.unicode_kind(p, a)
                            if ps1 == rs[1]
                            else _TRAILING
                            if ps2 == rs[2]
                            else _WRAPPER_KIND
                            if ps3 == rs[3]
                            else None
                        )
                values = by_ref.values()
                # The first "exact" kind, else the first matched kind, in answer order (_score_row).
                k = "exact" if "exact" in values else next(filter(None, values), None)
                if vqa:
                    if k is None:
                        append((0.0, None))
                        continue
                    key = tuple(map(by_ref.__getitem__, row))
                    score = loo.get(key)
                    if score is None:
                        score = loo[key] = hit_pattern_score(tuple([x is not None for x in key]))
                    append((score, k))
                    continue
                refs = list(by_ref)
            if k is not None:
                append((1.0, k))
            elif metric == "anls":
                append((self.anls(p, refs), None))
            elif metric == "containment":
                contained = _contained_kind(self.pred_object(p), [self.ref_object(a) for a in refs])
                append((1.0, contained) if contained is not None else (0.0, None))
            else:
                append((0.0, None))
        return out

    def anls(self, p: str, refs: Sequence[str]) -> float:
        """The canonical ANLS of an unmatched row: ``_score_row``'s best paper-rule ANLS over the references."""
        if p in self.deferred:
            return 0.0  # every reference's ANLS is 0 (_unmatchable)
        forms = self.forms
        pf = forms[p]
        ps4 = pf[2][3]
        pl4 = pf[3][3]  # type: ignore[index]
        best = 0.0
        for a in refs:
            rf = forms[a]
            rs4 = rf[2][3]
            # official.anls(x, [y]) (paper rule, tau 0.5) inlined
            if ps4 == rs4:
                nl = _normalized_distance(
                    rf[3][3].lower().strip(),  # type: ignore[index]
                    pl4.lower().strip(),
                    score_cutoff=_ANLS_THRESHOLD,
                )
            else:
                nl = _normalized_distance(rs4.lower().strip(), ps4.lower().strip(), score_cutoff=_ANLS_THRESHOLD)
            value = 1.0 - nl if nl < _ANLS_THRESHOLD else 0.0
            best = value if value > best else best
        return best
