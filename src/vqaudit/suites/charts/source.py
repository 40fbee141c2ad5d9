"""The charts row of the source table: build options, builder, verifier; answerability prompt and scoring."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from vqaudit.errors import VqauditError
from vqaudit.schema import Group, View
from vqaudit.suites.answerability import diagnostics, metrics, prompt, score, summary_line

__all__ = [
    "Options",
    "build",
    "checked",
    "diagnostics",
    "metrics",
    "prompt",
    "rebuild_options",
    "score",
    "summary_line",
    "verify",
]


class Options(BaseModel):
    """Build options of a chart benchmark (``vqaudit build charts``)."""

    groups: int = Field(default=100, ge=1, description="Number of question groups (5 views each).")
    seed: int = Field(default=0, ge=0, description="Build seed; the same seed gives byte-identical output.")
    programs: Literal["lookup", "all"] = Field(default="lookup", description="Question program kinds.")
    determined: bool = Field(default=False, description="Add D views: masked, answer still determined (proved).")
    input: Literal["bundled", "plotqa", "chartqa"] = Field(
        default="bundled", description="bundled tables, PlotQA annotations or ChartQA tables (``--from``)."
    )
    annotations: Path | None = Field(default=None, description="PlotQA annotations.json (--from plotqa).")
    qa: Path | None = Field(default=None, description="PlotQA QA pairs; the queried cell is a lookup QA's.")
    tables: Path | None = Field(default=None, description="ChartQA tables folder of CSV files (--from chartqa).")
    grid: str | None = Field(
        default=None, description="Declared grid step of imported values (default: their printed precision)."
    )
    max_grid_points: int = Field(default=10_000, ge=10, description="Imported plots needing a finer grid are skipped.")


def build(
    out: Path, options: Options, *, workers: int = 1, on_group: Callable[[int], None] | None = None
) -> dict[str, Any]:
    """Build the benchmark and return its manifest.

    Bundled tables: :func:`vqaudit.suites.charts.build.build_charts`; PlotQA or ChartQA input:
    :func:`vqaudit.suites.charts.imported.build_imported_charts`.
    """
    if options.input != "bundled":
        return _build_imported(out, options, on_group)
    if any(x is not None for x in (options.annotations, options.qa, options.tables, options.grid)):
        raise VqauditError("--annotations, --qa, --tables and --grid need --from plotqa or --from chartqa")
    from vqaudit.suites.charts.build import build_charts

    return build_charts(
        out,
        options.groups,
        options.seed,
        workers=workers,
        programs=options.programs,
        determined=options.determined,
        on_group=on_group,
    )


def _build_imported(out: Path, options: Options, on_group: Callable[[int], None] | None) -> dict[str, Any]:
    from fractions import Fraction

    from vqaudit.suites.charts.chartqa import read_chartqa
    from vqaudit.suites.charts.imported import build_imported_charts
    from vqaudit.suites.charts.plotqa import read_plotqa

    grid = None
    if options.grid is not None:
        try:
            grid = Fraction(options.grid)
        except (ValueError, ZeroDivisionError):
            raise VqauditError(f"--grid: not a number: {options.grid!r}") from None
        if grid <= 0:
            raise VqauditError(f"--grid must be positive (got {options.grid})")
    if options.programs != "lookup" or options.determined:
        raise VqauditError("imported charts are built with the lookup question only (no --programs all, --determined)")
    if options.input == "plotqa":
        if options.annotations is None or options.tables is not None:
            raise VqauditError("--from plotqa needs --annotations FILE (and optionally --qa FILE), not --tables")
        result = read_plotqa(options.annotations, options.qa, grid=grid, max_grid_points=options.max_grid_points)
        inputs = [options.annotations, *([options.qa] if options.qa is not None else [])]
    else:
        if options.tables is None or options.annotations is not None or options.qa is not None:
            raise VqauditError("--from chartqa needs --tables DIR, not --annotations or --qa")
        result = read_chartqa(options.tables, grid=grid, max_grid_points=options.max_grid_points)
        inputs = [options.tables]
    return build_imported_charts(
        out, options.input, result, inputs, seed=options.seed, max_groups=options.groups, on_group=on_group
    )


def verify(
    bench_dir: Path, views: Sequence[View], groups: Sequence[Group], missing: set[str], *, workers: int
) -> list[tuple[str, str]]:
    """Re-derive every view (gold, states, question, image bytes) and re-check every certificate (appendix D).

    :func:`vqaudit.suites.charts.verify.verify_chart_views`.
    """
    from vqaudit.suites.charts.verify import verify_chart_views

    return verify_chart_views(bench_dir, views, groups, missing, workers=workers)


def checked(views: Sequence[View], groups: Sequence[Group]) -> dict[str, int]:
    """``{"chart views": n, "chart certificates": m}``: what ``verify`` re-derives and re-checks."""
    return {"chart views": len(views), "chart certificates": sum(v.state in ("M", "D") for v in views)}


def rebuild_options(manifest: dict[str, Any]) -> Options:
    """The build options a bundled-table chart manifest records (``vqaudit verify --rebuild``).

    Raises:
        VqauditError: charts imported from PlotQA or ChartQA (rebuilt only from their input files, which the
            benchmark does not hold), or a missing manifest field.
    """
    from vqaudit.suites.common import manifest_field

    if "from" in manifest:
        raise VqauditError(
            f"manifest.json, field 'from': charts imported from {manifest['from']} are rebuilt from "
            "their input files (rerun `vqaudit build charts` with them and compare)"
        )
    return Options(
        groups=manifest_field(manifest, "n_groups", int),
        seed=manifest_field(manifest, "seed", int),
        programs=manifest_field(manifest, "programs", str),
        determined=manifest_field(manifest, "determined_views", bool),
    )
