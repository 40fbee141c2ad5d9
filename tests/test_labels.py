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
        ("b.csv", "question_id,label\nq1,\n", r"b\.csv: row 2, field 'label': missing \(leave unlabelled items out"),
        ("c.csv", "question_id,label\nq1\n", r"c\.csv: row 2, field 'label': missing"),
        ("d.jsonl", '{"question_id": "q1", "label": "yes"}\n[1]\n', r"d\.jsonl: row 2: expected a JSON object"),
        ("e.jsonl", '{"question_id": "q1", "label": yes}\n', r"e\.jsonl: row 1: not valid JSON"),
        ("f.csv", "question_id,label\n", r"f\.csv: no labels in the file"),
        ("g.csv", "qid,label\nq1,yes\nq1,no\n", r"g\.csv: row 3, field 'question_id': 'q1' is labelled twice"),
        # an unquoted comma in a label: "yes" was read and ", mostly" dropped without a word
        ("h.csv", "qid,label\nq1,yes\nq2,yes, mostly\n", r"h\.csv: row 3: 3 fields, the header has 2"),
        # past the csv module's field limit (131,072 characters by default, a setting of the whole process that
        # other readers raise): the row is named either way
        (
            "i.csv",
            "qid,label\nq1,yes\nq2," + "y" * 200_000 + "\n",
            r"i\.csv: row 3(: not valid CSV/TSV: field larger|, field 'label': 200,000 characters)",
        ),
        # a long cell under that limit: refused by the label reader's own bound (labels.MAX_CELL_CHARS = 1,000)
        (
            "i2.csv",
            "qid,label\nq1,yes\nq2," + "y" * 5_000 + "\n",
            r"i2\.csv: row 3, field 'label': 5,000 characters, more than 1,000",
        ),
        (
            "j.jsonl",
            '{"qid": true, "label": "yes"}\n',
            r"j\.jsonl: row 1, field 'question_id': expected a string or a number, got True",
        ),
        (
            "k.jsonl",
            '{"qid": ["q1"], "label": "yes"}\n',
            r"k\.jsonl: row 1, field 'question_id': expected a string or a number",
        ),
        (
            "l.jsonl",
            '{"qid": NaN, "label": "yes"}\n',
            r"l\.jsonl: row 1, field 'question_id': expected a string or a number, got nan",
        ),
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


def test_a_bom_and_crlf_line_ends_read_as_plain_csv(tmp_path: Path) -> None:
    # What Excel saves: a UTF-8 byte order mark and CRLF line ends.
    path = tmp_path / "excel.csv"
    path.write_bytes(b"\xef\xbb\xbfquestion_id,label\r\n2,yes\r\n4,No\r\n")
    assert read_labels(path) == {"2": True, "4": False}


def test_labels_that_miss_the_pool_show_an_id_of_each_side(tmp_path: Path) -> None:
    from vqaudit.shortanswer.judge_validation import validate_judge

    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"question_id": 2.0, "label": "yes"}\n', encoding="utf-8")
    with pytest.raises(VqauditError) as err:
        validate_judge({"2": True, "3": None}, read_labels(labels), {"2": "scalar", "3": "scalar"}, labels)
    assert str(err.value) == (
        f"{labels}: no labelled question is in the judged error pool (1 labels, e.g. question id '2.0'; 1 official "
        "errors with a decided verdict, e.g. '2'; labels of officially correct rows are not compared)"
    )
