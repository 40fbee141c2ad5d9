"""MMBench circular copies (index + k * 10**6) are merged into their items (MMBench's CircularEval).

The inputs are the 20 real MMBench sample rows bundled with vqaudit plus circular copies made here the way the
published MMBench dev TSV stores them: copy k of an item with n options rotates its options left by k
(``options[k:] + options[:k]``), moves the answer letter with the correct option, and its ``image`` cell holds
the original's index. Expected counts are hand-derived: the 20 samples have 78 options, so 78 - 20 = 58 copy
rows; 18 of the 20 items have more than two options and survive AAD (seed 001, 0.B.2: an AAD item needs two
options left), the count the unmerged file got wrong (70 groups).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from upd.helpers import write_xlsx
from vqaudit.errors import VqauditError
from vqaudit.suites.upd.build import build_upd, bundled_path
from vqaudit.suites.upd.tsv import LETTERS, load_mc, load_tsv, rotation_shift

SAMPLES = bundled_path("mmbench_samples_en.tsv")


def _records() -> tuple[list[str], list[dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(SAMPLES.read_text(encoding="utf-8"), newline=""), delimiter="\t")
    return list(reader.fieldnames or []), list(reader)


def _with_copies(records: list[dict[str, str]]) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for rec in records:
        out.append(rec)
        options = [rec[c] for c in "ABCD" if rec.get(c)]
        answer = "ABCD".index(rec["answer"])
        n = len(options)
        for k in range(1, n):
            copy = dict(rec)
            shown = options[k:] + options[:k]
            for i, letter in enumerate("ABCD"):
                copy[letter] = shown[i] if i < n else ""
            copy["answer"] = LETTERS[(answer - k) % n]
            copy["index"] = str(int(rec["index"]) + k * 10**6)
            copy["image"] = rec["index"]
            out.append(copy)
    return out


def _write(path: Path, header: list[str], rows: list[dict[str, str]]) -> Path:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, delimiter="\t", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


def test_copies_merge_into_the_original_items(tmp_path: Path) -> None:
    header, records = _records()
    rows = _with_copies(records)
    assert len(rows) == 78  # 20 originals + 58 copies
    loaded = load_mc(_write(tmp_path / "circular.tsv", header, rows))
    assert (loaded.n_rows, loaded.merged_rows, len(loaded.items)) == (78, 58, 20)
    plain = load_tsv(SAMPLES)
    for got, want in zip(loaded.items, plain, strict=True):
        assert (got.index, got.options, got.answer, got.image) == (want.index, want.options, want.answer, want.image)
        assert len(got.copies) == len(want.options) - 1
        assert all(c % 10**6 == want.index for c in got.copies)


@pytest.mark.slow
def test_upd_build_on_the_circular_file_equals_the_build_on_the_originals(tmp_path: Path) -> None:
    header, records = _records()
    circular = _write(tmp_path / "circular.tsv", header, _with_copies(records))
    merged = build_upd(tmp_path / "a", tsv=circular, variant="aad", setting="base", seed=0)
    plain = build_upd(tmp_path / "b", tsv=SAMPLES, variant="aad", setting="base", seed=0)
    assert merged["counts"] == plain["counts"] == {"aad/base": 18}
    assert merged["n_rows_merged"] == 58 and plain["n_rows_merged"] == 0
    assert (tmp_path / "a" / "views.jsonl").read_bytes() == (tmp_path / "b" / "views.jsonl").read_bytes()


def test_rotation_shift_of_mmbench_copies() -> None:
    # The published dev file keeps a trailing "both A,B, and C" option in place (index 1209 and its copies).
    base = ("crash", "fly", "backwards", "both A,B, and C")
    assert rotation_shift(base, ("backwards", "crash", "fly", "both A,B, and C")) == 2
    assert rotation_shift(base, ("fly", "backwards", "both A,B, and C", "crash")) == 1
    assert rotation_shift(base, base) == 0
    assert rotation_shift(base, ("fly", "crash", "backwards", "both A,B, and C")) == 1  # two options rotated
    assert rotation_shift(base, ("crash", "backwards", "fly", "both A,B, and C")) is None  # no rotation
    assert rotation_shift(base, ("crash", "fly", "backwards")) is None


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"A": "something else"}, "options are not a rotation"),
        ({"answer": "A"}, "field 'answer'"),
        ({"question": "Another question?"}, "field 'question'"),
    ],
)
def test_a_bad_copy_names_both_rows(tmp_path: Path, edit: dict[str, str], message: str) -> None:
    header, records = _records()
    rows = _with_copies(records[:2])
    first_copy = next(i for i, r in enumerate(rows) if int(r["index"]) >= 10**6)
    rows[first_copy] = {**rows[first_copy], **edit}
    path = _write(tmp_path / "bad.tsv", header, rows)
    with pytest.raises(VqauditError) as info:
        load_mc(path)
    text = str(info.value)
    assert str(path) in text and f"rows 1 and {first_copy + 1}" in text and message in text


def test_a_copy_without_its_original_is_refused(tmp_path: Path) -> None:
    header, records = _records()
    rows = _with_copies(records[:1])[1:]
    path = _write(tmp_path / "orphan.tsv", header, rows)
    with pytest.raises(VqauditError, match=r"row 1, field 'index': circular copy 1000001 of item 1"):
        load_mc(path)


def test_xlsx_sheet_without_images_takes_them_by_index_from_a_second_file(tmp_path: Path) -> None:
    header, records = _records()
    rows = _with_copies(records)
    sheet_header = [h for h in header if h != "image"]
    sheet = write_xlsx(tmp_path / "sheet.xlsx", sheet_header, [[r[h] for h in sheet_header] for r in rows])
    loaded = load_mc(sheet, images=SAMPLES)
    assert (loaded.merged_rows, len(loaded.items)) == (58, 20)
    assert [i.image for i in loaded.items] == [i.image for i in load_tsv(SAMPLES)]
    with pytest.raises(VqauditError, match="field 'image': required column is missing"):
        load_mc(sheet)
    images = _write(tmp_path / "images.tsv", ["index", "image"], [{"index": "1", "image": records[0]["image"]}])
    with pytest.raises(VqauditError, match=r"row 5, field .image.: missing image for index 21 \(not in"):
        load_mc(sheet, images=images)


def test_the_published_llava_sheet_merges_into_1176_items() -> None:
    # tests/fixtures/upd/CREDITS.md: 4,377 rows, 1,176 MMBench dev questions; its 53 four-option items with a
    # fixed last option have 3 rows each.
    from vqaudit.suites.upd.table_files import read_records

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "upd" / "llava15_13b_mmbench_dev.xlsx"
    header, rows = read_records(fixture)
    assert len(rows) == 4377 and "image" not in header and "category" not in header
    counts: dict[int, int] = {}
    for r in rows:
        counts[int(r["index"]) % 10**6] = counts.get(int(r["index"]) % 10**6, 0) + 1
    assert len(counts) == 1176
    assert json.dumps(sorted(set(counts.values()))) == "[2, 3, 4]"
