"""Failure accounting for answerability groups (seed 000, §E.2).

Per-view failures = Σ over groups of failing views; failing groups = n_groups·(1 − Bk) (each failing group once);
repeated failures = total − failing groups; plus a histogram of groups by failure count. Given for decision
failures (against Bk) and task failures (against Jk).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TypedDict

import numpy as np

from vqaudit.metrics.answerability import _grouped
from vqaudit.schema import Outcome

_STATE_ORDER = ("original", "S", "C", "control", "M", "I")


class FailureCounts(TypedDict):
    """Failure accounting of one kind (decision or task) for one source (seed 000 §E.2)."""

    total_failures: int
    failing_groups: int
    repeated_failures: int
    histogram: list[int]
    by_state: dict[str, int]


class SourceFailures(TypedDict):
    """Decision and task failure accounting of one source."""

    n_groups: int
    n_views: int
    k: int
    views_by_state: dict[str, int]
    decision: FailureCounts
    task: FailureCounts


def _state_key(state: str) -> tuple[int, str]:
    return (_STATE_ORDER.index(state), "") if state in _STATE_ORDER else (len(_STATE_ORDER), state)


def _failure_counts(groups: list[list[Outcome]], k: int, failed: str, states: list[str]) -> FailureCounts:
    per_group = [sum(not getattr(o, failed) for o in views) for views in groups]
    histogram = np.bincount(np.asarray(per_group, dtype=np.int64), minlength=k + 1)
    total = int(sum(per_group))
    failing = int(sum(n > 0 for n in per_group))
    failures = Counter(o.state for views in groups for o in views if not getattr(o, failed))
    by_state = {state: failures[state] for state in states}
    return FailureCounts(
        total_failures=total,
        failing_groups=failing,
        repeated_failures=total - failing,
        histogram=[int(x) for x in histogram],
        by_state=by_state,
    )


def failure_accounting(outcomes: Sequence[Outcome]) -> dict[str, SourceFailures]:
    """Exact accounting of group errors per source (seed 000 §E.2), for decisions (Bk) and tasks (Jk).

    A decision failure is a view with ``decision_correct`` False; a task failure a view with ``task_correct``
    False (invalid replies fail both). Per kind: ``total_failures`` = Σ over groups of failing views;
    ``failing_groups`` = groups with at least one failure = ``n_groups · (1 − Bk)`` (resp. ``1 − Jk``);
    ``repeated_failures = total_failures − failing_groups``; ``histogram[j]`` = groups with exactly j failures,
    j = 0..k (k = largest group size), so ``Σ j·histogram[j] = total_failures`` and
    ``histogram[0] = n_groups − failing_groups``; ``by_state`` = failures per state.

    Args:
        outcomes: Scored views of one or more sources.

    Returns:
        ``{source: {"n_groups", "n_views", "k", "views_by_state", "decision": {...}, "task": {...}}}``, sources
        sorted; states in the order original, S, C, control, M, I, then others alphabetically.

    Raises:
        VqauditError: as :func:`group_counts`.
    """
    by_source: dict[str, list[list[Outcome]]] = {}
    for (src, _), views in _grouped(outcomes).items():
        by_source.setdefault(src, []).append(views)
    report: dict[str, SourceFailures] = {}
    for src in sorted(by_source):
        groups = by_source[src]
        k = max(len(views) for views in groups)
        n_by_state = Counter(o.state for views in groups for o in views)
        states = sorted(n_by_state, key=_state_key)
        report[src] = SourceFailures(
            n_groups=len(groups),
            n_views=n_by_state.total(),
            k=k,
            views_by_state={state: n_by_state[state] for state in states},
            decision=_failure_counts(groups, k, "decision_correct", states),
            task=_failure_counts(groups, k, "task_correct", states),
        )
    return report
