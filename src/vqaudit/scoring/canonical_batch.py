"""The canonical layer of many rows at once: :func:`canonical_scores` (issue 19 part 3).

The same ``(score, kind)`` per row as :func:`vqaudit.scoring.canonical.canonical_score`, each distinct string read
once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from vqaudit.scoring.canonical_match import _make_pred, _make_ref, _Pred, _Ref, _score_row
from vqaudit.scoring.canonical_text import _light, separate_digit_commas
from vqaudit.scoring.vqa_normalize import fast_vqaeval_process


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

