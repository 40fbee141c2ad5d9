"""VLMEvalKit's scorer rules before and after their fixes, each variant citing the commit it reproduces
(677e30a5, 928a95b0). Expected values worked by hand from the diffs of the two commits (read in the VLMEvalKit
repository: 677e30a5 swaps ``relaxed_correctness(ret['pred'], x)`` to ``(x, ret['pred'])``; 928a95b0 changes
``periodStrip`` from ``(?!<=\\d)(\\.)(?!\\d)`` to ``(?<!\\d)\\.(?!\\d)``)."""

from __future__ import annotations

import pytest

from vqaudit.scoring.official import relaxed_accuracy, vlmevalkit_928a95b0_process, vqa_accuracy
from vqaudit.scoring.vqa_normalize import vqaeval_process


@pytest.mark.parametrize(
    ("prediction", "gold", "before", "after"),
    [
        # |50.18 - 47.68| = 2.5: / 50.18 = 4.98% (before: relative to the prediction) / 47.68 = 5.24% (after)
        ("50.18", ["47.68"], 1.0, 0.0),
        # |19 - 20| = 1: / 19 = 5.26% before, / 20 = 5.0% after
        ("19", ["20"], 0.0, 1.0),
        (" 12 ", ["12"], 1.0, 1.0),  # the prediction is stripped in both
        ("1.34", ["[1.34, 1.37]"], 1.0, 1.0),  # the list-literal gold is expanded in both
        ("0", ["0"], 1.0, 1.0),  # a zero target: string equality in both
    ],
)
def test_relaxed_accuracy_before_and_after_677e30a5(
    prediction: str, gold: list[str], before: float, after: float
) -> None:
    assert relaxed_accuracy(prediction, gold, variant="vlmevalkit") == before
    assert relaxed_accuracy(prediction, gold, variant="vlmevalkit_677e30a5") == after


def test_period_rule_before_and_after_928a95b0() -> None:
    assert vqaeval_process("5.") == "5" and vlmevalkit_928a95b0_process("5.") == "5."  # after a digit: kept
    assert vqaeval_process("U.S.A") == vlmevalkit_928a95b0_process("U.S.A") == "usa"  # after a letter: deleted
    assert vlmevalkit_928a95b0_process("3.5") == "3.5"
    golds = ["5"] * 10  # each leave-one-out subset holds 9 matches: score 1 if the forms are equal
    assert vqa_accuracy("5.", golds, variant="vlmevalkit") == 1.0
    assert vqa_accuracy("5.", golds, variant="vlmevalkit_928a95b0") == 0.0


def test_chartqa_after_the_fix_moves_six_rows_and_keeps_42_88() -> None:
    # The VILA1.5-13B sheet (tests/fixtures/shortanswer): the fix changes six rows, three each way (listed with
    # their relative errors against the target: 5.24%, 5.18%, 5.20% lost; 5.0%, 4.84%, 4.94% gained), so the
    # published 42.88 / 74.56 hold under both rules.
    from pathlib import Path

    from vqaudit.shortanswer.audit import run_audit

    sheet = Path(__file__).resolve().parents[1] / "fixtures" / "shortanswer" / "vila15_13b_chartqa_test.xlsx"
    before = run_audit(sheet, "chartqa", variant="vlmevalkit")
    after = run_audit(sheet, "chartqa", variant="vlmevalkit_677e30a5")
    moved = {
        a.qid: (a.official, b.official)
        for a, b in zip(before.rows, after.rows, strict=True)
        if a.official != b.official
    }
    assert moved == {
        "328": (1.0, 0.0),
        "724": (1.0, 0.0),
        "1990": (1.0, 0.0),
        "797": (0.0, 1.0),
        "992": (0.0, 1.0),
        "1505": (0.0, 1.0),
    }
    assert after.scores["test_human"] == before.scores["test_human"] == 42.88
    assert after.scores["test_augmented"] == before.scores["test_augmented"] == 74.56
