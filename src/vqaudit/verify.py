"""``vqaudit verify BENCH``: re-check every witness certificate of a chart benchmark (seed 000, appendix D)."""

from __future__ import annotations

from pathlib import Path

from vqaudit.errors import VqauditError
from vqaudit.store import load_benchmark, read_json
from vqaudit.suites.charts.witness import verify_certificate
from vqaudit.suites.charts.world import World


def verify_benchmark(bench_dir: Path) -> list[tuple[str, str]]:
    """Check every M view's certificate; return ``(view_id, failed condition)`` pairs (empty = all verified).

    Besides :func:`vqaudit.suites.charts.witness.verify_certificate`, checks that every M view of a chart group
    has a certificate, that the certificate names this view, and that its ``world_a`` is the view's world.

    Raises:
        VqauditError: the benchmark folder cannot be read.
    """
    bench = load_benchmark(bench_dir, check_images=False)
    faults: list[tuple[str, str]] = []
    for view in bench.views:
        if view.source != "charts" or view.state != "M":
            continue
        cert_path = view.meta.get("certificate")
        if not isinstance(cert_path, str) or not (bench_dir / cert_path).is_file():
            faults.append((view.view_id, "no certificate"))
            continue
        try:
            cert = read_json(bench_dir / cert_path)
        except VqauditError as exc:
            faults.append((view.view_id, str(exc)))
            continue
        if not isinstance(cert, dict) or cert.get("view_id") != view.view_id:
            faults.append((view.view_id, "certificate names another view"))
            continue
        try:
            if World.from_json(cert["world_a"]) != World.from_json(view.meta["world"]):
                faults.append((view.view_id, "certificate world_a is not the view's world"))
        except (KeyError, VqauditError) as exc:
            faults.append((view.view_id, f"malformed world: {exc}"))
            continue
        image = bench_dir / view.image
        if not image.is_file():
            faults.append((view.view_id, f"image {view.image} missing"))
            continue
        faults += [(view.view_id, p) for p in verify_certificate(cert, image.read_bytes())]
    return faults
