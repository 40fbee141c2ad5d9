"""The HTML report: ``index.html`` (every table, per source, with plots) and ``samples.html`` (the sample browser).

A static site that opens from disk with no server and no network: plots are inline SVG/PNG data URIs, the
stylesheet and the browser script are copied beside the pages, and images are linked relative to the report
folder from the benchmark folder. Pages are rendered by jinja2 with autoescaping on, so every string that comes
from a model, a data file or a user is escaped; a Content-Security-Policy allows only the report's own script
file, so no inline script (none is written, and none can be injected) runs.

``index.html`` holds, per source (seed numbers as in ``docs/papers.md``):

- the overview of every metric with 95% group-bootstrap intervals (seed 000 §4);
- seed 000 Table 3 (decisions and answers per state), the ``Bk - Jk`` groups (§5.2), failure accounting
  (§E.2), E_λ with intervals and the paired difference against the first run (§E.1, Figure 5), and the
  residual-cue strata of photos (Table 9); after the sources, the common-state comparison and conditional
  disagreement (appendix B), with the paired differences between runs of one benchmark;
- seed 001 Table 1 (Dual accuracy per variant and setting), Tables D-O (per ability) and radar charts;
- seed 002, for audit folders (``vqaudit audit --out DIR``): the score per split, the contract mix (Table 5),
  the raw split of the gold file's metadata (appendix A) and the per-subtype Table 8
  (:mod:`vqaudit.report.html_audit`);
- for reasoning models (runs where some reply held reasoning): finished replies, reasoning length, drafts
  overruled, token usage, and Jk/Bk/Ebal/EU/EM by reasoning-length quartile; runs of one model at several
  ``max_tokens`` budgets: the token-budget sweep (:mod:`vqaudit.report.reasoning`);
- plots: Jk/Bk with intervals, per-state bars, E_λ curves with the paired band, UPD radars, contract mix, the
  budget sweep.
"""

from __future__ import annotations

import base64
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.files import atomic_write_bytes, atomic_write_text, read_json, read_jsonl
from vqaudit.metrics.reasoning import QUARTILE_METRICS
from vqaudit.metrics.sweep import BudgetSweep
from vqaudit.progress import Reporter, step
from vqaudit.report.conditional import (
    CONDITIONAL_NOTE,
    CONDITIONAL_TITLE,
    HEADER,
    PAIRED_HEADER,
    PAIRED_NOTE,
    PAIRED_TITLE,
    PairedRun,
    conditional_rows,
    paired_rows,
)
from vqaudit.report.grouped import GROUPED_NOTE, grouped_by_source
from vqaudit.report.html_audit import BUCKET_ORDER, Audit, is_audit_folder, load_audit, subtype_table
from vqaudit.report.html_plots import (
    budget_sweep_svg,
    contract_mix_svg,
    e_lambda_svg,
    jk_bk_svg,
    state_bars_svg,
    upd_correlation_svg,
)
from vqaudit.report.html_samples import SampleRun, write_sample_pages
from vqaudit.report.html_tables import (
    decision_answer_gap,
    e_lambda_curve,
    e_lambda_paired,
    residual_cue_rows,
    state_table,
    upd_ability_tables,
)
from vqaudit.report.reasoning import (
    QUARTILE_NOTE,
    REASONING_NOTE,
    SWEEP_NOTE,
    USAGE_KEYS,
    ReasoningRows,
    budget_sweeps,
    reasoning_rows,
    reasoning_run,
    sweep_rows,
)
from vqaudit.report.sample_reasoning import stored_replies
from vqaudit.schema import Outcome
from vqaudit.scored_state import bootstrap_phrase, check_scored
from vqaudit.shortanswer.raw_split import raw_split_lines
from vqaudit.store import RunFolder, load_benchmark

INSTALL_HINT = "the HTML report needs jinja2, a dependency of vqaudit: pip install jinja2 (or reinstall vqaudit)"
METRIC_COLUMNS = ("Jk", "Bk", "decision_accuracy", "supported_rejection", "EU", "EM", "EI", "Ebal", "invalid_rate")
E_LAMBDA_SHOWN = (0.0, 0.25, 0.5, 0.75, 1.0)
ORACLE_NOTE = "reference:gold answers the gold label: a check of the scoring path, not a model"
ASSETS = ("report.css", "browser.js")


