"""The upd row of the source table: MM-UPD build options and builder, the UPD prompt, choice scoring, metrics."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from vqaudit.schema import Group, Outcome, Response, View
from vqaudit.suites.registry import ScoreContext

DEFAULT_EVAL_ITEMS = 80
"""Rows of the bundled data ``vqaudit eval upd`` uses: the 20 MMBench samples and the first 60 easy-VQA items."""


class Options(BaseModel):
    """Build options of an MM-UPD benchmark (``vqaudit build upd``)."""

    seed: int = Field(default=0, ge=0, description="Seed of the IASD/IVQD pairings; same seed, same bytes.")
    tsv: Path | None = Field(default=None, description="MMBench-layout TSV/xlsx (default: the bundled real data).")
    images: Path | None = Field(default=None, description="File with index and image columns, for a tsv without.")
    release: list[Path] | None = Field(
        default=None,
        description="Official MM-UPD release files (parquet or TSV), "
        "one configuration each; built as published, instead of --tsv.",
    )
    variant: str = Field(default="all", description="aad, iasd, ivqd, a comma list, or all.")
    setting: str = Field(default="all", description="base, option, instruction, original, a comma list, or all.")
    max_items: int | None = Field(default=None, ge=1, description="Use only the first N input rows.")
    drop_image_agnostic: list[Path] | None = Field(
        default=None,
        description="Scored blind runs (`run --blind`): drop the items they answer correctly (seed 001 App. 0.B.1).",
    )
    drop_k: int | None = Field(
        default=None, ge=1, description="Drop an item when at least K of those runs answer it (default: all)."
    )


def build(
    out: Path, options: Options, *, workers: int = 1, on_group: Callable[[int], None] | None = None
) -> dict[str, Any]:
    """Build the benchmark (:func:`vqaudit.suites.upd.build.build_upd`); return its manifest."""
    from vqaudit.errors import VqauditError
    from vqaudit.suites.upd.build import build_upd

    if options.release:
        from vqaudit.suites.upd.release_build import build_upd_release

        if (
            options.tsv is not None
            or options.images is not None
            or options.max_items is not None
            or options.drop_image_agnostic
            or options.drop_k is not None
        ):
            raise VqauditError(
                "--release builds the published set as it is (its image-agnostic questions already "
                "removed by the authors): it takes no --tsv, --images, --max-items or "
                "--drop-image-agnostic"
            )
        return build_upd_release(
            out,
            options.release,
            variant=None if options.variant == "all" else options.variant,
            setting=None if options.setting == "all" else options.setting,
        )
    return build_upd(
        out,
        tsv=options.tsv,
        variant=options.variant,
        setting=options.setting,
        seed=options.seed,
        max_items=options.max_items,
        images=options.images,
        drop_image_agnostic=options.drop_image_agnostic or (),
        drop_k=options.drop_k,
    )


def prompt(view: View) -> tuple[str, str]:
    """``(prompt_id, text)`` of the view's setting (:func:`vqaudit.prompts.upd.upd_prompt`)."""
    from vqaudit.prompts.upd import upd_prompt

    return upd_prompt(view)


def score(views: Sequence[View], responses: Mapping[str, Response], ctx: ScoreContext) -> list[Outcome]:
    """Strict choice matcher, then the judge for undecided replies (:func:`vqaudit.scoring.upd.score_upd_views`)."""
    from vqaudit.scoring.upd import score_upd_views

    return score_upd_views(
        list(views),
        responses,
        run_dir=ctx.run_dir,
        judge=ctx.judge,
        judge_backend=ctx.judge_backend,
        concurrency=ctx.judge_concurrency,
        reasoning_format=ctx.reasoning_format,
    )


def metrics(
    outcomes: Sequence[Outcome], views: Sequence[View], groups: Sequence[Group], *, n_draws: int, seed: int
) -> dict[str, Any]:
    """Standard, UPD and Dual accuracy per (variant, setting) and ability (:func:`vqaudit.metrics.upd.upd_metrics`)."""
    from vqaudit.metrics.upd import upd_metrics

    return upd_metrics(list(outcomes), list(views), n_draws=n_draws, seed=seed)


def diagnostics(
    outcomes: Sequence[Outcome], groups: Sequence[Group], entry: Mapping[str, Any], *, n_draws: int, seed: int
) -> dict[str, Any] | None:
    """None: the UPD tables are all in ``metrics.json``."""
    return None


def verify(
    bench_dir: Path, views: Sequence[View], groups: Sequence[Group], missing: set[str], *, workers: int
) -> list[tuple[str, str]]:
    """Re-derive every view's gold and options from its meta (:func:`vqaudit.suites.upd.verify.check_upd_group`).

    The source rows are not in the benchmark; what the meta declares (the correct text, the variant, the
    setting, the rotation) still fixes each label.
    """
    from vqaudit.errors import VqauditError
    from vqaudit.files import read_json
    from vqaudit.suites.upd.verify import verify_upd_groups

    try:
        manifest = read_json(bench_dir / "manifest.json")
    except VqauditError as exc:
        return [("manifest", str(exc))]
    release = isinstance(manifest, dict) and manifest.get("release") is True
    return verify_upd_groups(views, groups, release=release)


def checked(views: Sequence[View], groups: Sequence[Group]) -> dict[str, int]:
    """``{"UPD views": n}``: the views ``verify`` re-derives from their meta."""
    return {"UPD views": len(views)}


def summary_line(entry: Mapping[str, Any]) -> str:
    """The line ``vqaudit score`` prints for UPD: where its tables are."""
    return "see metrics.json (Standard, UPD and Dual accuracy per setting and ability)"


def rebuild_options(manifest: dict[str, Any]) -> Options:
    """The build options of an MM-UPD benchmark of the bundled data (``vqaudit verify --rebuild``).

    Raises:
        VqauditError: a benchmark built from a TSV, xlsx or release files (not held by the benchmark), or a
            missing manifest field.
    """
    from vqaudit.errors import VqauditError
    from vqaudit.suites.common import manifest_field

    credits = manifest.get("credits")
    if not isinstance(credits, str) or not credits.startswith("see vqaudit/"):
        raise VqauditError(
            "manifest.json, field 'credits': a benchmark built from --tsv or --release files is "
            "rebuilt from them (rerun `vqaudit build upd` with them and compare)"
        )
    max_items = manifest.get("max_items")
    return Options(
        seed=manifest_field(manifest, "seed", int),
        variant=",".join(manifest_field(manifest, "variants", list)),
        setting=",".join(manifest_field(manifest, "settings", list)),
        max_items=max_items if isinstance(max_items, int) else None,
    )
