"""``vqaudit audit-checker``: the chart checker must reject every designed fault (seed 000, appendix D).

Faults are designed from a benchmark's genuine certificates (:mod:`vqaudit.suites.charts.faults`) and each is
checked by the same checker ``vqaudit verify`` uses (:func:`vqaudit.suites.charts.verify.check_certificate`), on
the current executor.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from vqaudit.errors import VqauditError
from vqaudit.executors import current
from vqaudit.files import read_json
from vqaudit.progress import track
from vqaudit.store import load_benchmark
from vqaudit.suites.charts.faults import FAULT_KINDS, Fault, design_faults
from vqaudit.suites.charts.real_table import RealTable
from vqaudit.suites.charts.tables import declare_table
from vqaudit.suites.charts.verify import benchmark_tables, check_certificate


def _check_fault(tables: tuple[RealTable, ...], fault: Fault) -> list[str]:
    for table in tables:
        declare_table(table)
    return check_certificate(fault.view, fault.certificate, fault.image_png)


def run_fault_suite(bench_dir: Path, *, max_views: int | None = None, workers: int = 1) -> dict[str, list[int]]:
    """Design faults from a benchmark's genuine certificates and check that the checker rejects every one.

    Args:
        bench_dir: a built chart benchmark.
        max_views: use at most this many masked views (each gives one fault of every kind).
        workers: processes used to re-render (on the current executor, :func:`vqaudit.executors.current`).

    Returns:
        ``{kind: [faults designed, faults rejected]}``, plus ``"genuine": [checked, accepted]`` for the
        certificates the faults were made from.

    Raises:
        VqauditError: the benchmark cannot be read or has fewer than two masked chart views.
    """
    bench = load_benchmark(bench_dir, check_images=False)
    tables = benchmark_tables(bench_dir)
    views = [v for v in bench.views if v.source == "charts" and v.state == "M"][:max_views]
    if len(views) < 2:
        raise VqauditError(f"{bench_dir}: need at least two masked chart views to design faults")
    genuine = [
        (v, read_json(bench_dir / str(v.meta["certificate"])), (bench_dir / v.image).read_bytes()) for v in views
    ]
    faults = design_faults(genuine)
    verdicts = list(
        track(
            current().map(partial(_check_fault, tables), faults, workers=workers, chunksize=4),
            f"audit-checker {bench_dir}: faults checked",
            len(faults),
        )
    )
    table: dict[str, list[int]] = {kind: [0, 0] for kind in FAULT_KINDS}
    for fault, problems in zip(faults, verdicts, strict=True):
        table[fault.kind][0] += 1
        table[fault.kind][1] += bool(problems)
    accepted = sum(not check_certificate(v, c, img) for v, c, img in genuine)
    table["genuine"] = [len(genuine), accepted]
    return table
