"""The short-answer audit report in the layout of seed 002 Table 13 (appendix I "Minimal reporting template").

Four layers, in Table 13's order: **Benchmark score** (the standard metric, for comparability), **Contract mix**
(scalar / readout / identifier / multi-span, plus the other-open remainder; Table 5 counts, Table 8 subtypes),
**Semantic audit** (on the official error pool: RA-Eval, the judge when one ran, the canonical layer and
contract repair, Table 7) and **Failure notes** (empty, truncated, formatting; reported apart from semantic
mismatch). ``write_audit_report`` writes ``report.md``, ``report.json`` and ``rows.jsonl`` (one line per joined
row: its question, prediction and gold ``answers``, every layer's score, the bucket, and the canonical overlay
gold as a *new* column beside ``answers``).

Reasoning models: every layer scored a prediction's final answer (the text after its thinking,
:mod:`vqaudit.parsing.reasoning`). ``prediction`` in ``rows.jsonl`` stays the prediction exactly as read; a row
whose prediction held reasoning (or an answer box) also has ``final`` (the text scored; null when the reasoning
never finished), ``reasoning_chars`` and, when never finished, ``reasoning_not_finished: true``. The report counts
those rows (``reasoning`` in ``report.json``, a line in ``report.md``) only when some prediction held reasoning, so
the report of predictions without reasoning is unchanged.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

from vqaudit.files import atomic_write_set, json_ready
from vqaudit.markdown import table
from vqaudit.report.audit_rows import row_chunks
from vqaudit.report.judge_validation import validation_lines
from vqaudit.scoring.contracts import BUCKETS
from vqaudit.shortanswer.audit import OVERALL
from vqaudit.shortanswer.audit_result import AuditResult
from vqaudit.shortanswer.raw_split import raw_split_lines

_METRIC_NAMES = {
    "vqa_accuracy": "VQA accuracy",
    "anls": "ANLS",
    "relaxed_accuracy": "relaxed accuracy",
    "exact_match": "exact match",
    "containment": "whole-word containment",
}


def _f(value: float, digits: int = 2) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _pct(value: float) -> str:
    text = _f(value, 1)
    return text if text == "n/a" else text + "%"


def scores_unit(metric: str, overall: float) -> str:
    """The line saying the scores are in points: ANLS 0.41 read as 0-1 looks like 41%."""
    name = _METRIC_NAMES.get(metric, metric)
    example = "" if math.isnan(overall) else f" (Overall {_f(overall)} = mean {name} {overall / 100:.4g})"
    return f"Scores in points: the mean per-row {name} (0 to 1) x 100{example}."


def render_markdown(result: AuditResult) -> str:
    """Render the Table 13 report as Markdown."""
    r = result
    j = r.join
    gold = (
        "no gold: the predictions carry none and no gold file was given"
        if j.gold_source == "none"
        else f"{j.gold_source} gold"
    )
    lines = [
        f"# Short-answer score audit: {r.benchmark}",
        "",
        f"Model: {r.model or 'unnamed'}. Metric: {_METRIC_NAMES.get(r.metric, r.metric)} (variant `{r.variant}`). "
        f"{r.n_predictions} predictions, {len(j.rows)} joined with gold ({gold}); "
        f"{len(j.predictions_without_gold)} predictions without gold, "
        f"{len(j.gold_without_predictions)} gold questions without a prediction.",
        "",
    ]
    lines += [f"- note: {n}" for n in (*j.notes, *r.notes)]
    lines += [""] if j.notes or r.notes else []
    reasoning = r.reasoning
    if reasoning is not None:
        lines += [
            f"Reasoning: {reasoning.with_reasoning} of {len(j.rows)} joined predictions held reasoning, split "
            "off and never scored (every layer reads the final answer); reasoning not finished: "
            f"{reasoning.not_finished} (never closed: scored as empty answers, counted as empty in the "
            "failure notes, `reasoning_not_finished` in rows.jsonl).",
            "",
        ]
    lines += ["## Benchmark score", ""]
    if r.scores:
        splits = list(r.scores)
        lines += [scores_unit(r.metric, r.scores.get(OVERALL, math.nan)), ""]
        lines += table(
            ["layer", *splits],
            [
                ["official", *[_f(r.scores[s]) for s in splits]],
                ["canonical", *[_f(r.canonical_scores[s]) for s in splits]],
            ],
        )
        lines += _harness_lines(r, splits)
    else:
        lines.append("No gold answers: no benchmark score (see the failure notes).")
    lines += ["", "## Contract mix", "", "official, canonical: scores in points, as above.", ""]
    lines += table(
        ["bucket", "n", "share %", "official", "canonical"],
        [
            [
                b,
                str(int(r.contract_mix[b]["n"])),
                _f(r.contract_mix[b]["share"], 1),
                _f(r.contract_mix[b]["official"]),
                _f(r.contract_mix[b]["canonical"]),
            ]
            for b in BUCKETS
        ],
    )
    lines += [
        "",
        "Subtypes (Table 8): "
        + "; ".join(
            f"{parent}: " + ", ".join(f"{k} {v}" for k, v in subs.items()) for parent, subs in r.subtypes.items()
        ),
        "",
    ]
    if r.raw_split is not None:  # appendix A: the gold file's own metadata (run_audit computes it)
        lines += [
            "### Raw split (appendix A)",
            "",
            f"From the gold file's own metadata, over its {r.raw_split.questions:,} questions (answered or not):",
            "",
            *raw_split_lines(dataclasses.asdict(r.raw_split)),
            "",
        ]
    lines += ["## Semantic audit", ""]
    ra = r.ra_eval
    lines.append(f"- Official error pool (score < 1): {int(ra['errors'])} rows.")
    lines.append(
        f"- RA-Eval (gold > 3 chars inside the output at word boundaries): {int(ra['recovered'])} "
        f"recovered ({_pct(ra['share'])} of the {int(ra.get('zero_credit_errors', ra['errors']))} errors "
        f"with no official credit); {int(ra.get('partial_credit_matched', 0))} of "
        f"{int(ra.get('partial_credit_rows', 0))} rows with partial official credit matched (not counted "
        f"as recovered); {int(ra.get('multiple_choice_skipped', 0))} multiple-choice rows not tested; "
        f"RA-Eval score {_f(ra['score'])}."
    )
    if r.judge is not None:
        jd = r.judge
        point, lo, hi = jd.delta
        lines.append(
            f"- Judge `{jd.spec}` (text-only, error pool only): {jd.accepted} of {jd.pool - jd.undecided} "
            f"decided errors accepted ({_f(jd.accepted_share, 1)}%); {jd.undecided} of {jd.pool} verdicts "
            f"undecided{_unfinished(jd.unfinished)}, left out of the judge score, the interval and the share; "
            "judge score "
            f"{_f(jd.judged_score)}; judge - official {_f(point)} pp [95% CI {_f(lo)}, {_f(hi)}]."
        )
        lines.append(
            "- Judge false-negative rate by bucket (%): "
            + ", ".join(f"{b} {_f(v, 1)}" for b, v in jd.fn_rate_by_bucket.items())
        )
        if jd.validation is not None:
            lines += validation_lines(jd.validation)
        if jd.second is not None:
            s = jd.second
            lines.append(
                f"- Second judge `{s['spec']}` (n={s['n']}): agreement {_f(100 * s['agreement'], 1)}%, "
                f"kappa {_f(s['kappa'], 3)}; acceptance {_f(s['accepted_share'], 1)}%."
            )
    else:
        lines.append("- Judge: not run (give `--judge SPEC`).")
    changed = ", ".join(f"{k} {v}" for k, v in r.canonical_kinds.items() if v)
    causes = ", ".join(f"{k} {v}" for k, v in r.canonical_lost_causes.items() if v)
    lines.append(
        f"- Canonical layer: rows gained by fault kind (`canonical_gain_kind` in rows.jsonl): "
        f"{changed or 'none'}; rows the canonical layer scores below official: {r.canonical_lost}"
        + (f" (by cause, `canonical_lost_cause` in rows.jsonl: {causes})." if causes else ".")
    )
    lines += ["", "Contract repair (Table 7; points of the mean official score):", ""]
    header = ["variant", "gain pp", "errors recovered", "breaks", "net"]
    with_judge = r.judge is not None
    if with_judge:
        header.append("judge FN recovered")
    rows = []
    for rep in r.repair:
        row = [rep.variant, f"{rep.gain_pp:+.2f}", str(rep.recovered), str(rep.breaks), f"{rep.net:+d}"]
        if with_judge:
            row.append(f"{rep.judge_fn_recovered} / {rep.judge_fn}")
        rows.append(row)
    lines += table(header, rows)
    lines += [
        "",
        "By bucket (gain pp): "
        + "; ".join(
            f"{b}: " + ", ".join(f"{v} {g:+.2f}" if not math.isnan(g) else f"{v} n/a" for v, g in gains.items())
            for b, gains in r.repair_by_bucket.items()
        ),
        "",
    ]
    if r.answerability is not None:
        lines += _answerability_lines(r)
    fn = r.failures
    lines += ["## Failure notes", ""]
    lines += table(
        ["note", "outputs", "share %"],
        [
            [name, str(count), _f(100.0 * count / fn.n if fn.n else math.nan, 1)]
            for name, count in [
                ("empty", fn.empty),
                ("truncated", fn.truncated),
                ("abstention", fn.abstention),
                ("unanswerable", fn.unanswerable),
                ("any formatting", fn.any_formatting),
                *[(f"formatting: {k}", c) for k, c in fn.formatting.items()],
            ]
        ],
    )
    return "\n".join(lines) + "\n"


def _answerability_lines(r: AuditResult) -> list[str]:
    """The Answerability section: VizWiz's metrics of "unanswerable" (:mod:`vqaudit.scoring.unanswerable`)."""
    a = r.answerability
    assert a is not None
    how = (
        "an answerability score below 0.5"
        if a.decided_by == "score"
        else 'the answer, normalized as vqaEval.py normalizes a prediction, is "unanswerable"'
    )
    ap = (
        "n/a (the predictions carry no answerability score)"
        if a.average_precision is None
        else _f(100 * a.average_precision)
    )
    lines = [
        "## Answerability",
        "",
        f"Positive class: unanswerable ({a.unanswerable} of {a.n} joined questions by the gold's `answerable`; "
        f"{a.predicted} predicted unanswerable: {how}). Scores in percent, as VizWiz reports them.",
        "",
    ]
    lines += table(
        ["precision", "recall", "F1", "average precision", "tp", "fp", "fn"],
        [[_f(100 * a.precision), _f(100 * a.recall), _f(100 * a.f1), ap, str(a.tp), str(a.fp), str(a.fn)]],
    )
    return [*lines, ""]


