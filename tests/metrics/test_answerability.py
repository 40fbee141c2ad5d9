from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from vqaudit.errors import VqauditError
from vqaudit.metrics import (
    COLUMNS,
    METRIC_KEYS,
    answerability_metrics,
    e_lambda,
    failure_accounting,
    group_counts,
    metrics_from_counts,
)
from vqaudit.schema import Outcome

from .conftest import LAYOUTS, make_outcome, policy_outcomes, random_outcomes

EXPECTED_KEYS = {*METRIC_KEYS, "n_groups", "n_views", "ci"}


def hand_made() -> list[Outcome]:
    """Four chart groups of five views (original, S, C supported; M, I negative); gold answer "12.5".

    g1: everything right.
    g2: every decision right, but S answers with a null answer (decision ok, answer wrong) and C answers "12.49"
        (decision ok, answer wrong): Bk counts it, Jk does not.
    g3: original invalid, S abstains (supported rejection), C right, M invalid (counts as acceptance), I abstains.
    g4: every supported view answered right, but M and I are answered (accepted).
    """
    rows = [
        # group, state, obligation, decision, answer, answer_correct
        ("g1", "original", "answer", "answer", "12.5", True),
        ("g1", "S", "answer", "answer", "25/2", True),
        ("g1", "C", "answer", "answer", "12.50", True),
        ("g1", "M", "abstain", "abstain", None, False),
        ("g1", "I", "abstain", "abstain", None, False),
        ("g2", "original", "answer", "answer", "12.5", True),
        ("g2", "S", "answer", "answer", None, False),  # answerable:true with null answer
        ("g2", "C", "answer", "answer", "12.49", False),
        ("g2", "M", "abstain", "abstain", None, False),
        ("g2", "I", "abstain", "abstain", None, False),
        ("g3", "original", "answer", "invalid", None, False),
        ("g3", "S", "answer", "abstain", None, False),
        ("g3", "C", "answer", "answer", "12.5", True),
        ("g3", "M", "abstain", "invalid", None, False),
        ("g3", "I", "abstain", "abstain", None, False),
        ("g4", "original", "answer", "answer", "12.5", True),
        ("g4", "S", "answer", "answer", "12.5", True),
        ("g4", "C", "answer", "answer", "12.5", True),
        ("g4", "M", "abstain", "answer", "7", False),
        ("g4", "I", "abstain", "answer", "3", False),
    ]
    return [
        make_outcome(f"{g}-{s}", g, s, ob, dec, answer=ans, answer_correct=ok)  # type: ignore[arg-type]
        for g, s, ob, dec, ans, ok in rows
    ]


def test_null_answer_view_passes_decision_fails_answer() -> None:
    o = next(o for o in hand_made() if o.view_id == "g2-S")
    assert (o.decision, o.answer) == ("answer", None)
    assert o.decision_correct and not o.answer_correct and not o.task_correct


def test_hand_made_metrics() -> None:
    m = answerability_metrics(hand_made(), n_draws=0)["charts"]
    assert set(m) == EXPECTED_KEYS
    # Decisions correct per group: g1 5, g2 5, g3 2 (C, I), g4 3 (original, S, C) -> 15 of 20 views.
    assert m["decision_accuracy"] == pytest.approx(15 / 20)
    # Supported views: 12; not answered: g3 original (invalid) and g3 S (abstain) -> 2/12.
    assert m["supported_rejection"] == pytest.approx(2 / 12)
    # Negative views: 8; not abstained: g3 M (invalid), g4 M and g4 I (answered) -> 3/8.
    assert m["EU"] == pytest.approx(3 / 8)
    # M views: 4, accepted g3 M and g4 M -> 1/2.  I views: 4, accepted g4 I -> 1/4.
    assert m["EM"] == pytest.approx(1 / 2)
    assert m["EI"] == pytest.approx(1 / 4)
    # Ebal = (1/6 + 3/8) / 2 = (4/24 + 9/24) / 2 = 13/48.
    assert m["Ebal"] == pytest.approx(13 / 48)
    # Bk: g1 and g2 have every decision right -> 2/4.  Jk: only g1 is fully task-correct -> 1/4.
    assert m["Bk"] == pytest.approx(1 / 2)
    assert m["Jk"] == pytest.approx(1 / 4)
    # Invalid replies: g3 original and g3 M -> 2/20.
    assert m["invalid_rate"] == pytest.approx(2 / 20)
    assert (m["n_groups"], m["n_views"]) == (4, 20)
    assert m["ci"] == dict.fromkeys(METRIC_KEYS)  # n_draws = 0: no bootstrap
    # E_lambda: lambda = 1/2 is Ebal; the extremes are the two components.
    assert e_lambda(m, 0.5) == pytest.approx(13 / 48)
    assert e_lambda(m, 1.0) == pytest.approx(1 / 6)
    assert e_lambda(m, 0.0) == pytest.approx(3 / 8)
    assert e_lambda(m, 0.25) == pytest.approx(float(Fraction(1, 4) * Fraction(1, 6) + Fraction(3, 4) * Fraction(3, 8)))


