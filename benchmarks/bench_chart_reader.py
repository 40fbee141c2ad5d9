"""Seconds per view of the OCR chart reader (baseline:chart-reader), with its figures per chart kind.

Builds (or reuses) a chart benchmark, reads every view once to warm up nothing but the first (model load is
reported apart), and prints wall-clock and CPU seconds per view (median, mean, p90), the machine's load
average, and per chart kind the exact-answer rate on supported views and the abstention rate on M and I views.
Target (issue 20): at most 0.3 s per view on this machine.

Usage: python benchmarks/bench_chart_reader.py [--groups 20] [--seed 7] [--bench DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections import Counter
from fractions import Fraction
from pathlib import Path

from vqaudit.backends.chart_reader import Ocr, parse_lookup, read_chart, read_lookup
from vqaudit.store import load_benchmark
from vqaudit.suites.charts.build import build_charts
from vqaudit.suites.charts.render import decode_png


def main() -> None:
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
    t0 = time.perf_counter()
    first = bench.views[0]
    read_chart(decode_png(bench.image_path(first).read_bytes()), ocr)
    load_s = time.perf_counter() - t0
    wall: list[float] = []
    cpu: list[float] = []
    tally: Counter[tuple[str, str, bool]] = Counter()
    for view in bench.views:
        pixels = decode_png(bench.image_path(view).read_bytes())
        w0, c0 = time.perf_counter(), time.process_time()
        reading = read_lookup(read_chart(pixels, ocr), parse_lookup(view.question))
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
        if view.obligation.kind == "answer":
            ok = reading.answerable and reading.value == Fraction(view.obligation.gold[0])
            tally[(str(view.meta["kind"]), "supported exact", ok)] += 1
        else:
            tally[(str(view.meta["kind"]), f"{view.state} abstain", not reading.answerable)] += 1
    figures = {f"{k} {w}": f"{tally[(k, w, True)]}/{tally[(k, w, True)] + tally[(k, w, False)]}"
               for k, w, _ in sorted(tally)}

    def stats(xs: list[float]) -> dict[str, float]:
        return {"median": round(statistics.median(xs), 3), "mean": round(statistics.fmean(xs), 3),
                "p90": round(sorted(xs)[int(0.9 * (len(xs) - 1))], 3)}

    print(json.dumps({"views": len(wall), "first_read_incl_model_load_s": round(load_s, 3),
                      "wall_s_per_view": stats(wall), "cpu_s_per_view": stats(cpu),
                      "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count(),
                      "figures": figures}, indent=2))


if __name__ == "__main__":
    main()
