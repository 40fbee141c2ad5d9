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

import os
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.files import atomic_write_bytes, atomic_write_text
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
from vqaudit.report.html_audit import audit_sections, is_audit_folder, load_audit
from vqaudit.report.html_cells import data_uri, pct, signed, with_ci
from vqaudit.report.html_plots import (
    budget_sweep_svg,
    e_lambda_svg,
    jk_bk_svg,
    state_bars_svg,
)
from vqaudit.report.html_runs import METRIC_COLUMNS, LoadedRun, load_run, run_labels
from vqaudit.report.html_samples import SampleRun, write_sample_pages
from vqaudit.report.html_tables import (
    decision_answer_gap,
    e_lambda_curve,
    e_lambda_paired,
    residual_cue_rows,
    state_table,
)
from vqaudit.report.html_upd import upd_section
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
from vqaudit.scored_state import bootstrap_phrase
from vqaudit.store import load_benchmark

INSTALL_HINT = "the HTML report needs jinja2, a dependency of vqaudit: pip install jinja2 (or reinstall vqaudit)"
E_LAMBDA_SHOWN = (0.0, 0.25, 0.5, 0.75, 1.0)
ORACLE_NOTE = "reference:gold answers the gold label: a check of the scoring path, not a model"
ASSETS = ("report.css", "browser.js")


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
                    "cells": [with_ci(m, k) for k in METRIC_COLUMNS],
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
        {"reference": sw.reference, "rows": sweep_rows(sw), "plot": data_uri("image/svg+xml", budget_sweep_svg(sw))}
        for sw in sweeps
        if sw.source == source
    ]
    section["jk_bk_plot"] = data_uri("image/svg+xml", jk_bk_svg(source, [(r.label, r.metrics[source]) for r in have]))
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
                "state_plot": data_uri("image/svg+xml", state_bars_svg(f"{r.label}: {source} views per state", states)),
                "gap": gap,
                "bk": with_ci(m, "Bk"),
                "jk": with_ci(m, "Jk"),
                "bk_minus_jk": pct((m.get("Bk") or 0) - (m.get("Jk") or 0)) if m.get("Bk") is not None else "n/a",
                "accounting": [
                    (kind, acc.get(kind)) for kind in ("decision", "task") if isinstance(acc.get(kind), dict)
                ],
                "e_lambda": [
                    (lam, pct(p), f"[{pct(lo)}, {pct(hi)}]")
                    for lam, p, lo, hi in zip(curve.lambdas, curve.point, curve.lo, curve.hi, strict=True)
                    if lam in E_LAMBDA_SHOWN
                ],
                "cues": residual_cue_rows(r.diagnostics) if source == "photos" else [],
            }
        )
    base = have[0] if have else None
    for r in have[1:]:
        if base is None or r.benchmark_sha256 != base.benchmark_sha256:
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
                "plot": data_uri("image/svg+xml", e_lambda_svg(source, r.label, curve_b, base.label, curve_a, diff)),
                "rows": [
                    (lam, signed(p), f"[{signed(lo)}, {signed(hi)}]", lo <= 0 <= hi)
                    for lam, p, lo, hi in zip(diff.lambdas, diff.point, diff.lo, diff.hi, strict=True)
                    if lam in E_LAMBDA_SHOWN
                ],
            }
        )
    return section


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
            is the staging folder it is moved from (``vqaudit.staging.staged_update``).

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
        "upd": upd_section(runs),
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
        "audits": audit_sections(audits),
        "grouped": grouped_by_source(
            ((r.label, r.outcomes, r.answer_sources, r.bench_dir) for r in runs), n_draws=n_draws
        ),
        "grouped_note": GROUPED_NOTE,
        "conditional": conditional_rows((r.label, r.diagnostics) for r in runs),
        "conditional_title": CONDITIONAL_TITLE,
        "conditional_note": CONDITIONAL_NOTE,
        "conditional_header": HEADER,
        "conditional_paired": paired_rows(
            [PairedRun(r.label, r.run_dir, r.benchmark_sha256, r.outcomes, r.diagnostics) for r in runs]
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