def test_hand_made_failure_accounting() -> None:
    acc = failure_accounting(hand_made())["charts"]
    assert (acc["n_groups"], acc["n_views"], acc["k"]) == (4, 20, 5)
    assert acc["views_by_state"] == {"original": 4, "S": 4, "C": 4, "M": 4, "I": 4}
    # Decision failures per group: g1 0, g2 0, g3 3 (original, S, M), g4 2 (M, I) -> 5 total, 2 failing groups
    # (= 4 * (1 - Bk)), 3 repeated; histogram by failure count 0..5: [2, 0, 1, 1, 0, 0].
    d = acc["decision"]
    assert (d["total_failures"], d["failing_groups"], d["repeated_failures"]) == (5, 2, 3)
    assert d["histogram"] == [2, 0, 1, 1, 0, 0]
    assert d["by_state"] == {"original": 1, "S": 1, "C": 0, "M": 2, "I": 1}
    # Task failures: g1 0, g2 2 (S null, C wrong), g3 3, g4 2 -> 7 total, 3 failing groups (= 4 * (1 - Jk)), 4 repeated.
    t = acc["task"]
    assert (t["total_failures"], t["failing_groups"], t["repeated_failures"]) == (7, 3, 4)
    assert t["histogram"] == [1, 0, 2, 1, 0, 0]
    assert t["by_state"] == {"original": 1, "S": 2, "C": 1, "M": 2, "I": 1}


@pytest.mark.parametrize("policy", ["answer", "abstain"])
def test_constant_policies_give_half_ebal_and_zero_group_scores(policy: str) -> None:
    # Every group of every source has both supported and negative views, so a constant decision fails one whole
    # class in every group: always-answer accepts every negative view (EU = 1, rejection = 0) and always-abstain
    # rejects every supported view (rejection = 1, EU = 0). Either way Ebal = (1 + 0) / 2 = 0.5, and no group has
    # all decisions right, so Bk = 0 and hence Jk = 0.
    result = answerability_metrics(policy_outcomes(policy, 30), n_draws=200)
    assert set(result) == set(LAYOUTS)
    for m in result.values():
        assert m["Ebal"] == 0.5
        assert m["Bk"] == 0.0 and m["Jk"] == 0.0
        assert e_lambda(m, 0.5) == 0.5
        assert m["ci"]["Ebal"] == [0.5, 0.5]


def test_gold_policy_is_perfect() -> None:
    for source, m in answerability_metrics(policy_outcomes("gold", 30), n_draws=200).items():
        assert m["Bk"] == 1.0 and m["Jk"] == 1.0
        assert m["decision_accuracy"] == 1.0 and m["Ebal"] == 0.0 and m["invalid_rate"] == 0.0
        assert m["EI"] == (0.0 if source == "charts" else None)


def test_undefined_metrics_are_none() -> None:
    # Scenes and photos have no invalid-reference (I) views: EI and its interval are None.
    result = answerability_metrics(random_outcomes(3, n_groups=20), n_draws=100)
    for source in ("scenes", "photos"):
        assert result[source]["EI"] is None and result[source]["ci"]["EI"] is None
        assert result[source]["EM"] is not None and result[source]["ci"]["EM"] is not None
    # Only negative views: supported rejection and Ebal are undefined.
    only_negative = [o for o in hand_made() if o.obligation == "abstain"]
    m = answerability_metrics(only_negative, n_draws=50)["charts"]
    assert m["supported_rejection"] is None and m["Ebal"] is None and m["ci"]["Ebal"] is None
    assert e_lambda(m, 0.3) is None
    assert m["EU"] == pytest.approx(3 / 8)


