"""Time the answerability certifier on 1,000 groups' worth of masked chart views (docs/certifier.md).

Each group: a world drawn like the chart builder does (random bundled table, 1-2 series, 4-7 categories), a
program of the next kind in turn (all kinds of ``PROGRAM_KINDS``) reading a random cell, and the hidden cells of
one masked category (every series at the queried category). Each case is certified by z3 and, where the number
of completions is at most ``--enum-limit``, by enumeration; the two must agree.

Usage: python benchmarks/bench_certify.py [--groups 1000] [--seed 0] [--enum-limit 100000]
"""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter

import numpy as np

from vqaudit.suites.charts.certify import Domain, certify, certify_enumeration, certify_z3, n_completions
from vqaudit.suites.charts.programs import (
    PROGRAM_KINDS,
    CountAbove,
    Difference,
    Max,
    Mean,
    Program,
    category_cells,
    over,
    sample_program,
    world_table,
)
from vqaudit.suites.charts.tables import TABLE_NAMES, load_table
from vqaudit.suites.charts.world import CHART_KINDS, sample_world


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--enum-limit", type=int, default=100_000)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    cases = []
    while len(cases) < args.groups:
        table = load_table(TABLE_NAMES[int(rng.integers(len(TABLE_NAMES)))])
        n_series = 1 if len(table.series) == 1 or rng.random() < 0.5 else 2
        world = sample_world(table, CHART_KINDS[int(rng.integers(4))], n_series, int(rng.integers(4, 8)), rng)
        if world is None:
            continue
        s, c = int(rng.integers(n_series)), int(rng.integers(len(world.categories)))
        kind = PROGRAM_KINDS[len(cases) % len(PROGRAM_KINDS)]
        program = sample_program(world, kind, s, c, rng)
        cases.append(
            (kind, world_table(world), category_cells(world, world.categories[c]), Domain.of_world(world), program)
        )

    report("sampled kinds", cases, args.enum_limit)
    composite: list[tuple[str, dict, tuple, Domain, Program]] = []  # type: ignore[type-arg]
    for i, (_, table, hidden, domain, _) in enumerate(cases):
        cells = tuple(table)
        prog: Program = (
            Difference(Max(over(cells)), Mean(over(hidden))) if i % 2 == 0 else CountAbove(cells, Mean(over(cells)))
        )
        composite.append(("composite", table, hidden, domain, prog))
    worst = [("constant", t, h, d, Difference(Mean(over(h)), Mean(over(h)))) for _, t, h, d, _ in cases]
    report(
        "composite programs reading every hidden cell (max(all) - mean(hidden) / count above mean(all))",
        composite,
        args.enum_limit,
    )
    report(
        "worst case for enumeration: mean(hidden) - mean(hidden), determined, every completion evaluated",
        worst,
        args.enum_limit,
    )


def report(title: str, cases: list, enum_limit: int) -> None:  # type: ignore[type-arg]
    t_z3 = t_enum = t_auto = 0.0
    n_enum = disagree = 0
    status: Counter[tuple[str, str]] = Counter()
    completions: list[int] = []
    wall0 = time.perf_counter()
    for kind, table, hidden, domain, program in cases:
        t0 = time.process_time()
        smt = certify_z3(table, hidden, domain, program)
        t_z3 += time.process_time() - t0
        status[(kind, smt.status)] += 1
        n = n_completions(hidden, domain, program)
        completions.append(n)
        if n <= enum_limit:
            t0 = time.process_time()
            enum = certify_enumeration(table, hidden, domain, program)
            t_enum += time.process_time() - t0
            n_enum += 1
            disagree += enum.status != smt.status
        t0 = time.process_time()
        certify(table, hidden, domain, program)
        t_auto += time.process_time() - t0

    print(f"== {title}: {len(cases)} masked chart views (one per group)")
    determined = sum(v for (_, st), v in status.items() if st == "determined")
    print(f"determined {determined}, ambiguous {len(cases) - determined}")
    print(f"completions per case: median {int(np.median(completions))}, max {max(completions)}")
    wall = time.perf_counter() - wall0
    print(
        f"(CPU time per certifier; the three together: {t_z3 + t_enum + t_auto:.2f} s CPU, {wall:.2f} s wall; "
        "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + ")"
    )
    print(f"z3:          {t_z3:7.2f} s total, {1000 * t_z3 / len(cases):6.2f} ms/case")
    print(
        f"enumeration: {t_enum:7.2f} s total over {n_enum} feasible cases, "
        f"{1000 * t_enum / max(n_enum, 1):6.2f} ms/case; disagreements with z3: {disagree}"
    )
    print(f"certify():   {t_auto:7.2f} s total (enumeration up to ENUMERATION_LIMIT completions, else z3)")
    print("kind          determined  ambiguous")
    for kind in sorted({k for k, _ in status}):
        print(f"{kind:<13} {status[(kind, 'determined')]:>10} {status[(kind, 'ambiguous')]:>10}")


if __name__ == "__main__":
    main()
