"""Time ``vqaudit verify`` of a chart benchmark against the build of the same benchmark, in one run.

``verify`` re-derives every view (gold from world and program, state relations, question, image bytes re-rendered
and compared) and re-checks every certificate; its target is at most 1.2x the build's CPU time for the same
groups (the build draws, certifies and renders; verify renders every world once and re-checks the proofs).

Usage: python benchmarks/bench_verify.py [--groups 200] [--workers 1] [--seed 0] [--rebuild]

``--groups 1000`` is the target's size; on the shared 2-core development machine 200 groups is the default (the
ratio is per group, and both steps are linear in the groups). ``--rebuild`` also times ``verify --rebuild``.

Measured (one worker, shared 2-core machine): 1,000 groups, build 110 s CPU, verify 96 s CPU, 0.88x; 200 groups,
0.99x.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from _timing import judge, load_line, ratio, timed

from vqaudit.suites.charts.build import build_charts
from vqaudit.verify import rebuild_problems, verify_benchmark

TARGET_RATIO = 1.2  # verify of N chart groups: at most 1.2x the CPU time of building them


def main() -> int:
    """Build, verify (and optionally rebuild-verify) one chart benchmark; print the times and the verdict."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()
    print(load_line())
    with tempfile.TemporaryDirectory() as tmp:
        bench = Path(tmp) / "bench"
        build_charts(Path(tmp) / "warm", 1, args.seed + 1)  # warm-up: imports, fonts, layout caches
        verify_benchmark(Path(tmp) / "warm")
        with timed("build charts", args.groups, "group") as build:
            build_charts(bench, args.groups, args.seed, workers=args.workers)
        print(build.line())
        with timed("verify", args.groups, "group") as check:
            faults = verify_benchmark(bench, workers=args.workers)
        print(check.line(f"{len(faults)} faults"))
        print(ratio(check, build))
        ok = judge("verify CPU / build CPU", check.cpu / max(build.cpu, 1e-9), TARGET_RATIO, unit="x")
        if args.rebuild:
            with timed("verify --rebuild", args.groups, "group") as rebuilt:
                problems = rebuild_problems(bench, workers=args.workers)
            print(rebuilt.line(f"{len(problems)} differing files"))
            print(ratio(rebuilt, build))
            ok = ok and not problems
    print(load_line())
    return 0 if ok and not faults else 1


if __name__ == "__main__":
    sys.exit(main())
