"""The prediction reader keeps one record at a time and gives the rows and errors of the whole-file reader.

``read_predictions`` turns each record into its prediction as it is read (``importers._read_rows``); the
reference it must equal is ``importers._read_all``, the reader that first holds every raw record (and decides
the file's id column from all of them, docs/shortanswer.md "Inputs": a row without an id in a file that has ids
is refused, naming the first of the id fields that any row has). The errors below are that rule applied by hand
to the few rows written here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vqaudit.errors import VqauditError
from vqaudit.shortanswer.importers import _read_all, read_predictions


def _lines(path: Path, *records: object) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_rows_equal_the_whole_file_reader_for_every_layout(tmp_path: Path) -> None:
    records = [
        {"question_id": 3, "question": "what?", "prediction": 1.25, "answers": ["x", "x", "y"]},
        {"question_id": "q4", "prediction": None, "gold": "z", "image": "a.jpg", "split": "val"},
        {"question_id": 5, "text": "t", "answers": ["x"]},
    ]
    jsonl = _lines(tmp_path / "p.jsonl", *records)
    listed = tmp_path / "p.json"
    listed.write_text(json.dumps(records), encoding="utf-8")
    table = tmp_path / "p.csv"
    table.write_text("id,prediction,label\n1,a,b\n2,,c\n", encoding="utf-8")
    for path in (jsonl, listed, table):
        assert read_predictions(path) == [p for p, _ in _read_all(path, "auto", None, None)], path
    got = read_predictions(jsonl)
    assert [(p.qid, p.prediction, p.gold) for p in got] == [
        ("3", "1.25", ("x", "x", "y")),
        ("q4", "", ("z",)),
        ("5", "t", ("x",)),
    ]
    assert got[0].gold[0] is got[0].gold[1]  # a row's repeated answer is held once


def test_a_numbered_row_is_refused_once_a_later_row_shows_the_file_has_ids(tmp_path: Path) -> None:
    # row 1 has no id; row 2 has 'id', row 3 'question_id', which comes first in the id fields: the whole-file
    # rule names question_id for row 1
    path = _lines(
        tmp_path / "p.jsonl", {"prediction": "a"}, {"id": 2, "prediction": "b"}, {"question_id": 3, "prediction": "c"}
    )
    with pytest.raises(
        VqauditError,
        match=r"p\.jsonl: row 1, field 'question_id': missing \(the other rows have "
        r"ids",
    ):
        read_predictions(path)


def test_a_later_row_error_does_not_hide_the_numbered_row_before_it(tmp_path: Path) -> None:
    # row 2 is refused (a boolean prediction) while row 1 waits numbered; row 3 has an id, so row 1 is the error
    path = _lines(tmp_path / "p.jsonl", {"prediction": "a"}, {"prediction": True}, {"qid": 3, "prediction": "c"})
    with pytest.raises(VqauditError, match=r"p\.jsonl: row 1, field 'qid': missing"):
        read_predictions(path)
    # no row has an id: numbering is right, and row 2's own error stands
    _lines(path, {"prediction": "a"}, {"prediction": True})
    with pytest.raises(
        VqauditError,
        match=r"p\.jsonl: row 2, field 'prediction': expected text, got the boolean "
        r"true",
    ):
        read_predictions(path)
