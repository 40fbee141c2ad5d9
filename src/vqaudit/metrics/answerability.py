"""Group metrics for visual answerability: decision and task scores per source, with group-bootstrap intervals.

Definitions follow seed 000 §4 ("Complete task success", "Decision diagnostics", "Denominators and
uncertainty"), §E.2 (exact accounting of group errors) and papers.md. Per source, with k views per group:

- ``decision_accuracy``: share of views whose decision is correct (invalid is never correct);
- ``supported_rejection``: share of supported views (obligation ``answer``) not answered (abstain or invalid);
- ``EU``: share of negative views (obligation ``abstain``) not abstained on (answer or invalid), pooled;
  ``EM`` / ``EI``: the same restricted to state ``M`` / state ``I`` negative views (None without such views);
- ``Ebal = (supported_rejection + EU) / 2``; :func:`e_lambda` gives ``λ·supported_rejection + (1−λ)·EU``;
- ``Bk``: share of groups whose every view has a correct decision; ``Jk``: share of groups whose every view is
  task-correct (supported answered correctly, negative abstained). ``Jk <= Bk`` always;
- ``invalid_rate``: share of views whose reply was invalid.

Every metric is a ratio of sums of per-group counts (:data:`COLUMNS`), so the bootstrap of
:mod:`vqaudit.metrics.bootstrap` resamples groups by one matrix product. Groups are put in a canonical order
(sorted by source, then group id), so results do not depend on the order of the outcome records and two runs on
the same benchmark line up group by group for paired differences.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict, cast

import numpy as np
from numpy.typing import NDArray

from vqaudit.errors import VqauditError
from vqaudit.metrics.bootstrap import CONFIDENCE, DEFAULT_DRAWS, bootstrap_totals, percentile_interval
from vqaudit.schema import Outcome

METRIC_KEYS = ("decision_accuracy", "supported_rejection", "EU", "EM", "EI", "Ebal", "Bk", "Jk", "invalid_rate")
"""The fraction-valued metrics, in report order."""

COLUMNS = (
    "views",  # views in the group
    "groups",  # always 1 (denominator of Bk and Jk)
    "decision_correct",  # views with a correct decision
    "task_correct",  # views whose full obligation is met
    "invalid",  # views with an invalid reply
    "supported",  # views with obligation "answer"
    "supported_rejected",  # supported views whose decision is not "answer"
    "negative",  # views with obligation "abstain"
    "negative_accepted",  # negative views whose decision is not "abstain"
    "m_views",  # negative views in state "M"
    "m_accepted",  # ... of which not abstained on
    "i_views",  # negative views in state "I"
    "i_accepted",  # ... of which not abstained on
    "decision_ok_group",  # 1 if every view of the group has a correct decision
    "task_ok_group",  # 1 if every view of the group is task-correct
)
"""Names of the per-group sufficient-statistic columns of :class:`GroupCounts`."""

_COL = {name: i for i, name in enumerate(COLUMNS)}

_RATIOS: dict[str, tuple[str, str]] = {
    "decision_accuracy": ("decision_correct", "views"),
    "supported_rejection": ("supported_rejected", "supported"),
    "EU": ("negative_accepted", "negative"),
    "EM": ("m_accepted", "m_views"),
    "EI": ("i_accepted", "i_views"),
    "Bk": ("decision_ok_group", "groups"),
    "Jk": ("task_ok_group", "groups"),
    "invalid_rate": ("invalid", "views"),
}


@dataclass(frozen=True)
class GroupCounts:
    """Per-group sufficient statistics of a set of outcomes.

    Attributes:
        group_ids: Group ids, length G, sorted by ``(source, group_id)``.
        sources: Source of each group, length G.
        matrix: int64 array of shape ``(G, len(COLUMNS))``; row g counts group ``group_ids[g]``.
        columns: Column names (:data:`COLUMNS`).
    """

    group_ids: tuple[str, ...]
    sources: tuple[str, ...]
    matrix: NDArray[np.int64]
    columns: tuple[str, ...] = COLUMNS

    def for_source(self, source: str) -> GroupCounts:
        """Return the rows of one source (same order); raises VqauditError if the source has no groups."""
        rows = [i for i, s in enumerate(self.sources) if s == source]
        if not rows:
            raise VqauditError(f"no outcomes for source {source!r} (have: {sorted(set(self.sources))})")
        return GroupCounts(
            group_ids=tuple(self.group_ids[i] for i in rows),
            sources=(source,) * len(rows),
            matrix=self.matrix[rows],
            columns=self.columns,
        )


class SourceMetrics(TypedDict):
    """Metrics of one source: fractions in [0, 1] or None when undefined, counts, and 95% intervals."""

    decision_accuracy: float | None
    supported_rejection: float | None
    EU: float | None
    EM: float | None
    EI: float | None
    Ebal: float | None
    Bk: float | None
    Jk: float | None
    invalid_rate: float | None
    n_groups: int
    n_views: int
    ci: dict[str, list[float] | None]


def _check_outcome(o: Outcome) -> None:
    supported = o.obligation == "answer"
    expected_decision = o.decision == ("answer" if supported else "abstain")
    expected_task = (o.decision == "answer" and o.answer_correct) if supported else o.decision == "abstain"
    problems = []
    if o.decision_correct != expected_decision:
        problems.append(f"decision_correct={o.decision_correct} with decision {o.decision!r}")
    if o.answer_correct and not (supported and o.decision == "answer"):
        problems.append(f"answer_correct=True with decision {o.decision!r} on a {o.obligation!r} view")
    if o.task_correct != expected_task:
        problems.append(f"task_correct={o.task_correct} inconsistent with decision and answer")
    if problems:
        raise VqauditError(f"outcome {o.view_id!r} (group {o.group_id!r}): " + "; ".join(problems))


def _row(o: Outcome) -> list[int]:
    """One view's contribution to the :data:`COLUMNS` (the group columns are filled in per group)."""
    supported, negative = o.obligation == "answer", o.obligation == "abstain"
    accepted = negative and o.decision != "abstain"
    m_view, i_view = negative and o.state == "M", negative and o.state == "I"
    flags = (
        o.decision_correct,
        o.task_correct,
        o.decision == "invalid",
        supported,
        supported and o.decision != "answer",
    )
    tail = (negative, accepted, m_view, m_view and accepted, i_view, i_view and accepted)
    return [1, 0, *map(int, flags), *map(int, tail), 0, 0]


