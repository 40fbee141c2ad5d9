"""The Table 7 counts of one contract repair over a pool (seed 002 §5.4): gain, recovered errors, breaks, net.

A row is *correct* when its score is 1, an *error* otherwise; definitions in the module docstring of
:mod:`vqaudit.scoring.repair`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class RepairResult:
    """One repair variant over a pool (Table 7 columns; points are percentage points of the mean score)."""

    variant: str
    n: int
    before: float
    after: float
    gain_pp: float
    errors_before: int
    recovered: int
    breaks: int
    net: int
    judge_fn: int | None = None
    judge_fn_recovered: int | None = None


def summarize_repair(
    variant: str, before: Sequence[float], after: Sequence[float], judge_accepts: Sequence[bool | None] | None = None
) -> RepairResult:
    """Count gain, recovered errors, breaks and net gain of one repair (module docstring definitions).

    Args:
        variant: one of :data:`vqaudit.scoring.repair.VARIANTS`.
        before: official scores per row.
        after: repaired scores per row (same order).
        judge_accepts: judge verdict per row (None: not judged), or None when no judge ran.

    Returns:
        The :class:`RepairResult` (``before``/``after`` are 100 x mean scores; 0 for an empty pool).
    """
    n = len(before)
    if n == 0:
        return RepairResult(variant, 0, 0.0, 0.0, 0.0, 0, 0, 0, 0)
    recovered = sum(1 for b, a in zip(before, after, strict=True) if b < 1.0 <= a)
    breaks = sum(1 for b, a in zip(before, after, strict=True) if a < 1.0 <= b)
    mean_b, mean_a = 100.0 * sum(before) / n, 100.0 * sum(after) / n
    fn = fn_rec = None
    if judge_accepts is not None:
        fn = sum(1 for b, j in zip(before, judge_accepts, strict=True) if b < 1.0 and j)
        fn_rec = sum(1 for b, a, j in zip(before, after, judge_accepts, strict=True) if b < 1.0 <= a and j)
    return RepairResult(
        variant,
        n,
        mean_b,
        mean_a,
        mean_a - mean_b,
        sum(1 for b in before if b < 1.0),
        recovered,
        breaks,
        recovered - breaks,
        fn,
        fn_rec,
    )
