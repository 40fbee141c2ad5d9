"""Time answerability scoring at the size of seed 000: 6 configurations x 12,000 views = 72,000 outcomes.

Per configuration: 1,000 chart groups of 5 views (original, S, C, M, I), 1,000 scene groups of 4 (original, S, C,
M) and 1,000 photo groups of 3 (original, control, M), random decisions. Each configuration is scored with
10,000 group-bootstrap draws per source; the draws depend on (n_groups, n_draws, seed) only, so all sources and
configurations share one cached weight matrix, as a real run over one benchmark would.

Run: ``.venv/bin/python benchmarks/bench_score.py``. Target: under 5 s for all six configurations.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from vqaudit.metrics import (
    answerability_metrics,
    clear_weight_cache,
    failure_accounting,
    group_counts,
    paired_difference,
)
from vqaudit.schema import Decision, ObligationKind, Outcome

TARGET_S = 5.0
N_DRAWS = 10_000
GROUPS_PER_SOURCE = 1_000
LAYOUTS: dict[str, tuple[tuple[str, ObligationKind], ...]] = {
    "charts": (("original", "answer"), ("S", "answer"), ("C", "answer"), ("M", "abstain"), ("I", "abstain")),
    "scenes": (("original", "answer"), ("S", "answer"), ("C", "answer"), ("M", "abstain")),
    "photos": (("original", "answer"), ("control", "answer"), ("M", "abstain")),
}
DECISIONS: tuple[Decision, ...] = ("answer", "abstain", "invalid")


def synthetic_configuration(index: int) -> list[Outcome]:
    """One configuration's 12,000 outcomes with its own answer propensity and accuracy."""
    rng = np.random.default_rng(1000 + index)
    p_answer_supported = 0.75 + 0.04 * index
    p_answer_negative = 0.1 + 0.1 * index
    p_invalid = 0.01 * index
    accuracy = 0.6 + 0.05 * index
    out = []
    for source, layout in LAYOUTS.items():
        for g in range(GROUPS_PER_SOURCE):
            for state, obligation in layout:
                p_answer = p_answer_supported if obligation == "answer" else p_answer_negative
                u = rng.random()
                decision = DECISIONS[2] if u < p_invalid else DECISIONS[0] if u < p_invalid + p_answer else DECISIONS[1]
                answer_correct = obligation == "answer" and decision == "answer" and bool(rng.random() < accuracy)
                decision_correct = decision == ("answer" if obligation == "answer" else "abstain")
                out.append(
                    Outcome(
                        view_id=f"{source}-{g}-{state}",
                        group_id=f"{source}-{g}",
                        source=source,
                        state=state,
                        obligation=obligation,
                        decision=decision,
                        answer="1" if decision == "answer" else None,
                        decision_correct=decision_correct,
                        answer_correct=answer_correct,
                        task_correct=answer_correct if obligation == "answer" else decision == "abstain",
                    )
                )
    return out


def main() -> int:
    t0 = time.perf_counter()
    configurations = [synthetic_configuration(i) for i in range(6)]
    n_outcomes = sum(len(c) for c in configurations)
    print(f"built {n_outcomes:,} synthetic outcomes in {time.perf_counter() - t0:.2f} s (not timed)")

    clear_weight_cache()
    timings = []
    cpu_timings = []
    results = []
    for i, outcomes in enumerate(configurations):
        start, cpu0 = time.perf_counter(), time.process_time()
        results.append(answerability_metrics(outcomes, n_draws=N_DRAWS, seed=0))
        timings.append(time.perf_counter() - start)
        cpu_timings.append(time.process_time() - cpu0)
        charts = results[-1]["charts"]
        print(
            f"config {i}: {timings[-1]:.3f} s  charts Bk={charts['Bk']:.3f} ci={charts['ci']['Bk']}  "
            f"Jk={charts['Jk']:.3f} Ebal={charts['Ebal']:.3f}"
        )
    total, total_cpu = sum(timings), sum(cpu_timings)
    print(f"answerability_metrics, 6 configurations x 3 sources x {N_DRAWS:,} draws: {total:.3f} s wall, "
          f"{total_cpu:.3f} s CPU total")

    start = time.perf_counter()
    for outcomes in configurations:
        group_counts(outcomes)
    print(f"  of which group_counts (pure Python reduction) ~ {time.perf_counter() - start:.3f} s")
    start = time.perf_counter()
    for outcomes in configurations:
        failure_accounting(outcomes)
    print(f"failure_accounting, 6 configurations: {time.perf_counter() - start:.3f} s")
    start = time.perf_counter()
    point, lo, hi = paired_difference(configurations[5], configurations[4], "Jk", source="charts", n_draws=N_DRAWS)
    print(f"paired_difference Jk charts config5-config4: {point:+.4f} [{lo:+.4f}, {hi:+.4f}]")
    print(f"  in {time.perf_counter() - start:.3f} s")

    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    verdict = "OK" if total_cpu < TARGET_S else "TOO SLOW"  # judged on CPU time: wall time varies with load
    print(f"{verdict}: {total_cpu:.3f} s CPU vs target {TARGET_S:.1f} s")
    return 0 if total_cpu < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
