"""Judge verdicts in code fences, JSON and words, and undecided verdicts kept apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from shortanswer.helpers import ScriptedBackend
from vqaudit.shortanswer.audit import audit_rows
from vqaudit.shortanswer.judge import parse_verdict
from vqaudit.shortanswer.records import AuditRow, JoinReport


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("Yes.", True),
        ("**No** - different", False),
        ('```json\n{"verdict": "equivalent"}\n```', True),  # fenced JSON
        ('```\n{"equivalent": false}\n```', False),
        ('{"verdict": "not equivalent"}', False),
        ('{"verdict": true, "reason": "same value"}', True),
        ('Sure: {"equivalent": true}', True),  # an inline object
        ("Equivalent.", True),
        ("Not equivalent: 12 vs 13", False),  # "not equivalent" is read before the word "equivalent"
        ("```\nno\n```", False),  # a fenced word
        ("Verdict: no", False),
        ("**Verdict:** Yes", True),
        ("The answer is yes.", True),  # a final declaration
        ("Correct", True),
        ("incorrect", False),
        ("No dog is in the answer", None),  # "no" inside a phrase never decides
        ("Nothing matches", None),
        ("maybe", None),
        ("", None),
        ('{"verdict": 3}', None),
        ("yes " * 2000, None),  # over 4,096 characters: undecided, not read
    ],
)
def test_parse_verdict_forms(reply: str, verdict: bool | None) -> None:
    assert parse_verdict(reply) is verdict


def _rows() -> list[AuditRow]:
    return [
        AuditRow("1", "What is the name of the medication?", "SEPTRA Suspension", ("SEPTRA",), "docvqa"),
        AuditRow("2", "How many?", "4", ("4",), "docvqa"),
        AuditRow("3", "Where is the women's gym located?", "The women's gym is located in C-5.", ("C-5",), "docvqa"),
        AuditRow("4", "What colour?", "blue", ("red",), "docvqa"),
    ]


def test_undecided_verdicts_leave_the_judged_score_and_the_share(tmp_path: Path) -> None:
    # Exact match: official 0, 1, 0, 0 -> 25.0. The judge accepts row 1, rejects row 4 and gives row 3 an
    # unreadable reply. Row 3 leaves the judged score: rows 1, 2, 4 judged 1, 1, 0 -> 200/3 = 66.67 (kept at its
    # official 0 it would be 50.0); the share is 1 of 2 decided errors, 50% (not 1 of 3); the paired
    # difference over the same three rows is 66.67 - 33.33 = 33.33 points.
    def reply(r: object) -> str:
        prompt = str(r.prompt)
        return "yes" if "SEPTRA" in prompt else "I am not sure" if "C-5" in prompt else "no"

    result = audit_rows(
        JoinReport(tuple(_rows())),
        "docvqa",
        metric="exact_match",
        variant="pix2struct",
        judge="scripted:test",
        cache_dir=tmp_path,
        judge_backend=ScriptedBackend(reply),
        n_draws=200,
    )
    judge = result.judge
    assert judge is not None
    assert (judge.pool, judge.accepted, judge.undecided) == (3, 1, 1)
    assert judge.accepted_share == pytest.approx(50.0)
    assert judge.judged_score == pytest.approx(200 / 3)
    assert judge.delta[0] == pytest.approx(100 / 3)
    assert result.rows[2].judge is None  # the row's verdict is recorded as undecided, not as a rejection
