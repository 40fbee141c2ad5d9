"""The canonical layer of many rows at once: :func:`canonical_scores` (the speed of the target pass).

The same ``(score, kind)`` per row as :func:`vqaudit.scoring.canonical.canonical_score`, whose definition on
precomputed features is :func:`vqaudit.scoring.canonical_match._score_row` / ``_match``. Here the forms of every
distinct string of the call come from one batch (:func:`vqaudit.scoring.canonical_forms.forms_many`), the
features matching reads are plain dicts keyed by the string, and each metric scores its rows in one loop with the
pair rule (``_match``) inlined: the raw equality, the numeric reading (only for a prediction that may be a
number against a reference that is one), the four string steps, the list spans (only for a prediction that may
be a list against a list reference). The rare parts (naming a numeric kind, containment) build the ``_Pred`` /
``_Ref`` objects of the definition and call it. The pair rule on dict features is
:class:`vqaudit.scoring.canonical_pairs.PairRule`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain

from vqaudit.scoring.canonical_forms import (
    FormsOf,
    form_length_bounds,
    forms_many,
    step_texts,
    strong_bounds,
)
from vqaudit.scoring.canonical_pairs import PairRule
from vqaudit.scoring.vqa_normalize import fast_vqaeval_process


def canonical_scores(
    predictions: Sequence[str],
    answers: Sequence[Sequence[str]],
    metric: str,
    *,
    vqaeval: Callable[[str], str] | None = None,
) -> list[tuple[float, str | None]]:
    """:func:`canonical_score` of many rows: the same ``(score, kind)`` per row, each distinct string read once.

    The forms of each distinct prediction and reference are computed once, in batch passes over all of them
    (:func:`vqaudit.scoring.canonical_forms.forms_many`), in memos local to the call (so nothing outlives it and
    no cache needs clearing), and the light forms only for ANLS, the one metric that compares them.

    Args:
        predictions: the model outputs, one per row.
        answers: the reference answers per row (each at least one).
        metric: official metric name.
        vqaeval: the vqaEval normalization to use for the texts that take the per-text way (non-ASCII), e.g. a
            memo the caller shares with other layers; it must equal
            :func:`vqaudit.scoring.vqa_normalize.fast_vqaeval_process` (the default), which the batch passes
            use (:func:`vqaudit.scoring.vqa_normalize.vqaeval_many`).

    Returns:
        One ``(score in [0, 1], kind)`` per row, as :func:`canonical_score` returns it.

    Raises:
        ValueError: a row without answers, or ``predictions`` and ``answers`` of different lengths.
    """
    if len(predictions) != len(answers):
        raise ValueError(f"{len(predictions)} predictions but {len(answers)} answer lists")
    if not all(answers):
        raise ValueError("at least one reference answer is required")
    light = metric == "anls"
    base = fast_vqaeval_process if vqaeval is None else vqaeval
    canon: dict[str, str] = {}
    deferred: set[str] = set()
    steps: dict[str, tuple[str, str]] = {}
    if light:
        forms = forms_many(list(chain.from_iterable(answers)), light, base, canon)
        deferred = _unmatchable(predictions, answers, forms, steps)
        forms_many([p for p in predictions if p not in deferred], light, base, canon, forms, steps)
    else:
        forms = forms_many([*predictions, *chain.from_iterable(answers)], light, base, canon)
    pair = PairRule(
        forms, canon, light, 0.05 if metric == "relaxed_accuracy" else 0.0, predictions, deferred, base, steps
    )
    try:
        return pair.rows(predictions, answers, metric)
    finally:
        # Each _Ref holds pair.vq, a reference cycle: left alone, the call's memos (every distinct string's forms)
        # would outlive it until the cyclic collector runs, which the audit pauses during its passes.
        pair.ref_objects.clear()


def _unmatchable(
    predictions: Sequence[str],
    answers: Sequence[Sequence[str]],
    forms: dict[str, FormsOf],
    steps: dict[str, tuple[str, str]],
) -> set[str]:
    """ANLS: the predictions that no reference of their rows can match or score above 0 (their forms are skipped).

    By :func:`vqaudit.scoring.canonical_forms.form_length_bounds`, every form of such a prediction (an ASCII one
    not among the references) is longer than each light form and than the step-4 form ``r4`` of every
    reference of its rows, and at least ``2 * len(r4.lower().strip())`` long: so no string step matches, the
    vqaEval forms differ (``_score_row`` then takes the ANLS of the vqaEval forms), and the normalized
    Levenshtein distance, at least ``1 - len(r4) / len(p4)``, is at least the threshold 0.5 (ANLS 0).
    ``steps`` gets the step texts of the ASCII predictions (for their forms, computed next).
    """
    need: dict[str, int] = {}
    for r, f in forms.items():
        r4 = f[2][3]
        l1, l2, l3, l4 = f[3]  # type: ignore[misc]
        need[r] = max(len(l1) + 1, len(l2) + 1, len(l3) + 1, len(l4) + 1, len(r4) + 1, 2 * len(r4.lower().strip()))
    longest: dict[str, int] = {}
    get = longest.get
    for p, row in zip(predictions, answers, strict=True):
        if p in forms:
            continue
        bound = need[row[0]] if len(row) == 1 else max(map(need.__getitem__, row))
        if bound > get(p, 0):
            longest[p] = bound
    candidates = [p for p in longest if p.isascii()]
    t3s, t4s = step_texts(candidates)
    steps.update(zip(candidates, zip(t3s, t4s, strict=True), strict=True))
    # the faster, smaller bound first; the other one where it does not suffice
    out = {p for p, lb in zip(candidates, strong_bounds(t4s), strict=True) if lb >= longest[p]}
    rest = [(p, t4) for p, t4 in zip(candidates, t4s, strict=True) if p not in out]
    out.update(
        p for (p, _), lb in zip(rest, form_length_bounds([t4 for _, t4 in rest]), strict=True) if lb >= longest[p]
    )
    return out
