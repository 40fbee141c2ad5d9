"""The pooling arithmetic of ``audit-summary`` (:mod:`vqaudit.report.audit_summary`).

Ratios of summed counts, row-weighted means, plain means and Pearson's r, each NaN (n/a) where it is undefined.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def ratio(num: float, den: float, scale: float = 100.0) -> float:
    """``scale * num / den``: a percentage by default; NaN (n/a) when ``den`` is 0."""
    return scale * num / den if den else math.nan


def weighted(pairs: Sequence[tuple[float, float]]) -> float:
    """Sum of weight * value / sum of weight over pairs (value, weight), NaN values and zero weights skipped."""
    kept = [(v, w) for v, w in pairs if w > 0 and not math.isnan(v)]
    return ratio(sum(v * w for v, w in kept), sum(w for _, w in kept), 1.0)


def mean_of(values: Sequence[float]) -> float:
    """The plain mean of the values that are not NaN; NaN when none is."""
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else math.nan


def pearson_r(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Pearson correlation of two equal-length sequences; NaN with fewer than 2 points or a constant side.

    Raises:
        ValueError: sequences of different lengths.
    """
    if len(xs) != len(ys):
        raise ValueError("pearson_r: sequences of different lengths")
    n = len(xs)
    if n < 2:
        return math.nan
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else math.nan
