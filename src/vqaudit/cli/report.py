"""``vqaudit report``: the Markdown and HTML reports of scored runs and audit folders.

One Markdown report per report kind of the runs' sources, and the HTML report with its sample browser, written in a
staged folder and moved into place whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from vqaudit.cli.options import warning
from vqaudit.errors import VqauditError


def report(
    runs: Annotated[list[Path], typer.Argument(help="Scored run folders to compare (and `vqaudit audit` folders).")],
    out: Annotated[Path | None, typer.Option(help="Report folder (default: the first run's report/).")] = None,
) -> None:
    """Write the HTML report with its sample browser, and for scored run folders the Markdown report too.

    Scored run folders get report.md (Jk/Bk with intervals; MM-UPD runs: upd_report.md with radar charts, in the
    same folder, as `vqaudit eval upd` writes it) and index.html; `vqaudit audit`
    folders appear in index.html only (their own report.md is in the audit folder), with scores as report.md
    shows them. With several runs of one benchmark, each later run is compared with the first on the first's
    recorded bootstrap draws: paired Delta Jk and Delta Bk, and Delta common-state Bk and Jk and Delta conditional
    disagreement (seed 000 appendix B), each with its 95% paired interval. Each run's seal (scored.json) is
    checked first: a run changed since `vqaudit score` is refused.
    """
    from vqaudit.report.html import write_html_report  # HTML report + sample browser beside the Markdown
    from vqaudit.report.html_audit import is_audit_folder  # seed 002 audit folders (docs/report.md)
    from vqaudit.staging import staged_update

    target = out or runs[0] / "report"
    scored = [r for r in runs if not is_audit_folder(r)]  # `vqaudit audit` folders go to the HTML only
    # written in a staged sibling and moved into place whole: a failure (a full disk, a truncated outcomes.jsonl)
    # leaves the report folder as it was, never a partial report
    with staged_update(target) as tmp:
        written = write_reports(scored, tmp) if scored else []
        html = write_html_report(runs, tmp, shown_as=target)
    for label, path in written:
        typer.echo(f"{label}: {target / path.relative_to(tmp)}")
    typer.echo(f"HTML report: {target / html.relative_to(tmp)}")


def write_reports(runs: list[Path], target: Path) -> list[tuple[str, Path]]:
    """Write one report per report kind of the runs' sources (the ``report`` hook of each source's row).

    Runs are grouped by the report hook their sources use (the answerability sources share one comparison
    report, ``report.md``; UPD runs get Table 1 and radar charts, ``upd_report.md``), each written into ``target``
    itself, where ``vqaudit eval`` writes it too. Returns ``(label, path)`` pairs.

    Raises:
        VqauditError: a run folder without ``run.json`` or not scored yet, or whose replies changed since it was
            scored (:func:`vqaudit.scored_state.check_scored`; a run scored before ``scored.json`` gets a warning).
    """
    from vqaudit.scored_state import check_scored
    from vqaudit.store import BenchmarkFolder, RunFolder
    from vqaudit.suites.registry import get_source, report_for

    by_writer: dict[str, list[Path]] = {}
    for run_dir in runs:
        folder = RunFolder(run_dir)
        if not folder.info.is_file():
            what = "a benchmark folder, not a run" if BenchmarkFolder(run_dir).exists() else "not a run folder"
            raise VqauditError(f"{run_dir}: {what} (no run.json); give the folders `vqaudit run --out` wrote")
        if not folder.metrics.is_file():
            raise VqauditError(f"{run_dir}: not scored yet; run `vqaudit score {run_dir}` first")
        note = check_scored(run_dir)  # replies changed since `score`: refused before anything is written
        if note is not None:
            warning(note)
        for name in _sources(folder):
            dirs = by_writer.setdefault(get_source(name).report, [])
            if run_dir not in dirs:
                dirs.append(run_dir)
    # every writer writes into target itself, as `vqaudit eval` does (upd_report.md beside report.md and index.html)
    return [("report", report_for(_first_source(dirs[0]), dirs, target)) for dirs in by_writer.values()]


def _sources(folder: Any) -> list[str]:
    """The sources of a run: recorded in run.json, or (runs made before it recorded them) its benchmark's manifest."""
    from vqaudit.store import BenchmarkFolder

    info = folder.read_info()
    return list(info.sources) or [BenchmarkFolder(folder.benchmark()).read_manifest().source]


def _first_source(run_dir: Path) -> str:
    from vqaudit.store import RunFolder

    return _sources(RunFolder(run_dir))[0]
