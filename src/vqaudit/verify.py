"""``vqaudit verify BENCH``: re-check every image hash and witness certificate of a benchmark (seed 000, appendix D)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from vqaudit.progress import step
from vqaudit.schema import View
from vqaudit.store import image_fault, load_benchmark, manifest_problems
from vqaudit.suites.charts.verify import check_certificate, run_fault_suite, verify_view

__all__ = ["check_certificate", "count_checked", "run_fault_suite", "verify_benchmark", "verify_view"]


def _image_checks(bench_dir: Path, views: Sequence[View]) -> list[tuple[int, View, str]]:
    """``(row, view, "missing" | "hash")`` of every view whose image is absent or altered, in ``views.jsonl`` order.

    Unlike ``load_benchmark(check_images=True)``, which stops at the first bad image (``vqaudit run`` refuses such
    a benchmark), this lists them all.
    """
    checks = ((row, view, image_fault(bench_dir, view)) for row, view in enumerate(views, start=1))
    return [(row, view, fault) for row, view, fault in checks if fault is not None]


def _describe(row: int, view: View, fault: str) -> tuple[str, str]:
    if fault == "missing":
        return view.view_id, f"views.jsonl row {row}, field 'image': {view.image} is missing"
    return view.view_id, f"views.jsonl row {row}, field 'image_sha256': {view.image} does not match its hash"


def verify_benchmark(bench_dir: Path, *, workers: int = 1) -> list[tuple[str, str]]:
    """Check every image hash, the manifest, and each source's own re-checks; return ``(id, problem)`` pairs.

    Every fault is listed (empty = valid): each image that is missing or does not match its ``image_sha256``
    (:func:`vqaudit.store.image_fault`), each failed condition of the source's ``verify`` hook (the source table,
    :mod:`vqaudit.suites.registry`: chart certificates and proofs, scene re-renders; views whose image is missing
    are not re-checked), and each file differing from ``manifest.json``.

    Args:
        bench_dir: benchmark folder.
        workers: processes used to re-render (the result does not depend on it).

    Raises:
        VqauditError: the benchmark folder cannot be read (a missing or malformed ``views.jsonl``,
            ``groups.jsonl`` or ``manifest.json``, an unknown group or view id, a duplicate id, an unknown source).
    """
    from vqaudit.suites.registry import hooks, sources_in_order

    bench = load_benchmark(bench_dir, check_images=False)
    with step(f"verify {bench_dir} (image hashes, then re-checks)", 2 * len(bench.views)) as shown:
        checks = _image_checks(bench_dir, bench.views)
        shown.advance(len(bench.views))
        bad_images = [_describe(row, view, fault) for row, view, fault in checks]
        missing = {view.view_id for _, view, fault in checks if fault == "missing"}
        faults = list(bad_images)
        for name in sources_in_order({v.source for v in bench.views}):
            views = [v for v in bench.views if v.source == name]
            groups = [g for g in bench.groups if g.source == name]
            faults += hooks(name).verify(bench_dir, views, groups, missing, workers=workers)
            shown.advance(len(views))
    return faults + [("manifest", p) for p in manifest_problems(bench)]


def count_checked(bench_dir: Path) -> dict[str, int]:
    """How many items each source's ``verify`` hook re-checks (every source, in table order) and files listed."""
    from vqaudit.suites.registry import SOURCES

    bench = load_benchmark(bench_dir, check_images=False)
    out: dict[str, int] = {}
    for name, row in SOURCES.items():  # every source's line, zero counts included
        out.update(row.module().checked([v for v in bench.views if v.source == name],
                                        [g for g in bench.groups if g.source == name]))
    out["files in the manifest"] = len(bench.manifest.get("files") or {})
    return out
