"""Common-state comparison, conditional disagreement and supported-answer counts (seed 000 §4, §5.2, appendix B).

Designed outcomes, four groups per source, every count worked out by hand below.
"""

from __future__ import annotations

import pytest

from vqaudit.errors import VqauditError
from vqaudit.metrics.conditional import conditional_diagnostics
from vqaudit.schema import Decision, Outcome

from .conftest import LAYOUTS, make_outcome


def _source(source: str, faults: dict[tuple[int, str], tuple[Decision, str | None]]) -> list[Outcome]:
    """Four gold groups of ``source`` except the views in ``faults``: (group, state) -> (decision, answer)."""
    out = []
    for g in range(4):
        for state, obligation in LAYOUTS[source]:
            decision, answer = faults.get((g, state), (obligation, "1" if obligation == "answer" else None))
            right = (g, state) not in faults
            out.append(
                make_outcome(
                    f"{source}-{g}-{state}",
                    f"g{g}",
                    state,
                    obligation,
                    decision,
                    answer=answer,
                    answer_correct=right,
                    source=source,
                )
            )
    return out


def test_charts_by_hand() -> None:
    # g0: C answered wrongly ("7"): decisions right, task wrong. g1: original answered with a null answer:
    # decision right, task wrong. g2: M answered (decision wrong). g3: S invalid (decision wrong).
    outcomes = _source(
        "charts",
        {
            (0, "C"): ("answer", "7"),
            (1, "original"): ("answer", None),
            (2, "M"): ("answer", "3"),
            (3, "S"): ("invalid", None),
        },
    )
    d = conditional_diagnostics(outcomes, n_draws=200, seed=1)
    # all views: Bk = 2/4 (g0, g1), Jk = 0/4 -> conditional disagreement (Bk - Jk) / Bk = 2/2
    cd = d["conditional_disagreement"]
    assert (cd["decision_correct_groups"], cd["wrong_answer_groups"], cd["value"]) == (2, 2, 1.0)
    assert cd["ci"] is not None and cd["ci"][0] <= 1.0 <= cd["ci"][1]
    # S and M views only: g2 fails M, g3 fails S; g0 and g1 are right on both -> Bk = Jk = 2/4
    common = d["common_state"]
    assert common["states"] == ["M", "S"]
    assert (common["Bk"], common["Jk"], common["n_groups"], common["n_views"]) == (0.5, 0.5, 4, 8)
    assert common["ci"]["Bk"] is not None and common["ci"]["Bk"][0] <= 0.5 <= common["ci"]["Bk"][1]
    # 12 supported views: 9 correct, g3's S rejected (invalid), g0's C a mismatch, g1's original a null answer
    assert d["supported_answers"] == {"supported": 12, "correct": 9, "rejected": 1, "mismatched": 1, "answered_null": 1}


def test_photos_control_is_the_common_s_state() -> None:
    # g0: control abstains (decision wrong); g1: original answered wrongly; g2, g3 gold
    outcomes = _source("photos", {(0, "control"): ("abstain", None), (1, "original"): ("answer", "9")})
    d = conditional_diagnostics(outcomes, n_draws=0)
    common = d["common_state"]
    assert common["states"] == ["M", "control"]
    # control and M only: g0 fails control -> Bk = Jk = 3/4; no draws -> no intervals
    assert (common["Bk"], common["Jk"], common["n_views"]) == (0.75, 0.75, 8)
    assert common["ci"] == {"Bk": None, "Jk": None}
    # all views: Bk = 3/4 (g1, g2, g3), Jk = 2/4 (g2, g3) -> 1 of 3
    cd = d["conditional_disagreement"]
    assert (cd["decision_correct_groups"], cd["wrong_answer_groups"]) == (3, 1)
    assert cd["value"] == pytest.approx(1 / 3)
    assert cd["ci"] is None
    assert d["supported_answers"] == {"supported": 8, "correct": 6, "rejected": 1, "mismatched": 1, "answered_null": 0}


def test_no_decision_correct_group_leaves_it_undefined() -> None:
    outcomes = _source("scenes", {(g, "M"): ("answer", "2") for g in range(4)})
    d = conditional_diagnostics(outcomes, n_draws=50)
    cd = d["conditional_disagreement"]
    assert (cd["value"], cd["decision_correct_groups"], cd["wrong_answer_groups"], cd["ci"]) == (None, 0, 0, None)
    assert (d["common_state"]["Bk"], d["common_state"]["Jk"]) == (0.0, 0.0)  # every M view accepted


def test_several_sources_are_refused() -> None:
    with pytest.raises(VqauditError, match="several sources"):
        conditional_diagnostics(_source("charts", {}) + _source("scenes", {}), n_draws=0)
