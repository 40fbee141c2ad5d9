"""What thinking does to abstention: reasoning length, finished replies, overruled drafts, metrics by length.

A reasoning model's reply carries its reasoning apart from its final answer (:mod:`vqaudit.parsing.reasoning`);
the score stage records per view ``reasoning_chars`` (characters of reasoning, None when the reply had none),
``draft_decision`` (the decision of the last complete answerability object inside the reasoning) and, for a reply
whose thinking never closed (the token budget ran out), ``invalid_reason ==`` :data:`NOT_FINISHED`.

This module summarises those fields per source (:func:`reasoning_summary`) and splits a run's groups into
quartiles of reasoning length, scoring each quartile with the group metrics of seed 000 §4
(:func:`vqaudit.metrics.answerability.answerability_metrics`: Jk, Bk, Ebal, EU, EM with group-bootstrap intervals).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from vqaudit.errors import VqauditError
from vqaudit.metrics.answerability import answerability_metrics
from vqaudit.metrics.bootstrap import CONFIDENCE, DEFAULT_DRAWS
from vqaudit.parsing.reasoning import NOT_FINISHED
from vqaudit.schema import Outcome

QUARTILE_METRICS = ("Jk", "Bk", "Ebal", "EU", "EM")
"""The metrics shown per reasoning-length quartile (seed 000 §4)."""

P90 = 90.0
"""The upper percentile of reasoning length reported beside the median."""


@dataclass(frozen=True)
class LengthQuartile:
    """The groups of one reasoning-length quartile and their metrics.

    Attributes:
        index: 1 (shortest reasoning) to 4 (longest).
        lo_chars: the smallest group mean reasoning length in the quartile (characters; None when empty).
        hi_chars: the largest (characters; None when empty).
        n_groups: groups in the quartile (0 when ties put every group elsewhere).
        n_views: views of those groups.
        metrics: :data:`QUARTILE_METRICS` -> fraction in [0, 1], or None (undefined or empty quartile).
        ci: :data:`QUARTILE_METRICS` -> ``[lo, hi]`` 95% group-bootstrap interval, or None.
    """

    index: int
    lo_chars: float | None
    hi_chars: float | None
    n_groups: int
    n_views: int
    metrics: dict[str, float | None]
    ci: dict[str, list[float] | None]


@dataclass(frozen=True)
class ReasoningSummary:
    """Reasoning statistics of one source of one run.

    Attributes:
        source: the source.
        n_views: views of the source.
        n_reasoning: views whose reply held reasoning (``reasoning_chars`` set) or never finished it.
        n_finished: of those, replies whose reasoning closed (not invalid for :data:`NOT_FINISHED`).
        finished_share: ``n_finished / n_reasoning`` in [0, 1] (None when ``n_reasoning`` is 0).
        median_chars: median of ``reasoning_chars`` over the views that have it (characters; None if none).
        p90_chars: its 90th percentile (linear interpolation between order statistics, numpy's default).
        n_drafts: finished replies whose reasoning held a draft decision (``draft_decision`` set).
        n_overruled: of those, views whose final decision differs from the draft.
        overruled_share: ``n_overruled / n_drafts`` in [0, 1] (None when ``n_drafts`` is 0).
        quartiles: four :class:`LengthQuartile`, shortest reasoning first (``()`` when not computed).
    """

    source: str
    n_views: int
    n_reasoning: int
    n_finished: int
    finished_share: float | None
    median_chars: float | None
    p90_chars: float | None
    n_drafts: int
    n_overruled: int
    overruled_share: float | None
    quartiles: tuple[LengthQuartile, ...]


def holds_reasoning(outcome: Outcome) -> bool:
    """Whether a view's reply held reasoning: ``reasoning_chars`` set, or its thinking never finished."""
    return outcome.reasoning_chars is not None or outcome.invalid_reason == NOT_FINISHED


def _share(num: int, den: int) -> float | None:
    return num / den if den else None


def _quartiles(
    outcomes: Sequence[Outcome], source: str, n_draws: int, seed: int, confidence: float
) -> tuple[LengthQuartile, ...]:
    by_group: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_group.setdefault(o.group_id, []).append(o)
    groups = sorted(by_group)
    # a view without reasoning thought for 0 characters
    means = np.asarray([np.mean([o.reasoning_chars or 0 for o in by_group[g]]) for g in groups], dtype=np.float64)
    bounds = np.quantile(means, [0.25, 0.5, 0.75])
    # quartile q holds the groups with bounds[q-2] < mean <= bounds[q-1] (Q1: mean <= bounds[0]; Q4: > bounds[2])
    which = np.searchsorted(bounds, means, side="left")
    out = []
    for q in range(4):
        members = [g for g, w in zip(groups, which, strict=True) if w == q]
        if not members:
            out.append(
                LengthQuartile(
                    q + 1, None, None, 0, 0, dict.fromkeys(QUARTILE_METRICS), dict.fromkeys(QUARTILE_METRICS)
                )
            )
            continue
        views = [o for g in members for o in by_group[g]]
        m = cast(
            dict[str, Any], answerability_metrics(views, n_draws=n_draws, seed=seed, confidence=confidence)[source]
        )
        chosen = means[which == q]
        out.append(
            LengthQuartile(
                index=q + 1,
                lo_chars=float(chosen.min()),
                hi_chars=float(chosen.max()),
                n_groups=len(members),
                n_views=len(views),
                metrics={k: m[k] for k in QUARTILE_METRICS},
                ci={k: m["ci"].get(k) for k in QUARTILE_METRICS},
            )
        )
    return tuple(out)


def reasoning_summary(
    outcomes: Sequence[Outcome],
    *,
    quartiles: bool = True,
    n_draws: int = DEFAULT_DRAWS,
    seed: int = 0,
    confidence: float = CONFIDENCE,
) -> dict[str, ReasoningSummary]:
    """Summarise the reasoning of a run's outcomes, per source.

    Shares, lengths and drafts are counted over views; the quartiles are over groups (seed 000 §4: the group is
    the unit of Jk, Bk and of the bootstrap). Each group's reasoning length is the mean of ``reasoning_chars``
    over its views (a view without reasoning counts 0); the quartile boundaries are the 25th, 50th and 75th
    percentiles of those means (linear interpolation), a group at a boundary going to the lower quartile. Each
    quartile is scored on its own groups by :func:`~vqaudit.metrics.answerability.answerability_metrics`
    (seed 000 §4), with ``n_draws`` group-bootstrap draws of those groups.

    A draft is overruled only in a finished reply: a reply cut by the token budget made no final decision to
    overrule its draft with (it is invalid, :data:`NOT_FINISHED`).

    Args:
        outcomes: scored views of one run.
        quartiles: score the reasoning-length quartiles; only for answerability sources (``charts``, ``scenes``,
            ``photos``): pass False for MM-UPD outcomes, whose metrics are not group answerability metrics
            (their shares and lengths are still summarised; they hold no drafts).
        n_draws: bootstrap draws per quartile (0: no intervals).
        seed: seed of the draws.
        confidence: interval coverage in (0, 1).

    Returns:
        ``{source: ReasoningSummary}`` for each source with at least one view holding reasoning
        (:func:`holds_reasoning`), sources sorted; ``{}`` when no reply held reasoning. ``quartiles`` is ``()``
        when not asked for.

    Raises:
        VqauditError: with ``quartiles``, outcomes the group metrics refuse (duplicated view ids, inconsistent
            outcomes); a negative ``reasoning_chars``.
    """
    by_source: dict[str, list[Outcome]] = {}
    for o in outcomes:
        if o.reasoning_chars is not None and o.reasoning_chars < 0:
            raise VqauditError(f"outcome {o.view_id!r}: reasoning_chars={o.reasoning_chars} is negative")
        by_source.setdefault(o.source, []).append(o)
    out: dict[str, ReasoningSummary] = {}
    for source in sorted(by_source):
        views = by_source[source]
        thought = [o for o in views if holds_reasoning(o)]
        if not thought:
            continue
        finished = [o for o in thought if o.invalid_reason != NOT_FINISHED]
        lengths = np.asarray([o.reasoning_chars for o in views if o.reasoning_chars is not None], dtype=np.float64)
        drafts = [o for o in finished if o.draft_decision is not None]
        overruled = sum(1 for o in drafts if o.draft_decision != o.decision)
        out[source] = ReasoningSummary(
            source=source,
            n_views=len(views),
            n_reasoning=len(thought),
            n_finished=len(finished),
            finished_share=_share(len(finished), len(thought)),
            median_chars=float(np.median(lengths)) if lengths.size else None,
            p90_chars=float(np.percentile(lengths, P90)) if lengths.size else None,
            n_drafts=len(drafts),
            n_overruled=overruled,
            overruled_share=_share(overruled, len(drafts)),
            quartiles=_quartiles(views, source, n_draws, seed, confidence) if quartiles else (),
        )
    return out
