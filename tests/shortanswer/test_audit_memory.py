"""What keeps the audit's memory bounded changes no result: layer passes in chunks, records built when read, memos.

The audit computes its layers over chunks of rows (``audit_layers.LAYER_CHUNK_ROWS``), keeps its per-row records as
the layer columns (``audit_columns.RowResults``) and empties the scoring memos when it ends
(``vqaudit.scoring.memos``). The reference here is the audit itself with one chunk over all rows: every layer of
a row depends on that row alone, so any chunk size must give the same records and pooled figures, equal value
for value (floats compared by ``repr``: NaN equal to NaN, -0.0 apart from 0.0), on the three real prediction
files of ``tests/golden`` (whose golden files pin the one-chunk results).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from vqaudit.errors import VqauditError
from vqaudit.files import json_ready
from vqaudit.report.shortanswer import result_to_json
from vqaudit.scoring import memos
from vqaudit.shortanswer import audit_layers
from vqaudit.shortanswer.audit import RowResult, audit_rows, run_audit
from vqaudit.shortanswer.audit_result import AuditResult
from vqaudit.shortanswer.records import AuditRow, JoinReport

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "shortanswer"
CASES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "textvqa": (
        "llava15_13b_textvqa_answers.jsonl.gz",
        "textvqa",
        {
            "gold": FIXTURES / "textvqa_val_gold.json.gz",
            "join_on": "image-question",
            "id_field": "row",
            "image_field": "question_id",
        },
    ),
    "chartqa": ("vila15_13b_chartqa_test.xlsx", "chartqa", {"variant": "vlmevalkit"}),
    "docvqa": ("mocr_mplugowl_docvqa_val.json.gz", "docvqa", {}),
}


def _text(result: AuditResult) -> str:
    """The report and every record as JSON text, floats by ``repr``."""

    def plain(value: Any) -> Any:
        if isinstance(value, float):
            return repr(value)
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [plain(v) for v in value]
        return value

    rows = [plain(dataclasses.asdict(r)) for r in result.rows]
    return json.dumps({"report": json_ready(result_to_json(result)), "rows": rows}, sort_keys=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_chunked_layers_equal_one_pass(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    file_name, benchmark, options = CASES[name]
    whole = run_audit(FIXTURES / file_name, benchmark, **options)
    assert len(whole.rows) > 2000  # more rows than the chunks below: several chunks, one shorter at the end
    monkeypatch.setattr(audit_layers, "LAYER_CHUNK_ROWS", 997)
    chunked = run_audit(FIXTURES / file_name, benchmark, **options)
    assert _text(chunked) == _text(whole)


def test_row_records_are_built_equal_and_read_like_a_tuple() -> None:
    rows = (
        AuditRow("q1", "What?", "7", ("7",) * 10, "textvqa", "val"),
        AuditRow("q2", "What?", "six", ("8",) * 10, "textvqa", "val"),
    )
    result = audit_rows(JoinReport(rows, gold_source="embedded"), "textvqa")
    records = result.rows
    assert len(records) == 2 and records[-1] == records[1] and records[0:2] == (records[0], records[1])
    assert list(records) == [records[0], records[1]] and records == tuple(records)
    first = records[0]
    assert type(first) is RowResult and first.qid == "q1" and first.split == "val"
    # VQA accuracy (mmf_textvqa): mean over the 10 leave-one-out sets of min(1, matches / 3): 9/3 -> 1; 0 -> 0
    assert first.official == 1.0 and records[1].official == 0.0
    with pytest.raises(IndexError):
        records[2]


def test_memos_are_empty_after_an_audit() -> None:
    rows = (AuditRow("q1", "How many?", "1,000 cats.", ("1000",) * 5 + ("one thousand",) * 5, "textvqa"),)
    audit_rows(JoinReport(rows, gold_source="embedded"), "textvqa")
    assert memos.memoized()  # the scoring modules the audit loaded do memoize
    assert all(fn.cache_info().currsize == 0 for fn in memos.memoized())  # type: ignore[attr-defined]


def test_refused_gold_in_a_later_chunk_is_named_by_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # TextVQA's official variant (mmf_textvqa) needs exactly 10 answers per question (the script asserts it):
    # the 4th row's single answer is refused, in the second chunk of 2 rows, and named as joined row 4.
    monkeypatch.setattr(audit_layers, "LAYER_CHUNK_ROWS", 2)
    ok = [AuditRow(f"q{i}", "What?", "a", ("a",) * 10, "textvqa") for i in range(3)]
    bad = AuditRow("q3", "What?", "a", ("a",), "textvqa")
    with pytest.raises(VqauditError, match=r"^joined row 4 \(question id 'q3'\), field 'answers': "):
        audit_rows(JoinReport((*ok, bad), gold_source="embedded"), "textvqa")
