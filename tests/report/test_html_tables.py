"""The HTML report's tables (seed 000 Table 3, Bk - Jk, E_lambda, Table 9; seed 001 Tables D-O) on hand-made data."""

from __future__ import annotations

import json
import math

import pytest

from report.conftest import Crafted
from vqaudit.errors import VqauditError
from vqaudit.report.html_tables import (
    decision_answer_gap,
    e_lambda_curve,
    e_lambda_paired,
    residual_cue_rows,
    state_table,
    upd_ability_tables,
)
from vqaudit.schema import Outcome
from vqaudit.score import load_outcomes


def outcome(group: str, state: str, decision: str, answer_ok: bool = False, error: str | None = None) -> Outcome:
    obligation = "answer" if state in ("original", "S", "C") else "abstain"
    decision_ok = decision == ("answer" if obligation == "answer" else "abstain")
    answer_correct = obligation == "answer" and decision == "answer" and answer_ok
    task_ok = answer_correct if obligation == "answer" else decision_ok
    return Outcome(
        view_id=f"{group}-{state}",
        group_id=group,
        source="charts",
        state=state,
        obligation=obligation,
        decision=decision,
        answer="1" if decision == "answer" else None,
        decision_correct=decision_ok,
        answer_correct=answer_correct,
        task_correct=task_ok,
        error=error,
    )


def groups() -> list[Outcome]:
    """g1: decisions S-wrong-answer, C abstains, M answers, I invalid (backend error); g2 perfect; g3 every decision
    right but C answered wrongly."""
    g1 = [
        outcome("g1", "original", "answer", True),
        outcome("g1", "S", "answer", False),
        outcome("g1", "C", "abstain"),
        outcome("g1", "M", "answer"),
        outcome("g1", "I", "invalid", error="boom"),
    ]
    g2 = [outcome("g2", s, "answer", True) for s in ("original", "S", "C")] + [
        outcome("g2", s, "abstain") for s in ("M", "I")
    ]
    g3 = [
        outcome("g3", "original", "answer", True),
        outcome("g3", "S", "answer", True),
        outcome("g3", "C", "answer", False),
        outcome("g3", "M", "abstain"),
        outcome("g3", "I", "abstain"),
    ]
    return g1 + g2 + g3


def test_state_table_counts_by_hand() -> None:
    rows = {r.state: r for r in state_table(groups())["charts"]}
    assert [r.state for r in state_table(groups())["charts"]] == ["original", "S", "C", "M", "I"]
    # state S: g1 answered wrong, g2 and g3 right -> 3 accepted, 2 correct, 1 wrong, 1 failure
    s = rows["S"]
    assert (s.views, s.accepted, s.rejected, s.invalid, s.correct, s.wrong, s.failures) == (3, 3, 0, 0, 2, 1, 1)
    # state C: g1 abstained (rejected), g2 right, g3 wrong
    c = rows["C"]
    assert (c.accepted, c.rejected, c.correct, c.wrong, c.failures) == (2, 1, 1, 1, 2)
    # state M: g1 accepted (a false acceptance); answers are not graded on negative states
    m = rows["M"]
    assert (m.accepted, m.rejected, m.invalid, m.correct, m.wrong, m.failures) == (1, 2, 0, None, None, 1)
    # state I: g1's backend error is an invalid view
    i = rows["I"]
    assert (i.accepted, i.rejected, i.invalid, i.backend_errors, i.failures) == (0, 2, 1, 1, 1)


def test_decision_answer_gap_by_hand() -> None:
    gap = decision_answer_gap(groups())["charts"]
    # g2 and g3 have every decision right; only g2 meets every obligation; g3 is the Bk - Jk group
    assert (gap.n_groups, gap.decisions_right, gap.task_right, gap.gap) == (3, 2, 1, 1)


def test_e_lambda_point_by_hand() -> None:
    # supported views: 9, not answered: g1 C -> supported_rejection = 1/9
    # negative views: 6, not abstained: g1 M (answer) and g1 I (invalid) -> EU = 2/6
    curve = e_lambda_curve(groups(), "charts", lambdas=(0.0, 0.5, 1.0), n_draws=0)
    assert curve.point == pytest.approx((2 / 6, (1 / 9 + 2 / 6) / 2, 1 / 9))
    assert all(math.isnan(v) for v in curve.lo + curve.hi)


