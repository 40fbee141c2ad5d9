"""Paired difference between two runs of the appendix-B figures: common-state Bk and Jk, conditional disagreement.

Seed 000 §4 ("Denominators and uncertainty": paired comparisons reuse the same draws) applied to the entries of
:func:`vqaudit.metrics.conditional.conditional_diagnostics` (appendix B, §5.2). Two runs of the same benchmark
hold the same groups; both are put in the canonical group order of :func:`vqaudit.metrics.group_counts`, and
every draw of :mod:`vqaudit.metrics.bootstrap` weights group ``g`` identically in both runs. The draws resample
every group of the source (those without a common-state view too), so with the seed and number of draws a run
was scored with they are the very draws behind that run's own intervals in ``metrics.json`` and
``diagnostics.json``.

Per draw, each run's figures are computed from its weighted totals, and the difference is run B minus run A:

- ``common_Bk`` / ``common_Jk``: groups with every decision right / every obligation met over their common-state
  views (``S`` and ``M``; the photo control read as ``S``, :data:`vqaudit.metrics.conditional.COMMON_STATES`),
  divided by the groups holding such views;
- ``conditional_disagreement``: ``(Bk - Jk) / Bk`` over every view, i.e. (decision-right groups - task-right
  groups) / decision-right groups; undefined in a draw (left out of the percentiles) where a run has no
  decision-right group.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from vqaudit.errors import VqauditError
from vqaudit.metrics.answerability import COLUMNS, GroupCounts, group_counts
from vqaudit.metrics.bootstrap import CONFIDENCE, DEFAULT_DRAWS, bootstrap_totals, percentile_interval
from vqaudit.metrics.conditional import COMMON_STATES
from vqaudit.metrics.paired import paired_counts
from vqaudit.schema import Outcome

PAIRED_KEYS = ("common_Bk", "common_Jk", "conditional_disagreement")
"""The figures compared, in report order."""

_PICK = [COLUMNS.index(name) for name in ("decision_ok_group", "task_ok_group", "groups")]
"""The count columns each figure needs, taken twice: over every view, then over the common-state views."""


@dataclass(frozen=True)
class PairedDelta:
    """One figure of both runs and its paired difference.

    Attributes:
        a: run A's value, a fraction in [0, 1], or None where undefined.
        b: run B's value, likewise.
        point: ``b - a`` in [-1, 1], or None where either value is undefined.
        ci: ``(lo, hi)`` percentile interval of ``b - a`` over the paired draws, or None (no draws, an undefined
            point, or every draw undefined).
    """

    a: float | None
    b: float | None
    point: float | None
    ci: tuple[float, float] | None


@dataclass(frozen=True)
class ConditionalDifference:
    """The paired differences of one source between run A and run B.

    Attributes:
        source: the source compared.
        n_groups: groups resampled (every group of the source).
        n_draws: draws made (0: no intervals).
        seed: seed of the draws.
        confidence: interval coverage.
        deltas: key of :data:`PAIRED_KEYS` -> :class:`PairedDelta`.
    """

    source: str
    n_groups: int
    n_draws: int
    seed: int
    confidence: float
    deltas: dict[str, PairedDelta]


def _columns(outcomes: Sequence[Outcome], source: str, counts: GroupCounts) -> NDArray[np.int64]:
    """Shape ``(G, 6)``: decision-right, task-right and group counts over every view, then over the common states."""
    common = np.zeros((len(counts.group_ids), len(_PICK)), dtype=np.int64)
    views = [o for o in outcomes if o.source == source and o.state in COMMON_STATES]
    if views:
        row_of = {gid: i for i, gid in enumerate(counts.group_ids)}
        sub = group_counts(views)
        common[[row_of[g] for g in sub.group_ids]] = sub.matrix[:, _PICK]
    return np.concatenate([counts.matrix[:, _PICK], common], axis=1)


def _ratio(num: NDArray[np.float64], den: NDArray[np.float64]) -> NDArray[np.float64]:
    out: NDArray[np.float64] = np.divide(num, den, out=np.full(np.shape(den), np.nan), where=den > 0)
    return out


def _figures(totals: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
    """The figures of :data:`PAIRED_KEYS` from totals of shape ``(..., 6)`` (NaN where undefined)."""
    t = np.asarray(totals, dtype=np.float64)
    dok, tok = t[..., 0], t[..., 1]
    return {
        "common_Bk": _ratio(t[..., 3], t[..., 5]),
        "common_Jk": _ratio(t[..., 4], t[..., 5]),
        "conditional_disagreement": _ratio(dok - tok, dok),
    }


def _opt(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def conditional_difference(
    outcomes_a: Sequence[Outcome],
    outcomes_b: Sequence[Outcome],
    source: str,
    *,
    n_draws: int = DEFAULT_DRAWS,
    seed: int = 0,
    confidence: float = CONFIDENCE,
) -> ConditionalDifference:
    """Paired group-bootstrap difference, run B minus run A, of one source's appendix-B figures (seed 000 §4, App. B).

    A run compared with itself gives a point of exactly 0 and the interval ``(0.0, 0.0)`` for every defined figure.

    Args:
        outcomes_a: outcomes of run A (the base).
        outcomes_b: outcomes of run B on the same groups and views.
        source: the source compared.
        n_draws: bootstrap draws (>= 0; 0 gives no intervals); the run's recorded ``score --draws`` gives its own
            draws.
        seed: seed of the draws (the run's recorded ``score --bootstrap-seed``).
        confidence: interval coverage in (0, 1).

    Returns:
        :class:`ConditionalDifference` with one :class:`PairedDelta` per key of :data:`PAIRED_KEYS`.

    Raises:
        VqauditError: a source missing from a run, runs whose groups or views of ``source`` differ, invalid outcomes,
            ``n_draws < 0`` or a confidence outside (0, 1).
    """
    if not 0.0 < confidence < 1.0:
        raise VqauditError(f"confidence must be in (0, 1), got {confidence}")
    counts_a, counts_b = paired_counts(outcomes_a, outcomes_b, source)
    a = _columns(outcomes_a, source, counts_a)
    b = _columns(outcomes_b, source, counts_b)
    point_a, point_b = _figures(a.sum(axis=0)), _figures(b.sum(axis=0))
    drawn: tuple[dict[str, NDArray[np.float64]], dict[str, NDArray[np.float64]]] | None = None
    totals = bootstrap_totals(np.concatenate([a, b], axis=1), n_draws=n_draws, seed=seed)
    if n_draws:
        width = a.shape[1]
        drawn = _figures(totals[:, :width]), _figures(totals[:, width:])
    deltas: dict[str, PairedDelta] = {}
    for key in PAIRED_KEYS:
        va, vb = _opt(float(point_a[key])), _opt(float(point_b[key]))
        point = None if va is None or vb is None else vb - va
        ci: tuple[float, float] | None = None
        if drawn is not None and point is not None:
            lo, hi = percentile_interval(drawn[1][key] - drawn[0][key], confidence=confidence)
            if not np.isnan(lo):
                ci = (float(lo), float(hi))
        deltas[key] = PairedDelta(a=va, b=vb, point=point, ci=ci)
    return ConditionalDifference(
        source=source,
        n_groups=int(a.shape[0]),
        n_draws=n_draws,
        seed=seed,
        confidence=confidence,
        deltas=deltas,
    )
