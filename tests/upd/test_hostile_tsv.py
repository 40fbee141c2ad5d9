"""MMBench-layout and VLMEvalKit tables that are cut, mis-named or hostile are refused in one line naming the file,
row and field: a file cut off inside a quoted cell (before, the fragment was imported as a cell), a folder given
as the table, a tab-separated file named .csv, a short row, an image cell naming a missing index, and an option
holding an invisible or direction-changing character."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.upd.helpers import row, write_tsv

from vqaudit.errors import VqauditError
from vqaudit.harness import vlmevalkit
from vqaudit.store import Benchmark
from vqaudit.suites.upd.tsv import load_mc

ROWS = [
    row(1, "Which colour?", ["red", "blue"], "A", "colour"),
    row(2, 'Which "shape"?', ["round", "square"], "B", "shape"),
]


def test_the_intact_file_loads(tmp_path: Path) -> None:
    assert [i.options for i in load_mc(write_tsv(tmp_path / "ok.tsv", ROWS)).items] == [
        ("red", "blue"),
        ("round", "square"),
    ]


def test_a_file_cut_inside_a_quoted_cell_is_refused(tmp_path: Path) -> None:
    path = write_tsv(tmp_path / "cut.tsv", ROWS)
    text = path.read_text()
    path.write_text(text[: text.index('"Which ""shape') + 4])  # ends inside row 2's quoted question (line 3)
    with pytest.raises(
        VqauditError,
        match=r"cut\.tsv: row 2 \(line 3\): a quoted cell starts here and is never "
        r"closed \(the file is cut off, or a '\"' is unmatched\)",
    ):
        load_mc(path)


def test_a_folder_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(VqauditError, match=r"^\S+: a folder, not a file: give the TSV, CSV or \.xlsx file itself$"):
        load_mc(tmp_path)


def test_a_tab_separated_file_named_csv(tmp_path: Path) -> None:
    path = write_tsv(tmp_path / "items.tsv", ROWS).rename(tmp_path / "items.csv")
    with pytest.raises(
        VqauditError,
        match=r"items\.csv: row 0 \(header\): one column 'index\\tquestion\\thint\\tA\\tB"
        r"\\tC\\tD\\tanswer\\tcateg' holding tabs: the file is tab-separated but "
        r"named \.csv \(read as ','-separated\); give it the \.tsv suffix",
    ):
        load_mc(path)


def test_a_short_row_names_its_first_missing_column(tmp_path: Path) -> None:
    path = write_tsv(tmp_path / "short.tsv", ROWS)
    lines = path.read_text().splitlines()
    lines[1] = "\t".join(lines[1].split("\t")[:8])  # row 1 keeps index .. answer: category, image, l2 are gone
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(
        VqauditError,
        match=r"short\.tsv: row 1, field 'category': the row has 8 cells where the "
        r"header has 11",
    ):
        load_mc(path)


def test_an_image_cell_naming_a_missing_index(tmp_path: Path) -> None:
    path = write_tsv(tmp_path / "ref.tsv", [ROWS[0], {**ROWS[1], "image": "7"}])
    with pytest.raises(
        VqauditError,
        match=r"ref\.tsv: row 2, field 'image': names index 7 \(the row whose image it "
        r"shares\), but no row of the file has index 7",
    ):
        load_mc(path)


@pytest.mark.parametrize(
    ("option", "listed"),
    [
        ("re\u202ed", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("red\u200b", "U+200B ZERO WIDTH SPACE"),
        ("\u2066red\u2069", "U+2066 LEFT-TO-RIGHT ISOLATE, U+2069 POP DIRECTIONAL ISOLATE"),
    ],
)
def test_an_option_with_a_hidden_character_is_refused(tmp_path: Path, option: str, listed: str) -> None:
    path = write_tsv(tmp_path / "opt.tsv", [row(1, "Which colour?", [option, "blue"], "A", "colour")])
    with pytest.raises(VqauditError) as raised:
        load_mc(path)
    assert str(raised.value) == (
        f"{path}: row 1, field 'A': option A {option!r} holds an invisible or "
        f"direction-changing character ({listed}); remove it from the input"
    )


def test_an_emoji_option_is_visible_text_and_accepted(tmp_path: Path) -> None:
    path = write_tsv(tmp_path / "emoji.tsv", [row(1, "Which one?", ["\U0001f680 rocket", "\u2764 heart"], "A", "x")])
    assert load_mc(path).items[0].options == ("\U0001f680 rocket", "\u2764 heart")


def test_a_vlmevalkit_sheet_cut_inside_a_cell_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "model_vqaudit_upd.tsv"
    path.write_text('"index"\t"prediction"\n"1"\t"A"\n"2"\t"The answer is B, because')  # cut mid-reply
    bench = Benchmark(root=tmp_path, views=(), groups=(), manifest={})
    with pytest.raises(
        VqauditError,
        match=r"model_vqaudit_upd\.tsv: row 3 \(line 3\): a quoted cell starts here and "
        r"is never closed \(the file is cut off, or a '\"' is unmatched\); "
        r"nothing was imported",
    ):
        vlmevalkit.read(path, bench)


def test_a_release_option_with_a_hidden_character_is_refused(tmp_path: Path) -> None:
    from tests.upd.test_release import release_rows
    from tests.upd.test_release import write_tsv as write_release

    from vqaudit.suites.upd.release import read_release

    rows = [{**r, "A": r["A"] + "\u200b"} if i == 2 else r for i, r in enumerate(release_rows())]
    path = write_release(tmp_path / "mmaad_base.tsv", rows)
    with pytest.raises(
        VqauditError,
        match=r"mmaad_base\.tsv: row 3, field 'A': option A '.*\\u200b' holds an "
        r"invisible or direction-changing character \(U\+200B ZERO WIDTH SPACE\)",
    ):
        read_release(path)
