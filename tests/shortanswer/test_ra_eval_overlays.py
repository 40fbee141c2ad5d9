"""RA-Eval keeps partial credit apart and skips multiple-choice rows; overlays never cut a span."""

from __future__ import annotations

from vqaudit.scoring.ra_eval import is_multiple_choice
from vqaudit.scoring.repair import _overlay_one
from vqaudit.shortanswer.audit import audit_rows
from vqaudit.shortanswer.records import AuditRow, JoinReport


def test_multiple_choice_rows() -> None:
    assert is_multiple_choice("Which colour? A. red B. blue C. green", ["red"])
    assert is_multiple_choice("Which colour?\n(A) red\n(B) blue", ["blue"])
    assert is_multiple_choice("Pick one. Options: red, blue", ["red"])
    assert not is_multiple_choice("what letter is under the clock?", ["a"])  # a letter gold is open QA (TextVQA)
    assert not is_multiple_choice("What is the name of the medication?", ["SEPTRA"])
    assert not is_multiple_choice("Is vitamin A or B12 listed?", ["yes"])  # one label followed by text


def test_ra_eval_reports_partial_credit_apart_and_skips_multiple_choice() -> None:
    # VQA accuracy, 10 annotators each. Row 1: 0 official, gold inside the sentence -> recovered.
    # Row 2: "septra" matches 1 annotator of 10 -> official 0.3 (leaving out that annotator: 0 matches, 0;
    # leaving out any of the 9 others: 1 match, 1/3; mean 9 * (1/3) / 10), gold inside -> matched, not recovered.
    # Row 3: multiple choice; the output lists every option, so it contains the gold "green": not tested.
    # Row 4: exact -> official 1.0, no RA-Eval.
    rows = [
        AuditRow("1", "What is written?", "It says BACTRIM forte", ("bactrim forte",) * 10, "textvqa"),
        AuditRow("2", "What is written?", "septra", ("septra",) + ("bactrim",) * 9, "textvqa"),
        AuditRow("3", "Which colour? A. red B. blue C. green", "A. red B. blue C. green", ("green",) * 10, "textvqa"),
        AuditRow("4", "How many?", "4", ("4",) * 10, "textvqa"),
    ]
    result = audit_rows(JoinReport(tuple(rows)), "textvqa", n_draws=10)
    assert [r.official for r in result.rows] == [0.0, 0.3, 0.0, 1.0]
    assert [r.ra_eval for r in result.rows] == [True, True, None, None]
    ra = result.ra_eval
    assert (ra["errors"], ra["zero_credit_errors"], ra["recovered"], ra["share"]) == (3.0, 1.0, 1.0, 100.0)
    assert (ra["partial_credit_rows"], ra["partial_credit_matched"], ra["multiple_choice_skipped"]) == (1.0, 1.0, 1.0)


def test_span_overlays_never_delete_a_word() -> None:
    assert _overlay_one("Procter and Gamble", "multi-span", "") == ()  # no list separator: one name
    assert _overlay_one("Food and Drug Administration", "multi-span", "") == ()
    forms = _overlay_one("Health effects, interactions of essential and toxic elements", "multi-span", "")
    assert "Health effects, interactions of essential, toxic elements" not in forms  # the old form lost "and"
    assert forms[0] == "Health effects and interactions of essential and toxic elements"
    assert _overlay_one("health, education and welfare", "multi-span", "") == ("health, education, welfare",)
    assert _overlay_one("Lexington, KY", "multi-span", "") == ()  # one entity (is_single_entity)
