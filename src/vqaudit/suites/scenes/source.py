"""The scenes row of the source table: build options, builder, verifier; answerability prompt and scoring."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

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
    """Build options of a CLEVR scene benchmark (``vqaudit build scenes``)."""

    groups: int = Field(default=100, ge=1, description="Number of question groups (4 views each).")
    seed: int = Field(default=0, ge=0, description="Build seed; the same seed gives byte-identical output.")
    keep_determined: bool = Field(
        default=False, description="Keep groups whose occluded view still determines the answer (labelled answerable)."
    )


def build(
    out: Path, options: Options, *, workers: int = 1, on_group: Callable[[int], None] | None = None
) -> dict[str, Any]:
    """Build the benchmark (:func:`vqaudit.suites.scenes.build.build_scenes`); return its manifest."""
    from vqaudit.suites.scenes.build import build_scenes

    return build_scenes(
        out, options.groups, options.seed, workers=workers, allow_determined=options.keep_determined, on_group=on_group
    )


def verify(
    bench_dir: Path, views: Sequence[View], groups: Sequence[Group], missing: set[str], *, workers: int
) -> list[tuple[str, str]]:
    """Re-render every group's views and re-derive its labels (groups with a missing image are skipped)."""
    from vqaudit.suites.scenes.verify import verify_scene_groups

    return verify_scene_groups(bench_dir, views, groups, missing)


def checked(views: Sequence[View], groups: Sequence[Group]) -> dict[str, int]:
    """``{"scene groups": n}``: the groups ``verify`` re-derives."""
    return {"scene groups": len(groups)}


def rebuild_options(manifest: dict[str, Any]) -> Options:
    """The build options a scene manifest records (``vqaudit verify --rebuild``); VqauditError names a missing field."""
    from vqaudit.suites.common import manifest_field

    return Options(
        groups=manifest_field(manifest, "n_groups", int),
        seed=manifest_field(manifest, "seed", int),
        keep_determined=manifest_field(manifest, "allow_determined", bool),
    )
