"""Perturbation flip rates and family deltas (seed 002 §5.3, Table 6) and judge - official intervals (App. G).

- Flip rate of a variant: the share of questions (present under both Base and the variant) whose official
  correctness differs from Base (SPEC §3). Correct means an official score of 1 (the convention of
  :mod:`vqaudit.scoring.repair`).
- The mean flip rate averages the seven benign variants A1-A5, B1-B2; B3 (adversarial control) is reported
  apart (§4, §5.3).
- Family deltas (Table 6 bottom block): the mean over a family's variants of (variant mean score - Base mean
  score), in points, for the official and the canonical layer.
- :func:`judge_delta_interval`: the paired bootstrap of the judge-corrected score minus the official score over
  the same rows (appendix G, Table 11: 95% intervals), one row per bootstrap group.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from vqaudit.metrics.bootstrap import paired_bootstrap_difference
from vqaudit.prompts.perturbations import BENIGN, PERTURBATIONS


def flip_rate(base: Mapping[str, float], variant: Mapping[str, float]) -> float:
    """Share (in [0, 1]) of common questions whose correctness (score == 1) differs from Base; NaN if none."""
    common = [q for q in base if q in variant]
    if not common:
        return math.nan
    return sum(1 for q in common if (base[q] >= 1.0) != (variant[q] >= 1.0)) / len(common)


def _mean(values: Mapping[str, float]) -> float:
    return 100.0 * sum(values.values()) / len(values) if values else math.nan


@dataclass(frozen=True)
class PerturbationSummary:
    """Per-variant flip rates and deltas (points) and the family means; B3 kept apart."""

    flip_rates: dict[str, float]
    official_delta: dict[str, float]
    canonical_delta: dict[str, float]
    mean_benign_flip_rate: float
    family_official_delta: dict[str, float]
    family_canonical_delta: dict[str, float]
    control_flip_rate: float


def summarize_perturbations(official: Mapping[str, Mapping[str, float]],
                            canonical: Mapping[str, Mapping[str, float]]) -> PerturbationSummary:
    """Summarize scores per variant (``variant id -> qid -> score``, Base included) for both layers.

    Returns:
        The :class:`PerturbationSummary`; values are NaN where a variant is missing.
    """
    base_o, base_c = official.get("Base", {}), canonical.get("Base", {})
    flips: dict[str, float] = {}
    d_off: dict[str, float] = {}
    d_can: dict[str, float] = {}
    for v in PERTURBATIONS:
        if v.variant_id == "Base" or v.variant_id not in official:
            continue
        flips[v.variant_id] = flip_rate(base_o, official[v.variant_id])
        d_off[v.variant_id] = _mean(official[v.variant_id]) - _mean(base_o)
        d_can[v.variant_id] = _mean(canonical.get(v.variant_id, {})) - _mean(base_c)
    benign = [flips[v] for v in BENIGN if v in flips]
    fam_o: dict[str, float] = {}
    fam_c: dict[str, float] = {}
    for family in ("A", "B"):
        ids = [v.variant_id for v in PERTURBATIONS if v.family == family and v.variant_id in d_off]
        fam_o[family] = sum(d_off[i] for i in ids) / len(ids) if ids else math.nan
        fam_c[family] = sum(d_can[i] for i in ids) / len(ids) if ids else math.nan
    return PerturbationSummary(flips, d_off, d_can, sum(benign) / len(benign) if benign else math.nan, fam_o, fam_c,
                               flips.get("B3", math.nan))


def judge_delta_interval(official: Sequence[float], judged: Sequence[float], *, n_draws: int = 10_000,
                         seed: int = 0) -> tuple[float, float, float]:
    """Paired-bootstrap 95% interval of (judge-corrected mean - official mean), in points.

    Args:
        official: official score per row (in [0, 1]).
        judged: judge-corrected score per row (1 where the judge accepts an error, else the official score).
        n_draws: bootstrap draws.
        seed: seed of the draws.

    Returns:
        ``(point, lo, hi)`` in percentage points; NaN for an empty pool.
    """
    n = len(official)
    if n == 0:
        return math.nan, math.nan, math.nan
    a = np.asarray(judged, dtype=np.float64).reshape(n, 1)
    b = np.asarray(official, dtype=np.float64).reshape(n, 1)

    def mean_points(totals: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(100.0 * totals[..., 0] / n, dtype=np.float64)

    return paired_bootstrap_difference(a, b, mean_points, n_draws=n_draws, seed=seed)
