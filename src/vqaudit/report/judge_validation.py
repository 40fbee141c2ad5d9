"""The text of the judge's validation against human labels (seed 002 Table 2 upper block), for the Markdown reports.

One wording for ``vqaudit audit``'s ``report.md`` and ``vqaudit audit-summary``'s Table 2 lines: a precision is
shown as a percentage with its counts and its 95% Wilson interval (:mod:`vqaudit.shortanswer.judge_validation`),
e.g. ``97.6% (320/328) [95% CI 95.3, 98.8]``; a precision over no accepted item is ``n/a``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from vqaudit.scoring.contracts import BUCKETS


def _pct(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{100.0 * value:.1f}"


def precision_text(tp: int, fp: int, interval: Sequence[float | None]) -> str:
    """``tp / (tp + fp)`` in percent with its counts and interval (``interval`` in fractions); n/a if none accepted."""
    if tp + fp == 0:
        return "n/a (no item accepted)"
    low, high = interval
    return f"{_pct(tp / (tp + fp))}% ({tp}/{tp + fp}) [95% CI {_pct(low)}, {_pct(high)}]"


def bucket_precision_text(by_bucket: Mapping[str, Mapping[str, Any]]) -> str:
    """Each bucket's precision in the taxonomy's order, with its labelled ``n``: ``scalar 97.6% (40/41) [...] n=57``."""
    parts = []
    for bucket in BUCKETS:
        block = by_bucket.get(bucket)
        if block is None:
            continue
        text = precision_text(int(block["tp"]), int(block["fp"]), block["precision_ci"])
        parts.append(f"{bucket} {text}, n={int(block['n'])}")
    return "; ".join(parts)


def validation_lines(v: Mapping[str, Any]) -> list[str]:
    """The ``report.md`` lines of one audit's validation block (``JudgeAudit.validation``).

    ``v`` holds the counts, ``precision``/``recall``/``kappa`` as fractions, ``precision_ci`` and ``by_bucket``
    (:func:`vqaudit.shortanswer.judge_validation.validate_judge`).
    """
    kappa = v["kappa"]
    kappa_text = "n/a" if kappa is None or math.isnan(kappa) else f"{kappa:.3f}"
    return [
        f"- Validation vs human labels (n={int(v['n'])}): precision "
        f"{precision_text(int(v['tp']), int(v['fp']), v['precision_ci'])} (Wilson interval over the accepted "
        f"items), recall {_pct(v['recall'])}%, Cohen's kappa {kappa_text}.",
        f"- Judge precision by contract bucket vs human labels (n = labelled items): "
        f"{bucket_precision_text(v['by_bucket'])}.",
        *_not_compared(v.get("labels_not_compared")),
    ]


def _not_compared(block: Mapping[str, Any] | None) -> list[str]:
    """The line naming the labels left out of the validation (none: no line, the report as before)."""
    if not block:
        return []
    parts = []
    if block["officially_correct"]:
        parts.append(f"{block['officially_correct']} of rows the official metric already credits")
    if block["undecided"]:
        parts.append(f"{block['undecided']} of errors without a judge verdict")
    if block["unknown"]:
        parts.append(
            f"{block['unknown']} of questions not in the joined predictions (e.g. {block['unknown_example']!r}: "
            "check the ids against the prediction file's)"
        )
    return [f"- Labels not compared: {'; '.join(parts)}."] if parts else []
