"""The charts row of the source table: build options, builder, verifier; answerability prompt and scoring."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from vqaudit.schema import Group, View
from vqaudit.suites.answerability import diagnostics, metrics, prompt, score, summary_line

__all__ = ["Options", "build", "checked", "diagnostics", "metrics", "prompt", "score", "summary_line", "verify"]


class Options(BaseModel):
    """Build options of a chart benchmark (``vqaudit build charts``)."""

    groups: int = Field(default=100, ge=1, description="Number of question groups (5 views each).")
    seed: int = Field(default=0, ge=0, description="Build seed; the same seed gives byte-identical output.")
    programs: Literal["lookup", "all"] = Field(default="lookup", description="Question program kinds.")
    determined: bool = Field(default=False, description="Add D views: masked, answer still determined (proved).")


def build(out: Path, options: Options, *, workers: int = 1,
          on_group: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Build the benchmark (:func:`vqaudit.suites.charts.build.build_charts`); return its manifest."""
    from vqaudit.suites.charts.build import build_charts

    return build_charts(out, options.groups, options.seed, workers=workers, programs=options.programs,
                        determined=options.determined, on_group=on_group)


def verify(bench_dir: Path, views: Sequence[View], groups: Sequence[Group], missing: set[str], *,
           workers: int) -> list[tuple[str, str]]:
    """Re-check every masked view's witness certificate (M) or proof (D) (seed 000, appendix D)."""
    from vqaudit.suites.charts.verify import verify_chart_views

    return verify_chart_views(bench_dir, views, missing, workers=workers)


def checked(views: Sequence[View], groups: Sequence[Group]) -> dict[str, int]:
    """``{"chart certificates": n}``: the masked views ``verify`` re-checks."""
    return {"chart certificates": sum(v.state in ("M", "D") for v in views)}
