"""Meet researchers in the harnesses they run: export benchmarks to them, import their prediction logs.

:func:`export_benchmark` writes a benchmark in a harness's own input format (VLMEvalKit custom-dataset TSV, an
lmms-eval task folder, an inspect_ai dataset and task); :func:`import_predictions` reads the harness's
prediction log back into an ordinary run folder that ``vqaudit score`` and ``vqaudit report`` treat like any
other. The harnesses are the rows of :data:`~vqaudit.harness.formats.HARNESSES`; what the exporters and
importers share is in :mod:`vqaudit.harness.common`. Docs: ``docs/harnesses/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vqaudit.harness.formats import HARNESSES, Harness, get_harness

if TYPE_CHECKING:
    from vqaudit.harness.common import ImportSummary

__all__ = [
    "HARNESSES",
    "ExportSummary",
    "Harness",
    "ImportSummary",
    "export_benchmark",
    "get_harness",
    "import_predictions",
]


def __getattr__(name: str) -> Any:
    """``ImportSummary``, imported on first use (PEP 562).

    The package itself stays light, so the command line reads the harness table (:mod:`vqaudit.harness.formats`)
    at start without loading the importers.
    """
    if name == "ImportSummary":
        from vqaudit.harness.common import ImportSummary

        return ImportSummary
    raise AttributeError(f"module 'vqaudit.harness' has no attribute {name!r}")


@dataclass(frozen=True)
class ExportSummary:
    """What one export wrote.

    Attributes:
        out_dir: the export folder.
        name: the dataset or task name the harness knows it by.
        n_views: views exported (every view of the benchmark).
        files: the files (and the ``images`` folder) written, inside ``out_dir``.
    """

    out_dir: Path
    name: str
    n_views: int
    files: tuple[Path, ...]


def export_benchmark(bench_dir: Path, to: str, out: Path, *, name: str | None = None) -> ExportSummary:
    """Write the benchmark at ``bench_dir`` in harness ``to``'s input format into the new folder ``out``.

    The folder is written beside ``out`` and renamed into place when complete (a failed export leaves nothing).
    Every view is exported with the exact prompt vqaudit asks it with and its image file's bytes unchanged.

    Args:
        bench_dir: a benchmark folder (checked as ``vqaudit run`` checks it).
        to: a harness name (``vlmevalkit``, ``lmms-eval``, ``inspect``).
        out: the export folder to create (must not exist, or be empty).
        name: the dataset or task name (default ``vqaudit_<source>``).

    Raises:
        VqauditError: an unknown harness, a bad name, a bad or edited benchmark, or ``out`` not empty.
    """
    from vqaudit.harness.common import check_name, default_name, open_benchmark
    from vqaudit.staging import staged_folder

    harness = get_harness(to)
    bench = open_benchmark(bench_dir)
    name = check_name(name) if name is not None else default_name(bench)
    final = out.resolve()
    with staged_folder(out) as tmp:
        files = harness.load().export(bench, tmp, final=final, name=name)
    return ExportSummary(
        out_dir=out, name=name, n_views=len(bench.views), files=tuple(out / Path(f).relative_to(tmp) for f in files)
    )


def import_predictions(pred: Path, bench_dir: Path, fmt: str, out: Path) -> ImportSummary:
    """Read harness ``fmt``'s prediction log ``pred`` for the benchmark at ``bench_dir`` into the run folder ``out``.

    Every row must name a view of the benchmark (by id, or by its 0-based position where the harness logs only
    that) and no view may be answered twice; views without a row are recorded as error responses and listed
    in the summary and in ``run.json`` (``origin.missing_view_ids``). Memory stays bounded as the log grows: the
    benchmark's view ids are held, not its views (:mod:`vqaudit.harness.view_index`), the log is read row by row
    and the run written in batches (:mod:`vqaudit.harness.import_run`).

    Raises:
        VqauditError: an unknown format, a bad or edited benchmark (or ``views.jsonl`` changed during the
            import), an unreadable log, a row naming no view or a view twice (naming the file, row and field),
            or ``out`` not empty.
    """
    from vqaudit.harness.import_run import write_imported_run
    from vqaudit.harness.view_index import open_view_index

    harness = get_harness(fmt)
    with open_view_index(bench_dir) as views:  # view ids held, each view read from its line when needed
        predictions = harness.load().predictions(pred, views)  # the log read row by row as the run is written
        return write_imported_run(views, predictions, pred_path=pred, harness=harness.name, out=out)
