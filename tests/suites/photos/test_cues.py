"""Residual-cue audit (docs/photos.md): reasons per group and metrics with and without the flagged stratum."""

from __future__ import annotations

from pathlib import Path

import pytest

from vqaudit.errors import VqauditError
from vqaudit.schema import Outcome
from vqaudit.suites.photos.cues import mask_reaction, residual_cues, stratified_metrics
from vqaudit.suites.photos.gqa import load_questions
from vqaudit.suites.photos.graph import Question, Step

Q = load_questions(Path(__file__).parents[2] / "fixtures" / "photos" / "gqa" / "questions.json")


def test_reasons() -> None:
    assert residual_cues(Q["q06"], "left", [(0, 0, 5, 5)]) == ("spatial_answer", "mask_relation")  # choose rel
    assert residual_cues(Q["q11"], "left", [(0, 0, 5, 5)]) == ("spatial_answer", "mask_position")  # hposition
    assert residual_cues(Q["q05"], "yes", [(0, 0, 5, 5)]) == ("mask_relation",)  # verify rel "to the left of"
    assert residual_cues(Q["q01"], "hat", [(0, 0, 5, 5)]) == ()  # "wearing" is not geometric
    count = Question("c", "i", "How many cups are there?", "2", (Step("select", "cup (4,6)"), Step("count", "", (0,))))
    assert residual_cues(count, "2", [(0, 0, 5, 5), (10, 10, 15, 15)]) == ("mask_count",)  # 2 separate masks
    assert residual_cues(count, "2", [(0, 0, 5, 5), (4, 4, 15, 15)]) == ()  # overlapping: one blob
    size = Question(
        "s", "i", "Is the cup small?", "yes", (Step("select", "cup (4)"), Step("verify size", "small", (0,)))
    )
    assert residual_cues(size, "yes", [(0, 0, 5, 5)]) == ("mask_size",)


def _outcomes(group: str, m_accepted: bool, wrong_answer: bool = False) -> list[Outcome]:
    out = []
    for state in ("original", "control", "M"):
        supported = state != "M"
        decision = "answer" if supported or m_accepted else "abstain"
        ok_answer = supported and not (wrong_answer and state == "control")
        out.append(
            Outcome(
                view_id=f"{group}-{state}",
                group_id=group,
                source="photos",
                state=state,
                obligation="answer" if supported else "abstain",
                decision=decision,
                decision_correct=(decision == "answer") == supported,
                answer_correct=ok_answer,
                task_correct=ok_answer if supported else decision == "abstain",
            )
        )
    return out


def test_metrics_with_and_without_the_stratum() -> None:
    # g1 flagged, all right; g2 right; g3 accepts M (decision failure); g4 wrong control answer (task failure).
    outcomes = (
        _outcomes("g1", False)
        + _outcomes("g2", False)
        + _outcomes("g3", True)
        + _outcomes("g4", False, wrong_answer=True)
    )
    meta = {
        "g1": {"spatial_answer": True},
        "g2": {"spatial_answer": False},
        "g3": {"spatial_answer": False},
        "g4": {"spatial_answer": False},
    }
    report = stratified_metrics(outcomes, meta, n_draws=0)
    assert (report["n_groups"], report["n_flagged"]) == (4, 1)
    assert (report["all"]["Jk"], report["all"]["Bk"]) == (2 / 4, 3 / 4)  # g1, g2 / g1, g2, g4
    assert (report["without"]["Jk"], report["without"]["Bk"]) == (1 / 3, 2 / 3)
    assert (report["only"]["Jk"], report["only"]["n_views"]) == (1.0, 3)
    assert report["without"]["EM"] == 1 / 3  # one of three M views answered
    with pytest.raises(
        VqauditError,
        match=r"group 'g1', field 'meta.residual_cue': missing \(rebuild the benchmark "
        r"with `vqaudit build photos`\)",
    ):
        stratified_metrics(outcomes, meta, stratum="residual_cue", n_draws=0)
    with pytest.raises(VqauditError, match="unknown stratum"):
        stratified_metrics(outcomes, meta, stratum="colour", n_draws=0)


def test_mask_reaction_compares_matched_with_original() -> None:
    outcomes = _outcomes("g1", False) + _outcomes("g2", True)
    matched = [
        Outcome(
            view_id=f"{g}-matched",
            group_id=g,
            source="photos",
            state="matched",
            obligation="answer",
            decision=d,
            decision_correct=d == "answer",
            answer_correct=d == "answer",
            task_correct=d == "answer",
        )
        for g, d in (("g1", "abstain"), ("g2", "answer"))
    ]
    report = mask_reaction(outcomes + matched)
    assert report["abstain_rate"] == {"M": 0.5, "control": 0.0, "matched": 0.5, "original": 0.0}
    assert report["mask_effect"] == 0.5
