"""``vqaudit audit-summary``: the multi-audit tables of seed 002 (Tables 2-7) from several audit folders.

One ``vqaudit audit`` covers one model on one benchmark; the paper's tables span models and datasets. This module
combines parsed audits (:mod:`vqaudit.report.audit_inputs`) with pure functions. Pooling is always over counts
(row-weighted), never a mean of percentages, unless a table says otherwise:

- **Table 3** (per model): Official, Judge (judge-corrected score), Delta = Judge - Official (points), and
  Acc. Err. = judge-accepted share of the official error pool (%; undecided verdicts are left out of its
  denominator, and Delta is then the paired judge - official over the rows with a verdict); n/a where no judge
  ran. The "mean Delta" column is the plain mean over the models judged on that benchmark (the paper's
  "Open Delta-bar").
- **Table 5**: per benchmark, the contract counts Total, Scalar, Readout, Ident., Multi, Other. Audits of one
  benchmark by several models share the gold, so their counts must agree: the first is shown, a mismatch noted.
- **Table 4** (per bucket, pooled over all audits): **Auto gap** = canonical - official mean score of the bucket's
  rows in points, row-weighted (our reading of the paper's "Official -> True" / "auto gap": the canonical overlay
  layer is its "True" score); **Judge FN** = sum of judge-accepted errors / sum of official errors of the bucket
  over the judged audits (%; an undecided verdict is not an acceptance); **Delta True** = the canonical-layer
  score change under the benign perturbations (mean over the benign variants) of the bucket's questions, pooled
  over the ``--perturb`` runs weighted by the bucket's question count (n/a without ``--perturb``).
- **Table 7**: repair gain in points per benchmark (audits of one benchmark pooled by rows) and Overall (all
  audits, row-weighted, as the paper's 166,731-row pool); per bucket weighted by the bucket's rows; recovered /
  breaks / net totals with the official-error and judge-false-negative recovery shares (§5.4: 6.16%, 17.44%).
- **Table 2** cross-judge line: Pearson r between the two judges' per-benchmark false-negative rates (each
  pooled over the benchmark's audits that ran ``--second-judge``; at least 3 benchmarks), the pooled agreement
  (weighted by the items both judged), Cohen's kappa from the summed confusion counts, and each judge's pooled
  acceptance rate; the human-label block (precision, recall, kappa) likewise from summed confusion counts, the
  precision's 95% Wilson interval from the pooled counts, and the precision per contract bucket from the summed
  per-bucket counts (:mod:`vqaudit.shortanswer.judge_validation`; computed in :mod:`vqaudit.report.audit_judges`).
- **Table 6** (with ``--perturb``): mean benign flip rate (mean official delta) per benchmark and model; the
  family block is the plain mean over runs, as the paper averages over models and datasets. Every delta read
  here (Tables 4 and 6) is the run's paired one: each variant against Base over the questions both answered
  (:mod:`vqaudit.metrics.flips`); a run's partial-reply notes, naming those n, are carried into ``notes``.

Everything left out, and why, goes into ``notes``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.report.audit_appendix import appendix_b, raw_splits
from vqaudit.report.audit_inputs import REPAIR_VARIANTS, AuditInput, PerturbInput
from vqaudit.report.audit_judges import table2_judges, table2_validation
from vqaudit.report.audit_pooling import mean_of, ratio, weighted
from vqaudit.scoring.contracts import BUCKETS

OVERALL = "Overall"


@dataclass(frozen=True)
class AuditSummary:
    """The combined tables (values in points or percent; NaN = n/a). See the module docstring for each.

    Attributes:
        models: model names in the order first given (Table 3/6 columns).
        benchmarks: benchmark names in the order first given (rows).
        audits: one line per audit folder (folder, model, benchmark, metric, variant, judge spec or None).
        table3: benchmark -> model -> {official, judge, delta, acc_err}.
        table3_mean_delta: benchmark -> mean Delta over the models judged on it.
        table5: benchmark -> {total, scalar, readout, identifier, multi-span, other-open} counts.
        table4: bucket -> {n, auto_gap_pp, judge_fn_pct, judge_accepted, judge_errors, delta_true_pp}.
        table7_by_dataset: repair variant -> benchmark (and Overall) -> gain in points.
        table7_by_bucket: repair variant -> bucket (and Overall) -> gain in points.
        table7_totals: repair variant -> {rows, errors_before, recovered, breaks, net, error_recovery_pct,
            judge_fn, judge_fn_recovered, judge_fn_recovery_pct}.
        table2: the cross-judge line: {audits, judges: [[first spec, second spec], ...], benchmarks:
            {b: [fn1, fn2]}, pearson_r, reason (why r is n/a, else None), agreement_pct, first_fn_pct,
            second_fn_pct}; and ``validation``, the human-label block: {audits, n, precision_pct, recall_pct,
            kappa, precision_ci_pct [low, high], by_bucket: {bucket: {n, accepted, tp, fp, fn, tn, precision_pct,
            precision_ci_pct}}} (by_bucket empty when some audit did not record per-bucket counts).
        table6: benchmark -> model -> {flip_rate_pct, official_delta_pp}.
        table6_family: family A/B -> {official_delta_pp, true_delta_pp, runs (runs with that family)}.
        notes: what was skipped and why.
        raw_split: benchmark -> appendix A's raw split of its gold file (``report.json`` ``raw_split``; None
            when the report predates it); audits of one benchmark share the gold, so the first is shown.
        appendix_b: eta squared of judge false negatives and of benign flips per grouping
            (:func:`vqaudit.report.audit_appendix.appendix_b`).
    """

    models: tuple[str, ...]
    benchmarks: tuple[str, ...]
    audits: tuple[dict[str, str | None], ...]
    table3: dict[str, dict[str, dict[str, float]]]
    table3_mean_delta: dict[str, float]
    table5: dict[str, dict[str, int]]
    table4: dict[str, dict[str, float]]
    table7_by_dataset: dict[str, dict[str, float]]
    table7_by_bucket: dict[str, dict[str, float]]
    table7_totals: dict[str, dict[str, float]]
    table2: dict[str, Any]
    table6: dict[str, dict[str, dict[str, float]]]
    table6_family: dict[str, dict[str, float]]
    notes: tuple[str, ...]
    raw_split: dict[str, dict[str, Any] | None] = field(default_factory=dict)  # appendix A, per benchmark
    appendix_b: dict[str, Any] = field(default_factory=dict)  # eta squared (vqaudit.report.variance)


def check_unique(items: Sequence[AuditInput] | Sequence[PerturbInput], kind: str) -> None:
    """Refuse two folders with the same (model, benchmark) pair.

    Raises:
        VqauditError: naming both folders and the pair.
    """
    seen: dict[tuple[str, str], str] = {}
    for item in items:
        key = (item.model, item.benchmark)
        if key in seen:
            raise VqauditError(
                f"{item.folder}: {kind} of model {item.model!r} on benchmark {item.benchmark!r} "
                f"repeats {seen[key]}; give each (model, benchmark) pair once (rename one with "
                "--model-name)"
            )
        seen[key] = item.folder


def _table3(
    audits: Sequence[AuditInput], notes: list[str]
) -> tuple[dict[str, dict[str, dict[str, float]]], dict[str, float]]:
    table: dict[str, dict[str, dict[str, float]]] = {}
    for a in audits:
        row = {"official": a.official, "judge": math.nan, "delta": math.nan, "acc_err": math.nan}
        if a.judge is not None:
            paired = a.judge.delta if a.judge.undecided and a.judge.delta is not None else None
            row.update(
                judge=a.judge.judged_score,
                delta=a.judge.judged_score - a.official if paired is None else paired,
                acc_err=ratio(a.judge.accepted, a.judge.pool - a.judge.undecided),
            )
        else:
            notes.append(
                f"{a.model} on {a.benchmark} ({a.folder}): no judge ran (`vqaudit audit --judge`): Judge, "
                "Delta and Acc. Err. are n/a, and the audit is left out of Table 4's Judge FN"
            )
        table.setdefault(a.benchmark, {})[a.model] = row
    mean = {b: mean_of([r["delta"] for r in by_model.values()]) for b, by_model in table.items()}
    return table, mean


def _table5(audits: Sequence[AuditInput], notes: list[str]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    first: dict[str, AuditInput] = {}
    for a in audits:
        counts = {"total": sum(s.n for s in a.mix.values()), **{b: a.mix[b].n for b in BUCKETS}}
        if a.benchmark not in out:
            out[a.benchmark], first[a.benchmark] = counts, a
        elif counts != out[a.benchmark]:
            f = first[a.benchmark]
            notes.append(
                f"Table 5, {a.benchmark}: the contract counts of {a.model} ({a.folder}: {counts}) differ "
                f"from those of {f.model} ({f.folder}: {out[a.benchmark]}), so the audits do not share "
                f"the same gold; the table shows {f.model}'s"
            )
    return out


def _table4(audits: Sequence[AuditInput], perturbs: Sequence[PerturbInput]) -> dict[str, dict[str, float]]:
    judged = [a for a in audits if a.judge is not None]
    out: dict[str, dict[str, float]] = {}
    for b in BUCKETS:
        accepted = sum(a.judge.accepted_by_bucket[b] for a in judged if a.judge is not None)
        errors = sum(a.mix[b].errors for a in judged)
        out[b] = {
            "n": float(sum(a.mix[b].n for a in audits)),
            "auto_gap_pp": weighted([(a.mix[b].canonical - a.mix[b].official, a.mix[b].n) for a in audits]),
            "judge_fn_pct": ratio(accepted, errors) if judged else math.nan,
            "judge_accepted": float(accepted) if judged else math.nan,
            "judge_errors": float(errors) if judged else math.nan,
            "delta_true_pp": weighted([(p.benign_bucket_canonical_delta[b], p.bucket_n[b]) for p in perturbs]),
        }
    return out


def _table7(
    audits: Sequence[AuditInput],
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    by_dataset: dict[str, dict[str, float]] = {}
    by_bucket: dict[str, dict[str, float]] = {}
    totals: dict[str, dict[str, float]] = {}
    benchmarks = list(dict.fromkeys(a.benchmark for a in audits))
    for v in REPAIR_VARIANTS:
        reps = [(a, r) for a in audits for r in a.repair if r.variant == v]
        overall = weighted([(r.gain_pp, r.n) for _, r in reps])
        by_dataset[v] = {b: weighted([(r.gain_pp, r.n) for a, r in reps if a.benchmark == b]) for b in benchmarks}
        by_dataset[v][OVERALL] = overall
        by_bucket[v] = {
            b: weighted([(a.repair_by_bucket[b].get(v, math.nan), a.mix[b].n) for a, _ in reps]) for b in BUCKETS
        }
        by_bucket[v][OVERALL] = overall
        with_judge = [r for _, r in reps if r.judge_fn is not None]
        fn = sum(r.judge_fn or 0 for r in with_judge)
        fn_rec = sum(r.judge_fn_recovered or 0 for r in with_judge)
        errors = sum(r.errors_before for _, r in reps)
        recovered = sum(r.recovered for _, r in reps)
        totals[v] = {
            "rows": float(sum(r.n for _, r in reps)),
            "errors_before": float(errors),
            "recovered": float(recovered),
            "breaks": float(sum(r.breaks for _, r in reps)),
            "net": float(sum(r.net for _, r in reps)),
            "error_recovery_pct": ratio(recovered, errors),
            "judge_fn": float(fn) if with_judge else math.nan,
            "judge_fn_recovered": float(fn_rec) if with_judge else math.nan,
            "judge_fn_recovery_pct": ratio(fn_rec, fn) if with_judge else math.nan,
        }
    return by_dataset, by_bucket, totals


def _table6(
    perturbs: Sequence[PerturbInput],
) -> tuple[dict[str, dict[str, dict[str, float]]], dict[str, dict[str, float]]]:
    table: dict[str, dict[str, dict[str, float]]] = {}
    for p in perturbs:
        table.setdefault(p.benchmark, {})[p.model] = {
            "flip_rate_pct": 100.0 * p.mean_benign_flip_rate,
            "official_delta_pp": p.mean_benign_official_delta,
        }
    family = {
        f: {
            "official_delta_pp": mean_of([p.family_official_delta[f] for p in perturbs]),
            "true_delta_pp": mean_of([p.family_canonical_delta[f] for p in perturbs]),
            "runs": float(sum(1 for p in perturbs if not math.isnan(p.family_official_delta[f]))),
        }
        for f in ("A", "B")
    }
    return table, family


def summarize_audits(audits: Sequence[AuditInput], perturbs: Sequence[PerturbInput] = ()) -> AuditSummary:
    """Combine parsed audits (and perturbation runs) into the seed 002 tables (module docstring).

    Args:
        audits: parsed ``report.json`` records, one per (model, benchmark).
        perturbs: parsed ``perturbations.json`` records, one per (model, benchmark); may be empty.

    Returns:
        The :class:`AuditSummary`.

    Raises:
        VqauditError: no audit, or two audits (or two perturbation runs) of the same (model, benchmark).
    """
    if not audits:
        raise VqauditError("audit-summary needs at least one audit folder")
    check_unique(audits, "the audit")
    check_unique(perturbs, "the perturbation run")
    notes: list[str] = []
    scored = []
    for a in audits:
        if math.isnan(a.official):
            notes.append(
                f"{a.model} on {a.benchmark} ({a.folder}): no gold answers, so no score: left out of every table"
            )
        else:
            scored.append(a)
    for b in dict.fromkeys(a.benchmark for a in scored):
        metrics = sorted({f"{a.metric}/{a.variant}" for a in scored if a.benchmark == b})
        if len(metrics) > 1:
            notes.append(
                f"{b}: the audits use different metrics ({', '.join(metrics)}): their scores are not comparable"
            )
    if any(a.benchmark == "chartqa" for a in scored):
        notes.append(
            "chartqa audits pool the human and augmented splits; audit chartqa-human and chartqa-machine "
            "apart for the paper's ChartQA-H / ChartQA-M rows"
        )
    table3, mean_delta = _table3(scored, notes)
    by_dataset, by_bucket, totals = _table7(scored)
    table2 = table2_judges(scored, notes)
    table2["validation"] = table2_validation(scored, notes)
    if not perturbs:
        notes.append("Table 4 Delta True and Table 6: n/a: no perturbation runs given (--perturb FOLDER)")
    for p in perturbs:
        notes.extend(f"perturbation run {p.model} on {p.benchmark} ({p.folder}): {n}" for n in p.notes)
    table6, family = _table6(perturbs)
    pairs = [(a.model, a.benchmark) for a in scored] + [(p.model, p.benchmark) for p in perturbs]
    raw = raw_splits(scored, notes)
    variance = appendix_b(scored, perturbs, notes)
    return AuditSummary(
        tuple(dict.fromkeys(m for m, _ in pairs)),
        tuple(dict.fromkeys(b for _, b in pairs)),
        tuple(
            {
                "folder": a.folder,
                "model": a.model,
                "benchmark": a.benchmark,
                "metric": a.metric,
                "variant": a.variant,
                "judge": a.judge.spec if a.judge else None,
            }
            for a in audits
        ),
        table3,
        mean_delta,
        _table5(scored, notes),
        _table4(scored, perturbs),
        by_dataset,
        by_bucket,
        totals,
        table2,
        table6,
        family,
        tuple(notes),
        raw_split=raw,
        appendix_b=variance,
    )