_HARNESS_NAMES = {"vlmevalkit": "VLMEvalKit", "lmms-eval": "lmms-eval"}


def _harness_lines(r: AuditResult, splits: list[str]) -> list[str]:
    """The official score under the harness's own variants, beside the default's (only where they differ)."""
    h = r.harness_scores
    if not h:
        return []
    name = _HARNESS_NAMES.get(h["harness"], h["harness"])
    rows = [
        [f"official, `--metric-variant {v}`", *[_f(scores.get(s, math.nan)) for s in splits]]
        for v, scores in h["variants"].items()
    ]
    overall = ", ".join(
        f"`--metric-variant {v}` {_f(scores.get(OVERALL, math.nan))}" for v, scores in h["variants"].items()
    )
    return [
        "",
        f"This file was read as {name}'s output and scored under the default variant `{r.variant}` "
        f"({_f(r.scores.get(OVERALL, math.nan))}); {name}'s own rules give another number: {overall}.",
        "",
        *table(["layer", *splits], rows),
    ]


def _unfinished(n: int) -> str:
    """Why undecided verdicts are undecided, when the judge's reasoning ran out of tokens (a reasoning judge)."""
    if not n:
        return ""
    return (
        f" ({n} of them the judge's reasoning never finished: its token budget ran out; raise it with "
        "`--judge-arg max_tokens=N`)"
    )