def _grouped(outcomes: Sequence[Outcome]) -> dict[tuple[str, str], list[Outcome]]:
    """Validate outcomes and bucket them by ``(source, group_id)`` in canonical (sorted) order."""
    if not outcomes:
        raise VqauditError("no outcomes to score")
    seen: set[str] = set()
    source_of: dict[str, str] = {}
    buckets: dict[tuple[str, str], list[Outcome]] = {}
    for o in outcomes:
        if o.view_id in seen:
            raise VqauditError(f"view id {o.view_id!r} appears more than once in the outcomes")
        seen.add(o.view_id)
        known = source_of.setdefault(o.group_id, o.source)
        if known != o.source:
            raise VqauditError(f"group {o.group_id!r} has views from several sources: {known!r} and {o.source!r}")
        _check_outcome(o)
        buckets.setdefault((o.source, o.group_id), []).append(o)
    return {key: buckets[key] for key in sorted(buckets)}


def group_counts(outcomes: Sequence[Outcome]) -> GroupCounts:
    """Reduce outcomes to the per-group count matrix used by every metric and by the bootstrap.

    Args:
        outcomes: Scored views (any number of sources). Each outcome must be internally consistent
            (``decision_correct``, ``answer_correct`` and ``task_correct`` agree with the decision and obligation
            as defined on :class:`~vqaudit.schema.Outcome`).

    Returns:
        GroupCounts with G rows sorted by ``(source, group_id)`` and the columns of :data:`COLUMNS`.

    Raises:
        VqauditError: on empty input, a view id appearing twice, a group with views from several sources, or an
            inconsistent outcome.
    """
    buckets = _grouped(outcomes)
    rows: list[list[int]] = []
    for views in buckets.values():
        row = [sum(column) for column in zip(*(_row(o) for o in views), strict=True)]
        row[_COL["groups"]] = 1
        row[_COL["decision_ok_group"]] = int(row[_COL["decision_correct"]] == row[_COL["views"]])
        row[_COL["task_ok_group"]] = int(row[_COL["task_correct"]] == row[_COL["views"]])
        rows.append(row)
    return GroupCounts(
        group_ids=tuple(gid for _, gid in buckets),
        sources=tuple(src for src, _ in buckets),
        matrix=np.asarray(rows, dtype=np.int64).reshape(len(rows), len(COLUMNS)),
    )


def metrics_from_counts(totals: NDArray[np.integer] | NDArray[np.floating]) -> dict[str, NDArray[np.float64]]:
    """Compute every fraction metric from summed counts, vectorized over leading axes.

    Args:
        totals: Column totals of shape ``(..., len(COLUMNS))`` — e.g. ``GroupCounts.matrix.sum(axis=0)`` for the
            point estimate, or ``(D, K)`` bootstrap totals.

    Returns:
        Dict over :data:`METRIC_KEYS` of float64 arrays of shape ``totals.shape[:-1]``, values in [0, 1], NaN where
        the denominator is zero (Ebal is NaN unless both supported and negative views exist).

    Raises:
        VqauditError: if the last axis does not have ``len(COLUMNS)`` entries.
    """
    t = np.asarray(totals, dtype=np.float64)
    if t.shape[-1:] != (len(COLUMNS),):
        raise VqauditError(f"count totals need a last axis of {len(COLUMNS)} columns, got shape {t.shape}")
    out: dict[str, NDArray[np.float64]] = {}
    for key, (num, den) in _RATIOS.items():
        n, d = t[..., _COL[num]], t[..., _COL[den]]
        out[key] = np.divide(n, d, out=np.full(d.shape, np.nan), where=d > 0)
    out["Ebal"] = (out["supported_rejection"] + out["EU"]) / 2.0
    return {key: out[key] for key in METRIC_KEYS}


