"""The importers' rules found by trying them as a new user: ids, prediction values, BOMs, error fields.

Every expected value is the rule of docs/shortanswer.md "Inputs", computed by hand from the few rows written here.
"""

from __future__ import annotations

import codecs
import gzip
import json
from pathlib import Path

import pytest

from upd.helpers import write_xlsx
from vqaudit.errors import VqauditError
from vqaudit.shortanswer.audit import run_audit
from vqaudit.shortanswer.importers import read_predictions
from vqaudit.shortanswer.join import join_predictions
from vqaudit.shortanswer.judge import read_labels
from vqaudit.shortanswer.loaders import load_chartqa, load_docvqa

BOM = codecs.BOM_UTF8.decode("utf-8")


def _lines(path: Path, *records: object) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# 1. A row without an id in a file that has ids -------------------------------------------------------------------


def test_a_row_without_its_id_is_refused_not_numbered(tmp_path: Path) -> None:
    # The trial's case: DocVQA predictions keyed by questionId, row 2 without one. Before the fix row 2 got the
    # id "2" and was scored against another question's gold.
    path = _lines(
        tmp_path / "p.jsonl",
        {"questionId": 7, "prediction": "a"},
        {"prediction": "b"},
        {"questionId": 9, "prediction": "c"},
    )
    with pytest.raises(VqauditError, match=r"p\.jsonl: row 2, field 'questionId': missing"):
        read_predictions(path)
    # a null id is no id either
    _lines(path, {"questionId": 7, "prediction": "a"}, {"questionId": None, "prediction": "b"})
    with pytest.raises(VqauditError, match=r"p\.jsonl: row 2, field 'questionId': missing"):
        read_predictions(path)
    # CSV: the column exists, row 3 (the second data row) leaves it empty
    table = tmp_path / "p.csv"
    table.write_text("question_id,prediction\n1,a\n,b\n", encoding="utf-8")
    with pytest.raises(VqauditError, match=r"p\.csv: row 3, field 'question_id': missing"):
        read_predictions(table)


def test_row_numbers_stand_in_only_when_the_file_has_no_id_field(tmp_path: Path) -> None:
    path = _lines(tmp_path / "p.jsonl", {"prediction": "a"}, {"prediction": "b"})
    assert [(p.qid, p.prediction) for p in read_predictions(path)] == [("1", "a"), ("2", "b")]
    table = tmp_path / "p.tsv"
    table.write_text("prediction\tanswer\nx\ty\n", encoding="utf-8")
    assert read_predictions(table)[0].qid == "2"  # a table's row number counts the header as row 1


# 2. One rule for non-string predictions ---------------------------------------------------------------------------


def test_numbers_keep_their_written_text_and_missing_values_are_empty(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(
        '{"id": 1, "prediction": 1.50}\n{"id": 2, "prediction": 1e3}\n{"id": 3, "prediction": 12}\n'
        '{"id": 4, "prediction": null}\n{"id": 6, "prediction": " x "}\n'
        '{"id": 7, "prediction": -0.0}\n',
        encoding="utf-8",
    )
    # as written: "1.50" (not repr "1.5"), "1e3" (not "1000.0"); an int's digits; null -> ""; text as is
    assert [p.prediction for p in read_predictions(path)] == ["1.50", "1e3", "12", "", " x ", "-0.0"]
    table = tmp_path / "p.csv"
    table.write_text("id,prediction\n1,\n2,1.50\n", encoding="utf-8")  # an empty cell: pandas' missing value
    assert [p.prediction for p in read_predictions(table)] == ["", "1.50"]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("true", "boolean true"),
        ("false", "boolean false"),
        ("1e999", "non-finite number 1e999"),
        ("-1e999", "non-finite number -1e999"),
        ("Infinity", "non-finite number inf"),
        (
            "NaN",
            r"non-finite number NaN \(write the prediction as a string "
            r"\(or null for a missing one\)\)",
        ),
    ],
)
def test_booleans_and_non_finite_numbers_are_refused(tmp_path: Path, value: str, shown: str) -> None:
    # Before the fix: true -> "True", 1e999 -> "inf", exit 0; NaN -> "" (an empty reply) while inf was refused.
    path = tmp_path / "p.jsonl"
    path.write_text(f'{{"id": 1, "prediction": "a"}}\n{{"id": 2, "prediction": {value}}}\n', encoding="utf-8")
    with pytest.raises(VqauditError, match=rf"p\.jsonl: row 2, field 'prediction': expected text, got the {shown}"):
        read_predictions(path)


def test_lmms_eval_response_follows_the_same_rule(tmp_path: Path) -> None:
    rec = {"doc_id": 0, "doc": {"question_id": 5, "answers": ["a"]}, "filtered_resps": [True], "target": "a"}
    with pytest.raises(VqauditError, match=r"s\.jsonl: row 1, field 'filtered_resps': expected text, got the bool"):
        read_predictions(_lines(tmp_path / "s.jsonl", rec))
    rec["filtered_resps"] = [2.50]
    (tmp_path / "s.jsonl").write_text(json.dumps(rec).replace("2.5", "2.50") + "\n", encoding="utf-8")
    assert read_predictions(tmp_path / "s.jsonl")[0].prediction == "2.50"


