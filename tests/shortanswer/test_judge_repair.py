"""RA-Eval, the judge audit and its statistics, and contract repair (seed 002 §3.3, §5.4, Tables 2 and 7)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from shortanswer.helpers import ScriptedBackend
from vqaudit.metrics.flips import judge_delta_interval
from vqaudit.scoring.contracts import classify
from vqaudit.scoring.official import relaxed_accuracy
from vqaudit.scoring.ra_eval import ra_eval_recovered
from vqaudit.scoring.repair import reference_overlay, repair_output, repair_scores
from vqaudit.scoring.repair_counts import summarize_repair
from vqaudit.shortanswer.audit import audit_rows
from vqaudit.shortanswer.judge import binary_agreement, judge_prompt, parse_verdict, read_labels, run_judge
from vqaudit.shortanswer.records import AuditRow, JoinReport


def test_ra_eval_word_boundary_and_length_floor() -> None:
    # §3.3: recovered when a normalized gold with |g| > 3 occurs at word boundaries in the normalized output.
    assert ra_eval_recovered("The medication is SEPTRA Suspension.", ["septra"])
    assert ra_eval_recovered("It says STOP", ["stop"])  # "stop" has 4 characters: > 3
    assert not ra_eval_recovered("It says STOPS", ["stop"])  # ... but only at a word boundary
    assert not ra_eval_recovered("The answer is yes", ["yes"])  # 3 characters: never recovered
    assert not ra_eval_recovered("Napolitano", ["napoli"])  # no word boundary
    assert ra_eval_recovered("The peak is in 2014 with 52%.", ["2014"])  # 4 characters: > 3


def test_parse_verdict() -> None:
    assert parse_verdict("Yes.") is True
    assert parse_verdict("**No** - different") is False
    assert parse_verdict("maybe") is None and parse_verdict("") is None


def test_binary_agreement_hand_computed() -> None:
    # tp=3, fp=1, fn=1, tn=5 (n=10): precision 3/4, recall 3/4, p_o = 0.8,
    # p_e = (4/10)(4/10) + (6/10)(6/10) = 0.52, kappa = (0.8 - 0.52) / 0.48 = 0.58333...
    judge = [True, True, True, True, False, False, False, False, False, False]
    human = [True, True, True, False, True, False, False, False, False, False]
    stats = binary_agreement(judge, human)
    assert (stats.tp, stats.fp, stats.fn, stats.tn) == (3, 1, 1, 5)
    assert stats.precision == 0.75 and stats.recall == 0.75 and stats.agreement == 0.8
    assert stats.kappa == pytest.approx(0.28 / 0.48)
    assert math.isnan(binary_agreement([True], [True]).kappa)  # p_e == 1: undefined


def _rows() -> list[AuditRow]:
    return [
        AuditRow("1", "What is the name of the medication?", "SEPTRA Suspension", ("SEPTRA",), "docvqa"),
        AuditRow("2", "How many?", "4", ("4",), "docvqa"),
        AuditRow("3", "Where is the women's gym located?", "The women's gym is located in C-5.", ("C-5",), "docvqa"),
        AuditRow("4", "What colour?", "blue", ("red",), "docvqa"),
    ]


def test_judge_sees_text_only_runs_on_the_error_pool_and_is_cached(tmp_path: Path) -> None:
    backend = ScriptedBackend(lambda r: "yes" if "SEPTRA" in r.prompt or "C-5" in r.prompt else "no")
    join = JoinReport(tuple(_rows()))
    result = audit_rows(
        join,
        "docvqa",
        metric="exact_match",
        variant="pix2struct",
        judge="scripted:test",
        cache_dir=tmp_path,
        judge_backend=backend,
        n_draws=200,
    )
    asked = {r.request_id.removeprefix("judge:") for r in backend.requests}
    assert asked == {"1", "3", "4"}  # row 2 is officially correct: never judged
    assert all(r.image is None and r.image_mime is None for r in backend.requests)  # seed 002 §3.3: text only
    assert "Model answer: SEPTRA Suspension" in judge_prompt(_rows()[0])
    judge = result.judge
    assert judge is not None and (judge.pool, judge.accepted) == (3, 2)
    assert judge.judged_score == 75.0  # official 25.0 + 2 of 4 rows accepted
    assert judge.delta[0] == pytest.approx(50.0)
    # A rerun asks nothing: every verdict comes from the SQLite cache.
    again = ScriptedBackend(lambda r: "no")
    run_judge([_rows()[0]], "scripted:test", tmp_path / "judge.sqlite", backend=again)
    assert again.requests == []


def test_judge_validation_and_second_judge(tmp_path: Path) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text("question_id,label\n1,yes\n3,no\n4,no\n")
    first = ScriptedBackend(lambda r: "yes" if "SEPTRA" in r.prompt or "C-5" in r.prompt else "no")
    second = ScriptedBackend(lambda r: "yes", spec="scripted:other")
    result = audit_rows(
        JoinReport(tuple(_rows())),
        "docvqa",
        metric="exact_match",
        variant="pix2struct",
        judge="scripted:test",
        cache_dir=tmp_path,
        judge_backend=first,
        labels=labels,
        second_judge="scripted:other",
        second_backend=second,
        n_draws=100,
    )
    assert result.judge is not None
    # judge: 1 yes, 3 yes, 4 no; human: 1 yes, 3 no, 4 no -> tp 1, fp 1, tn 1: precision 0.5, recall 1.0.
    validation = dict(result.judge.validation or {})
    # Wilson 95% interval of 1/2 (z = 1.95996): centre 0.5, half-width z * sqrt(1/8 + z^2/16) / (1 + z^2/2) = 0.4055.
    assert validation.pop("precision_ci") == [pytest.approx(0.0945, abs=1e-4), pytest.approx(0.9055, abs=1e-4)]
    assert validation.pop("precision_ci_method") == "wilson"
    assert set(validation.pop("by_bucket")) == {"scalar", "readout", "identifier", "multi-span", "other-open"}
    assert validation == {
        "n": 3,
        "precision": 0.5,
        "recall": 1.0,
        "agreement": pytest.approx(2 / 3),
        "kappa": pytest.approx(0.4),
        "tp": 1,
        "fp": 1,
        "fn": 0,
        "tn": 1,
    }
    assert result.judge.second is not None and result.judge.second["agreement"] == pytest.approx(2 / 3)
    assert read_labels(labels) == {"1": True, "3": False, "4": False}


def test_paired_bootstrap_delta_interval() -> None:
    official = [0.0] * 50 + [1.0] * 50
    judged = [1.0] * 10 + [0.0] * 40 + [1.0] * 50  # 10 of 100 rows corrected: +10 points
    point, lo, hi = judge_delta_interval(official, judged, n_draws=2000, seed=1)
    assert point == pytest.approx(10.0)
    assert 3.0 < lo < 10.0 < hi < 17.0  # binomial sd of 10/100 is 3 points: +-1.96 sd around 10


# ---------------------------------------------------------------- repair


def test_output_repair_table_12_wrappers() -> None:
    assert repair_output("The women\u2019s gym is located in C-5.", "identifier") == "C-5"
    assert repair_output("Yes, the line goes up.", "scalar") == "yes"
    assert repair_output("The answer is 42.", "scalar") == "42"
    # Two numbers in the sentence: conservative repair leaves it alone (§5.4: "conservative rewriting").
    sentence = "The percentage of people who support legalization reaches the peak in 2014 with 52%."
    assert repair_output(sentence, "scalar") == sentence.rstrip(".")
    assert repair_output("March 2021", "scalar") == "March 2021"  # a date is an answer, not a sentence
    # A date of four words (seed 002 Table 1: "dates" are scalar) is whole too, not cut to its year: LLaVA's
    # TextVQA val reply of row 848.
    assert repair_output("Monday 25th july 2011", "scalar") == "Monday 25th july 2011"
    assert repair_output("[Gambia, Niger]", "multi-span") == "[Gambia, Niger]"
    assert repair_output("U.S.", "other-open") == "U.S."


def test_reference_only_repair_never_changes_a_model_output() -> None:
    seen: list[str] = []

    def spy(prediction: str, answers: Sequence[str]) -> float:
        seen.append(prediction)
        return relaxed_accuracy(prediction, answers)

    preds = ["Austria and Chile", "The answer is 45", "45", "C5"]
    answers = [("[Austria, Chile]",), ("45%",), ("45%",), ("C-5",)]
    questions = ["Which two countries?", "What share?", "What share?", "Where?"]
    contracts = [classify(q, a) for q, a in zip(questions, answers, strict=True)]
    scores = repair_scores(preds, answers, questions, contracts, "relaxed_accuracy", "pix2struct", spy)
    seen.clear()
    from vqaudit.scoring.overlay_score import score_with_overlay

    for p, a, q, c in zip(preds, answers, questions, contracts, strict=True):
        score_with_overlay(p, a, reference_overlay(a, c, q), "relaxed_accuracy", "pix2struct", spy)
    assert set(seen) <= set(preds)  # only the original outputs were ever scored
    assert scores["reference-only"] == [1.0, 0.0, 1.0, 1.0]  # overlays: "Austria and Chile", "45", "C5"
    assert reference_overlay(("[Austria, Chile]",), contracts[0])[0][1] == "Austria and Chile"
    assert answers[0] == ("[Austria, Chile]",)  # the original gold is untouched: overlays are new columns


def test_a_repair_that_turns_a_correct_row_wrong_is_a_break() -> None:
    before = [1.0, 0.0, 1.0, 0.3]
    after = [0.0, 1.0, 1.0, 1.0]
    res = summarize_repair("bidirectional", before, after, [None, True, None, False])
    assert (res.recovered, res.breaks, res.net) == (2, 1, 1)  # rows 2 and 4 recovered, row 1 broken
    assert res.gain_pp == pytest.approx(100 * (3.0 - 2.3) / 4)
    assert (res.judge_fn, res.judge_fn_recovered) == (1, 1)


def test_bidirectional_repair_counts_a_real_break() -> None:
    # Output repair extracts the one number of a sentence; if the gold wanted the sentence form, it breaks.
    row = AuditRow("1", "How many?", "There are 3 cats in total", ("There are 3 cats in total",), "chartqa")
    result = audit_rows(JoinReport((row,)), "chartqa", n_draws=0)
    out_only = result.repair[0]
    assert out_only.variant == "output-only" and out_only.breaks == 0  # gold is a sentence: other-open, untouched
    row2 = AuditRow("2", "How many?", "the count is 3 cats", ("3",), "chartqa")
    result2 = audit_rows(JoinReport((row2,)), "chartqa", n_draws=0)
    assert result2.repair[0].recovered == 1 and result2.repair[1].recovered == 0


def test_the_audit_restores_the_garbage_collector_state() -> None:
    import gc

    from vqaudit.shortanswer.audit_layers import gc_paused

    gc.enable()  # the precondition (a library loaded by another test in this worker may have changed it)
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # a caller's disabled collector stays disabled
    finally:
        gc.enable()
    sentinel: list[object] = []  # a tracked container, frozen by the caller below
    gc.freeze()
    try:
        with gc_paused():
            [object() for _ in range(10)]
        # a caller's frozen objects stay frozen: the sentinel is in no collectable generation (an unfreeze would
        # have moved it to generation 2). The freeze count itself is no witness: another thread of this worker
        # may free frozen objects meanwhile (seen under pytest-xdist).
        assert not any(o is sentinel for g in range(3) for o in gc.get_objects(generation=g))
    finally:
        gc.unfreeze()
    assert any(o is sentinel for o in gc.get_objects(generation=2))  # the check above can fail
