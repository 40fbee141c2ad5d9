"""Paired differences between two runs of the same benchmark: the group counts lined up, one metric's difference.

Seed 000 §4 ("Denominators and uncertainty"): paired comparisons reuse the same draws. Both runs are put in the
canonical group order of :func:`vqaudit.metrics.group_counts` and every draw of :mod:`vqaudit.metrics.bootstrap`
weights each group identically in both runs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vqaudit.errors import VqauditError
from vqaudit.metrics.answerability import GroupCounts, _metric_statistic, group_counts
from vqaudit.metrics.bootstrap import CONFIDENCE, DEFAULT_DRAWS, paired_bootstrap_difference
from vqaudit.schema import Outcome


def paired_difference(
    outcomes_a: Sequence[Outcome],
    outcomes_b: Sequence[Outcome],
    metric: str,
    *,
    source: str | None = None,
    n_draws: int = DEFAULT_DRAWS,
    seed: int = 0,
    confidence: float = CONFIDENCE,
) -> tuple[float, float, float]:
    """Paired group-bootstrap difference ``metric(A) − metric(B)`` for two runs on the same benchmark.

    Seed 000 §4: paired comparisons reuse the same draws. Both runs are put in the canonical group order and
    every draw weights each group identically in A and B. A run compared with itself gives exactly
    ``(0.0, 0.0, 0.0)``.

    Args:
        outcomes_a: Outcomes of run A.
        outcomes_b: Outcomes of run B on the same groups and views.
        metric: One of :data:`METRIC_KEYS`.
        source: Source to compare; may be omitted when the outcomes hold a single source.
        n_draws: Bootstrap draws (>= 0).
        seed: Seed of the draws.
        confidence: Interval coverage in (0, 1).

    Returns:
        ``(point, lo, hi)``: the difference on the full data and its percentile interval (lo, hi are NaN when
        ``n_draws == 0``).

    Raises:
        VqauditError: on an unknown metric, an ambiguous or missing source, runs whose group sets (or the views
            in a group) differ, a metric undefined for this source, or invalid outcomes.
    """
    statistic = _metric_statistic(metric)
    all_a, all_b = group_counts(outcomes_a), group_counts(outcomes_b)
    if source is None:
        found = sorted(set(all_a.sources) | set(all_b.sources))
        if len(found) != 1:
            raise VqauditError(f"outcomes hold several sources {found}; choose one with source=")
        source = found[0]
    a, b = paired_counts(outcomes_a, outcomes_b, source, counts=(all_a, all_b))
    point, lo, hi = paired_bootstrap_difference(
        a.matrix, b.matrix, statistic, n_draws=n_draws, seed=seed, confidence=confidence
    )
    if np.isnan(point):
        raise VqauditError(f"metric {metric!r} is undefined for source {source!r} (no views in its denominator)")
    return point, lo, hi


def paired_counts(
    outcomes_a: Sequence[Outcome],
    outcomes_b: Sequence[Outcome],
    source: str,
    *,
    counts: tuple[GroupCounts, GroupCounts] | None = None,
) -> tuple[GroupCounts, GroupCounts]:
    """The per-group counts of one source in two runs, checked to line up group by group (seed 000 §4).

    A paired bootstrap weights row ``g`` of both runs with the same draw, so both runs must hold the same groups
    and the same views of ``source``; the canonical order then puts the same group in the same row.

    Args:
        outcomes_a: Outcomes of run A.
        outcomes_b: Outcomes of run B.
        source: The source compared.
        counts: ``(group_counts(outcomes_a), group_counts(outcomes_b))`` when the caller has them already.

    Returns:
        ``(A's counts, B's counts)`` of ``source``, shape ``(G, len(COLUMNS))`` each, rows in the same group order.

    Raises:
        VqauditError: a source missing from a run, runs whose groups (or the views of a group) differ, or invalid
            outcomes.
    """
    all_a, all_b = counts if counts is not None else (group_counts(outcomes_a), group_counts(outcomes_b))
    a, b = all_a.for_source(source), all_b.for_source(source)
    for what, ids_a, ids_b in (
        ("groups", set(a.group_ids), set(b.group_ids)),
        (
            "views",
            {o.view_id for o in outcomes_a if o.source == source},
            {o.view_id for o in outcomes_b if o.source == source},
        ),
    ):
        if ids_a != ids_b:
            raise VqauditError(
                f"paired difference needs the same {what} in both runs (source {source!r}); "
                f"only in A: {sorted(ids_a - ids_b)[:5]}, only in B: {sorted(ids_b - ids_a)[:5]}"
            )
    return a, b