def result_to_json(result: AuditResult, *, predictions: Path | None = None) -> dict[str, Any]:
    """The report as JSON-able data (rows excluded; NaN becomes null).

    ``predictions``: the prediction file's resolved path, stored as ``predictions_file`` (the overwrite guard
    of ``vqaudit audit`` compares it with the next run's file); left out when None.
    """
    # The rows (up to ~170k) are left out before the copy: dataclasses.asdict of them only to drop them took
    # more CPU than reading, joining and scoring the file (measured: docs/shortanswer.md, "Writing the output").
    slim = dataclasses.replace(result, rows=(), join=dataclasses.replace(result.join, rows=()))
    data = dataclasses.asdict(slim)
    data.pop("rows")
    if data["judge"] is not None and not data["judge"]["unfinished"]:  # a judge that always finished: as before
        data["judge"].pop("unfinished")
    if result.answerability is None:  # only benchmarks with answerability metrics: other reports are unchanged
        data.pop("answerability")
    if data.get("harness_scores") is None:  # only when a harness's own rules differ: other reports are unchanged
        data.pop("harness_scores", None)
    reasoning = result.reasoning
    if reasoning is not None:  # only when some prediction held reasoning: other reports are unchanged
        data["reasoning"] = dataclasses.asdict(reasoning)
    join = data.pop("join")
    data["join"] = {
        "joined": len(result.join.rows),
        "predictions_without_gold": join["predictions_without_gold"],
        "gold_without_predictions": join["gold_without_predictions"],
        "gold_source": join["gold_source"],
        "notes": join["notes"],
    }
    if predictions is not None:
        data["predictions_file"] = str(predictions)
    cleaned: dict[str, Any] = json_ready(data)
    return cleaned


def write_audit_report(result: AuditResult, out: Path, *, predictions: Path | None = None) -> Path:
    """Write ``rows.jsonl``, ``report.md`` and ``report.json`` into ``out`` as one set; return the .md path.

    All three are written to temporary files first and then renamed together (:func:`vqaudit.files.atomic_write_set`,
    ``report.json`` last and removed first): a run stopped part-way leaves the previous audit whole, never the new
    rows beside the old report. ``predictions``: see :func:`result_to_json`.
    """
    out.mkdir(parents=True, exist_ok=True)
    report = (
        json.dumps(result_to_json(result, predictions=predictions), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    )
    md = out / "report.md"
    atomic_write_set(
        [(out / "rows.jsonl", row_chunks(result)), (md, [render_markdown(result)]), (out / "report.json", [report])]
    )
    return md
