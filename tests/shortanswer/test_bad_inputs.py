"""Bad prediction, gold and label files give one error naming the file, row and field; nothing is overwritten.

Cases found by a fresh-user pass over ``vqaudit audit``; each expected message is the rule it checks.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from shortanswer.helpers import run_cli
from vqaudit.errors import VqauditError
from vqaudit.shortanswer.audit import audit_rows, run_audit
from vqaudit.shortanswer.importers import read_predictions
from vqaudit.shortanswer.join import gold_shape_notes
from vqaudit.shortanswer.judge import read_labels
from vqaudit.shortanswer.records import AuditRow, JoinReport

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "shortanswer"


def test_undecodable_files_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "preds.jsonl"
    bad.write_bytes(b'{"question_id": 1, "prediction": "caf\xff"}\n')
    with pytest.raises(VqauditError, match=r"preds\.jsonl: row 1: not UTF-8 text"):
        read_predictions(bad)
    fake = tmp_path / "preds.jsonl.gz"
    fake.write_bytes(b"not gzip at all")
    with pytest.raises(VqauditError, match=r"preds\.jsonl\.gz: not a readable gzip file"):
        read_predictions(fake)
    labels = tmp_path / "labels.csv"
    labels.write_bytes(b"question_id,label\n1,\xffyes\n")
    with pytest.raises(VqauditError, match=r"labels\.csv: not UTF-8 text"):
        read_labels(labels)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("question_id,prediction,answer\n1,a,a\n2,b\n", r"row 3, field 'answer': missing \(the row has fewer"),
        ("question_id,prediction,answer\n1,a,a,extra\n", r"row 2: 4 fields where the header has 3"),
        # An unterminated quote would swallow the rest of the file into one field: refused where it opens.
        (
            'question_id,prediction,answer\n1,"a,a\n',
            r"preds\.csv: row 2 \(line 2\), field 'prediction': a quoted "
            "field starts here and is never closed",
        ),
        ("", r"preds\.csv: no prediction rows in the file"),
    ],
)
def test_malformed_csv_names_the_row(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "preds.csv"
    path.write_text(text)
    with pytest.raises(VqauditError, match=message):
        read_predictions(path)


def test_null_gold_answers_and_table_formats_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "preds.jsonl"
    path.write_text(json.dumps({"question_id": "q1", "prediction": "a", "answers": ["a", None]}) + "\n")
    with pytest.raises(VqauditError, match=r"row 1, field 'answers': answer 2 is null"):
        read_predictions(path)
    with pytest.raises(VqauditError, match="--format lmms-eval reads lmms-eval's JSON"):
        read_predictions(FIXTURES / "vila15_13b_chartqa_test.xlsx", "lmms-eval")


def test_labels_twice_and_options_that_need_a_judge(tmp_path: Path) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text("question_id,label\nq1,yes\nq1,no\n")
    with pytest.raises(VqauditError, match=r"row 3, field 'question_id': 'q1' is labelled twice \(first at row 2\)"):
        read_labels(labels)
    rows = JoinReport((AuditRow("q1", "What?", "a", ("b",), "docvqa"),))
    with pytest.raises(VqauditError, match="--labels needs --judge"):
        audit_rows(rows, "docvqa", labels=labels)
    with pytest.raises(VqauditError, match="--second-judge needs --judge"):
        audit_rows(rows, "docvqa", second_judge="openai:j@http://127.0.0.1:9/v1")
    with pytest.raises(VqauditError, match="--judge 'reference:gold': a reference policy"):
        audit_rows(rows, "docvqa", judge="reference:gold", cache_dir=tmp_path)


def test_gold_of_another_benchmark_is_refused() -> None:
    # The VLMEvalKit ChartQA sheet carries ChartQA's split names; the TextVQA file 10 answers per question.
    with pytest.raises(VqauditError, match="--benchmark docvqa: the rows carry ChartQA's split names"):
        run_audit(FIXTURES / "vila15_13b_chartqa_test.xlsx", "docvqa")
    with pytest.raises(VqauditError, match="--benchmark chartqa: 5000 of 5000 rows have exactly 10 gold answers"):
        run_audit(FIXTURES / "llava15_13b_textvqa_val.jsonl.gz", "chartqa")


def test_vqa_accuracy_on_single_answers_is_noted() -> None:
    # vqaEval.py: with one reference, every leave-one-out subset is empty: the score is 0 even for an exact hit.
    rows = tuple(AuditRow(f"q{i}", "What?", "cat", ("cat",), "chartqa") for i in range(5))
    result = audit_rows(JoinReport(rows), "chartqa", metric="vqa_accuracy", variant="vqaeval")
    assert result.scores["Overall"] == 0.0
    assert len(result.notes) == 1 and result.notes[0].startswith("5 of 5 rows have fewer than 4 gold answers")
    assert gold_shape_notes(rows, "chartqa", "relaxed_accuracy") == []


def test_audit_never_overwrites_another_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "audit"
    sheet = str(FIXTURES / "vila15_13b_chartqa_test.xlsx")
    assert (
        run_cli(monkeypatch, "audit", sheet, "--benchmark", "chartqa", "--model-name", "vila", "--out", str(out)) == 0
    )
    before = (out / "report.json").read_bytes()
    docvqa = str(FIXTURES / "mocr_mplugowl_docvqa_val.json.gz")
    assert run_cli(monkeypatch, "audit", docvqa, "--benchmark", "docvqa", "--out", str(out)) == 2
    assert "holds the audit of 'vila' on 'chartqa'" in capsys.readouterr().err
    assert (out / "report.json").read_bytes() == before  # untouched
    # The same audit again (e.g. after a judge outage) may rewrite its own folder.
    assert (
        run_cli(
            monkeypatch,
            "audit",
            sheet,
            "--benchmark",
            "chartqa",
            "--model-name",
            "vila",
            "--out",
            str(out),
            "--metric-variant",
            "vlmevalkit",
        )
        == 0
    )
    row = json.loads((out / "rows.jsonl").read_text().splitlines()[0])
    assert row["prediction"] and row["question"] and row["answers"] == ["14"]  # what the model said, beside gold
    assert json.loads((out / "report.json").read_text())["scores"]["test_human"] == 42.88


def test_gzip_fixture_still_reads() -> None:
    with gzip.open(FIXTURES / "llava15_13b_textvqa_val.jsonl.gz", "rt") as f:
        assert sum(1 for _ in f) == len(read_predictions(FIXTURES / "llava15_13b_textvqa_val.jsonl.gz")) == 5000
