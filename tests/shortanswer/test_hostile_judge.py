"""A judge whose verdicts are undecided is not "0% false negatives".

A judge replying neither yes nor no (``parse_verdict`` -> None) on every error was reported as FN 0.0; now a
bucket with no decided verdict is n/a (NaN), and an audit where most verdicts are undecided fails.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from shortanswer.helpers import ScriptedBackend
from vqaudit.errors import VqauditError
from vqaudit.shortanswer.audit import audit_rows
from vqaudit.shortanswer.records import AuditRow, JoinReport

ROWS = (
    AuditRow("1", "What is the name?", "SEPTRA Suspension", ("Septra",), "docvqa"),
    AuditRow("2", "What is the code?", "C-5", ("C-5",), "docvqa"),
    AuditRow("3", "What is the code?", "C 5", ("C-5",), "docvqa"),
    AuditRow("4", "What colour?", "blue", ("red",), "docvqa"),
)


def _audit(tmp_path: Path, reply: object) -> object:
    backend = ScriptedBackend(reply)  # type: ignore[arg-type]
    return audit_rows(
        JoinReport(ROWS),
        "docvqa",
        metric="exact_match",
        variant="pix2struct",
        judge="scripted:test",
        cache_dir=tmp_path,
        judge_backend=backend,
        n_draws=50,
    )


def test_all_undecided_fails(tmp_path: Path) -> None:
    with pytest.raises(VqauditError, match=r"judge scripted:test: 3 of 3 verdicts are undecided"):
        _audit(tmp_path, lambda r: "I am not sure")


def test_a_bucket_without_a_decided_verdict_is_not_zero(tmp_path: Path) -> None:
    # official errors: row 1 (readout), row 3 (identifier: "C 5" is not "C-5"), row 4 (other-open); the judge
    # decides rows 1 and 4 ("no") and not row 3: 1 of 3 undecided, and the identifier bucket has no decided verdict
    result = _audit(tmp_path, lambda r: "maybe" if "Model answer: C 5" in r.prompt else "no")
    judge = result.judge  # type: ignore[attr-defined]
    assert (judge.pool, judge.accepted, judge.undecided) == (3, 0, 1)
    rates = judge.fn_rate_by_bucket
    assert rates["readout"] == 0.0 and rates["other-open"] == 0.0
    assert math.isnan(rates["identifier"])  # was 0.0: "0% false negatives" from no verdict at all
    assert math.isnan(rates["scalar"]) and math.isnan(rates["multi-span"])  # no errors there
