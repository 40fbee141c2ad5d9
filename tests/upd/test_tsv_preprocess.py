"""MMBench TSV loader errors and the preprocessing of seed 001, appendix 0.B.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from upd.helpers import png, row, write_tsv
from vqaudit.errors import VqauditError
from vqaudit.suites.upd.abilities import ABILITIES, ability_index
from vqaudit.suites.upd.build import BUNDLED_TSVS, bundled_path
from vqaudit.suites.upd.preprocess import CANT_JUDGE, preprocess
from vqaudit.suites.upd.tsv import load_tsv


def test_eighteen_abilities_in_table_a_order() -> None:
    # Seed 001, appendix 0.B, Table A: #1 OCR ... #18 Image Style.
    assert len(ABILITIES) == 18
    assert ability_index("ocr") == 1 and ability_index("image_style") == 18
    assert ability_index("structuralized_imagetext_understanding") == 13
    assert ability_index("image_quality") is None


def test_bundled_tsvs_load() -> None:
    # data/SOURCES.md: 20 MMBench sample rows and 300 easy-VQA test items.
    counts = {name: len(load_tsv(bundled_path(name))) for name in BUNDLED_TSVS}
    assert counts == {"mmbench_samples_en.tsv": 20, "easyvqa_test_mc.tsv": 300}


def test_image_cell_may_refer_to_another_rows_index(tmp_path: Path) -> None:
    # MMBench dev TSVs store a repeated image as the index of the row holding it.
    rows = [row(1, "Q1?", ["x", "y"], "A", "ocr"), {**row(2, "Q2?", ["x", "y"], "B", "ocr"), "image": "1"}]
    items = load_tsv(write_tsv(tmp_path / "t.tsv", rows))
    assert items[1].image == items[0].image == png(1)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"answer": "D"}, "row 2, field 'answer'"),
        ({"answer": "AB"}, "row 2, field 'answer'"),
        ({"image": ""}, "row 2, field 'image': missing image"),
        ({"image": "@@@"}, "row 2, field 'image': not valid base64"),
        ({"image": b"not an image"}, "row 2, field 'image'"),
        ({"question": " "}, "row 2, field 'question'"),
        ({"index": "x"}, "row 2, field 'index'"),
        ({"index": 1}, "row 2, field 'index': duplicate"),
        ({"B": "", "C": "z"}, "row 2, field 'B'"),
        ({"B": ""}, "row 2, field 'B'"),
        ({"category": ""}, "row 2, field 'category'"),
    ],
)
def test_malformed_rows_name_file_row_and_field(tmp_path: Path, bad: dict[str, object], message: str) -> None:
    rows = [row(1, "Q1?", ["x", "y", "z"], "A", "ocr"), {**row(2, "Q2?", ["x", "y", "z"], "B", "ocr"), **bad}]
    path = write_tsv(tmp_path / "bad.tsv", rows)
    with pytest.raises(VqauditError) as info:
        load_tsv(path)
    assert str(path) in str(info.value) and message in str(info.value)


def test_missing_column_is_named(tmp_path: Path) -> None:
    path = tmp_path / "t.tsv"
    path.write_text("index\tquestion\tA\tB\tanswer\timage\n", encoding="utf-8")
    with pytest.raises(VqauditError, match="field 'category': required column"):
        load_tsv(path)


def test_preprocessing_rules(tmp_path: Path) -> None:
    # Appendix 0.B.1: none-of-these options deleted, "Can't judge" clarified, Image Quality dropped.
    rows = [
        row(
            1,
            "Which is bigger?",
            ["left", "right", "Can't judge", "All above are not right"],
            "B",
            "attribute_comparison",
        ),
        row(2, "Which is brightest?", ["a", "b", "c", "d"], "A", "image_quality"),
        row(3, "What is it?", ["cat", "None of these options are correct."], "A", "ocr"),
        row(4, "What is it?", ["cat", "dog", "None of the above"], "C", "ocr"),
    ]
    pre = preprocess(load_tsv(write_tsv(tmp_path / "t.tsv", rows)))
    assert [i.index for i in pre.items] == [1]
    assert pre.items[0].options == ("left", "right", CANT_JUDGE) and pre.items[0].answer_text == "right"
    reasons = dict(pre.dropped)
    assert "not an MM-UPD ability" in reasons[2]
    assert "fewer than two options" in reasons[3]
    assert "'none of these'" in reasons[4]
