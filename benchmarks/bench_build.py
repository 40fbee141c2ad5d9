"""Time `build_charts` for N groups (default 1,000) and verify every certificate of the result.

Reports wall time beside CPU time (this process and its worker processes, ``os.times``) and the load average, and
judges the target on CPU time (wall time on a shared machine is not stable). Target: 1,000 groups in
under 60 s on 2 cores, i.e. at most 120 CPU-ms per group. The baseline measured in the same run is a plain
matplotlib chart: a new 640x480 Agg figure with one bar series, ticks and labels, drawn once (what each view cost
before figures were reused).

``--png-levels`` also encodes up to 200 of the built images at every zlib level with the renderer's PNG writer
(unfiltered rows) and with Pillow's encoder (adaptive filter per row, renderer /1 used its level 6), printing CPU
time and size per image: how ``vqaudit.suites.charts.png.PNG_LEVEL`` was chosen.

Usage: python benchmarks/bench_build.py [--groups 1000] [--workers 2] [--out DIR] [--png-levels]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from vqaudit.suites.charts.build import build_charts
from vqaudit.verify import verify_benchmark

TARGET_CPU_MS_PER_GROUP = 120.0


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and of its finished children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def plain_chart_ms(n: int = 20) -> float:
    """CPU-ms per plain matplotlib chart: a new figure, 6 bars, ticks, labels, one ``canvas.draw()``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    c0 = cpu_seconds()
    for k in range(n):
        fig = Figure(figsize=(6.4, 4.8), dpi=100)
        canvas = FigureCanvasAgg(fig)
        ax = fig.add_axes((0.11, 0.24, 0.85, 0.60))
        ax.bar(np.arange(6), np.arange(6) + k % 3, 0.6)
        ax.set_xticks(np.arange(6), [f"cat {i}" for i in range(6)])
        ax.set_ylabel("value (unit)")
        ax.set_xlabel("category")
        fig.text(0.5, 0.955, "title", ha="center")
        canvas.draw()  # type: ignore[no-untyped-call]
        np.asarray(canvas.buffer_rgba())  # type: ignore[no-untyped-call]
    return (cpu_seconds() - c0) / n * 1000


def png_levels(images: list[Path]) -> None:
    """Print encode and decode CPU-ms and mean size per image at each zlib level, for both encoders."""
    import io

    from PIL import Image

    from vqaudit.suites.charts.png import PNG_LEVEL, decode_png, png_bytes

    pixels = [decode_png(p.read_bytes()) for p in images]

    def pillow(px: np.ndarray, level: int) -> bytes:
        buf = io.BytesIO()
        Image.fromarray(px, mode="RGB").save(buf, format="PNG", compress_level=level)
        return buf.getvalue()

    print(f"PNG encoders on {len(pixels)} built images (CPU-ms per image; the renderer uses level {PNG_LEVEL}):")
    for name, encode in (("unfiltered (png_bytes)", png_bytes), ("Pillow, adaptive filter", pillow)):
        for level in range(10):
            c0 = cpu_seconds()
            data = [encode(px, level) for px in pixels]
            enc_ms = (cpu_seconds() - c0) / len(pixels) * 1000
            c0 = cpu_seconds()
            same = all(np.array_equal(decode_png(d), px) for d, px in zip(data, pixels, strict=True))
            dec_ms = (cpu_seconds() - c0) / len(pixels) * 1000
            size = sum(map(len, data)) / len(data) / 1024
            print(
                f"  {name:24s} level {level}: encode {enc_ms:5.2f} ms, decode {dec_ms:5.2f} ms (pixels "
                f"{'identical' if same else 'DIFFER'}), {size:6.1f} KiB"
            )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--programs", choices=("lookup", "all"), default="lookup")
    parser.add_argument("--determined", action="store_true")
    parser.add_argument("--no-verify", action="store_true")
    parser.add_argument("--png-levels", action="store_true", help="also measure PNG size and time at every level")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp()) / "bench"
    plain = plain_chart_ms()
    w0, c0 = time.perf_counter(), cpu_seconds()
    manifest = build_charts(
        out, args.groups, args.seed, workers=args.workers, programs=args.programs, determined=args.determined
    )
    build_s, build_cpu = time.perf_counter() - w0, cpu_seconds() - c0
    per_group = build_cpu / args.groups * 1000
    print(
        f"built {args.groups} groups ({manifest['n_views']} views) with {args.workers} workers: {build_s:.1f} s "
        f"wall, {build_cpu:.1f} s CPU ({per_group:.0f} CPU-ms per group, "
        f"{build_cpu / manifest['n_views'] * 1000:.0f} per view); 2 idle cores would take "
        f"{build_cpu / 2:.1f} s"
    )
    print(
        f"baseline, a plain matplotlib chart in a new figure: {plain:.1f} CPU-ms; per view the build costs "
        f"{build_cpu / manifest['n_views'] * 1000 / plain:.2f}x that (renders, witness search, certificates, PNG)"
    )
    if not args.no_verify:
        w0, c0 = time.perf_counter(), cpu_seconds()
        faults = verify_benchmark(out, workers=args.workers)
        verify_s, verify_cpu = time.perf_counter() - w0, cpu_seconds() - c0
        kinds: dict[str, int] = {}
        rejected = 0
        for cert_path in (out / "certificates").glob("*.json"):
            cert = json.loads(cert_path.read_text())
            kinds[cert["mask"]["name"]] = kinds.get(cert["mask"]["name"], 0) + 1
            rejected += len(cert.get("rejected_masks", []))
        print(f"certified masks by kind: {kinds}; leaking masks rejected by the pixel check: {rejected}")
        print(
            f"verified {sum(kinds.values())} certificates with {args.workers} workers: {verify_s:.1f} s wall, "
            f"{verify_cpu:.1f} s CPU; faults: {len(faults)}"
        )
    if args.png_levels:
        png_levels(sorted((out / "images").glob("*.png"))[:200])
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    ok = per_group <= TARGET_CPU_MS_PER_GROUP
    print(
        f"target: at most {TARGET_CPU_MS_PER_GROUP:.0f} CPU-ms per group (1,000 groups in 60 s on 2 cores): "
        + ("OK" if ok else "TARGET MISSED")
    )
    if args.out is None:
        shutil.rmtree(out.parent)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