@dataclass
class LoadedRun:
    """A scored run folder read for the HTML report."""

    run_dir: Path
    label: str
    model: str
    bench_dir: Path
    metrics: dict[str, Any]
    diagnostics: dict[str, Any]
    outcomes: list[Outcome]
    answer_sources: list[str] = field(default_factory=list)


def _object(path: Path) -> dict[str, Any]:
    value = read_json(path)
    if not isinstance(value, dict):
        raise VqauditError(f"{path}: expected a JSON object")
    return value


def load_run(run_dir: Path) -> LoadedRun:
    """Read a scored run folder: ``run.json``, ``metrics.json``, ``diagnostics.json``, ``outcomes.jsonl``.

    Raises:
        VqauditError: a file is missing (the run was not scored) or malformed (the message names the file and
            field), or the replies changed since it was scored (:func:`vqaudit.scored_state.check_scored`).
    """
    folder = RunFolder(run_dir)
    for path in (folder.info, folder.metrics, folder.outcomes):
        if not path.is_file():
            raise VqauditError(f"{run_dir}: no {path.name}; run `vqaudit score {run_dir}` first")
    check_scored(run_dir)  # a run whose replies changed since `score` is refused, not shown with old numbers
    info = folder.read_info()
    metrics = _object(folder.metrics)
    diagnostics = _object(folder.diagnostics) if folder.diagnostics.is_file() else {}
    for source, m in metrics.items():
        if not isinstance(m, dict):
            raise VqauditError(f"{folder.metrics}: field {source!r} is not an object")
        for key in METRIC_COLUMNS if source != "upd" else ():
            if m.get(key) is not None and not isinstance(m.get(key), int | float):
                raise VqauditError(f"{folder.metrics}: field '{source}.{key}': expected a number or null")
    outcomes = read_jsonl(folder.outcomes, Outcome, surrogates=True)  # score writes a lone surrogate as \udXXX
    return LoadedRun(
        run_dir=run_dir,
        label=run_dir.name,
        model=info.model,
        bench_dir=folder.benchmark(),
        metrics=metrics,
        diagnostics=diagnostics,
        outcomes=outcomes,
        answer_sources=sorted(s for s in metrics if s != "upd"),
    )


def _pct(value: object) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool) or math.isnan(value):
        return "n/a"
    return f"{100 * value:.1f}"


