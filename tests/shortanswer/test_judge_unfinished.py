"""A reasoning judge cut off while thinking: the report says how many undecided verdicts that explains.

New-user trial: a Qwen3-style judge (`<think>...</think>Yes.`) served locally with a token budget that cut 2 of 10
replies inside the thinking gave "2 of 10 verdicts undecided" and no reason; the audit stops with the reason only
when most verdicts are undecided. Now the line says "(2 of them the judge's reasoning never finished ...)" and
``report.json`` records ``judge.unfinished``; a judge that always finished writes the report it wrote before.
"""

from __future__ import annotations

import json
from pathlib import Path

from shortanswer.helpers import ScriptedBackend
from vqaudit.backends import Request
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
