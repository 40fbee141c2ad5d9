"""Group metrics per stratum (chart kind, scene template, state, residual-cue flag) from one group bootstrap.

Seed 000 §4 ("Denominators and uncertainty"): intervals come from resampling the groups of one source with
replacement, views of a group kept together, and comparisons reuse the same draws. :func:`grouped` applies this
to strata: the source's groups are resampled once, and every stratum's metric is computed on the same draws.
A stratum's metric in one draw is that of the stratum's views among the drawn groups, so its number of groups
varies from draw to draw (a draw that holds none of its groups gives an undefined value, left out of the
percentiles as in :func:`vqaudit.metrics.bootstrap.percentile_interval`), and two strata can be compared by the
paired difference of :meth:`Grouped.difference`.

A stratum is chosen per view (``by(outcome)``), so it can be a group property (every view of a group in the same
stratum: a chart kind, a scene template) or a view property (the state). Within a stratum, Jk and Bk are taken
over the group's views in that stratum: per state, ``Jk`` is the share of groups whose view in that state met its
obligation. The stratum holding every view has exactly the metrics and intervals of
:func:`vqaudit.metrics.answerability_metrics` (same groups, same draws).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from vqaudit.errors import VqauditError
from vqaudit.metrics.answerability import METRIC_KEYS, group_counts, metrics_from_counts
from vqaudit.metrics.bootstrap import CONFIDENCE, DEFAULT_DRAWS, bootstrap_totals, percentile_interval
from vqaudit.schema import Outcome

StratumKey = Callable[[Outcome], "str | tuple[str, ...] | None"]
"""Which strata a view belongs to: one key, several keys (overlapping strata), or None (left out)."""


@dataclass(frozen=True)
class Stratum:
    """The metrics of one stratum.

    Attributes:
        key: the stratum's name.
        n_groups: groups with at least one view in the stratum.
        n_views: views in the stratum.
        values: metric -> fraction in [0, 1], or None where its denominator is empty.
        ci: metric -> ``[lo, hi]`` percentile interval of the shared draws, or None (undefined, or no draws).
    """

    key: str
    n_groups: int
    n_views: int
    values: dict[str, float | None]
    ci: dict[str, list[float] | None]

    def as_dict(self) -> dict[str, Any]:
        """The JSON entry: every metric, then ``n_groups``, ``n_views`` and ``ci``.

        With every metric asked for, this is the shape of one source's entry of
        :func:`vqaudit.metrics.answerability_metrics`.
        """
        return {**self.values, "n_groups": self.n_groups, "n_views": self.n_views, "ci": dict(self.ci)}


@dataclass(frozen=True)
class Grouped:
    """The strata of one source scored on one set of group-bootstrap draws.

    Attributes:
        source: the source of the outcomes.
        metrics: the metrics computed (keys of :data:`vqaudit.metrics.METRIC_KEYS`).
        strata: the strata in order, each with its values and intervals.
        n_groups: groups resampled (every group of the outcomes given).
        n_draws: draws made (0: no intervals).
        seed: seed of the draws.
        confidence: interval coverage.
        draws: stratum -> metric -> float64 array of shape ``(n_draws,)``, NaN where undefined in a draw.
    """

    source: str
    metrics: tuple[str, ...]
    strata: tuple[Stratum, ...]
    n_groups: int
    n_draws: int
    seed: int
    confidence: float
    draws: dict[str, dict[str, NDArray[np.float64]]]

    def __getitem__(self, key: str) -> Stratum:
        for s in self.strata:
            if s.key == key:
                return s
        raise VqauditError(f"no stratum {key!r} (have: {', '.join(s.key for s in self.strata)})")

    def difference(self, a: str, b: str, metric: str) -> tuple[float, float, float]:
        """Paired difference ``metric(a) - metric(b)`` of two strata over the same draws (seed 000 §4).

        Returns:
            ``(point, lo, hi)``; lo and hi are NaN without draws or where every draw leaves one stratum empty.

        Raises:
            VqauditError: an unknown stratum, a metric not computed, or a metric undefined in either stratum.
        """
        if metric not in self.metrics:
            raise VqauditError(f"metric {metric!r} was not computed (have: {', '.join(self.metrics)})")
        pa, pb = self[a].values[metric], self[b].values[metric]
        if pa is None or pb is None:
            raise VqauditError(f"metric {metric!r} is undefined in stratum {a if pa is None else b!r}")
        lo, hi = percentile_interval(self.draws[a][metric] - self.draws[b][metric], confidence=self.confidence)
        return pa - pb, float(lo), float(hi)


def _keys(value: str | tuple[str, ...] | None, view_id: str) -> tuple[str, ...]:
    if value is None:
        return ()
    keys = (value,) if isinstance(value, str) else tuple(value)
    if not all(isinstance(k, str) and k for k in keys):
        raise VqauditError(f"view {view_id!r}: a stratum key must be a non-empty string, got {value!r}")
    return keys


def _opt(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def grouped(
    metric: str | Sequence[str],
    outcomes: Sequence[Outcome],
    *,
    by: StratumKey,
    order: Sequence[str] | None = None,
    n_draws: int = DEFAULT_DRAWS,
    seed: int = 0,
    confidence: float = CONFIDENCE,
) -> Grouped:
    """Score every stratum of one source's outcomes with one group bootstrap (seed 000 §4).

    The groups of ``outcomes`` are put in the canonical order of :func:`vqaudit.metrics.group_counts` and drawn
    once (``n_draws`` draws of :mod:`vqaudit.metrics.bootstrap`, which depend only on the number of groups, the
    draws and the seed); each stratum's per-group counts are weighted by the same draw, so every stratum's
    interval, and the paired difference of two strata (:meth:`Grouped.difference`), come from the same resamples.

    Args:
        metric: a key of :data:`vqaudit.metrics.METRIC_KEYS` (``Jk``, ``Bk``, ``Ebal``, ...) or several.
        outcomes: scored views of one source.
        by: the strata of a view: a key, a tuple of keys (a view counted in several strata, e.g. "all" and
            "flagged"), or None (the view is in no stratum; its group is still resampled).
        order: the strata in the order wanted; default sorted. Keys listed here with no view are left out.
        n_draws: bootstrap draws (>= 0; 0 gives no intervals).
        seed: seed of the draws.
        confidence: interval coverage in (0, 1).

    Returns:
        :class:`Grouped`: one :class:`Stratum` per key that holds at least one view.

    Raises:
        VqauditError: an unknown metric, no outcomes or several sources, a stratum key that is not a non-empty
            string, a stratum named by ``by`` missing from ``order``, outcomes :func:`~vqaudit.metrics.group_counts`
            refuses (duplicated views, inconsistent flags), or ``n_draws < 0``.
    """
    wanted = (metric,) if isinstance(metric, str) else tuple(metric)
    unknown = [m for m in wanted if m not in METRIC_KEYS]
    if unknown or not wanted:
        raise VqauditError(f"unknown metric {unknown or wanted!r}; choose from {', '.join(METRIC_KEYS)}")
    if n_draws < 0:
        raise VqauditError(f"bootstrap draws must be >= 0, got n_draws={n_draws}")
    everything = group_counts(outcomes)  # validates every outcome
    sources = sorted(set(everything.sources))
    if len(sources) != 1:
        raise VqauditError(f"grouped metrics take one source at a time, got {', '.join(sources)}")
    members: dict[str, list[Outcome]] = {}
    for o in outcomes:
        for key in _keys(by(o), o.view_id):
            members.setdefault(key, []).append(o)
    if order is None:
        keys = sorted(members)
    else:
        missing = sorted(set(members) - set(order))
        if missing:
            raise VqauditError(f"strata {missing} are not in the order given ({', '.join(order)})")
        keys = [k for k in dict.fromkeys(order) if k in members]
    row_of = {gid: i for i, gid in enumerate(everything.group_ids)}
    n_groups, width = everything.matrix.shape
    blocks = []
    for key in keys:
        counts = group_counts(members[key])
        block = np.zeros((n_groups, width), dtype=np.int64)
        block[[row_of[g] for g in counts.group_ids]] = counts.matrix
        blocks.append(block)
    stacked = np.concatenate(blocks, axis=1) if blocks else np.zeros((n_groups, 0), dtype=np.int64)
    totals = stacked.sum(axis=0)
    resampled = bootstrap_totals(stacked, n_draws=n_draws, seed=seed) if n_draws and blocks else None
    cols = {name: i for i, name in enumerate(everything.columns)}
    strata: list[Stratum] = []
    draws: dict[str, dict[str, NDArray[np.float64]]] = {}
    for j, key in enumerate(keys):
        part = slice(j * width, (j + 1) * width)
        point = metrics_from_counts(totals[part])
        drawn = metrics_from_counts(resampled[:, part]) if resampled is not None else None
        draws[key] = {m: drawn[m] if drawn is not None else np.empty(0, dtype=np.float64) for m in wanted}
        ci: dict[str, list[float] | None] = dict.fromkeys(wanted)
        if resampled is not None:
            lo, hi = percentile_interval(np.stack([draws[key][m] for m in wanted], axis=1), confidence=confidence)
            for i, m in enumerate(wanted):
                if not (np.isnan(point[m]) or np.isnan(lo[i])):
                    ci[m] = [float(lo[i]), float(hi[i])]
        strata.append(
            Stratum(
                key=key,
                n_groups=int(totals[part][cols["groups"]]),
                n_views=int(totals[part][cols["views"]]),
                values={m: _opt(float(point[m])) for m in wanted},
                ci=ci,
            )
        )
    return Grouped(
        source=sources[0],
        metrics=wanted,
        strata=tuple(strata),
        n_groups=n_groups,
        n_draws=n_draws,
        seed=seed,
        confidence=confidence,
        draws=draws,
    )
