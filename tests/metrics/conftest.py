"""Factories of Outcome objects for the metrics tests (consistent with the definitions in vqaudit.schema).

Imported by the tests with ``from .conftest import ...`` (tests/metrics is a package).
"""

from __future__ import annotations

import numpy as np

from vqaudit.schema import Decision, ObligationKind, Outcome

# States and obligations per source (SPEC section 1): supported states first, then negative ones.
LAYOUTS: dict[str, tuple[tuple[str, ObligationKind], ...]] = {
    "charts": (("original", "answer"), ("S", "answer"), ("C", "answer"), ("M", "abstain"), ("I", "abstain")),
    "scenes": (("original", "answer"), ("S", "answer"), ("C", "answer"), ("M", "abstain")),
    "photos": (("original", "answer"), ("control", "answer"), ("M", "abstain")),
}


def make_outcome(
    view_id: str,
    group_id: str,
    state: str,
    obligation: ObligationKind,
    decision: Decision,
    *,
    answer: str | None = None,
    answer_correct: bool = False,
    source: str = "charts",
) -> Outcome:
    """Build an outcome whose correctness flags follow the schema's definitions."""
    supported = obligation == "answer"
    decision_correct = decision == ("answer" if supported else "abstain")
    answer_correct = answer_correct and supported and decision == "answer" and answer is not None
    task_correct = answer_correct if supported else decision == "abstain"
    return Outcome(
        view_id=view_id,
        group_id=group_id,
        source=source,
        state=state,
        obligation=obligation,
        decision=decision,
        answer=answer,
        decision_correct=decision_correct,
        answer_correct=answer_correct,
        task_correct=task_correct,
        invalid_reason="not JSON" if decision == "invalid" else None,
    )


def policy_outcomes(policy: str, n_groups: int, sources: tuple[str, ...] = tuple(LAYOUTS)) -> list[Outcome]:
    """Outcomes of a constant policy: 'answer' (always answers correctly), 'abstain', or 'gold'."""
    out = []
    for source in sources:
        for g in range(n_groups):
            for state, obligation in LAYOUTS[source]:
                decision: Decision
                if policy == "gold":
                    decision = obligation
                elif policy == "answer":
                    decision = "answer"
                else:
                    decision = "abstain"
                out.append(
                    make_outcome(
                        f"{source}-{g}-{state}",
                        f"{source}-{g}",
                        state,
                        obligation,
                        decision,
                        answer="1" if decision == "answer" else None,
                        answer_correct=True,
                        source=source,
                    )
                )
    return out


def random_outcomes(seed: int, n_groups: int = 40, sources: tuple[str, ...] = tuple(LAYOUTS)) -> list[Outcome]:
    """Random decisions (answer / abstain / invalid) and random answer correctness, shuffled record order."""
    rng = np.random.default_rng(seed)
    decisions: tuple[Decision, ...] = ("answer", "abstain", "invalid")
    out = []
    for source in sources:
        for g in range(n_groups):
            for state, obligation in LAYOUTS[source]:
                decision = decisions[int(rng.choice(3, p=[0.6, 0.3, 0.1]))]
                null_answer = decision == "answer" and rng.random() < 0.1
                out.append(
                    make_outcome(
                        f"{source}-{g}-{state}",
                        f"{source}-{g}",
                        state,
                        obligation,
                        decision,
                        answer=None if decision != "answer" or null_answer else str(int(rng.integers(0, 9))),
                        answer_correct=bool(rng.random() < 0.7),
                        source=source,
                    )
                )
    order = rng.permutation(len(out))
    return [out[i] for i in order]