@pytest.mark.parametrize("seed", range(40))
def test_jk_never_exceeds_bk_and_matches_brute_force(seed: int) -> None:
    outcomes = random_outcomes(seed, n_groups=25)
    result = answerability_metrics(outcomes, n_draws=50, seed=seed)
    accounting = failure_accounting(outcomes)
    for source, m in result.items():
        views = [o for o in outcomes if o.source == source]
        groups: dict[str, list[Outcome]] = {}
        for o in views:
            groups.setdefault(o.group_id, []).append(o)
        bk = np.mean([all(o.decision_correct for o in g) for g in groups.values()])
        jk = np.mean([all(o.task_correct for o in g) for g in groups.values()])
        assert m["Bk"] == pytest.approx(bk) and m["Jk"] == pytest.approx(jk)
        assert m["Jk"] is not None and m["Bk"] is not None and m["Jk"] <= m["Bk"]
        assert m["decision_accuracy"] == pytest.approx(np.mean([o.decision_correct for o in views]))
        # Group accounting identities (seed 000 §E.2) for both kinds of failure.
        assert m["decision_accuracy"] is not None
        for a, score in ((accounting[source]["decision"], m["Bk"]), (accounting[source]["task"], m["Jk"])):
            assert a["total_failures"] == a["failing_groups"] + a["repeated_failures"]
            assert sum(j * h for j, h in enumerate(a["histogram"])) == a["total_failures"]
            assert sum(a["histogram"]) == m["n_groups"]
            assert a["failing_groups"] == round(m["n_groups"] * (1 - score))
            assert sum(a["by_state"].values()) == a["total_failures"]
        assert accounting[source]["decision"]["total_failures"] == round(m["n_views"] * (1 - m["decision_accuracy"]))


def test_record_order_does_not_matter() -> None:
    outcomes = random_outcomes(11, n_groups=30)
    assert answerability_metrics(outcomes, n_draws=300) == answerability_metrics(outcomes[::-1], n_draws=300)


def test_group_counts_shape_and_order() -> None:
    counts = group_counts(random_outcomes(5, n_groups=10))
    assert counts.columns == COLUMNS
    assert counts.matrix.shape == (30, len(COLUMNS))
    assert list(zip(counts.sources, counts.group_ids, strict=True)) == sorted(
        zip(counts.sources, counts.group_ids, strict=True)
    )
    views = dict(zip(counts.sources, counts.matrix[:, COLUMNS.index("views")], strict=False))
    assert views == {"charts": 5, "photos": 3, "scenes": 4}
    totals = counts.for_source("charts").matrix.sum(axis=0)
    point = metrics_from_counts(totals)
    assert set(point) == set(METRIC_KEYS) and all(v.shape == () for v in point.values())


def test_invalid_inputs_raise() -> None:
    outcomes = hand_made()
    with pytest.raises(VqauditError, match="no outcomes"):
        answerability_metrics([])
    with pytest.raises(VqauditError, match="more than once"):
        answerability_metrics([*outcomes, outcomes[0]])
    stray = make_outcome("x-1", "g1", "M", "abstain", "abstain", source="scenes")
    with pytest.raises(VqauditError, match="several sources"):
        answerability_metrics([*outcomes, stray])
    wrong = outcomes[0].model_copy(update={"decision": "invalid"})  # still claims decision_correct
    with pytest.raises(VqauditError, match="decision_correct"):
        group_counts([wrong])
    with pytest.raises(VqauditError, match="lambda"):
        e_lambda(answerability_metrics(outcomes, n_draws=0)["charts"], 1.5)
    with pytest.raises(VqauditError):
        answerability_metrics(outcomes, n_draws=-1)
    with pytest.raises(VqauditError):
        metrics_from_counts(np.zeros(3))
