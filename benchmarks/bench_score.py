"""Time answerability scoring at the size of seed 000: 6 configurations x 12,000 views = 72,000 outcomes.

Per configuration: 1,000 chart groups of 5 views (original, S, C, M, I), 1,000 scene groups of 4 (original, S, C,
M) and 1,000 photo groups of 3 (original, control, M), random decisions. Each configuration is scored with
10,000 group-bootstrap draws per source; the draws depend on (n_groups, n_draws, seed) only, so all sources and
configurations share one cached weight matrix, as a real run over one benchmark would.

Run: ``.venv/bin/python benchmarks/bench_score.py``. Target: under 5 s for all six configurations.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from _timing import judge, load_line, timed

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
    results = []
    steps = []
    for i, outcomes in enumerate(configurations):
        with timed(f"config {i}: answerability_metrics", len(outcomes), "outcome", descendants=False) as took:
            results.append(answerability_metrics(outcomes, n_draws=N_DRAWS, seed=0))
        steps.append(took)
        charts = results[-1]["charts"]
        print(
            took.line(
                f"charts Bk={charts['Bk']:.3f} ci={charts['ci']['Bk']} Jk={charts['Jk']:.3f} Ebal={charts['Ebal']:.3f}"
            )
        )
    total, total_cpu = sum(t.wall for t in steps), sum(t.cpu for t in steps)
    print(
        f"answerability_metrics, 6 configurations x 3 sources x {N_DRAWS:,} draws: {total:.3f} s wall, "
        f"{total_cpu:.3f} s CPU total"
    )
    with timed("  of which group_counts (pure Python reduction)", descendants=False) as took:
        for outcomes in configurations:
            group_counts(outcomes)
    print(took.line())
    with timed("failure_accounting, 6 configurations", descendants=False) as took:
        for outcomes in configurations:
            failure_accounting(outcomes)
    print(took.line())
    with timed("paired_difference Jk charts config5-config4", descendants=False) as took:
        point, lo, hi = paired_difference(configurations[5], configurations[4], "Jk", source="charts", n_draws=N_DRAWS)
    print(took.line(f"{point:+.4f} [{lo:+.4f}, {hi:+.4f}]"))
    print(load_line())
    ok = judge("answerability_metrics, all six configurations", total_cpu, TARGET_S, unit=" s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
