"""The short-answer audit report in the layout of seed 002 Table 13 (appendix I "Minimal reporting template").

Four layers, in Table 13's order: **Benchmark score** (the standard metric, for comparability), **Contract mix**
(scalar / readout / identifier / multi-span, plus the other-open remainder; Table 5 counts, Table 8 subtypes),
**Semantic audit** (on the official error pool: RA-Eval, the judge when one ran, the canonical layer and
contract repair, Table 7) and **Failure notes** (empty, truncated, formatting; reported apart from semantic
mismatch). ``write_audit_report`` writes ``report.md``, ``report.json`` and ``rows.jsonl`` (one line per joined
row: its question, prediction and gold ``answers``, every layer's score, the bucket, and the canonical overlay
gold as a *new* column beside ``answers``).
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

from vqaudit.files import atomic_write_text, json_ready, write_json
from vqaudit.scoring.contracts import BUCKETS
from vqaudit.shortanswer.audit import AuditResult

_METRIC_NAMES = {"vqa_accuracy": "VQA accuracy", "anls": "ANLS", "relaxed_accuracy": "relaxed accuracy",
                 "exact_match": "exact match", "containment": "whole-word containment"}


def _f(value: float, digits: int = 2) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _pct(value: float) -> str:
    text = _f(value, 1)
    return text if text == "n/a" else text + "%"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def render_markdown(result: AuditResult) -> str:
    """Render the Table 13 report as Markdown."""
    r = result
    j = r.join
    lines = [f"# Short-answer score audit: {r.benchmark}", "",
             f"Model: {r.model or 'unnamed'}. Metric: {_METRIC_NAMES.get(r.metric, r.metric)} (variant `{r.variant}`). "
             f"{r.n_predictions} predictions, {len(j.rows)} joined with gold ({j.gold_source} gold); "
             f"{len(j.predictions_without_gold)} predictions without gold, "
             f"{len(j.gold_without_predictions)} gold questions without a prediction.", ""]
    lines += [f"- note: {n}" for n in (*j.notes, *r.notes)]
    lines += [""] if j.notes or r.notes else []
    lines += ["## Benchmark score", ""]
    if r.scores:
        splits = list(r.scores)
        lines += _table(["layer", *splits], [["official", *[_f(r.scores[s]) for s in splits]],
                                             ["canonical", *[_f(r.canonical_scores[s]) for s in splits]]])
    else:
        lines.append("No gold answers: no benchmark score (see the failure notes).")
    lines += ["", "## Contract mix", ""]
    lines += _table(["bucket", "n", "share %", "official", "canonical"],
                    [[b, str(int(r.contract_mix[b]["n"])), _f(r.contract_mix[b]["share"], 1),
                      _f(r.contract_mix[b]["official"]), _f(r.contract_mix[b]["canonical"])] for b in BUCKETS])
    lines += ["", "Subtypes (Table 8): " + "; ".join(
        f"{parent}: " + ", ".join(f"{k} {v}" for k, v in subs.items()) for parent, subs in r.subtypes.items()), ""]
    lines += ["## Semantic audit", ""]
    ra = r.ra_eval
    lines.append(f"- Official error pool (score < 1): {int(ra['errors'])} rows.")
    lines.append(f"- RA-Eval (gold > 3 chars inside the output at word boundaries): {int(ra['recovered'])} "
                 f"recovered ({_pct(ra['share'])} of the {int(ra.get('zero_credit_errors', ra['errors']))} errors "
                 f"with no official credit); {int(ra.get('partial_credit_matched', 0))} of "
                 f"{int(ra.get('partial_credit_rows', 0))} rows with partial official credit matched (not counted "
                 f"as recovered); {int(ra.get('multiple_choice_skipped', 0))} multiple-choice rows not tested; "
                 f"RA-Eval score {_f(ra['score'])}.")
    if r.judge is not None:
        jd = r.judge
        point, lo, hi = jd.delta
        lines.append(f"- Judge `{jd.spec}` (text-only, error pool only): {jd.accepted} of {jd.pool - jd.undecided} "
                     f"decided errors accepted ({_f(jd.accepted_share, 1)}%); {jd.undecided} of {jd.pool} verdicts "
                     f"undecided, left out of the judge score, the interval and the share; judge score "
                     f"{_f(jd.judged_score)}; judge - official {_f(point)} pp [95% CI {_f(lo)}, {_f(hi)}].")
        lines.append("- Judge false-negative rate by bucket (%): "
                     + ", ".join(f"{b} {_f(v, 1)}" for b, v in jd.fn_rate_by_bucket.items()))
        if jd.validation is not None:
            v = jd.validation
            lines.append(f"- Validation vs human labels (n={int(v['n'])}): precision {_f(100 * v['precision'], 1)}%, "
                         f"recall {_f(100 * v['recall'], 1)}%, Cohen's kappa {_f(v['kappa'], 3)}.")
        if jd.second is not None:
            s = jd.second
            lines.append(f"- Second judge `{s['spec']}` (n={s['n']}): agreement {_f(100 * s['agreement'], 1)}%, "
                         f"kappa {_f(s['kappa'], 3)}; acceptance {_f(s['accepted_share'], 1)}%.")
    else:
        lines.append("- Judge: not run (give `--judge SPEC`).")
    changed = ", ".join(f"{k} {v}" for k, v in r.canonical_kinds.items() if v)
    causes = ", ".join(f"{k} {v}" for k, v in r.canonical_lost_causes.items() if v)
    lines.append(f"- Canonical layer: rows gained by fault kind: {changed or 'none'}; "
                 f"rows the canonical layer scores below official: {r.canonical_lost}"
                 + (f" (by cause: {causes})." if causes else "."))
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
    lines += _table(header, rows)
    lines += ["", "By bucket (gain pp): " + "; ".join(
        f"{b}: " + ", ".join(f"{v} {g:+.2f}" if not math.isnan(g) else f"{v} n/a" for v, g in gains.items())
        for b, gains in r.repair_by_bucket.items()), ""]
    fn = r.failures
    lines += ["## Failure notes", ""]
    lines += _table(["note", "outputs", "share %"],
                    [[name, str(count), _f(100.0 * count / fn.n if fn.n else math.nan, 1)]
                     for name, count in [("empty", fn.empty), ("truncated", fn.truncated),
                                         ("abstention", fn.abstention), ("unanswerable", fn.unanswerable),
                                         ("any formatting", fn.any_formatting),
                                         *[(f"formatting: {k}", c) for k, c in fn.formatting.items()]]])
    return "\n".join(lines) + "\n"


def result_to_json(result: AuditResult) -> dict[str, Any]:
    """The report as JSON-able data (rows excluded; NaN becomes null)."""
    data = dataclasses.asdict(result)
    data.pop("rows")
    join = data.pop("join")
    data["join"] = {"joined": len(join["rows"]), "predictions_without_gold": join["predictions_without_gold"],
                    "gold_without_predictions": join["gold_without_predictions"],
                    "gold_source": join["gold_source"], "notes": join["notes"]}
    cleaned: dict[str, Any] = json_ready(data)
    return cleaned


def write_audit_report(result: AuditResult, out: Path) -> Path:
    """Write ``report.md``, ``report.json`` and ``rows.jsonl`` into ``out`` (atomically); return the .md path."""
    out.mkdir(parents=True, exist_ok=True)
    joined = {row.qid: row for row in result.join.rows}
    lines = []
    for row in result.rows:
        rec = json_ready(dataclasses.asdict(row))
        source = joined[row.qid]
        rec["question"] = source.question
        rec["prediction"] = source.prediction
        rec["answers"] = list(source.answers)
        rec["canonical_answers"] = rec.pop("overlay")
        lines.append(json.dumps(rec, ensure_ascii=False, sort_keys=True))
    atomic_write_text(out / "rows.jsonl", "".join(line + "\n" for line in lines))
    write_json(out / "report.json", result_to_json(result))
    md = out / "report.md"
    atomic_write_text(md, render_markdown(result))
    return md