def _metric_statistic(metric: str) -> Callable[[NDArray[np.float64]], NDArray[np.float64]]:
    if metric not in METRIC_KEYS:
        raise VqauditError(f"unknown metric {metric!r}; choose one of {', '.join(METRIC_KEYS)}")

    def statistic(totals: NDArray[np.float64]) -> NDArray[np.float64]:
        return metrics_from_counts(totals)[metric]

    return statistic


def _opt(value: NDArray[np.float64] | float) -> float | None:
    number = float(value)
    return None if np.isnan(number) else number


def _source_metrics(counts: GroupCounts, n_draws: int, seed: int, confidence: float) -> SourceMetrics:
    point = metrics_from_counts(counts.matrix.sum(axis=0))
    ci: dict[str, list[float] | None] = dict.fromkeys(METRIC_KEYS)
    if n_draws > 0:
        draws = metrics_from_counts(bootstrap_totals(counts.matrix, n_draws=n_draws, seed=seed))
        lo, hi = percentile_interval(np.stack([draws[k] for k in METRIC_KEYS], axis=1), confidence=confidence)
        for j, key in enumerate(METRIC_KEYS):
            if not (np.isnan(point[key]) or np.isnan(lo[j])):
                ci[key] = [float(lo[j]), float(hi[j])]
    totals = counts.matrix.sum(axis=0)
    values: dict[str, object] = {key: _opt(point[key]) for key in METRIC_KEYS}
    values.update(n_groups=int(totals[_COL["groups"]]), n_views=int(totals[_COL["views"]]), ci=ci)
    return cast(SourceMetrics, values)


def answerability_metrics(
    outcomes: Sequence[Outcome], *, n_draws: int = DEFAULT_DRAWS, seed: int = 0, confidence: float = CONFIDENCE
) -> dict[str, SourceMetrics]:
    """Score outcomes per source: decision, rejection/acceptance, complete-group metrics and bootstrap intervals.

    Seed 000 §4 and papers.md. Intervals are percentile intervals over ``n_draws`` group-bootstrap draws of
    the source's groups (views of a group stay together); draws depend only on ``(n_groups, n_draws, seed)``.

    Args:
        outcomes: Scored views of one or more sources.
        n_draws: Bootstrap draws per source (0 skips the bootstrap; every interval is then None).
        seed: Seed of the draws.
        confidence: Interval coverage in (0, 1).

    Returns:
        ``{source: metrics}`` with sources sorted. Each metrics dict has exactly the keys of :data:`METRIC_KEYS`
        (float in [0, 1], or None when the denominator is empty), ``n_groups`` and ``n_views`` (int), and ``ci``:
        ``{metric: [lo, hi]}`` for every key of :data:`METRIC_KEYS` (None where the metric is undefined).

    Raises:
        VqauditError: on empty input, duplicated view ids, a group spanning sources, an inconsistent outcome, or
            ``n_draws < 0``.
    """
    if n_draws < 0:
        raise VqauditError(f"bootstrap draws must be >= 0, got n_draws={n_draws}")
    counts = group_counts(outcomes)
    sources = sorted(set(counts.sources))
    return {src: _source_metrics(counts.for_source(src), n_draws, seed, confidence) for src in sources}


def e_lambda(metrics: Mapping[str, object], lam: float) -> float | None:
    """Class-weighted error ``E_λ = λ·supported_rejection + (1−λ)·EU`` (seed 000 §4, §E.1; papers.md).

    ``lam = 0.5`` gives Ebal. Always-answer and always-abstain policies both give ``E_0.5 = 0.5``.

    Args:
        metrics: One source's metrics (as returned by :func:`answerability_metrics`).
        lam: Weight λ in [0, 1] on supported rejection.

    Returns:
        The error in [0, 1], or None if either component is undefined.

    Raises:
        VqauditError: if ``lam`` is outside [0, 1] or the keys are missing.
    """
    if not 0.0 <= lam <= 1.0:
        raise VqauditError(f"lambda must be in [0, 1], got {lam}")
    try:
        rejection, acceptance = metrics["supported_rejection"], metrics["EU"]
    except KeyError as exc:
        raise VqauditError(f"metrics lack {exc.args[0]!r}; pass one source's answerability metrics") from None
    if rejection is None or acceptance is None:
        return None
    if not isinstance(rejection, int | float) or not isinstance(acceptance, int | float):
        raise VqauditError("supported_rejection and EU must be numbers")
    return lam * float(rejection) + (1.0 - lam) * float(acceptance)
