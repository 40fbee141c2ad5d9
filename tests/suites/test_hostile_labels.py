"""Imported chart labels must be drawn as what they say.

A category or series name holding an invisible or direction-changing character (zero-width space, right-to-left
override) or a character the chart font has no glyph for (an emoji DejaVu Sans lacks, such as U+1F680) skips the
table, counted and named, never certified answerable; build failures name the file, row and field of the first plot
skipped for each reason; a ChartQA table cut off inside a quoted cell is refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.suites.test_imported_charts import _plot

from vqaudit.errors import VqauditError
from vqaudit.suites.charts.chartqa import chartqa_table, read_chartqa
from vqaudit.suites.charts.imported import (
    HIDDEN_LABEL,
    UNDRAWABLE_LABEL,
    build_imported_charts,
    label_problem,
)
from vqaudit.suites.charts.plotqa import read_plotqa
from vqaudit.textsafe import hidden_characters

TABLE = "Country,Share\nAlbania,12.5\n{name},7.5\nChad,4.0\nDenmark,9.0\n"


@pytest.mark.parametrize(
    ("name", "listed"),
    [
        ("Bra\u200bzil", "U+200B ZERO WIDTH SPACE"),
        ("\u202eBrazil", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("Bra\u2066zil\u2069", "U+2066 LEFT-TO-RIGHT ISOLATE, U+2069 POP DIRECTIONAL ISOLATE"),
        ("Brazil\u200d", "U+200D ZERO WIDTH JOINER"),
        ("Bra\u00adzil", "U+00AD SOFT HYPHEN"),
        ("\u3164", "U+3164 HANGUL FILLER"),
        ("Bra\x07zil", "U+0007 CONTROL CHARACTER"),
        ("Bra\x1bzil", "U+001B CONTROL CHARACTER"),
    ],
)
def test_hidden_characters_are_named(name: str, listed: str) -> None:
    assert ", ".join(hidden_characters(name)) == listed
    assert label_problem(name) == f"holds an invisible or direction-changing character ({listed})"


def test_plain_and_accented_labels_pass_and_emoji_are_undrawable() -> None:
    for name in ("Brazil", "Côte d'Ivoire", "São Tomé", "Ελλάδα", "Россия", "2004", "A & B (%)"):
        assert hidden_characters(name) == [] and label_problem(name) is None, name
    assert hidden_characters("   ") == ["blank"]
    # Emoji are decided by the chart font (DejaVu Sans, checked with matplotlib's FT2Font.get_char_index): it
    # draws U+1F600 and U+2764 in outline, so they are visible labels; it has no glyph for U+1F680 or U+4E2D,
    # which would be drawn as empty boxes.
    assert label_problem("Brazil \U0001f600\u2764") is None
    assert label_problem("Brazil \U0001f680") == "holds a character the chart font cannot draw (U+1F680 ROCKET)"
    assert label_problem("\u4e2d") == (
        "holds a character the chart font cannot draw (U+4E2D CJK UNIFIED IDEOGRAPH-4E2D)"
    )


@pytest.mark.parametrize(
    ("name", "reason"),
    [("Bra\u200bzil", HIDDEN_LABEL), ("\u202eBrazil", HIDDEN_LABEL), ("Brazil \U0001f680", UNDRAWABLE_LABEL)],
)
def test_a_chartqa_table_with_such_a_category_is_skipped(tmp_path: Path, name: str, reason: str) -> None:
    (tmp_path / "t.csv").write_text(TABLE.format(name=name), encoding="utf-8")
    assert not isinstance(chartqa_table(_good(tmp_path)), str)  # the same table with a plain name is usable
    assert chartqa_table(tmp_path / "t.csv") == reason
    result = read_chartqa(tmp_path)
    assert result.skipped == {reason: 1} and result.first == {reason: "t.csv"}
    with pytest.raises(
        VqauditError,
        match=f"no chartqa plot gave a group \\(skipped, by reason: "
        f"{reason.replace('(', '.').replace(')', '.').replace('?', '.')}: 1 "
        f"\\(first: t.csv\\)\\)",
    ):
        build_imported_charts(tmp_path / "bench", "chartqa", result, [tmp_path], seed=0, max_groups=5)
    assert not (tmp_path / "bench").exists()


def _good(tmp_path: Path) -> Path:
    (tmp_path / "good").mkdir(exist_ok=True)
    path = tmp_path / "good" / "g.csv"
    path.write_text(TABLE.format(name="Brazil"), encoding="utf-8")
    return path


def test_a_series_name_with_an_override_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "s.csv").write_text("Country,\u202eShare\nAlbania,12.5\nBrazil,7.5\nChad,4.0\nDenmark,9.0\n")
    assert chartqa_table(tmp_path / "s.csv") == HIDDEN_LABEL


def test_plotqa_skips_name_file_row_and_field(tmp_path: Path) -> None:
    ticks = ["0", "2", "4", "6", "8", "10"]
    plots = [
        _plot(
            0,
            "vbar_categorical",
            [{"name": "F", "label": "F", "x": ["A", "B", "C", "D"], "y": [2.5, "1", 4.0, "n/a"]}],
            ticks,
            "t",
        ),
        _plot(
            1,
            "vbar_categorical",
            [{"name": "F", "label": "F", "x": ["A", "B\u200b", "C", "D"], "y": [2.5, 1, 4.0, 3]}],
            ticks,
            "t",
        ),
    ]
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(plots))
    result = read_plotqa(path)
    assert result.skipped == {"a value is not a number": 1, HIDDEN_LABEL: 1}
    assert result.first == {
        "a value is not a number": "annotations.json row 1, field 'models[0].y[3]': 'n/a'",
        HIDDEN_LABEL: "annotations.json row 2, 'B\\u200b' holds an invisible or direction-changing character "
        "(U+200B ZERO WIDTH SPACE)",
    }
    with pytest.raises(VqauditError) as raised:
        build_imported_charts(tmp_path / "bench", "plotqa", result, [path], seed=0, max_groups=5)
    assert str(raised.value) == (
        f"{path}: no plotqa plot gave a group (skipped, by reason: a category or series name holds an invisible or "
        "direction-changing character: 1 (first: annotations.json row 2, 'B\\u200b' holds an invisible or "
        "direction-changing character (U+200B ZERO WIDTH SPACE)); a value is not a number: 1 (first: "
        "annotations.json row 1, field 'models[0].y[3]': 'n/a'))"
    )


def test_a_chartqa_table_cut_off_inside_a_quoted_cell_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cut.csv"
    path.write_text('Country,Share\nAlbania,12.5\nBrazil,7.5\n"Chad,4.0\nDenmark,9.0\n')
    with pytest.raises(
        VqauditError,
        match=r"cut\.csv: row 3 \(line 5\): not a valid CSV table: unexpected end of "
        r"data",
    ):
        chartqa_table(path)
