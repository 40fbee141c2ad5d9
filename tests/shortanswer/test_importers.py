"""Importers, gold loaders and the join: formats, and errors that name the file, row and field."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from vqaudit.errors import VqauditError
from vqaudit.shortanswer.benchmarks import load_gold
from vqaudit.shortanswer.importers import read_predictions
from vqaudit.shortanswer.join import join_predictions
from vqaudit.shortanswer.loaders import load_chartqa, load_docvqa, load_infovqa, load_textvqa
from vqaudit.xlsx import read_xlsx_rows

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "shortanswer"


def _write(path: Path, obj: object) -> Path:
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def test_xlsx_reader_matches_the_cell_by_cell_conversion() -> None:
    # The jsonl.gz fixture was converted cell by cell from the same sheet (CREDITS.md): both must agree.
    rows = read_xlsx_rows(FIXTURES / "vila15_13b_chartqa_test.xlsx")
    assert rows[0] == ["index", "question", "answer", "split", "prediction"]
    assert len(rows) == 2501
    with gzip.open(FIXTURES / "vila15_13b_chartqa_test.jsonl.gz", "rt", encoding="utf-8") as f:
        converted = [json.loads(line) for line in f]
    for sheet_row, rec in zip(rows[1:], converted, strict=True):
        assert sheet_row[0] == str(rec["index"])
        assert sheet_row[2] == rec["answer"] and sheet_row[3] == rec["split"]
        assert (sheet_row[4] or "") == rec["prediction"]


def test_vlmevalkit_sheet_keeps_answer_as_gold_and_prediction_as_output() -> None:
    preds = read_predictions(FIXTURES / "vila15_13b_chartqa_test.xlsx")
    assert len(preds) == 2500
    first = preds[0]
    assert (first.qid, first.prediction, first.gold, first.split) == ("1", "10", ("14",), "test_human")
    assert first.question == "How many food item is shown in the bar graph?"
    assert first.source.endswith(":2")  # sheet row 2 (row 1 is the header)


def test_generic_jsonl_csv_tsv_and_gzip(tmp_path: Path) -> None:
    (tmp_path / "p.jsonl").write_text('{"question_id": 7, "prediction": "Paris"}\n\n{"question_id": 8, "text": 3}\n')
    preds = read_predictions(tmp_path / "p.jsonl")
    assert [(p.qid, p.prediction) for p in preds] == [("7", "Paris"), ("8", "3")]
    (tmp_path / "p.csv").write_text("qid,prediction,answer\n1,yes,no\n2,,x\n")
    csv_preds = read_predictions(tmp_path / "p.csv")
    assert [(p.qid, p.prediction, p.gold) for p in csv_preds] == [("1", "yes", ("no",)), ("2", "", ("x",))]
    (tmp_path / "p.tsv").write_text("id\tpred\n1\ta b\n")
    assert read_predictions(tmp_path / "p.tsv")[0].prediction == "a b"
    with gzip.open(tmp_path / "p.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write('{"qid": "a", "prediction": "x"}\n')
    assert read_predictions(tmp_path / "p.jsonl.gz")[0].qid == "a"


def test_multimodalocr_answer_is_the_prediction_when_gt_answers_exist() -> None:
    preds = read_predictions(FIXTURES / "mocr_mplugowl_docvqa_val.json.gz")
    assert len(preds) == 5349
    assert preds[0].prediction.startswith("The actual value per 1000")
    assert preds[0].gold == ("0.28",)
    assert preds[0].qid == "1"  # no id field: the 1-based row number


def test_lmms_eval_sample_log(tmp_path: Path) -> None:
    log = [
        {
            "doc_id": 0,
            "doc": {"question_id": 34602, "question": "what?", "answers": ["a", "b"]},
            "target": "a",
            "resps": [["raw"]],
            "filtered_resps": ["Dakota"],
        },
        {"doc_id": 1, "doc": {"question": "q2"}, "target": "['x', 'y']", "resps": [["only raw"]]},
    ]
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in log))
    preds = read_predictions(path)
    assert [(p.qid, p.prediction, p.gold) for p in preds] == [
        ("34602", "Dakota", ("a", "b")),
        ("1", "only raw", ("x", "y")),
    ]
    assert read_predictions(_write(tmp_path / "s.json", {"logs": log}))[0].qid == "34602"


def test_errors_name_file_row_and_field(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"qid": 1, "prediction": "a"}\n{"qid": 2, "nothing": "b"}\n')
    with pytest.raises(VqauditError, match=r"p\.jsonl: row 2, field 'prediction': missing"):
        read_predictions(path)
    path.write_text('{"qid": 1, "prediction": "a"}\n{"qid": 1, "prediction": "b"}\n')
    with pytest.raises(VqauditError, match=r"row 2, field 'qid': duplicate id '1' \(first at row 1\)"):
        read_predictions(path)
    path.write_text('{"qid": 1, "prediction": {"nested": 1}}\n')
    with pytest.raises(VqauditError, match=r"row 1, field 'prediction': expected text"):
        read_predictions(path)
    path.write_text("{not json\n")
    with pytest.raises(VqauditError, match=r"row 1: not valid JSON"):
        read_predictions(path)
    with pytest.raises(VqauditError, match="not found"):
        read_predictions(tmp_path / "missing.jsonl")


def test_gold_loaders_for_each_layout(tmp_path: Path) -> None:
    textvqa = _write(
        tmp_path / "TextVQA_0.5.1_val.json",
        {
            "data": [
                {"question_id": 1, "question": "what brand?", "answers": ["nike"] * 10, "ocr_tokens": ["NIKE", "air"]}
            ]
        },
    )
    (item,) = load_textvqa(textvqa)
    assert (item.qid, len(item.answers), item.ocr_tokens) == ("1", 10, ("NIKE", "air"))
    stvqa = _write(tmp_path / "st.json", {"data": [{"question_id": 9, "question": "q", "answers": ["a"]}]})
    assert load_gold(stvqa, "stvqa")[0].benchmark == "stvqa"
    docvqa = _write(tmp_path / "val_v1.0.json", {"data": [{"questionId": 5, "question": "q", "answers": ["x"]}]})
    assert load_docvqa(docvqa)[0].qid == "5"
    info = _write(
        tmp_path / "infographicsVQA_val_v1.0.json",
        {"data": [{"questionId": 6, "question": "q", "answers": ["a, b"], "answer_type": ["multi-span"]}]},
    )
    assert load_infovqa(info)[0].answer_type == "multi-span"
    chart = load_chartqa(FIXTURES / "chartqa_test_human_slice.json")
    assert len(chart) == 60 and chart[0].qid == "test_human:1" and chart[0].answers == ("14",)
    bad = _write(
        tmp_path / "bad.json",
        {
            "data": [
                {"question_id": 1, "question": "q", "answers": ["a"]},
                {"question_id": 2, "question": "q", "answers": []},
            ]
        },
    )
    with pytest.raises(VqauditError, match=r"bad\.json: row 2, field 'answers'"):
        load_textvqa(bad)
    dup = _write(tmp_path / "dup.json", {"data": [{"question_id": 1, "question": "q", "answers": ["a"]}] * 2})
    with pytest.raises(VqauditError, match=r"row 2, field 'question_id': duplicate"):
        load_textvqa(dup)
    with pytest.raises(VqauditError, match="unknown benchmark 'gqa'"):
        load_gold(dup, "gqa")
    with pytest.raises(VqauditError, match=r"dup\.json: row 1, field 'image': missing"):  # VizWiz keys by image
        load_gold(dup, "vizwiz")


def test_join_reports_what_does_not_join(tmp_path: Path) -> None:
    gold = load_textvqa(
        _write(
            tmp_path / "g.json",
            {"data": [{"question_id": i, "question": f"q{i}", "answers": ["a"] * 10} for i in (1, 2, 3)]},
        )
    )
    (tmp_path / "p.jsonl").write_text('{"question_id": 2, "prediction": "a"}\n{"question_id": 9, "prediction": "b"}\n')
    report = join_predictions(read_predictions(tmp_path / "p.jsonl"), gold, benchmark="textvqa")
    assert [r.qid for r in report.rows] == ["2"]
    assert report.predictions_without_gold == ("9",)
    assert report.gold_without_predictions == ("1", "3")


def test_join_by_question_text_refuses_ambiguous_questions() -> None:
    # ChartQA has no ids; the real slice repeats "How many bars are shown in the chart?"-style questions.
    gold = load_chartqa(FIXTURES / "chartqa_test_human_slice.json")
    preds = [p for p in read_predictions(FIXTURES / "vila15_13b_chartqa_test.xlsx") if p.split == "test_human"]
    report = join_predictions(preds, gold, benchmark="chartqa", on="question")
    assert 0 < len(report.rows) <= 60
    assert len(report.predictions_without_gold) + len(report.rows) == 1250  # nothing dropped silently
    assert len(report.gold_without_predictions) + len(report.rows) == 60
    # Every question-text join is right: the ChartQA label equals the gold VLMEvalKit embedded for that row.
    embedded = {p.qid: p.gold for p in preds}
    assert all(r.answers == embedded[r.qid] for r in report.rows)
    assert any("more than once" in n for n in report.notes)  # repeated questions are reported, never guessed
