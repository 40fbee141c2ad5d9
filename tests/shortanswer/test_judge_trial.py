"""The judge layer as a new user met it: a reasoning judge cut off while thinking, and human labels.

- A Qwen3-style judge (`<think>...</think>Yes.`) served locally with a token budget that cut 2 of 10 replies
  inside the thinking gave "2 of 10 verdicts undecided" and no reason (the audit stops with the reason only when
  most verdicts are undecided). Now the line says "(2 of them the judge's reasoning never finished ...)" and
  ``report.json`` records ``judge.unfinished``; a judge that always finished writes the report it wrote before.
- Labels left out of the validation are counted by reason; a bad labels file is refused before any judge call.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shortanswer.helpers import ScriptedBackend
from vqaudit.backends import Request
from vqaudit.errors import VqauditError
from vqaudit.report.shortanswer import write_audit_report
from vqaudit.shortanswer.audit import audit_rows
from vqaudit.shortanswer.records import AuditRow, JoinReport

# Five official errors under exact match (gold "paris", predictions that are not "paris").
ROWS = tuple(
    AuditRow(f"q{i}", "what city?", p, ("paris",), "docvqa")
    for i, p in enumerate(["Paris.", "PARIS", "lyon", "nice", "rome"])
)


def _audit(tmp: Path, cut: set[str]) -> tuple[str, dict[str, object]]:
    def reply(request: Request) -> str:
        qid = request.request_id.removeprefix("judge:")
        if qid in cut:
            return "<think>Let me compare the reference with"  # the budget ran out inside the thinking
        yes = "paris" in request.prompt.lower().split("model answer:")[1]
        return f"<think>compare</think>{'Yes.' if yes else 'No.'}"

    result = audit_rows(
        JoinReport(ROWS),
        "docvqa",
        model="m",
        metric="exact_match",
        variant="pix2struct",
        judge="scripted:thinker",
        cache_dir=tmp,
        judge_backend=ScriptedBackend(reply, spec="scripted:thinker"),
        n_draws=20,
    )
    write_audit_report(result, tmp)
    return (tmp / "report.md").read_text(), json.loads((tmp / "report.json").read_text())["judge"]


def test_undecided_verdicts_of_a_judge_cut_while_thinking_are_explained(tmp_path: Path) -> None:
    md, judge = _audit(tmp_path, {"q0", "q3"})
    # By hand: 5 errors; q0 and q3 cut (undecided); q1 "PARIS" accepted, q2 and q4 rejected: 1 of 3 decided.
    assert (
        "1 of 3 decided errors accepted (33.3%); 2 of 5 verdicts undecided (2 of them the judge's reasoning never "
        in md
    )
    assert "raise it with `--judge-arg max_tokens=N`), left out of the judge score" in md
    assert (judge["undecided"], judge["unfinished"], judge["accepted"]) == (2, 2, 1)


def test_a_judge_that_always_finished_writes_the_report_as_before(tmp_path: Path) -> None:
    md, judge = _audit(tmp_path, set())
    assert "0 of 5 verdicts undecided, left out of the judge score" in md
    assert "unfinished" not in judge


def test_labels_left_out_of_the_validation_are_counted_by_reason(tmp_path: Path) -> None:
    # New-user trial: a label for a question id of no joined row ("q99": a typo, another file's ids) was dropped
    # without a word. By hand over ROWS (exact match, gold "paris"): every row is an official error; q0 and q3
    # are cut (undecided), so their labels are not compared; q99 is no row; q1, q2 and q4 are compared.
    labels = tmp_path / "labels.csv"
    labels.write_text("qid,label\nq0,yes\nq1,yes\nq2,no\nq3,no\nq4,no\nq99,yes\n")

    def reply(request: Request) -> str:
        qid = request.request_id.removeprefix("judge:")
        if qid in ("q0", "q3"):
            return "<think>Let me compare"
        return "Yes." if "paris" in request.prompt.lower().split("model answer:")[1] else "No."

    result = audit_rows(
        JoinReport(ROWS),
        "docvqa",
        model="m",
        metric="exact_match",
        variant="pix2struct",
        judge="scripted:thinker",
        cache_dir=tmp_path,
        judge_backend=ScriptedBackend(reply, spec="scripted:thinker"),
        labels=labels,
        n_draws=20,
    )
    write_audit_report(result, tmp_path)
    validation = json.loads((tmp_path / "report.json").read_text())["judge"]["validation"]
    assert validation["n"] == 3 and (validation["tp"], validation["tn"]) == (1, 2)
    assert validation["labels_not_compared"] == {
        "officially_correct": 0,
        "undecided": 2,
        "unknown": 1,
        "unknown_example": "q99",
    }
    assert (
        "- Labels not compared: 2 of errors without a judge verdict; 1 of questions not in the joined predictions "
        "(e.g. 'q99': check the ids against the prediction file's)." in (tmp_path / "report.md").read_text()
    )


def test_a_bad_labels_file_is_refused_before_any_judge_call(tmp_path: Path) -> None:
    # New-user trial: a labels file with "maybe" was refused only after the judge had been asked about the whole
    # error pool (paid calls for a remote judge).
    labels = tmp_path / "labels.csv"
    labels.write_text("qid,label\nq1,maybe\n")
    judge = ScriptedBackend(lambda request: "Yes.", spec="scripted:judge")
    with pytest.raises(VqauditError, match=r"labels\.csv: row 2, field 'label': expected yes/no"):
        audit_rows(
            JoinReport(ROWS),
            "docvqa",
            model="m",
            metric="exact_match",
            variant="pix2struct",
            judge="scripted:judge",
            cache_dir=tmp_path,
            judge_backend=judge,
            labels=labels,
            n_draws=20,
        )
    assert judge.requests == []
