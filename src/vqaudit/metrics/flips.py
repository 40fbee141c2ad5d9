"""Perturbation flip rates and family deltas (seed 002 §5.3, Table 6) and judge - official intervals (App. G).

- Flip rate of a variant: the share of questions (present under both Base and the variant) whose official
  correctness differs from Base (docs/papers.md, seed 002). Correct means an official score of 1 (the convention of
  :mod:`vqaudit.scoring.repair`).
- The mean flip rate averages the seven benign variants A1-A5, B1-B2; B3 (adversarial control) is reported
  apart (§4, §5.3).
- Delta of a variant (official and canonical layer): its mean score minus Base's, in points, over the questions
  *both* answered (paired, like the flip rate). Seed 002 (§5.3, Table 6) gives the deltas beside the flip
  rates without naming their question set and reports no missing replies; with every reply present paired and
  unpaired agree. With a reply missing on one side only, an unpaired difference of means mixes a score change with a
  change of question set (e.g. 6/7 - 7/7 over two different sevens, with no reply changed at all), so we pair.
- Family deltas (Table 6 bottom block): the mean over a family's variants of their paired deltas, in points,
  for the official and the canonical layer (each variant over its own paired questions; ``paired`` gives n).
- Per-bucket deltas (Table 4 "Delta True", Table 8 "Perturb Delta True"): the same paired deltas over the
  questions of one answer-contract bucket, per variant, per family and over the seven benign variants.
- A variant with no scored reply paired with a Base reply is left out of every mean, and the summary's
  ``notes`` say so (as they do for benign variants not run, and, naming each figure's n, for variants or a Base
  that reached only some questions): a mean over fewer variants or questions is never silent.
- :func:`judge_delta_interval`: the paired bootstrap of the judge-corrected score minus the official score over
  the same rows (appendix G, Table 11: 95% intervals), one row per bootstrap group.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from vqaudit.metrics.bootstrap import paired_bootstrap_difference
from vqaudit.prompts.perturbations import BENIGN, PERTURBATIONS
from vqaudit.scoring.contracts import BUCKETS


def flip_rate(base: Mapping[str, float], variant: Mapping[str, float]) -> float:
    """Share (in [0, 1]) of common questions whose correctness (score == 1) differs from Base; NaN if none."""
    common = [q for q in base if q in variant]
    if not common:
        return math.nan
    return sum(1 for q in common if (base[q] >= 1.0) != (variant[q] >= 1.0)) / len(common)


def paired_delta(base: Mapping[str, float], variant: Mapping[str, float]) -> float:
    """Variant mean minus Base mean, in points, over the questions both scored (NaN if none in common).

    Scores are in [0, 1]; the result is in [-100, 100]. A question scored on one side only is left out of both
    means, as it is of :func:`flip_rate`.
    """
    common = [q for q in variant if q in base]
    if not common:
        return math.nan
    return 100.0 * sum(variant[q] - base[q] for q in common) / len(common)


def _n_paired(base: Mapping[str, float], variant: Mapping[str, float]) -> int:
    return sum(1 for q in variant if q in base)


def _nanmean(values: Sequence[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else math.nan


@dataclass(frozen=True)
class PerturbationSummary:
    """Per-variant flip rates and deltas (points), family and benign means, per-bucket deltas; B3 kept apart.

    Attributes:
        flip_rates: variant -> share in [0, 1] of questions whose correctness differs from Base (NaN: no reply).
        official_delta: variant -> mean official score minus Base's, in points, over the questions both
            answered (paired; n in ``paired``).
        canonical_delta: variant -> the same on the canonical layer ("True" in seed 002), same questions.
        mean_benign_flip_rate: mean flip rate over the benign variants that have replies (Table 6 top block).
        family_official_delta: family ``A`` / ``B`` -> mean official delta of its variants (Table 6 bottom).
        family_canonical_delta: the same on the canonical layer.
        control_flip_rate: B3's flip rate (the adversarial control, never in the benign mean).
        mean_benign_official_delta: mean official delta over the benign variants (Table 6 parentheses).
        mean_benign_canonical_delta: mean canonical delta over the benign variants.
        scored: variant (Base included) -> questions with a scored reply.
        paired: variant (Base excluded) -> questions scored under both Base and the variant: the n of its flip
            rate, deltas and (split by bucket) per-bucket deltas.
        bucket_n: bucket -> questions of the bucket with a scored Base reply (every bucket, zeros included).
        bucket_official_delta: variant -> bucket -> official delta in points over the bucket's questions.
        bucket_canonical_delta: variant -> bucket -> canonical delta in points.
        family_bucket_official_delta: family -> bucket -> mean official delta of the family's variants.
        family_bucket_canonical_delta: family -> bucket -> mean canonical delta.
        benign_bucket_official_delta: bucket -> mean official delta over the benign variants.
        benign_bucket_canonical_delta: bucket -> mean canonical delta over the benign variants (Table 4
            "Delta True").
        notes: variants without replies, with partial replies, or benign variants not run.
        flip_cells: appendix B's counts of benign flips per cell (:func:`vqaudit.metrics.variance.benign_flip_cells`).
    """

    flip_rates: dict[str, float]
    official_delta: dict[str, float]
    canonical_delta: dict[str, float]
    mean_benign_flip_rate: float
    family_official_delta: dict[str, float]
    family_canonical_delta: dict[str, float]
    control_flip_rate: float
    mean_benign_official_delta: float = math.nan
    mean_benign_canonical_delta: float = math.nan
    scored: dict[str, int] = field(default_factory=dict)
    bucket_n: dict[str, int] = field(default_factory=dict)
    bucket_official_delta: dict[str, dict[str, float]] = field(default_factory=dict)
    bucket_canonical_delta: dict[str, dict[str, float]] = field(default_factory=dict)
    family_bucket_official_delta: dict[str, dict[str, float]] = field(default_factory=dict)
    family_bucket_canonical_delta: dict[str, dict[str, float]] = field(default_factory=dict)
    benign_bucket_official_delta: dict[str, float] = field(default_factory=dict)
    benign_bucket_canonical_delta: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    paired: dict[str, int] = field(default_factory=dict)
    # appendix B: grouping ("contract", "numeric_text") -> cell -> [benign (question, variant) pairs, flips]
    # (vqaudit.metrics.variance.benign_flip_cells); empty when not computed
    flip_cells: dict[str, dict[str, list[int]]] = field(default_factory=dict)


def _bucket_deltas(
    scores: Mapping[str, float], base: Mapping[str, float], buckets: Mapping[str, str]
) -> dict[str, float]:
    out: dict[str, float] = {}
    for b in BUCKETS:
        mine = {q: s for q, s in scores.items() if buckets.get(q) == b}
        out[b] = paired_delta(base, mine)
    return out


def _coverage_notes(
    official: Mapping[str, Mapping[str, float]],
    usable: Sequence[str],
    paired: Mapping[str, int],
    n_questions: int | None,
) -> list[str]:
    notes: list[str] = []
    n_base = len(official.get("Base", {}))
    if n_questions is not None and n_base < n_questions:
        notes.append(
            f"Base: replies for {n_base} of {n_questions} questions; every flip rate and delta compares "
            "only questions Base answered too"
        )
    for vid, scores in official.items():
        if vid == "Base":
            continue
        if not scores:
            notes.append(f"{vid}: no reply was received for any question; left out of every mean")
            continue
        n = paired[vid]
        full = n_questions if n_questions is not None else max(n_base, len(scores))
        if n < full:
            of = f" of {n_questions}" if n_questions is not None else ""
            both = "none" if n == 0 else f"{n}"
            use = (
                "so it has no flip rate or delta and is left out of every mean"
                if n == 0
                else f"its flip rate and official/canonical deltas (per bucket too) compare those {n} questions "
                f"only, Base scored over the same {n}"
            )
            notes.append(
                f"{vid}: replies for {len(scores)}{of} questions, {both} of them also answered under Base; {use}"
            )
    partial = [v for v in usable if paired[v] < (n_questions if n_questions is not None else n_base)]
    if partial:
        notes.append(
            "the family and benign means average each variant's paired figures, each over its own "
            "questions (n: " + ", ".join(f"{v} {paired[v]}" for v in usable) + ")"
        )
    benign = [v for v in BENIGN if v in usable]
    if len(benign) < len(BENIGN):
        missing = [v for v in BENIGN if v not in usable]
        notes.append(
            f"the benign means average {len(benign)} of the {len(BENIGN)} benign variants "
            f"({', '.join(benign) or 'none'}); not run or without replies: {', '.join(missing)}"
        )
    return notes


def summarize_perturbations(
    official: Mapping[str, Mapping[str, float]],
    canonical: Mapping[str, Mapping[str, float]],
    buckets: Mapping[str, str] | None = None,
    n_questions: int | None = None,
) -> PerturbationSummary:
    """Summarize scores per variant (``variant id -> qid -> score``, Base included) for both layers.

    Args:
        official: official score in [0, 1] per variant and question; a variant that was asked but got no
            scored reply maps to an empty dict (it is reported as NaN and noted, never averaged), as does in
            effect one whose replies share no question with Base's.
        canonical: the canonical-layer scores, same layout.
        buckets: qid -> answer-contract bucket (:data:`vqaudit.scoring.contracts.BUCKETS`) for the per-bucket
            deltas; None leaves them empty.
        n_questions: how many questions were asked (for the partial-reply notes); None skips those notes.

    Returns:
        The :class:`PerturbationSummary` (seed 002 §5.3, Table 6; per-bucket deltas for Tables 4 and 8);
        every flip rate and delta is paired with Base (:func:`paired_delta`); values are NaN where a variant or
        bucket has no question scored under both.
    """
    base_o, base_c = official.get("Base", {}), canonical.get("Base", {})
    flips: dict[str, float] = {}
    d_off: dict[str, float] = {}
    d_can: dict[str, float] = {}
    b_off: dict[str, dict[str, float]] = {}
    b_can: dict[str, dict[str, float]] = {}
    bmap = buckets if buckets is not None else {}
    for v in PERTURBATIONS:
        if v.variant_id == "Base" or v.variant_id not in official:
            continue
        vid = v.variant_id
        flips[vid] = flip_rate(base_o, official[vid])
        d_off[vid] = paired_delta(base_o, official[vid])
        d_can[vid] = paired_delta(base_c, canonical.get(vid, {}))
        if buckets is not None:
            b_off[vid] = _bucket_deltas(official[vid], base_o, bmap)
            b_can[vid] = _bucket_deltas(canonical.get(vid, {}), base_c, bmap)
    paired = {v: _n_paired(base_o, s) for v, s in official.items() if v != "Base"}
    usable = [v for v in official if v != "Base" and paired[v] > 0]
    benign = [v for v in BENIGN if v in usable]
    fam_o: dict[str, float] = {}
    fam_c: dict[str, float] = {}
    fam_bo: dict[str, dict[str, float]] = {}
    fam_bc: dict[str, dict[str, float]] = {}
    for family in ("A", "B"):
        ids = [v.variant_id for v in PERTURBATIONS if v.family == family and v.variant_id in usable]
        fam_o[family] = _nanmean([d_off[i] for i in ids])
        fam_c[family] = _nanmean([d_can[i] for i in ids])
        if buckets is not None:
            fam_bo[family] = {b: _nanmean([b_off[i][b] for i in ids]) for b in BUCKETS}
            fam_bc[family] = {b: _nanmean([b_can[i][b] for i in ids]) for b in BUCKETS}
    bucket_n = {b: sum(1 for q in base_o if bmap.get(q) == b) for b in BUCKETS} if buckets is not None else {}
    return PerturbationSummary(
        flips,
        d_off,
        d_can,
        _nanmean([flips[v] for v in benign]),
        fam_o,
        fam_c,
        flips.get("B3", math.nan),
        _nanmean([d_off[v] for v in benign]),
        _nanmean([d_can[v] for v in benign]),
        {v: len(s) for v, s in official.items()},
        bucket_n,
        b_off,
        b_can,
        fam_bo,
        fam_bc,
        {b: _nanmean([b_off[v][b] for v in benign]) for b in BUCKETS} if buckets is not None else {},
        {b: _nanmean([b_can[v][b] for v in benign]) for b in BUCKETS} if buckets is not None else {},
        tuple(_coverage_notes(official, usable, paired, n_questions)),
        paired,
    )


def judge_delta_interval(
    official: Sequence[float], judged: Sequence[float], *, n_draws: int = 10_000, seed: int = 0
) -> tuple[float, float, float]:
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
