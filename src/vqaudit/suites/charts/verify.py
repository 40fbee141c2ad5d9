"""The chart checker and the designed faults it must reject (seed 000, appendix D).

``vqaudit verify`` re-checks every masked view's witness certificate or proof; ``vqaudit audit-checker`` runs the
designed-fault suite.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from vqaudit.errors import VqauditError
from vqaudit.executors import current
from vqaudit.files import read_json
from vqaudit.progress import track
from vqaudit.schema import View
from vqaudit.store import load_benchmark
from vqaudit.suites.charts.declared_tables import declare_benchmark_tables
from vqaudit.suites.charts.faults import FAULT_KINDS, Fault, design_faults
from vqaudit.suites.charts.real_table import RealTable
from vqaudit.suites.charts.tables import TABLES_DIR, declare_table, load_table
from vqaudit.suites.charts.witness import DETERMINED_FORMAT, verify_certificate, verify_determined
from vqaudit.suites.charts.world import World


def verify_view(bench_dir: Path, view: View) -> list[str]:
    """The failed conditions of one masked chart view's certificate (M: witness; D: proof) (empty = verified).

    Besides :func:`vqaudit.suites.charts.witness.verify_certificate`, checks that the view has a certificate,
    that the certificate names this view, and that its ``world_a`` is the view's world.
    """
    try:
        declare_benchmark_tables(bench_dir)  # imported charts: the tables their domains are declared in
    except VqauditError as exc:
        return [str(exc)]
    return check_loaded(load_for_check(bench_dir, view))


def load_for_check(bench_dir: Path, view: View) -> tuple[View, object, bytes | None]:
    """``(view, certificate or the reason it is unusable, image bytes or None)``: what :func:`check_loaded` needs.

    Read on the driver, so a check can run on any machine (``--executor ray``) without the benchmark folder.
    """
    cert_path = view.meta.get("certificate")
    if not isinstance(cert_path, str) or not (bench_dir / cert_path).is_file():
        return view, _Unusable("no certificate"), None
    try:
        cert = read_json(bench_dir / cert_path)
    except VqauditError as exc:
        return view, _Unusable(str(exc)), None
    image = bench_dir / view.image
    if not image.is_file():
        return view, _Unusable(f"image {view.image} missing"), None
    return view, cert, image.read_bytes()


@dataclass(frozen=True)
class _Unusable:
    """Stands for a certificate that could not be read: the problem to report."""

    problem: str


def check_loaded(item: tuple[View, object, bytes | None]) -> list[str]:
    """:func:`check_certificate` of an item of :func:`load_for_check` (its problem if it could not be read)."""
    view, cert, image = item
    if isinstance(cert, _Unusable) or image is None:
        return [cert.problem if isinstance(cert, _Unusable) else "image missing"]
    return check_certificate(view, cert, image)


def check_certificate(view: View, cert: object, image_png: bytes) -> list[str]:
    """The failed conditions of a certificate for ``view`` against the image bytes (empty = verified)."""
    if not isinstance(cert, dict) or cert.get("view_id") != view.view_id:
        return ["certificate names another view"]
    if cert.get("format") == DETERMINED_FORMAT:
        if view.obligation.kind != "answer" or view.obligation.gold != (cert.get("answer"),):
            return ["the view's gold answer is not the certified answer"]
        if cert.get("world") != view.meta.get("world"):
            return ["certificate world is not the view's world"]
        return verify_determined(cert, image_png)
    if view.obligation.kind != "abstain":
        return ["a witnessed (unanswerable) view must oblige abstention"]
    try:
        if World.from_json(cert["world_a"]) != World.from_json(view.meta["world"]):
            return ["certificate world_a is not the view's world"]
    except (KeyError, TypeError, VqauditError) as exc:
        return [f"malformed world: {exc}"]
    return verify_certificate(cert, image_png)


def verify_chart_views(bench_dir: Path, views: Sequence[View], missing: set[str], *,
                       workers: int) -> list[tuple[str, str]]:
    """Re-check the certificate or proof of every masked chart view (M, D) whose image exists."""
    views = [v for v in views if v.state in ("M", "D") and v.view_id not in missing]
    try:
        tables = benchmark_tables(bench_dir)
    except VqauditError as exc:
        return [(v.view_id, str(exc)) for v in views]
    loaded = (load_for_check(bench_dir, v) for v in views)  # read here: the checks may run on other machines
    results = list(current().map(partial(_check_declared, tables), loaded, workers=workers, chunksize=8))
    return [(v.view_id, p) for v, problems in zip(views, results, strict=True) for p in problems]


def benchmark_tables(bench_dir: Path) -> tuple[RealTable, ...]:
    """Declare the imported tables of ``bench_dir/tables/`` here and return them, to declare on the workers too.

    A worker of the ``ray`` executor is another process, maybe on another machine, that did not read them.

    Raises:
        VqauditError: a file there that is not a declared table.
    """
    declare_benchmark_tables(bench_dir)
    folder = bench_dir / TABLES_DIR
    return tuple(load_table(p.stem) for p in sorted(folder.glob("*.json"))) if folder.is_dir() else ()


def _check_declared(tables: tuple[RealTable, ...], item: tuple[View, object, bytes | None]) -> list[str]:
    for table in tables:
        declare_table(table)
    return check_loaded(item)


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
    genuine = [(v, read_json(bench_dir / str(v.meta["certificate"])), (bench_dir / v.image).read_bytes())
               for v in views]
    faults = design_faults(genuine)
    verdicts = list(track(current().map(partial(_check_fault, tables), faults, workers=workers, chunksize=4),
                          f"audit-checker {bench_dir}: faults checked", len(faults)))
    table: dict[str, list[int]] = {kind: [0, 0] for kind in FAULT_KINDS}
    for fault, problems in zip(faults, verdicts, strict=True):
        table[fault.kind][0] += 1
        table[fault.kind][1] += bool(problems)
    accepted = sum(not check_certificate(v, c, img) for v, c, img in genuine)
    table["genuine"] = [len(genuine), accepted]
    return table
