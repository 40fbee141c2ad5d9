"""The one human-label reader (``vqaudit.labels``) behind ``score --labels`` (MM-UPD) and ``audit --labels``.

Each command keeps its own id column, verdict words and error wording (a ``LabelFormat`` row); the file formats,
row numbering and error lines (file, row, field) are shared.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vqaudit.errors import VqauditError
from vqaudit.labels import QUESTION_LABELS, VIEW_LABELS, read_label_file
from vqaudit.metrics.judge_agreement import read_view_labels
from vqaudit.shortanswer.judge import read_labels


def test_each_command_keeps_its_columns_and_words(tmp_path: Path) -> None:
    views = tmp_path / "views.tsv"
    views.write_text("view_id\tlabel\nv1\tRight\nv2\twrong\nv3\t1\n", encoding="utf-8")
    assert read_view_labels(views) == read_label_file(views, VIEW_LABELS) == {"v1": True, "v2": False, "v3": True}
    questions = tmp_path / "questions.jsonl"
    rows = [{"qid": 7, "label": "acceptable"}, {"question_id": "q8", "label": False}, {"qid": "q9", "label": "N"}]
    questions.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    expected = {"7": True, "q8": False, "q9": False}
    assert read_labels(questions) == read_label_file(questions, QUESTION_LABELS) == expected
    # "right" is a view verdict word, not a short-answer one: each command's own error wording names its words.
    (tmp_path / "q.csv").write_text("question_id,label\nq1,right\n", encoding="utf-8")
    with pytest.raises(VqauditError, match=r"q\.csv: row 2, field 'label': expected yes/no, true/false or 1/0"):
        read_labels(tmp_path / "q.csv")
    (tmp_path / "v.csv").write_text("view_id,label\nv1,acceptable\n", encoding="utf-8")
    with pytest.raises(VqauditError, match=r"v\.csv: row 2, field 'label': expected correct/incorrect"):
        read_view_labels(tmp_path / "v.csv")


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("a.csv", "question_id,label\n,yes\n", r"a\.csv: row 2, field 'question_id': missing"),
        ("b.csv", "question_id,label\nq1,\n", r"b\.csv: row 2, field 'label': missing"),
        ("c.csv", "question_id,label\nq1\n", r"c\.csv: row 2, field 'label': missing"),
        ("d.jsonl", '{"question_id": "q1", "label": "yes"}\n[1]\n', r"d\.jsonl: row 2: expected a JSON object"),
        ("e.jsonl", '{"question_id": "q1", "label": yes}\n', r"e\.jsonl: row 1: not valid JSON"),
        ("f.csv", "question_id,label\n", r"f\.csv: no labels in the file"),
        ("g.csv", "qid,label\nq1,yes\nq1,no\n", r"g\.csv: row 3, field 'question_id': 'q1' is labelled twice"),
    ],
)
def test_bad_rows_name_the_file_row_and_field(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(VqauditError, match=message):
        read_labels(path)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(VqauditError, match=r"nothing\.csv: labels file not found"):
        read_view_labels(tmp_path / "nothing.csv")
