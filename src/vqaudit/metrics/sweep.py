"""A token-budget sweep: one model run at several ``max_tokens`` budgets on one benchmark, scored with paired draws.

A reasoning model thinks within its token budget; a budget too small cuts its thinking (the reply never finishes
and is invalid, :data:`vqaudit.parsing.reasoning.NOT_FINISHED`), which the group metrics count as a failure. The
sweep reports Ebal, EU, EM, Jk and Bk (seed 000 §4) per budget with 95% group-bootstrap intervals, and each budget's
paired difference to the largest budget: every budget is resampled with the same draws of the same groups (seed
000 §4: paired comparisons reuse the same draws), so the difference's interval is the paired one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from vqaudit.errors import VqauditError
from vqaudit.metrics.answerability import group_counts, metrics_from_counts
from vqaudit.metrics.bootstrap import CONFIDENCE, DEFAULT_DRAWS, bootstrap_totals, percentile_interval
from vqaudit.metrics.reasoning import holds_reasoning
from vqaudit.parsing.reasoning import NOT_FINISHED
from vqaudit.schema import Outcome

SWEEP_METRICS = ("Ebal", "EU", "EM", "Jk", "Bk")
"""The metrics of a budget sweep, in report order (seed 000 §4)."""


@dataclass(frozen=True)
class BudgetPoint:
    """One budget of a sweep.

    Attributes:
        budget: ``max_tokens`` of the run (tokens, >= 1).
        run: the run's label (its folder name).
        metrics: :data:`SWEEP_METRICS` -> fraction in [0, 1], or None where undefined.
        ci: :data:`SWEEP_METRICS` -> 95% group-bootstrap interval ``[lo, hi]``, or None.
        diff: :data:`SWEEP_METRICS` -> ``[point, lo, hi]``: this budget's metric minus the largest budget's, with
            its paired interval (``[0, 0, 0]`` for the largest budget itself; lo and hi None without draws), or
            None where undefined.
        n_unfinished: views whose reasoning never finished (the budget ran out), invalid.
        n_reasoning: views whose reply held reasoning or never finished it.
    """

    budget: int
    run: str
    metrics: dict[str, float | None]
    ci: dict[str, list[float] | None]
    diff: dict[str, list[float | None] | None]
    n_unfinished: int
    n_reasoning: int


@dataclass(frozen=True)
class BudgetSweep:
    """A sweep of one source: its budgets in increasing order and the reference (largest) budget.

    Attributes:
        source: the source.
        reference: the largest budget, the base of every paired difference.
        n_groups: groups of the source (the same in every run).
        n_draws: bootstrap draws (0: no intervals).
        seed: seed of the draws.
        points: one :class:`BudgetPoint` per budget, smallest budget first.
    """

    source: str
    reference: int
    n_groups: int
    n_draws: int
    seed: int
    points: tuple[BudgetPoint, ...]

    def as_dict(self) -> dict[str, Any]:
        """The sweep as JSON-able data (``sweep.json``)."""
        return asdict(self)


def _opt(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def budget_sweep(
    runs: Sequence[tuple[int, str, Sequence[Outcome]]],
    source: str,
    *,
    n_draws: int = DEFAULT_DRAWS,
    seed: int = 0,
    confidence: float = CONFIDENCE,
) -> BudgetSweep:
    """Score the runs of one model at several token budgets on one benchmark, paired against the largest budget.

    Each run's groups are put in the canonical order of
    :func:`~vqaudit.metrics.answerability.group_counts`; the bootstrap weights depend only on
    ``(n_groups, n_draws, seed)`` (:mod:`vqaudit.metrics.bootstrap`), so draw ``d`` resamples the same groups in
    every run and ``metric_d(B) - metric_d(largest)`` is the paired difference of draw ``d``.

    Args:
        runs: ``(budget, run label, outcomes)`` per run; budgets distinct and >= 1, in any order.
        source: the answerability source to score (``charts``, ``scenes``, ``photos``).
        n_draws: bootstrap draws (0: intervals are None).
        seed: seed of the draws.
        confidence: interval coverage in (0, 1).

    Returns:
        A :class:`BudgetSweep` with the budgets in increasing order.

    Raises:
        VqauditError: fewer than two runs, a budget below 1 or given twice, a run without views of ``source``,
            or runs whose groups or views differ (not one benchmark), or outcomes the group metrics refuse.
    """
    if len(runs) < 2:
        raise VqauditError(f"a budget sweep needs at least two budgets, got {len(runs)}")
    budgets = [b for b, _, _ in runs]
    if any(b < 1 for b in budgets) or len(set(budgets)) != len(budgets):
        raise VqauditError(f"budgets must be distinct and at least 1, got {budgets}")
    ordered = sorted(runs, key=lambda r: r[0])
    counts = [group_counts(out).for_source(source) for _, _, out in ordered]
    views = [sorted(o.view_id for o in out if o.source == source) for _, _, out in ordered]
    for (budget, label, _), c, v in zip(ordered[:-1], counts[:-1], views[:-1], strict=True):
        if c.group_ids != counts[-1].group_ids or v != views[-1]:
            raise VqauditError(
                f"run {label!r} (budget {budget}) holds other {source} groups or views than run "
                f"{ordered[-1][1]!r}: a sweep compares runs on one benchmark"
            )
    points = [metrics_from_counts(c.matrix.sum(axis=0)) for c in counts]
    draws = [metrics_from_counts(bootstrap_totals(c.matrix, n_draws=n_draws, seed=seed)) for c in counts]
    out = []
    for (budget, label, outcomes), point, drawn in zip(ordered, points, draws, strict=True):
        values = {k: _opt(float(point[k])) for k in SWEEP_METRICS}
        ci: dict[str, list[float] | None] = dict.fromkeys(SWEEP_METRICS)
        diff: dict[str, list[float | None] | None] = dict.fromkeys(SWEEP_METRICS)
        for k in SWEEP_METRICS:
            if values[k] is None:
                continue
            lo, hi = percentile_interval(drawn[k], confidence=confidence)
            if n_draws > 0 and not np.isnan(lo):
                ci[k] = [float(lo), float(hi)]
            delta = float(point[k] - points[-1][k])
            if np.isnan(delta):
                continue
            dlo, dhi = percentile_interval(drawn[k] - draws[-1][k], confidence=confidence)
            drawn_ok = n_draws > 0 and not np.isnan(dlo)
            diff[k] = [delta, float(dlo) if drawn_ok else None, float(dhi) if drawn_ok else None]
        mine = [o for o in outcomes if o.source == source]
        out.append(
            BudgetPoint(
                budget=budget,
                run=label,
                metrics=values,
                ci=ci,
                diff=diff,
                n_unfinished=sum(1 for o in mine if o.invalid_reason == NOT_FINISHED),
                n_reasoning=sum(1 for o in mine if holds_reasoning(o)),
            )
        )
    return BudgetSweep(
        source=source,
        reference=ordered[-1][0],
        n_groups=len(counts[-1].group_ids),
        n_draws=n_draws,
        seed=seed,
        points=tuple(out),
    )