def _signed(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{100 * value:+.1f}"


def _with_ci(m: dict[str, Any], key: str) -> dict[str, str]:
    ci = (m.get("ci") or {}).get(key)
    cell = {"point": _pct(m.get(key)), "ci": ""}
    if isinstance(ci, list) and len(ci) == 2 and ci[0] is not None:
        cell["ci"] = f"[{_pct(ci[0])}, {_pct(ci[1])}]"
    return cell


def _data_uri(kind: str, data: bytes) -> str:
    return f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"


def _jinja_env() -> Any:
    try:
        import jinja2
    except ImportError:
        raise VqauditError(INSTALL_HINT) from None
    return jinja2.Environment(
        loader=jinja2.PackageLoader("vqaudit.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )


def _overview(runs: Sequence[LoadedRun]) -> list[dict[str, Any]]:
    rows = []
    for r in runs:
        for source in r.answer_sources:
            m = r.metrics[source]
            rows.append(
                {
                    "run": r.label,
                    "model": r.model,
                    "oracle": r.model == "reference:gold",
                    "source": source,
                    "groups": m.get("n_groups"),
                    "views": m.get("n_views"),
                    "cells": [_with_ci(m, k) for k in METRIC_COLUMNS],
                    "errors": int((r.diagnostics.get(source) or {}).get("backend_errors", 0) or 0),
                }
            )
    return rows


def _reasoning_entries(source: str, thinking: Sequence[ReasoningRows]) -> list[dict[str, Any]]:
    """The reasoning table's rows of one source: run label, token usage, summary row, quartile rows."""
    return [
        {"label": t.label, "usage": dict(t.usage), "row": row, "quartiles": quartiles}
        for t in thinking
        for name, row, quartiles in t.sources
        if name == source
    ]


def _source_section(
    source: str,
    runs: Sequence[LoadedRun],
    n_draws: int,
    thinking: Sequence[ReasoningRows] = (),
    sweeps: Sequence[BudgetSweep] = (),
) -> dict[str, Any]:
    """Every answerability table and plot of one source, over the runs that hold it.

    ``thinking`` and ``sweeps`` (:mod:`vqaudit.report.reasoning`) add the reasoning and token-budget sections;
    both are empty for runs whose replies held no reasoning.
    """
    have = [r for r in runs if source in r.answer_sources]
    section: dict[str, Any] = {"source": source, "runs": [], "paired": []}
    section["reasoning"] = _reasoning_entries(source, thinking)
    section["sweeps"] = [
        {"reference": sw.reference, "rows": sweep_rows(sw), "plot": _data_uri("image/svg+xml", budget_sweep_svg(sw))}
        for sw in sweeps
        if sw.source == source
    ]
    section["jk_bk_plot"] = _data_uri("image/svg+xml", jk_bk_svg(source, [(r.label, r.metrics[source]) for r in have]))
    curves = {}
    for r in have:
        outcomes = [o for o in r.outcomes if o.source == source]
        states = state_table(outcomes).get(source, [])
        gap = decision_answer_gap(outcomes)[source]
        m = r.metrics[source]
        acc = (r.diagnostics.get(source) or {}).get("failure_accounting") or {}
        curve = e_lambda_curve(outcomes, source, n_draws=n_draws)
        curves[r.label] = (r, outcomes, curve)
        section["runs"].append(
            {
                "label": r.label,
                "model": r.model,
                "states": states,
                "state_plot": _data_uri(
                    "image/svg+xml", state_bars_svg(f"{r.label}: {source} views per state", states)
                ),
                "gap": gap,
                "bk": _with_ci(m, "Bk"),
                "jk": _with_ci(m, "Jk"),
                "bk_minus_jk": _pct((m.get("Bk") or 0) - (m.get("Jk") or 0)) if m.get("Bk") is not None else "n/a",
                "accounting": [
                    (kind, acc.get(kind)) for kind in ("decision", "task") if isinstance(acc.get(kind), dict)
                ],
                "e_lambda": [
                    (lam, _pct(p), f"[{_pct(lo)}, {_pct(hi)}]")
                    for lam, p, lo, hi in zip(curve.lambdas, curve.point, curve.lo, curve.hi, strict=True)
                    if lam in E_LAMBDA_SHOWN
                ],
                "cues": residual_cue_rows(r.diagnostics) if source == "photos" else [],
            }
        )
    base = have[0] if have else None
    for r in have[1:]:
        if base is None or r.bench_dir.resolve() != base.bench_dir.resolve():
            continue
        _, out_a, curve_a = curves[base.label]
        _, out_b, curve_b = curves[r.label]
        try:
            diff = e_lambda_paired(out_b, out_a, source, n_draws=n_draws)
        except VqauditError as exc:
            section["paired"].append({"label": r.label, "base": base.label, "problem": str(exc)})
            continue
        section["paired"].append(
            {
                "label": r.label,
                "base": base.label,
                "problem": None,
                "plot": _data_uri("image/svg+xml", e_lambda_svg(source, r.label, curve_b, base.label, curve_a, diff)),
                "rows": [
                    (lam, _signed(p), f"[{_signed(lo)}, {_signed(hi)}]", lo <= 0 <= hi)
                    for lam, p, lo, hi in zip(diff.lambdas, diff.point, diff.lo, diff.hi, strict=True)
                    if lam in E_LAMBDA_SHOWN
                ],
            }
        )
    return section


def _upd_section(runs: Sequence[LoadedRun]) -> dict[str, Any] | None:
    have = [r for r in runs if "upd" in r.metrics]
    if not have:
        return None
    from vqaudit.report.upd import SETTING_LABELS, radar_chart

    keys: list[str] = []
    for r in have:
        keys += [k for k in r.metrics["upd"].get("configs", {}) if k not in keys]
    order = {"aad": 0, "iasd": 1, "ivqd": 2}
    rank = {s: i for i, s in enumerate(("original", "base", "option", "instruction"))}
    keys.sort(key=lambda k: (order.get(k.split("/")[0], 9), rank.get(k.split("/")[-1], 9), k))
    table1 = []
    for key in keys:
        cells = []
        for r in have:
            c = r.metrics["upd"]["configs"].get(key)
            cells.append(
                None
                if not isinstance(c, dict)
                else {
                    "standard": _with_ci(c, "standard"),
                    "upd": _with_ci(c, "upd"),
                    "dual": _with_ci(c, "dual"),
                    "n": c.get("n_items"),
                }
            )
        table1.append({"key": key, "cells": cells})
    by_config: dict[str, dict[str, Any]] = {}
    for r in have:
        for t in upd_ability_tables(r.metrics["upd"]):
            key = f"{t.variant}/{t.setting}"
            entry = by_config.setdefault(
                key,
                {
                    "variant": t.variant,
                    "setting": SETTING_LABELS.get(t.setting, t.setting),
                    "abilities": {},
                    "runs": [],
                    "radars": [],
                },
            )
            entry["abilities"].update({name: idx for idx, name in t.abilities})
            entry["runs"].append((r.label, t))
            c = r.metrics["upd"]["configs"].get(key, {})
            if c.get("upd") is not None and c.get("per_ability"):
                title = f"{r.label}: {t.variant.upper()}, {entry['setting']} setting"
                entry["radars"].append((title, _data_uri("image/png", radar_chart(title, c["per_ability"]))))
    tables = []
    for key in sorted(by_config, key=lambda k: keys.index(k) if k in keys else len(keys)):
        entry = by_config[key]
        names = sorted(entry["abilities"], key=lambda a: (entry["abilities"][a] or 99, a))
        blocks = []
        for metric, title in (("standard", "Standard Acc."), ("upd", "UPD Acc."), ("dual", "Dual Acc.")):
            rows = []
            for label, t in entry["runs"]:
                got = {name: t.values[metric][i] for i, (_, name) in enumerate(t.abilities)}
                rows.append((label, [_pct(got.get(name)) for name in names]))
            if any(v != "n/a" for _, vals in rows for v in vals):  # "original": Standard only
                blocks.append((title, rows))
        tables.append(
            {
                "key": key,
                "variant": entry["variant"],
                "setting": entry["setting"],
                "abilities": [(entry["abilities"][n], n) for n in names],
                "blocks": blocks,
                "radars": entry["radars"],
            }
        )
    return {
        "runs": [r.label for r in have],
        "table1": table1,
        "tables": tables,
        "correlation": _upd_correlation(have),
        "agreement": _upd_agreement(have),
    }


def _coef(value: object) -> str:
    return "undefined" if not isinstance(value, int | float) else f"{value:.3f}"


def _upd_correlation(runs: Sequence[LoadedRun]) -> dict[str, Any] | None:
    """Seed 001 Fig. 7: Standard against UPD / Dual accuracy across the runs (at least 3), table and scatter plots."""
    from vqaudit.metrics.upd import standard_correlation

    rows = standard_correlation([(r.label, r.metrics["upd"]) for r in runs])
    if not rows:
        return None
    plots = []
    for variant in dict.fromkeys(row["variant"] for row in rows):
        mine = [row for row in rows if row["variant"] == variant]
        plots.append((variant.upper(), _data_uri("image/svg+xml", upd_correlation_svg(variant, mine))))
    table = [
        {
            "key": f"{row['variant']}/{row['setting']}",
            "variant": row["variant"].upper(),
            "setting": row["setting"],
            "x_from": "Original Standard" if row["x_from"] == "original" else "same setting",
            "n": row["n"],
            "coefs": [_coef(row[k]) for k in ("pearson_upd", "spearman_upd", "pearson_dual", "spearman_dual")],
        }
        for row in rows
    ]
    return {"rows": table, "plots": plots}


def _upd_agreement(runs: Sequence[LoadedRun]) -> list[dict[str, Any]]:
    """Seed 001 Fig. E: per run scored with ``--labels``, the judge's agreement and kappa with the human labels."""
    out = []
    for r in runs:
        a = r.metrics["upd"].get("judge_agreement")
        if isinstance(a, dict):
            c = a.get("counts", {})
            out.append(
                {
                    "run": r.label,
                    "judge": a.get("judge"),
                    "n": a.get("n_compared"),
                    "counts": [c.get(k) for k in ("tp", "fp", "fn", "tn")],
                    "accuracy": _pct(a.get("accuracy")),
                    "kappa": _coef(a.get("kappa")),
                    "not_judged": a.get("n_not_judged"),
                }
            )
    return out


def _audit_sections(audits: Sequence[Audit]) -> list[dict[str, Any]]:
    """Seed 002 per audit folder: the score per split, the contract mix (Table 5) and Table 8."""
    sections = []
    labels = run_labels([a.folder for a in audits]) if audits else []
    for audit, label in zip(audits, labels, strict=True):
        rep = audit.report
        mix = _obj(rep, "contract_mix")
        shares = {
            b: float(m["share"]) / 100.0
            for b, m in sorted(mix.items(), key=lambda kv: _bucket_rank(kv[0]))
            if isinstance(m, dict) and isinstance(m.get("share"), int | float)
        }
        scores, canonical, judge = _obj(rep, "scores"), _obj(rep, "canonical_scores"), _obj(rep, "judge")
        sections.append(
            {
                "label": label,
                "benchmark": str(rep.get("benchmark", "?")),
                "model": str(rep.get("model", "?")),
                "metric": f"{rep.get('metric', '?')} ({rep.get('variant', '?')})",
                "judge": str(judge.get("spec")) if judge else None,
                "scores": [
                    (split, _points(scores.get(split), 2), _points(canonical.get(split), 2)) for split in scores
                ],
                "mix": [
                    (
                        b,
                        m.get("n"),
                        _points(m.get("share")),
                        _points(m.get("official"), 2),
                        _points(m.get("canonical"), 2),
                    )
                    for b, m in sorted(mix.items(), key=lambda kv: _bucket_rank(kv[0]))
                    if isinstance(m, dict)
                ],
                "mix_plot": _data_uri("image/svg+xml", contract_mix_svg(f"{label}: contract mix", shares))
                if shares
                else None,
                "table8": [
                    {
                        "parent": r.parent,
                        "subtype": r.subtype,
                        "n": r.n,
                        "gap": _signed_points(r.gap_pp),
                        "fn": _points(r.fn_pct),
                        "errors": r.errors,
                        "accepted": r.judge_accepted,
                    }
                    for r in subtype_table(audit)
                ],
                # appendix A, the gold file's metadata: the lines of report.md without their bullets
                "raw_split": [line.removeprefix("- ") for line in raw_split_lines(_raw_split(rep))],
            }
        )
    return sections


def _raw_split(report: dict[str, Any]) -> dict[str, Any] | None:
    """``report.json``'s ``raw_split`` (None: written before it existed, or not computed)."""
    value = report.get("raw_split")
    return value if isinstance(value, dict) else None


def _obj(mapping: dict[str, Any], key: str) -> dict[str, Any]:
    value = mapping.get(key)
    return value if isinstance(value, dict) else {}


def _bucket_rank(bucket: str) -> tuple[int, str]:
    return (BUCKET_ORDER.index(bucket) if bucket in BUCKET_ORDER else len(BUCKET_ORDER), bucket)


def _points(value: object, digits: int = 1) -> str:
    """A number of points or percent; scores with 2 digits, as report.md shows them (61.25, not 61.3)."""
    if not isinstance(value, int | float) or isinstance(value, bool) or math.isnan(value):
        return "n/a"
    return f"{value:.{digits}f}"


def _signed_points(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:+.1f} pp"


def _sample_runs(runs: Sequence[LoadedRun]) -> list[SampleRun]:
    samples = []
    for r in runs:
        bench = load_benchmark(r.bench_dir, check_images=False)
        replies, fmt = stored_replies(r.run_dir)
        samples.append(
            SampleRun(
                label=r.label,
                model=r.model,
                bench_dir=r.bench_dir,
                views=bench.views,
                group_order=[(g.group_id, g.source, g.question) for g in bench.groups],
                outcomes={o.view_id: o for o in r.outcomes},
                replies=replies,
                reasoning_format=fmt,
            )
        )
    return samples


def run_labels(run_dirs: Sequence[Path]) -> list[str]:
    """Distinct short labels: each folder's name, or its shortest path tail that tells it from the others."""
    parts = [Path(d).resolve().parts for d in run_dirs]
    labels = []
    for i, p in enumerate(parts):
        label = f"{p[-1] if p else '?'} ({i + 1})"  # the same folder given twice
        for n in range(1, len(p)):
            if all(q[-n:] != p[-n:] for j, q in enumerate(parts) if j != i):
                label = "/".join(p[-n:])
                break
        labels.append(label)
    return labels


def write_html_report(
    run_dirs: Sequence[Path], out_dir: Path, *, n_draws: int = 10_000, shown_as: Path | None = None
) -> Path:
    """Write ``index.html``, ``samples.html`` and their files into ``out_dir``; return the path of ``index.html``.

    Args:
        run_dirs: scored run folders (answerability and/or UPD; the first is the base of paired differences) and
            short-answer audit folders (``vqaudit audit --out DIR``: seed 002 Tables 5 and 8).
        out_dir: the report folder (created); ``assets/`` and ``samples/`` are written inside it.
        n_draws: group-bootstrap draws for the E_λ intervals (seed 000 §4: 10,000).
        shown_as: the folder named in the progress line (default ``out_dir``): the report folder when ``out_dir``
            is the staging folder it is moved from (``vqaudit.files.staged_update``).

    Raises:
        VqauditError: no runs given, a run that is not scored or is malformed, an unreadable benchmark folder,
            or jinja2 missing (a dependency of vqaudit; the message says how to install it).
    """
    if not run_dirs:
        raise VqauditError("give at least one run folder")
    env = _jinja_env()
    with step(f"report {shown_as or out_dir} (runs read, sections, sample pages, pages)", len(run_dirs) + 3) as shown:
        return _write_html(run_dirs, out_dir, n_draws, env, shown)


def _write_html(run_dirs: Sequence[Path], out_dir: Path, n_draws: int, env: Any, shown: Reporter) -> Path:
    """The body of :func:`write_html_report`, advancing ``shown`` once per run read and once per later phase."""
    audits = [load_audit(Path(d)) for d in run_dirs if is_audit_folder(Path(d))]
    shown.advance(len(audits))
    runs = []
    for d in run_dirs:
        if not is_audit_folder(Path(d)):
            runs.append(load_run(Path(d)))
            shown.advance()
    for r, label in zip(runs, run_labels([r.run_dir for r in runs]), strict=True):
        r.label = label
    sources = sorted({s for r in runs for s in r.answer_sources})
    models = [reasoning_run(r.label, r.run_dir, r.bench_dir, r.outcomes, r.answer_sources) for r in runs]
    thinking, sweeps = reasoning_rows(models, n_draws=n_draws), budget_sweeps(models, n_draws=n_draws)
    context = {
        "runs": [
            {
                "label": r.label,
                "model": r.model,
                "oracle": r.model == "reference:gold",
                "benchmark": os.path.normpath(r.bench_dir),
            }
            for r in runs
        ],
        "oracle_note": ORACLE_NOTE,
        "columns": METRIC_COLUMNS,
        "overview": _overview(runs),
        "sections": [_source_section(s, runs, n_draws, thinking, sweeps) for s in sources],
        "upd": _upd_section(runs),
        "reasoning_note": REASONING_NOTE,
        "quartile_note": QUARTILE_NOTE,
        "sweep_note": SWEEP_NOTE,
        "quartile_metrics": QUARTILE_METRICS,
        "upd_reasoning": _reasoning_entries("upd", thinking),
        "usage_keys": USAGE_KEYS,
        "has_markdown": (out_dir / "report.md").is_file(),
        "has_upd_markdown": (out_dir / "upd_report.md").is_file(),
        "n_draws": n_draws,
        "bootstrap": bootstrap_phrase([r.run_dir for r in runs]),
        "audits": _audit_sections(audits),
        "grouped": grouped_by_source(
            ((r.label, r.outcomes, r.answer_sources, r.bench_dir) for r in runs), n_draws=n_draws
        ),
        "grouped_note": GROUPED_NOTE,
        "conditional": conditional_rows((r.label, r.diagnostics) for r in runs),
        "conditional_title": CONDITIONAL_TITLE,
        "conditional_note": CONDITIONAL_NOTE,
        "conditional_header": HEADER,
        "conditional_paired": paired_rows(
            [PairedRun(r.label, r.run_dir, str(r.bench_dir.resolve()), r.outcomes, r.diagnostics) for r in runs]
        )
        if len(runs) > 1
        else [],
        "paired_title": PAIRED_TITLE,
        "paired_note": PAIRED_NOTE,
        "paired_header": PAIRED_HEADER,
    }
    shown.advance()
    out_dir.mkdir(parents=True, exist_ok=True)
    n_rows = write_sample_pages(_sample_runs(runs), out_dir)
    shown.advance()
    context["n_rows"] = n_rows
    assets = resources.files("vqaudit.report") / "templates"
    for name in ASSETS:
        atomic_write_bytes(out_dir / "assets" / name, (assets / name).read_bytes())
    atomic_write_text(out_dir / "samples.html", env.get_template("samples.html.j2").render(**context))
    path = out_dir / "index.html"
    atomic_write_text(path, env.get_template("index.html.j2").render(**context))
    shown.advance()
    return path
