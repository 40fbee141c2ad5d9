"""``vqaudit build SOURCE``: one subcommand per row of the source table, all through one build helper."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vqaudit.cli.help_format import PlainHelpGroup
from vqaudit.cli.options import (
    MAX_GROUPS,
    ExecutorName,
    ExecutorOpt,
    MaskKind,
    PhotoInput,
    RayAddress,
    Workers,
    console,
    executor,
    warning,
)
from vqaudit.errors import VqauditError
from vqaudit.progress import step

if TYPE_CHECKING:  # imported where used: `vqaudit --help` loads no source table, executor or pydantic
    from pydantic import BaseModel

    from vqaudit.executors import Executor

build_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    cls=PlainHelpGroup,
    help="Build a benchmark folder (one subcommand per source).",
)

Out = Annotated[Path, typer.Option(help="Output benchmark folder (new or empty).")]
Seed = Annotated[int, typer.Option(min=0, help="Build seed; the same seed gives byte-identical output.")]


def build_source(
    name: str, out: Path, options: dict[str, Any], *, workers: int = 1, on: Executor | None = None
) -> dict[str, Any]:
    """Build ``out`` with the ``build`` hook of source ``name`` from its ``Options`` fields; return the manifest.

    The groups are built on ``on`` (:mod:`vqaudit.executors`; default ``local``); the bytes do not depend on it.

    Raises:
        VqauditError: an unknown source, options its ``Options`` model refuses (naming the field), or the build's
            own errors (nothing is left at ``out`` when a build fails).
    """
    from pydantic import ValidationError

    from vqaudit.executors import LocalExecutor, using
    from vqaudit.suites.registry import get_source

    hooks = get_source(name).module()
    try:
        typed: BaseModel = hooks.Options(**options)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise VqauditError(f"build {name}: option --{str(err['loc'][0]).replace('_', '-')}: {err['msg']}") from None
    total = getattr(typed, "groups", 0) or 0
    with step(f"build {name}", total) as bar, using(on or LocalExecutor()):
        manifest: dict[str, Any] = hooks.build(out, typed, workers=workers, on_group=bar.update)
    return manifest


@build_app.command("charts")
def build_charts_cmd(
    out: Out,
    groups: Annotated[int, typer.Option(min=1, max=MAX_GROUPS, help="Number of question groups (5 views each).")] = 100,
    seed: Seed = 0,
    workers: Workers = 1,
    executor_name: ExecutorOpt = ExecutorName.local,
    ray_address: RayAddress = None,
    programs: Annotated[str, typer.Option(help="'lookup' (the paper's question) or 'all' program kinds.")] = "lookup",
    determined: Annotated[bool, typer.Option(help="Add D views: masked, answer still determined (proved).")] = False,
    source: Annotated[
        str,
        typer.Option(
            "--from",
            help="bundled (the real tables shipped with vqaudit), plotqa (--annotations, --qa) or chartqa (--tables).",
        ),
    ] = "bundled",
    annotations: Annotated[Path | None, typer.Option(help="PlotQA annotations.json.")] = None,
    qa: Annotated[Path | None, typer.Option(help="PlotQA QA pairs JSON: each group asks a lookup QA's cell.")] = None,
    tables: Annotated[Path | None, typer.Option(help="ChartQA tables folder (CSV files).")] = None,
    grid: Annotated[
        str | None, typer.Option(help="Declared grid step of imported values (default: their printed precision).")
    ] = None,
) -> None:
    """Build a chart answerability benchmark from the bundled real tables, PlotQA plots or ChartQA tables."""
    manifest = build_source(
        "charts",
        out,
        {
            "groups": groups,
            "seed": seed,
            "programs": programs,
            "determined": determined,
            "input": source,
            "annotations": annotations,
            "qa": qa,
            "tables": tables,
            "grid": grid,
        },
        workers=workers,
        on=executor(executor_name, ray_address),
    )
    if "skipped" in manifest:
        skipped = ", ".join(f"{reason}: {n}" for reason, n in manifest["skipped"].items()) or "none"
        console.print(
            f"{manifest['n_plots_read']} {source} plots read, {manifest['n_groups']} groups built; skipped: {skipped}"
        )
    console.print(f"benchmark written to {out}")


@build_app.command("scenes")
def build_scenes_cmd(
    out: Out,
    groups: Annotated[int, typer.Option(min=1, max=MAX_GROUPS, help="Number of question groups (4 views each).")] = 100,
    seed: Seed = 0,
    workers: Workers = 1,
    executor_name: ExecutorOpt = ExecutorName.local,
    ray_address: RayAddress = None,
    keep_determined: Annotated[
        bool,
        typer.Option(
            help="Keep groups whose occluded view still determines the "
            "answer (labelled answerable); default redraws them, as in "
            "the paper."
        ),
    ] = False,
) -> None:
    """Build a CLEVR scene answerability benchmark (original, S, C, M) from bundled real scene graphs."""
    build_source(
        "scenes",
        out,
        {"groups": groups, "seed": seed, "keep_determined": keep_determined},
        workers=workers,
        on=executor(executor_name, ray_address),
    )
    console.print(f"benchmark written to {out}")


@build_app.command("photos")
def build_photos_cmd(
    out: Out,
    source: Annotated[
        PhotoInput,
        typer.Option(
            "--source", "--input", help="coco (COCO instances; default: bundled public-domain photos) or gqa."
        ),
    ] = PhotoInput.coco,
    groups: Annotated[
        int, typer.Option(min=1, max=MAX_GROUPS, help="Number of question groups (3 views each; 4 with --matched).")
    ] = 40,
    seed: Seed = 0,
    workers: Workers = 1,
    executor_name: ExecutorOpt = ExecutorName.local,
    ray_address: RayAddress = None,
    images: Annotated[Path | None, typer.Option(help="Image folder (COCO or GQA).")] = None,
    annotations: Annotated[Path | None, typer.Option(help="COCO instances JSON, or GQA scene graphs JSON.")] = None,
    questions: Annotated[Path | None, typer.Option(help="GQA questions JSON (--source gqa).")] = None,
    mask: Annotated[MaskKind, typer.Option(help="How the evidence region is removed.")] = MaskKind.fill,
    matched: Annotated[bool, typer.Option(help="Add an appearance-matched control view.")] = False,
) -> None:
    """Build a photo answerability benchmark (original, control, M) from real photographs."""
    build_source(
        "photos",
        out,
        {
            "groups": groups,
            "seed": seed,
            "input": source.value,
            "images": images,
            "annotations": annotations,
            "questions": questions,
            "mask": mask.value,
            "matched": matched,
        },
        workers=workers,
        on=executor(executor_name, ray_address),
    )
    console.print(f"benchmark written to {out}")


@build_app.command("upd")
def build_upd_cmd(
    out: Out,
    tsv: Annotated[
        Path | None,
        typer.Option(help="MMBench-layout TSV or .xlsx, circular copies merged (default: the bundled real data)."),
    ] = None,
    images: Annotated[
        Path | None, typer.Option(help="File with index and image columns, for a --tsv without images.")
    ] = None,
    release: Annotated[
        list[Path] | None,
        typer.Option(
            help="An official MM-UPD release file (parquet or TSV, e.g. "
            "mmaad_base.parquet); repeat for several. Built as "
            "published, every question kept."
        ),
    ] = None,
    variant: Annotated[str, typer.Option(help="UPD variant: aad, iasd, ivqd, a comma list, or all.")] = "all",
    setting: Annotated[str, typer.Option(help="base, option, instruction, original, a comma list, or all.")] = "all",
    seed: Annotated[int, typer.Option(min=0, help="Seed of the IASD/IVQD pairings; same seed, same bytes.")] = 0,
    max_items: Annotated[int | None, typer.Option(min=1, help="Use only the first N input rows.")] = None,
    drop_image_agnostic: Annotated[
        list[Path] | None,
        typer.Option(
            help="A scored blind run (`vqaudit run --blind`) on a build of the same input; repeat for several. The "
            "items they answer correctly are dropped (seed 001 App. 0.B.1); the hand check after is yours."
        ),
    ] = None,
    drop_k: Annotated[
        int | None,
        typer.Option(
            min=1, help="Drop an item when at least K of the blind runs answer it correctly (default: all of them)."
        ),
    ] = None,
) -> None:
    """Build an MM-UPD benchmark (AAD / IASD / IVQD, circular rotations) from an MMBench-layout TSV."""
    if drop_image_agnostic:
        from vqaudit.scored_state import check_scored
        from vqaudit.store import RunFolder

        for run_dir in drop_image_agnostic:  # outcomes read only while they match the run's replies
            folder = RunFolder(run_dir)
            if folder.info.is_file() and folder.outcomes.is_file() and (note := check_scored(run_dir)):
                warning(note)
    manifest = build_source(
        "upd",
        out,
        {
            "tsv": tsv,
            "images": images,
            "release": release or None,
            "variant": variant,
            "setting": setting,
            "seed": seed,
            "max_items": max_items,
            "drop_image_agnostic": drop_image_agnostic or None,
            "drop_k": drop_k,
        },
    )
    if "image_agnostic" in manifest:
        dropped = manifest["image_agnostic"]
        typer.echo(
            f"{dropped['n_dropped']} image-agnostic items dropped ({dropped['rule']}); the hand check the "
            "paper did next is yours (manifest.json image_agnostic)"
        )
    if manifest.get("n_rows_merged") and not manifest.get("release"):
        typer.echo(f"{manifest['n_rows_merged']} circular-copy rows merged into {manifest['n_items_loaded']} items")
    for config, n in manifest.get("counts", {}).items():
        typer.echo(f"{config}: {n} items")
    for name, tally in manifest.get("counts_by_ability", {}).items():
        cells = ", ".join(f"{ability} {n}" for ability, n in tally.items())
        typer.echo(f"{name}: {sum(tally.values())} items ({cells})")
    typer.echo(f"{manifest['n_groups']} groups, {manifest['n_views']} views written to {out}")