def test_embedded_gold_answers_follow_the_prediction_rule(tmp_path: Path) -> None:
    # Before: a gold `true` became "True", `1e999` "inf", and `1.50` its float repr "1.5".
    path = _lines(tmp_path / "g.jsonl", {"id": 1, "prediction": "a", "answers": ["a"]})
    path.write_text(path.read_text() + '{"id": 2, "prediction": "1.5", "answers": [1.50, 7]}\n', encoding="utf-8")
    assert [p.gold for p in read_predictions(path)] == [("a",), ("1.50", "7")]
    for value, shown in (
        ("true", "boolean true"),
        ('["a", false]', "boolean false"),
        ("1e999", "non-finite number 1e999"),
    ):
        path.write_text(f'{{"id": 1, "prediction": "a", "answers": {value}}}\n', encoding="utf-8")
        with pytest.raises(
            VqauditError,
            match=rf"g\.jsonl: row 1, field 'answers': expected text, got the {shown} "
            r"\(write the gold answer as a string\)",
        ):
            read_predictions(path)


# 3. A UTF-8 byte order mark -------------------------------------------------------------------------------------


def test_a_leading_bom_is_dropped_from_every_text_input(tmp_path: Path) -> None:
    # Before the fix the CSV header read '\ufeffquestion_id' and the ids fell back to row numbers.
    (tmp_path / "p.csv").write_text(BOM + "question_id,prediction\n17,a\n", encoding="utf-8")
    (tmp_path / "p.tsv").write_text(BOM + "question_id\tprediction\n17\ta\n", encoding="utf-8")
    (tmp_path / "p.jsonl").write_text(BOM + '{"question_id": 17, "prediction": "a"}\n', encoding="utf-8")
    (tmp_path / "p.json").write_text(BOM + '[{"question_id": 17, "prediction": "a"}]', encoding="utf-8")
    with gzip.open(tmp_path / "p.csv.gz", "wt", encoding="utf-8") as handle:
        handle.write(BOM + "question_id,prediction\n17,a\n")
    for name in ("p.csv", "p.tsv", "p.jsonl", "p.json", "p.csv.gz"):
        assert [(p.qid, p.prediction) for p in read_predictions(tmp_path / name)] == [("17", "a")], name
    gold = {"data": [{"questionId": 17, "question": "q?", "answers": ["a"]}]}
    (tmp_path / "val_v1.0.json").write_text(BOM + json.dumps(gold), encoding="utf-8")
    assert [g.qid for g in load_docvqa(tmp_path / "val_v1.0.json")] == ["17"]
    with gzip.open(tmp_path / "test_human.json.gz", "wt", encoding="utf-8") as handle:
        handle.write(BOM + json.dumps([{"imgname": "1.png", "query": "q?", "label": "3"}]))
    assert [g.qid for g in load_chartqa(tmp_path / "test_human.json.gz")] == ["test_human:1"]
    (tmp_path / "labels.csv").write_text(BOM + "question_id,label\n17,1\n", encoding="utf-8")
    assert read_labels(tmp_path / "labels.csv") == {"17": True}


# 4. Error messages name the field and file actually involved ----------------------------------------------------


def test_a_duplicate_id_names_the_id_field_used(tmp_path: Path) -> None:
    # A VLMEvalKit sheet keyed by 'index' (sheet rows 2 and 3 hold index 4): the message said 'question_id'.
    sheet = write_xlsx(
        tmp_path / "m_ChartQA_TEST.xlsx",
        ["index", "question", "answer", "prediction"],
        [["4", "q1?", "1", "1"], ["4", "q2?", "2", "2"]],
    )
    with pytest.raises(
        VqauditError,
        match=r"m_ChartQA_TEST\.xlsx: row 3, field 'index': duplicate id '4' "
        r"\(first at row 2\)",
    ):
        read_predictions(sheet)


def test_a_gold_the_metric_refuses_names_the_gold_file_and_row(tmp_path: Path) -> None:
    # ChartQA label "[]" expands (VLMEvalKit's list-literal rule) to no reference at all: the scorer refuses it.
    # Before the fix the message was "joined row 2 (question id 'test_human:2'), field 'answers'", no file.
    gold = tmp_path / "test_human.json"
    gold.write_text(
        json.dumps(
            [{"imgname": "a.png", "query": "q1?", "label": "3"}, {"imgname": "b.png", "query": "q2?", "label": "[]"}]
        ),
        encoding="utf-8",
    )
    preds = _lines(
        tmp_path / "p.jsonl",
        {"question_id": "test_human:1", "prediction": "3"},
        {"question_id": "test_human:2", "prediction": "4"},
    )
    with pytest.raises(
        VqauditError,
        match=r"test_human\.json: row 2 \(question id 'test_human:2'\), field "
        r"'answers': at least one reference answer is required",
    ):
        run_audit(preds, "chartqa", gold=gold, variant="vlmevalkit")


# 5. ChartQA ids are 1-based -------------------------------------------------------------------------------------


def test_zero_based_chartqa_ids_are_refused(tmp_path: Path) -> None:
    gold = tmp_path / "test_human.json"
    gold.write_text(
        json.dumps(
            [{"imgname": "a.png", "query": "q1?", "label": "3"}, {"imgname": "b.png", "query": "q2?", "label": "5"}]
        ),
        encoding="utf-8",
    )
    items = load_chartqa(gold)
    preds = read_predictions(
        _lines(
            tmp_path / "p.jsonl",
            {"question_id": "test_human:0", "prediction": "3"},
            {"question_id": "test_human:1", "prediction": "5"},
        )
    )
    # 0-based numbering would join "5" (row 2's answer) to row 1's gold "3": refused, naming the row with id 0
    with pytest.raises(VqauditError, match=r"p\.jsonl: row 1, id 'test_human:0': ChartQA ids are 1-based"):
        join_predictions(preds, items, benchmark="chartqa")
    ok = read_predictions(_lines(tmp_path / "q.jsonl", {"question_id": "test_human:1", "prediction": "3"}))
    assert [r.answers for r in join_predictions(ok, items, benchmark="chartqa").rows] == [("3",)]
