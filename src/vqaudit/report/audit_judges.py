"""Table 2 of ``audit-summary`` (seed 002): the judges against each other and against human labels.

The cross-judge line: Pearson r between the two judges' per-benchmark false-negative rates (each pooled over the
benchmark's audits that ran ``--second-judge``; at least 3 benchmarks), the pooled agreement (weighted by the items
both judged), Cohen's kappa from the summed confusion counts, and each judge's pooled acceptance rate. The
human-label block: precision, recall and kappa from summed confusion counts, the precision's 95% Wilson interval
and the precision per contract bucket (:mod:`vqaudit.shortanswer.judge_validation`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from vqaudit.report.audit_inputs import AuditInput
from vqaudit.report.audit_pooling import pearson_r, ratio, weighted
from vqaudit.shortanswer.judge import agreement_from_counts
from vqaudit.shortanswer.judge_validation import pooled_precision


def table2_judges(audits: Sequence[AuditInput], notes: list[str]) -> dict[str, Any]:
    """Table 2's cross-judge line over the audits that ran ``--second-judge`` (module docstring); notes appended.

    Returns:
        ``{audits, judges, benchmarks, pearson_r, reason, agreement_pct, kappa, first_fn_pct, second_fn_pct}``
        (:class:`vqaudit.report.audit_summary.AuditSummary` ``table2``).
    """
    pairs = [(a, a.judge) for a in audits if a.judge is not None and a.judge.second is not None]
    out: dict[str, Any] = {
        "audits": len(pairs),
        "judges": [],
        "benchmarks": {},
        "pearson_r": math.nan,
        "reason": None,
        "agreement_pct": math.nan,
        "kappa": math.nan,
        "first_fn_pct": math.nan,
        "second_fn_pct": math.nan,
    }
    if not pairs:
        out["reason"] = "no audit ran a second judge (`vqaudit audit --second-judge SPEC`)"
        notes.append(f"Table 2 cross-judge line: n/a: {out['reason']}")
        return out
    fn: dict[str, list[float]] = {}
    for b in dict.fromkeys(a.benchmark for a, _ in pairs):
        mine = [j for a, j in pairs if a.benchmark == b]
        pool = sum(j.pool - j.undecided for j in mine)
        pool2 = sum(j.pool - j.second.undecided for j in mine if j.second is not None)
        if pool and pool2:
            second = (
                sum(j.second.accepted_share * (j.pool - j.second.undecided) for j in mine if j.second is not None)
                / pool2
            )
            fn[b] = [ratio(sum(j.accepted for j in mine), pool), second]
    out["benchmarks"] = fn
    if len(fn) < 3:
        out["reason"] = (
            f"Pearson r needs per-benchmark FN rates of at least 3 benchmarks with two judges; "
            f"{len(fn)} here ({', '.join(fn) or 'none'})"
        )
    else:
        out["pearson_r"] = pearson_r([v[0] for v in fn.values()], [v[1] for v in fn.values()])
        if math.isnan(out["pearson_r"]):
            out["reason"] = "one judge's FN rate is the same on every benchmark: the correlation is undefined"
    if out["reason"]:
        notes.append(f"Table 2 Pearson r: n/a: {out['reason']}")
    seconds = [j.second for _, j in pairs if j.second is not None]
    out["agreement_pct"] = 100.0 * weighted([(s.agreement, s.n) for s in seconds])
    pool = sum(j.pool - j.undecided for _, j in pairs)
    out["first_fn_pct"] = ratio(sum(j.accepted for _, j in pairs), pool)
    out["second_fn_pct"] = ratio(
        sum(s.accepted_share * (j.pool - s.undecided) for (_, j), s in zip(pairs, seconds, strict=True)),
        sum(j.pool - s.undecided for (_, j), s in zip(pairs, seconds, strict=True)),
        1.0,
    )
    specs = sorted({(j.spec, j.second.spec) for _, j in pairs if j.second is not None})
    out["judges"] = [list(pair) for pair in specs]
    if len(specs) > 1:
        notes.append(f"Table 2: the audits used different judge pairs ({sorted(specs)}); pooled anyway")
    counts = [s.counts for s in seconds]
    items = sum(n for c in counts if c is not None for n in c)
    if all(c is not None for c in counts) and items > 0:
        pooled = agreement_from_counts(*(sum(c[k] for c in counts if c is not None) for k in range(4)))
        out["kappa"] = pooled.kappa
    else:
        out["kappa"] = math.nan
        notes.append(
            "Table 2: cross-judge kappa is not pooled: some report.json has no confusion counts "
            "(written by an older vqaudit); see each audit's report"
        )
    return out


def table2_validation(audits: Sequence[AuditInput], notes: list[str]) -> dict[str, Any]:
    """Table 2's human-label block, pooled over the validated audits by summing confusion counts (also per bucket)."""
    judged = [a.judge for a in audits if a.judge is not None and a.judge.validated]
    out = {
        "audits": float(len(judged)),
        "n": math.nan,
        "precision_pct": math.nan,
        "recall_pct": math.nan,
        "kappa": math.nan,
        "precision_ci_pct": [math.nan, math.nan],
        "by_bucket": {},
    }
    if not judged:
        return out
    counts = [j.validation_counts for j in judged]
    if any(c is None for c in counts):
        notes.append(
            "Table 2 human-label validation is not pooled: some report.json has no confusion counts "
            "(written by an older vqaudit); see each audit's report"
        )
        return out
    pooled = agreement_from_counts(*(sum(c[k] for c in counts if c is not None) for k in range(4)))
    return {
        "audits": float(len(judged)),
        "n": float(pooled.n),
        "precision_pct": 100.0 * pooled.precision,
        "recall_pct": 100.0 * pooled.recall,
        "kappa": pooled.kappa,
        **pooled_precision(pooled.tp, pooled.fp, [j.validation_by_bucket for j in judged], notes),
    }
