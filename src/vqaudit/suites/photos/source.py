"""The photos row of the source table: build options and builder; answerability scoring plus residual cues."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from vqaudit.schema import Group, Outcome, View
from vqaudit.suites import answerability
from vqaudit.suites.answerability import metrics, prompt, score, summary_line

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
    """Build options of a photo benchmark (``vqaudit build photos``)."""

    groups: int = Field(default=40, ge=1, description="Number of question groups (3 views each; 4 with matched).")
    seed: int = Field(default=0, ge=0, description="Build seed; the same seed gives byte-identical output.")
    input: Literal["coco", "gqa"] = Field(
        default="coco", description="COCO instances (default: bundled photos) or GQA scene graphs."
    )
    images: Path | None = Field(default=None, description="Image folder (COCO or GQA).")
    annotations: Path | None = Field(default=None, description="COCO instances JSON, or GQA scene graphs JSON.")
    questions: Path | None = Field(default=None, description="GQA questions JSON (input gqa).")
    mask: Literal["fill", "blur", "inpaint"] = Field(default="fill", description="How the evidence is removed.")
    matched: bool = Field(default=False, description="Add an appearance-matched control view.")


def build(
    out: Path, options: Options, *, workers: int = 1, on_group: Callable[[int], None] | None = None
) -> dict[str, Any]:
    """Build the benchmark (:func:`vqaudit.suites.photos.build.build_photos`); return its manifest."""
    from vqaudit.suites.photos.build import build_photos

    return build_photos(
        out,
        options.groups,
        options.seed,
        workers=workers,
        source=options.input,
        images_dir=options.images,
        annotations=options.annotations,
        questions=options.questions,
        mask=options.mask,
        matched=options.matched,
        on_group=on_group,
    )


def diagnostics(
    outcomes: Sequence[Outcome], groups: Sequence[Group], entry: Mapping[str, Any], *, n_draws: int, seed: int
) -> dict[str, Any]:
    """The answerability diagnostics plus the residual-cue strata (seed 000 Table 9) and the mask reaction."""
    from vqaudit.suites.photos.cues import mask_reaction, stratified_metrics

    out = answerability.diagnostics(outcomes, groups, entry, n_draws=n_draws, seed=seed)
    out["residual_cues"] = {
        stratum: stratified_metrics(list(outcomes), list(groups), stratum=stratum, n_draws=n_draws, seed=seed)
        for stratum in ("spatial_answer", "residual_cue")
    }
    out["mask_reaction"] = mask_reaction(list(outcomes))
    return out


def verify(
    bench_dir: Path, views: Sequence[View], groups: Sequence[Group], missing: set[str], *, workers: int
) -> list[tuple[str, str]]:
    """Re-derive every group's labels from its scene graph and re-apply its masks byte for byte.

    :func:`vqaudit.suites.photos.verify.verify_photo_groups`.
    """
    from vqaudit.suites.photos.verify import verify_photo_groups

    return verify_photo_groups(bench_dir, views, groups, missing, workers=workers)


def checked(views: Sequence[View], groups: Sequence[Group]) -> dict[str, int]:
    """``{"photo groups": n}``: the groups ``verify`` re-derives."""
    return {"photo groups": len(groups)}


def rebuild_options(manifest: dict[str, Any]) -> Options:
    """The build options of a photo benchmark of the bundled photos (``vqaudit verify --rebuild``).

    Raises:
        VqauditError: a benchmark built from COCO or GQA files (the benchmark does not hold its input files), or
            a missing manifest field.
    """
    from vqaudit.errors import VqauditError
    from vqaudit.suites.common import manifest_field

    if manifest_field(manifest, "input", str) != "bundled":
        raise VqauditError(
            f"manifest.json, field 'input': a benchmark built from {manifest['input']} files is "
            "rebuilt from them (rerun `vqaudit build photos` with them and compare)"
        )
    states = manifest_field(manifest, "states", list)
    return Options(
        groups=manifest_field(manifest, "n_groups", int),
        seed=manifest_field(manifest, "seed", int),
        mask=manifest_field(manifest, "mask", str),
        matched="matched" in states,
    )
