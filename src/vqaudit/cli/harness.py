"""``export`` and ``import-predictions``: run vqaudit's benchmarks in VLMEvalKit, lmms-eval or inspect_ai.

``export`` writes a benchmark in the harness's input format; ``import-predictions`` reads the harness's
prediction log into a run folder for ``score`` and ``report`` (:mod:`vqaudit.harness`; docs/harnesses/).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vqaudit.cli.options import _names_enum, console, error


def _harness_names() -> tuple[str, ...]:
    from vqaudit.harness.formats import HARNESSES  # the table only (no exporter is imported)

    return tuple(HARNESSES)


HarnessName = _names_enum("HarnessName", _harness_names())
"""``--to`` / ``--format``: a row of :data:`vqaudit.harness.formats.HARNESSES`."""


To = Annotated[HarnessName, typer.Option("--to", help="The harness to export to.")]  # type: ignore[valid-type]
Format = Annotated[HarnessName, typer.Option("--format", help="The harness that wrote PRED.")]  # type: ignore[valid-type]


def export_cmd(
    bench: Annotated[Path, typer.Argument(help="Benchmark folder.")],
    to: To,
    out: Annotated[Path, typer.Option(help="New folder for the exported files.")],
    name: Annotated[
        str | None, typer.Option(help="Dataset / task name in the harness (default vqaudit_SOURCE).")
    ] = None,
) -> None:
    """Write a benchmark as a VLMEvalKit dataset, an lmms-eval task or an inspect_ai task (no harness needed).

    Prints what the harness does to the images before a model sees them (VLMEvalKit's API models re-encode them
    as JPEG).
    """
    from vqaudit.harness import export_benchmark, get_harness

    summary = export_benchmark(bench, str(to), out, name=name)
    row = get_harness(str(to))
    console.print(
        f"{summary.n_views} views exported for {str(to)} as {summary.name!r} into {out}: "
        f"{', '.join(p.name for p in summary.files)}; the commands are in {out / 'README.md'} and "
        f"{row.doc}"
    )
    console.print(f"images in {row.name}: {row.images}", markup=False, highlight=False)


def import_predictions_cmd(
    pred: Annotated[
        Path,
        typer.Argument(
            help="The harness's prediction log (VLMEvalKit .xlsx/.tsv, lmms-eval "
            "samples .jsonl, inspect_ai .eval/.json)."
        ),
    ],
    bench: Annotated[Path, typer.Option(help="The benchmark folder the predictions answer.")],
    fmt: Format,
    out: Annotated[Path, typer.Option(help="New run folder (score it with `vqaudit score`).")],
) -> None:
    """Read a harness's predictions into a run folder; exit 1 if some views have no reply (recorded as errors)."""
    from vqaudit.harness import import_predictions

    summary = import_predictions(pred, bench, str(fmt), out)
    console.print(
        f"{summary.n_views} views: {summary.n_replies} replies and {summary.n_errors} harness errors "
        f"imported from {pred} as model {summary.model!r}, {len(summary.missing)} views without a "
        f"prediction; run folder {out}"
    )
    if summary.missing or summary.n_errors:
        shown = ", ".join(summary.missing[:5]) + (" ..." if len(summary.missing) > 5 else "")
        error(
            f"{len(summary.missing) + summary.n_errors} views have no reply, only a recorded error"
            + (f" (no prediction: {shown}; all listed in {out / 'run.json'})" if summary.missing else "")
            + "; scoring counts them as failures"
        )
        raise typer.Exit(1)
