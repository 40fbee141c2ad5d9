"""Compare scored runs: Markdown table (metrics with 95% intervals), paired differences, and a Jk/Bk plot."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.files import atomic_write_bytes, atomic_write_text, read_json
from vqaudit.markdown import row, separator
from vqaudit.metrics import paired_difference
from vqaudit.report.conditional import PairedRun, paired_rows
from vqaudit.report.conditional import markdown_section as conditional_markdown_section
from vqaudit.report.grouped import markdown_section as grouped_markdown_section
from vqaudit.report.plots import jk_bk_chart
from vqaudit.report.reasoning import (
    budget_sweeps,
    reasoning_markdown,
    reasoning_rows,
    scored_runs,
    sweep_markdown,
)
from vqaudit.schema import Outcome
from vqaudit.score import load_outcomes
from vqaudit.scored_state import bootstrap_phrase, check_scored, paired_bootstrap
from vqaudit.store import RunFolder

ORACLE_NOTE = "oracle: answers the gold label; a check of the scoring path, not a model"
COLUMNS = ("Jk", "Bk", "decision_accuracy", "supported_rejection", "EU", "EM", "EI", "Ebal", "invalid_rate")


@dataclass(frozen=True)
class RunResult:
    """A scored run: its folder, model spec, benchmark, metrics per source and diagnostics.

    ``benchmark`` is the SHA-256 of the benchmark's ``manifest.json`` recorded in ``run.json``: runs are paired when
    it is equal, wherever each run's copy of the benchmark lies (two copies of one build pair, two builds at one
    path do not).
    """

    run_dir: Path
    model: str
    benchmark: str
    metrics: dict[str, Any]
    diagnostics: dict[str, Any]


def load_run_result(run_dir: Path) -> RunResult:
    """Read ``run.json``, ``metrics.json`` and ``diagnostics.json`` of a scored run.

    Raises:
        VqauditError: a file is missing (the run was not scored) or malformed, or the replies changed since it
            was scored (:func:`vqaudit.scored_state.check_scored`).
    """
    folder = RunFolder(run_dir)
    info = folder.read_info()
    if not folder.metrics.is_file():
        raise VqauditError(f"{run_dir}: no {folder.metrics.name}; run `vqaudit score {run_dir}` first")
    check_scored(run_dir)
    metrics = read_json(folder.metrics)
    diagnostics = read_json(folder.diagnostics)
    _check_metrics(folder.metrics, metrics)
    if not isinstance(diagnostics, dict):
        raise VqauditError(f"{folder.diagnostics}: must hold a JSON object")
    return RunResult(
        run_dir=run_dir,
        model=info.model,
        benchmark=info.benchmark_manifest_sha256,
        metrics=metrics,
        diagnostics=diagnostics,
    )


def _check_metrics(path: Path, metrics: object) -> None:
    """Raise VqauditError naming the source and field if ``metrics.json`` is not what ``vqaudit score`` writes."""
    if not isinstance(metrics, dict):
        raise VqauditError(f"{path}: expected a JSON object of sources")
    for source, m in metrics.items():
        if source == "upd":
            continue
        if not isinstance(m, dict):
            raise VqauditError(f"{path}: source {source!r} is not an object")
        for key in ("n_groups", "n_views"):
            if not isinstance(m.get(key), int):
                raise VqauditError(f"{path}: source {source!r}, field {key!r}: expected an integer")
        for key in COLUMNS:
            if m.get(key) is not None and not isinstance(m.get(key), int | float):
                raise VqauditError(f"{path}: source {source!r}, field {key!r}: expected a number or null")


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"


def _cell(metrics: dict[str, Any], key: str) -> str:
    ci = (metrics.get("ci") or {}).get(key)
    point = _pct(metrics.get(key))
    return point if not ci or ci[0] is None else f"{point} [{_pct(ci[0])}, {_pct(ci[1])}]"


def _model_label(model: str) -> str:
    return f"{model} ({ORACLE_NOTE})" if model == "reference:gold" else model


def markdown_table(results: list[RunResult]) -> str:
    """The comparison table: one row per run and source; percentages with 95% group-bootstrap intervals."""
    head = ["run", "model", "source", "groups", "views", *COLUMNS, "backend errors"]
    lines = [row(head), separator(len(head))]
    for r in results:
        for source, m in sorted(r.metrics.items()):
            errors = int((r.diagnostics.get(source) or {}).get("backend_errors", 0))
            cells = [r.run_dir.name, _model_label(r.model), source, str(m["n_groups"]), str(m["n_views"])]
            flag = f"**{errors}** (no reply: scored as invalid)" if errors else "0"
            lines.append(row(cells + [_cell(m, k) for k in COLUMNS] + [flag]))
    return "\n".join(lines)


def _failure_table(results: list[RunResult]) -> str:
    head = ["run", "source", "decision failures", "failing groups (1 - Bk)", "repeated failures", "groups by failures"]
    lines = [row(head), separator(len(head))]
    for r in results:
        for source, d in sorted(r.diagnostics.items()):
            acc = d["failure_accounting"]["decision"]
            lines.append(
                row(
                    [
                        r.run_dir.name,
                        source,
                        f"{acc['total_failures']}",
                        f"{acc['failing_groups']}",
                        f"{acc['repeated_failures']}",
                        f"{acc['histogram']}",
                    ]
                )
            )
    return "\n".join(lines)


class _Outcomes:
    """Each run's ``outcomes.jsonl``, read once and only when a paired difference needs it."""

    def __init__(self) -> None:
        self._read: dict[Path, list[Outcome]] = {}

    def __call__(self, run_dir: Path) -> list[Outcome]:
        if run_dir not in self._read:
            self._read[run_dir] = load_outcomes(run_dir)
        return self._read[run_dir]


