"""metrics/reasoning.py and metrics/sweep.py on hand-made outcomes: ties between quartiles, no draws, refusals.

The end-to-end numbers (a designed replay, a sweep over HTTP) are in tests/report/test_reasoning_report.py and
tests/report/test_budget_sweep.py.
"""

from __future__ import annotations

import pytest

from vqaudit.errors import VqauditError
from vqaudit.metrics.reasoning import reasoning_summary
from vqaudit.metrics.sweep import budget_sweep
from vqaudit.parsing.reasoning import NOT_FINISHED
from vqaudit.schema import Outcome

from .conftest import make_outcome


def _group(gid: str, chars: int | None, *, m_decision: str = "abstain") -> list[Outcome]:
    """A group of one supported view (answered right) and one negative M view, each thinking ``chars``."""
    views = [
        make_outcome(f"{gid}-a", gid, "original", "answer", "answer", answer="1", answer_correct=True),
        make_outcome(f"{gid}-m", gid, "M", "abstain", m_decision),
    ]  # type: ignore[arg-type]
    return [o.model_copy(update={"reasoning_chars": chars}) for o in views]


def test_tied_lengths_leave_quartiles_empty() -> None:
    # group means 0, 0, 0, 100: boundaries (linear) 0, 0, 25; a group at a boundary goes to the lower quartile,
    # so Q1 holds the three groups of mean 0, Q2 and Q3 none, Q4 the group of mean 100.
    outcomes = [*_group("g1", None), *_group("g2", None), *_group("g3", 0), *_group("g4", 100)]
    s = reasoning_summary(outcomes, n_draws=0)["charts"]
    assert [q.n_groups for q in s.quartiles] == [3, 0, 0, 1]
    assert s.quartiles[1].metrics == dict.fromkeys(("Jk", "Bk", "Ebal", "EU", "EM"))
    assert s.quartiles[0].ci["Jk"] is None  # no draws, no interval
    # views holding reasoning: g3 (0 characters is reasoning: the tags were there) and g4
    assert (s.n_reasoning, s.n_finished, s.median_chars, s.p90_chars) == (4, 4, 50.0, 100.0)


def test_no_reasoning_is_no_summary_and_upd_has_no_quartiles() -> None:
    assert reasoning_summary(_group("g1", None)) == {}
    upd = [
        make_outcome(
            f"u-{i}", "u", "standard", "answer", "answer", answer="A", answer_correct=True, source="upd"
        ).model_copy(update={"reasoning_chars": 10 * i})
        for i in (1, 2, 3)
    ]
    s = reasoning_summary(upd, quartiles=False)["upd"]
    # lengths 10, 20, 30: median 20, p90 at rank 0.9 * 2 = 1.8: 20 + 0.8 * 10 = 28
    assert (s.n_reasoning, s.n_finished, s.median_chars, s.quartiles) == (3, 3, 20.0, ())
    assert s.p90_chars == pytest.approx(28.0)
    with pytest.raises(VqauditError, match="negative"):
        reasoning_summary([upd[0].model_copy(update={"reasoning_chars": -1})], quartiles=False)


def test_unfinished_reply_counts_as_reasoning_but_not_finished() -> None:
    cut = make_outcome("g1-m", "g1", "M", "abstain", "invalid").model_copy(
        update={"invalid_reason": NOT_FINISHED, "reasoning_chars": None, "draft_decision": "answer"}
    )
    s = reasoning_summary([_group("g1", 10)[0], cut], n_draws=0)["charts"]
    assert (s.n_reasoning, s.n_finished, s.n_drafts, s.n_overruled) == (2, 1, 0, 0)
    assert s.median_chars == 10.0  # the cut reply recorded no length


def test_sweep_without_draws_and_refusals() -> None:
    good = [*_group("g1", 5), *_group("g2", 5)]
    bad = [*_group("g1", 5), *_group("g2", 5, m_decision="answer")]
    sweep = budget_sweep([(512, "big", good), (128, "small", bad)], "charts", n_draws=0)
    assert [p.budget for p in sweep.points] == [128, 512] and sweep.reference == 512
    small = sweep.points[0]
    # small: one of 2 groups fails M: Jk 1/2, EU 1/2, EM 1/2, supported_rejection 0, Ebal 1/4
    assert small.metrics == {"Ebal": 0.25, "EU": 0.5, "EM": 0.5, "Jk": 0.5, "Bk": 0.5}
    assert small.diff["Jk"] == [-0.5, None, None] and small.ci["Jk"] is None
    with pytest.raises(VqauditError, match="at least two budgets"):
        budget_sweep([(512, "big", good)], "charts")
    with pytest.raises(VqauditError, match="distinct"):
        budget_sweep([(512, "a", good), (512, "b", bad)], "charts")
    with pytest.raises(VqauditError, match="other charts groups or views"):
        budget_sweep([(512, "a", good), (128, "b", _group("g1", 5))], "charts")
