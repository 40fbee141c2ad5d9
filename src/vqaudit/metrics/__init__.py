"""Metrics computed from outcomes: visual answerability group scores and the group bootstrap.

Seed 000 §4 and §E.2; docs/papers.md, vocabulary.
"""

from vqaudit.metrics.accounting import FailureCounts, SourceFailures, failure_accounting
from vqaudit.metrics.answerability import (
    COLUMNS,
    METRIC_KEYS,
    GroupCounts,
    SourceMetrics,
    answerability_metrics,
    e_lambda,
    group_counts,
    metrics_from_counts,
)
from vqaudit.metrics.bootstrap import (
    CONFIDENCE,
    DEFAULT_DRAWS,
    bootstrap_totals,
    bootstrap_weights,
    clear_weight_cache,
    draw_weights,
    paired_bootstrap_difference,
    percentile_interval,
)
from vqaudit.metrics.grouped import Grouped, Stratum, grouped
from vqaudit.metrics.paired import paired_counts, paired_difference

__all__ = [
    "COLUMNS",
    "CONFIDENCE",
    "DEFAULT_DRAWS",
    "METRIC_KEYS",
    "FailureCounts",
    "GroupCounts",
    "Grouped",
    "SourceFailures",
    "SourceMetrics",
    "Stratum",
    "answerability_metrics",
    "bootstrap_totals",
    "bootstrap_weights",
    "clear_weight_cache",
    "draw_weights",
    "e_lambda",
    "failure_accounting",
    "group_counts",
    "grouped",
    "metrics_from_counts",
    "paired_bootstrap_difference",
    "paired_counts",
    "paired_difference",
    "percentile_interval",
]
