"""Seconds per view of the OCR chart reader (baseline:chart-reader), with its figures per chart kind.

Builds (or reuses) a chart benchmark, reads every view once to warm up nothing but the first (model load is
reported apart), and prints wall-clock and CPU seconds per view (median, mean, p90), the machine's load
average, and per chart kind the exact-answer rate on supported views and the abstention rate on M and I views.
Target: at most 0.3 s per view on this machine, judged on the mean CPU time per view (all threads).

Usage: python benchmarks/bench_chart_reader.py [--groups 20] [--seed 7] [--bench DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from collections import Counter
from fractions import Fraction
from pathlib import Path

from _timing import Timing, judge, timed

from vqaudit.backends.chart_reader import Ocr, parse_lookup, read_chart, read_lookup
from vqaudit.store import load_benchmark
from vqaudit.suites.charts.build import build_charts
from vqaudit.suites.charts.png import decode_png

TARGET_S_PER_VIEW = 0.3


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--bench", type=Path, default=None)
    args = parser.parse_args()
    bench_dir = args.bench or Path(tempfile.mkdtemp()) / "bench"
    if not (bench_dir / "manifest.json").is_file():
        build_charts(bench_dir, args.groups, args.seed, workers=2)
    bench = load_benchmark(bench_dir)
    ocr = Ocr()
    first = bench.views[0]
    with timed("first read, model load included", descendants=False) as loading:
        read_chart(decode_png(bench.image_path(first).read_bytes()), ocr)
    print(loading.line())
    load_s = loading.wall
    wall: list[float] = []
    cpu: list[float] = []
    tally: Counter[tuple[str, str, bool]] = Counter()
    total = Timing("read_chart + read_lookup, every view", len(bench.views), "view")
    for view in bench.views:
        pixels = decode_png(bench.image_path(view).read_bytes())
        with timed("one view", descendants=False) as one:
            reading = read_lookup(read_chart(pixels, ocr), parse_lookup(view.question))
        wall.append(one.wall)
        cpu.append(one.cpu)  # this process, every thread (onnxruntime's included)
        total.wall, total.cpu_self, total.load = total.wall + one.wall, total.cpu_self + one.cpu_self, one.load
        if view.obligation.kind == "answer":
            ok = reading.answerable and reading.value == Fraction(view.obligation.gold[0])
            tally[(str(view.meta["kind"]), "supported exact", ok)] += 1
        else:
            tally[(str(view.meta["kind"]), f"{view.state} abstain", not reading.answerable)] += 1
    figures = {
        f"{k} {w}": f"{tally[(k, w, True)]}/{tally[(k, w, True)] + tally[(k, w, False)]}" for k, w, _ in sorted(tally)
    }

    def stats(xs: list[float]) -> dict[str, float]:
        return {
            "median": round(statistics.median(xs), 3),
            "mean": round(statistics.fmean(xs), 3),
            "p90": round(sorted(xs)[int(0.9 * (len(xs) - 1))], 3),
        }

    print(
        json.dumps(
            {
                "views": len(wall),
                "first_read_incl_model_load_s": round(load_s, 3),
                "wall_s_per_view": stats(wall),
                "cpu_s_per_view": stats(cpu),
                "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
                "cpus": os.cpu_count(),
                "figures": figures,
            },
            indent=2,
        )
    )
    print(total.line())
    ok = judge("mean CPU seconds per view", statistics.fmean(cpu), TARGET_S_PER_VIEW, unit=" s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
