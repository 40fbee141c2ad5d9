"""``vqaudit verify BENCH``: re-derive every view of a benchmark from what it declares; ``--rebuild`` compares bytes."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from vqaudit.errors import VqauditError
from vqaudit.files import read_json
from vqaudit.progress import step
from vqaudit.schema import View
from vqaudit.store import image_fault, load_benchmark, manifest_problems
from vqaudit.suites.charts.fault_suite import run_fault_suite
from vqaudit.suites.charts.verify import check_certificate, verify_view

__all__ = [
    "check_certificate",
    "count_checked",
    "rebuild_problems",
    "run_fault_suite",
    "verify_benchmark",
    "verify_view",
]


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
    :mod:`vqaudit.suites.registry`), which re-derives every view from what the benchmark declares (charts: gold,
    state rules, question and image bytes from each view's world and program, certificates and proofs; scenes:
    re-renders and labels; photos: labels from the scene graph, masks re-applied; UPD: gold and options from the
    meta; a view whose image is missing is re-derived without it), and each file differing from ``manifest.json``.
    A forgery that rewrites the manifest's hashes still fails here; :func:`rebuild_problems` also catches one that
    is consistent with itself.

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
        out.update(
            row.module().checked(
                [v for v in bench.views if v.source == name], [g for g in bench.groups if g.source == name]
            )
        )
    out["files in the manifest"] = len(bench.manifest.get("files") or {})
    return out


def rebuild_problems(bench_dir: Path, *, workers: int = 1) -> list[tuple[str, str]]:
    """Rebuild the benchmark from its manifest's source, seed and options and compare every file byte for byte.

    The build options come from the source's ``rebuild_options(manifest)`` hook (the source table,
    :mod:`vqaudit.suites.registry`); the rebuild is written to a temporary folder that is removed afterwards.

    Returns:
        ``(path, problem)`` pairs, one per file that differs from the rebuild, is missing from the benchmark, or
        is not in the rebuild (empty = byte-identical), paths relative to the benchmark folder.

    Raises:
        VqauditError: an unreadable ``manifest.json``, a source that cannot be rebuilt from its manifest alone
            (built from input files outside the benchmark: the message names them), or the rebuild's own errors.
    """
    from vqaudit.suites.registry import get_source

    manifest_path = bench_dir / "manifest.json"
    manifest = read_json(manifest_path)
    if not isinstance(manifest, dict) or not isinstance(manifest.get("source"), str):
        raise VqauditError(f"{manifest_path}: field 'source': missing (not a vqaudit benchmark manifest)")
    module = get_source(manifest["source"]).module()
    make_options = getattr(module, "rebuild_options", None)
    if make_options is None:
        raise VqauditError(f"{manifest_path}: source {manifest['source']!r} cannot be rebuilt from its manifest")
    options = make_options(manifest)  # the build below runs on the current executor (``verify --executor``)
    with tempfile.TemporaryDirectory(prefix=".vqaudit-rebuild-") as tmp:
        rebuilt = Path(tmp) / "bench"
        module.build(rebuilt, options, workers=workers)
        return _compare_trees(bench_dir, rebuilt)


def _files_under(root: Path) -> dict[str, Path]:
    return {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*")) if p.is_file() or p.is_symlink()}


def _compare_trees(bench_dir: Path, rebuilt: Path) -> list[tuple[str, str]]:
    ours, theirs = _files_under(bench_dir), _files_under(rebuilt)
    problems: list[tuple[str, str]] = []
    for name in sorted(ours.keys() | theirs.keys()):
        if name not in theirs:
            problems.append((name, "not in the rebuild from the manifest"))
        elif name not in ours:
            problems.append((name, "missing from the benchmark (the rebuild writes it)"))
        elif ours[name].is_symlink() or not ours[name].is_file():
            problems.append((name, "not a regular file"))
        elif ours[name].read_bytes() != theirs[name].read_bytes():
            problems.append((name, "differs from the rebuild from the manifest's source, seed and options"))
    return problems