def _paired_section(results: list[RunResult], outcomes: _Outcomes) -> str:
    base = results[0]
    same = [r for r in results[1:] if r.benchmark == base.benchmark]
    others = [r for r in results[1:] if r.benchmark != base.benchmark]
    # Paired differences need the same groups (seed 000 §4): a run of another benchmark gets a line saying it was
    # left out, never a silent absence beside a table that puts its Jk next to the base's.
    skipped = (
        [
            "",
            "Not paired with `"
            + base.run_dir.name
            + "` (another benchmark: its manifest.json differs): "
            + ", ".join(f"`{r.run_dir.name}`" for r in others)
            + ".",
        ]
        if others
        else []
    )
    if not same:
        if not others:
            return ""
        return "\n".join([f"## Paired differences against `{base.run_dir.name}`", *skipped])
    lines = [
        f"## Paired differences against `{base.run_dir.name}` (same bootstrap draws)",
        "",
        "Percentage points, run − base; brackets are 95% paired group-bootstrap intervals drawn with the base's "
        "recorded draws and seed (the draws of its own intervals; Cha et al., arXiv:2609.34480, §4).",
        "",
        row(["run", "source", "draws", "ΔJk", "ΔBk"]),
        separator(5),
    ]
    for r in same:
        boot = paired_bootstrap(base.run_dir, r.run_dir)
        for source in sorted(r.metrics):
            cells = []
            for key in ("Jk", "Bk"):
                point, lo, hi = paired_difference(
                    outcomes(r.run_dir), outcomes(base.run_dir), key, source=source, n_draws=boot.draws, seed=boot.seed
                )
                cells.append(f"{100 * point:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]")
            lines.append(row([r.run_dir.name, source, f"{boot.draws:,} draws, seed {boot.seed}", *cells]))
    return "\n".join(lines + skipped)


def _conditional_section(results: list[RunResult], outcomes: _Outcomes) -> str:
    """The appendix-B section, with the paired differences between runs of one benchmark when there are several."""
    labelled = [(r.run_dir.name, r.diagnostics) for r in results]
    if len(results) < 2:
        return conditional_markdown_section(labelled)
    shared = [r for r in results if sum(q.benchmark == r.benchmark for q in results) > 1]  # runs that pair
    paired = paired_rows(
        [PairedRun(r.run_dir.name, r.run_dir, r.benchmark, outcomes(r.run_dir), r.diagnostics) for r in shared]
    )
    return conditional_markdown_section(labelled, paired)


def _head(results: list[RunResult]) -> list[str]:
    return [
        "# vqaudit answerability report",
        "",
        "Percentages; brackets are 95% percentile intervals from "
        f"{bootstrap_phrase([r.run_dir for r in results])} (Cha et al., arXiv:2609.34480, §4). "
        "Jk = complete task success, Bk = complete decision success; supported_rejection, EU, EM, EI, Ebal are "
        "failure rates (invalid replies count as failures everywhere; invalid_rate reports them separately).",
        "",
        markdown_table(results),
    ]


def summary_table(run_dirs: list[Path]) -> str:
    """The report's title, legend and comparison table of scored runs, as ``vqaudit eval`` prints them.

    Raises:
        VqauditError: a run that has not been scored.
    """
    return "\n".join(_head([load_run_result(d) for d in run_dirs])).rstrip()


def write_report(run_dirs: list[Path], out_dir: Path) -> Path:
    """Write ``report.md`` and ``jk_bk.png`` comparing scored runs into ``out_dir``; return the Markdown path.

    Raises:
        VqauditError: no runs given, or a run that has not been scored.
    """
    if not run_dirs:
        raise VqauditError("give at least one run folder")
    results = [load_run_result(d) for d in run_dirs]
    parts = [
        *_head(results),
        "",
        "## Failure accounting (Cha et al., arXiv:2609.34480, §E.2)",
        "",
        _failure_table(results),
        "",
    ]
    outcomes = _Outcomes()
    paired = _paired_section(results, outcomes)
    if paired:
        parts += [paired, ""]
    # reasoning models only: a run whose replies held no reasoning adds nothing (its report is unchanged)
    thinking = scored_runs([r.run_dir for r in results], [r.metrics for r in results])
    for section in (
        reasoning_markdown(reasoning_rows(thinking)),
        sweep_markdown(budget_sweeps(thinking)),
        grouped_markdown_section([r.run_dir for r in results]),
        _conditional_section(results, outcomes),
    ):
        if section:
            parts += [section, ""]
    parts += ["![Jk and Bk with 95% intervals](jk_bk.png)", ""]
    atomic_write_bytes(out_dir / "jk_bk.png", jk_bk_chart([(r.run_dir.name, r.metrics) for r in results]))
    path = out_dir / "report.md"
    atomic_write_text(path, "\n".join(parts))
    return path