def test_e_lambda_paired_with_itself_is_zero_and_against_abstain_by_hand() -> None:
    same = e_lambda_paired(groups(), groups(), "charts", lambdas=(0.0, 0.5, 1.0), n_draws=200)
    assert same.point == (0.0, 0.0, 0.0) and same.lo == (0.0, 0.0, 0.0) and same.hi == (0.0, 0.0, 0.0)
    abstain = [outcome(o.group_id, o.state, "abstain") for o in groups()]
    # always-abstain: supported_rejection = 1, EU = 0, so E_lambda = lambda
    diff = e_lambda_paired(groups(), abstain, "charts", lambdas=(0.0, 1.0), n_draws=200)
    assert diff.point == pytest.approx((2 / 6 - 0.0, 1 / 9 - 1.0))
    assert diff.lo[1] <= diff.point[1] <= diff.hi[1]


def test_e_lambda_paired_refuses_other_groups() -> None:
    other = [o.model_copy(update={"group_id": "x" + o.group_id, "view_id": "x" + o.view_id}) for o in groups()]
    with pytest.raises(VqauditError, match="same groups"):
        e_lambda_paired(groups(), other, "charts", n_draws=10)
    with pytest.raises(VqauditError, match=r"\[0, 1\]"):
        e_lambda_curve(groups(), "charts", lambdas=(1.5,), n_draws=0)


@pytest.mark.slow
def test_crafted_run_gap_and_e_lambda_match_metrics_json(crafted: Crafted) -> None:
    metrics = json.loads((crafted.replay_run / "metrics.json").read_text())["charts"]
    outcomes = load_outcomes(crafted.replay_run)
    gap = decision_answer_gap(outcomes)["charts"]
    # conftest: HOSTILE and WRONG have every decision right and a wrong answer
    assert gap.gap == 2 == round((metrics["Bk"] - metrics["Jk"]) * crafted.n_groups)
    curve = e_lambda_curve(outcomes, "charts", lambdas=(0.5,), n_draws=0)
    assert curve.point[0] == pytest.approx(metrics["Ebal"])


def test_residual_cue_rows_and_malformed_entries() -> None:
    part = {"n_groups": 4, "n_views": 12, "Jk": 0.5}
    diag = {"photos": {"residual_cues": {"spatial_answer": {"all": part, "without": part, "only": None}}}}
    rows = residual_cue_rows(diag)
    assert [(r.stratum, r.part, r.n_groups) for r in rows] == [
        ("spatial_answer", "all", 4),
        ("spatial_answer", "without", 4),
    ]
    assert residual_cue_rows({"charts": {}}) == []
    with pytest.raises(VqauditError, match="spatial_answer.all"):
        residual_cue_rows({"photos": {"residual_cues": {"spatial_answer": {"all": {"n_groups": "4"}}}}})


def test_upd_ability_tables_in_table_a_order() -> None:
    per = {
        "ocr": {"ability_index": 1, "standard": 0.5, "upd": 0.25, "dual": 0.25, "n_items": 4},
        "image_style": {"ability_index": 18, "standard": 1.0, "upd": None, "dual": None, "n_items": 2},
        "celebrity_recognition": {"ability_index": 2, "standard": 0.0, "upd": 1.0, "dual": 0.0, "n_items": 1},
    }
    metrics = {
        "configs": {
            "ivqd/base": {"variant": "ivqd", "setting": "base", "per_ability": per},
            "aad/option": {"variant": "aad", "setting": "option", "per_ability": per},
        }
    }
    tables = upd_ability_tables(metrics)
    assert [(t.variant, t.setting) for t in tables] == [("aad", "option"), ("ivqd", "base")]
    t = tables[0]
    assert [name for _, name in t.abilities] == ["ocr", "celebrity_recognition", "image_style"]
    assert t.values["upd"] == (0.25, 1.0, None) and t.n_items == (4, 1, 2)
    with pytest.raises(VqauditError, match="upd.configs"):
        upd_ability_tables({"configs": None})


def test_svg_plots_are_the_same_bytes_each_time() -> None:
    """Same figure, same SVG bytes: matplotlib salts its ``clip-path`` ids with a random UUID unless
    ``svg.hashsalt`` is set (found by two golden-output recordings of one commit differing in every report)."""
    from vqaudit.report.html_plots import jk_bk_svg

    metrics = {"Jk": 0.5, "Bk": 0.75, "ci": {"Jk": [0.4, 0.6], "Bk": [0.6, 0.9]}}
    first = jk_bk_svg("charts", [("run a", metrics), ("run b", metrics)])
    assert b"clip-path" in first  # the ids this is about are there
    assert jk_bk_svg("charts", [("run a", metrics), ("run b", metrics)]) == first
