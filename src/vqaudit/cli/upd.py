"""``vqaudit export-tuning``: UPD instruction-tuning data in the LLaVA conversation format (seed 001 §6).

``build upd`` and ``eval upd`` are the source table's ``upd`` row (:mod:`vqaudit.cli.build`,
:mod:`vqaudit.cli.evaluate`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vqaudit.errors import VqauditError


def _ratio(text: str) -> tuple[float, float, float]:
    parts = text.split(":")
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        raise VqauditError(f"--ratio must look like 6:2:2 (standard:AAD:IVQD), got {text!r}") from None
    if len(values) != 3:
        raise VqauditError(f"--ratio needs three parts (standard:AAD:IVQD), got {text!r}")
    return values[0], values[1], values[2]


def export_tuning_cmd(
    out: Annotated[Path, typer.Option(help="Output folder (new or empty).")],
    tsv: Annotated[
        Path | None, typer.Option(help="MMBench-layout TSV of training items (default: bundled easy-VQA train items).")
    ] = None,
    n: Annotated[int, typer.Option("-n", "--n", min=1, help="Number of samples.")] = 1000,
    ratio: Annotated[str, typer.Option(help="standard:AAD:IVQD mix.")] = "6:2:2",
    settings: Annotated[str, typer.Option(help="Comma list of base and/or option.")] = "base,option",
    seed: Annotated[int, typer.Option(min=0, help="Seed of every draw; same seed, same bytes.")] = 0,
) -> None:
    """Export UPD instruction-tuning data in the LLaVA conversation JSON format, with its images."""
    from vqaudit.suites.upd.tuning import TUNING_FILE, export_tuning

    manifest = export_tuning(
        out,
        tsv=tsv,
        n=n,
        ratio=_ratio(ratio),
        settings=tuple(s.strip() for s in settings.split(",") if s.strip()),
        seed=seed,
    )
    typer.echo(f"{manifest['counts']} samples written to {out / TUNING_FILE}")
