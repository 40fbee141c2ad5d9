"""A prediction table read with the wrong separator is refused in one line saying so (before: the join said the
prediction column was missing, as every row read as one field)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vqaudit.errors import VqauditError
from vqaudit.shortanswer.importers import read_predictions


def test_a_tab_separated_file_named_csv(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text("question_id\tprediction\tanswer\n1\tfoo\tfoo\n", encoding="utf-8")
    with pytest.raises(VqauditError) as raised:
        read_predictions(path)
    assert str(raised.value) == (
        f"{path}: row 1 (header): one column 'question_id\\tprediction\\tanswer' holding "
        "tabs: the file is tab-separated but named .csv; give it the .tsv suffix"
    )


def test_a_comma_separated_file_named_tsv(tmp_path: Path) -> None:
    path = tmp_path / "p.tsv"
    path.write_text("question_id,prediction,answer\n1,foo,foo\n", encoding="utf-8")
    with pytest.raises(
        VqauditError,
        match=r"p\.tsv: row 1 \(header\): one column 'question_id,prediction,answer' "
        r"holding commas: the file is comma-separated but named \.tsv; give it "
        r"the \.csv suffix",
    ):
        read_predictions(path)


def test_the_right_names_read(tmp_path: Path) -> None:
    (tmp_path / "p.tsv").write_text("question_id\tprediction\tanswer\n1\tfoo\tfoo\n", encoding="utf-8")
    assert [p.prediction for p in read_predictions(tmp_path / "p.tsv")] == ["foo"]
