"""Input rules found by the second new-user trial (fixin): quoting, ChartQA splits and ids, row-number joins,
gold files that cannot be read, and the messages that must say what the input looked like.

Every expected value says where it comes from: the documented rule (docs/shortanswer.md "Inputs"), a hand
computation on the few rows written here, or the layout of the official files.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from vqaudit.errors import VqauditError
from vqaudit.shortanswer.importers import read_predictions

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "shortanswer"


def _lines(path: Path, *records: object) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _naive(rows: list[list[str]], delimiter: str) -> str:
    """A table written with a plain ``delimiter.join`` (no CSV quoting), as the trial's user wrote it."""
    return "".join(delimiter.join(r) + "\n" for r in rows)


# 1. An unmatched quote must not swallow rows ----------------------------------------------------------------------

ROWS = [["index", "split", "answer", "prediction"]] + [[str(i), "test_human", "5", "5"] for i in range(1, 21)]


@pytest.mark.parametrize(("name", "delimiter"), [("p.tsv", "\t"), ("p.csv", ",")])
def test_an_unterminated_quote_is_refused_at_the_row_it_opens(tmp_path: Path, name: str, delimiter: str) -> None:
    # Data row 6 (file row 7: the header is row 1, the documented table numbering) starts its prediction with
    # a '"' that nothing closes. Before the fix the other 14 rows became part of row 6's prediction (6 rows
    # audited, exit 0).
    rows = [list(r) for r in ROWS]
    rows[6][3] = '"Yes, it is'
    path = tmp_path / name
    path.write_text(_naive(rows, delimiter), encoding="utf-8")
    with pytest.raises(VqauditError, match=rf"p\.{name[2:]}: row 7 \(line 7\), field 'prediction': a quoted field "
                       "starts here and is never closed"):
        read_predictions(path)


def test_a_stray_quote_closed_rows_later_is_refused(tmp_path: Path) -> None:
    # Row 2 opens a quote, row 4 ends its prediction with one: the csv module makes rows 2-4 one field (the
    # width is right, so the width check passes). Line 3 inside the field is a whole row of its own.
    path = tmp_path / "p.tsv"
    path.write_text('index\tsplit\tanswer\tprediction\n1\ttest_human\t14\t"14\n2\ttest_human\t0.57\t0.57\n'
                    '3\ttest_human\t3\t3"\n', encoding="utf-8")
    with pytest.raises(VqauditError, match=r"p\.tsv: row 2 \(line 2\), field 'prediction': this quoted field runs "
                       r"over line 3, which looks like a row of its own \(4 fields\)"):
        read_predictions(path)


def test_a_quote_in_the_middle_of_a_quoted_field_is_refused(tmp_path: Path) -> None:
    # '"Yes" he said' is not CSV (a quoted field must end at the delimiter); the lenient reader made it
    # 'Yes he said' silently.
    path = tmp_path / "p.csv"
    path.write_text('index,prediction\n1,"Yes" he said\n', encoding="utf-8")
    with pytest.raises(VqauditError, match=r"p\.csv: row 2 \(line 2\), field 'prediction': not valid CSV"):
        read_predictions(path)


def test_quoted_fields_written_by_a_csv_writer_still_read(tmp_path: Path) -> None:
    # Python's csv.writer output: a prediction spanning two lines, one with commas, one with doubled quotes,
    # CRLF line ends. Values by hand: what was written.
    import csv

    path = tmp_path / "p.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["index", "answer", "prediction"])
        w.writerow(["1", "3", "3\nreally, three"])
        w.writerow(["2", "No", 'He said "no", twice,\nthen, "no", again, ok'])
        w.writerow(["3", "5", "5"])
    got = [(p.qid, p.prediction) for p in read_predictions(path)]
    assert got == [("1", "3\nreally, three"), ("2", 'He said "no", twice,\nthen, "no", again, ok'), ("3", "5")]


# 8, 12. Gold files that cannot be read; paths that are not files; bytes that are not UTF-8 ------------------------


def test_a_truncated_or_fake_gzip_gold_file_is_one_line_naming_it(tmp_path: Path) -> None:
    from vqaudit.shortanswer.loaders import load_gold

    full = gzip.compress(json.dumps({"data": [{"question_id": 1, "question": "q", "answers": ["a"] * 10,
                                               "image_id": "i"}] * 1}).encode())
    truncated = tmp_path / "gold.json.gz"
    truncated.write_bytes(full[: len(full) // 2])  # before: EOFError traceback, exit 1
    with pytest.raises(VqauditError, match=r"gold\.json\.gz: not a readable gzip file \(it ends before the end of "
                       r"the compressed data: the file is truncated\)"):
        load_gold(truncated, "textvqa")
    fake = tmp_path / "fake.json.gz"
    fake.write_text("no gzip here")  # before: "BadGzipFile: Not a gzipped file (b'no')", no file name
    with pytest.raises(VqauditError, match=r"fake\.json\.gz: not a readable gzip file \(it is not gzip data"):
        load_gold(fake, "textvqa")


def test_a_folder_or_a_pipe_is_named_for_what_it_is(tmp_path: Path) -> None:
    from vqaudit.shortanswer.loaders import load_gold

    folder = tmp_path / "preds.jsonl"
    folder.mkdir()
    with pytest.raises(VqauditError, match=r"preds\.jsonl: is a folder, not a prediction file"):
        read_predictions(folder)
    with pytest.raises(VqauditError, match=r"preds\.jsonl: is a folder, not a gold file"):
        load_gold(folder, "textvqa")
    import os

    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(VqauditError, match=r"pipe\.jsonl: not a regular file \(a pipe or device"):
        read_predictions(fifo)


def test_bytes_that_are_not_utf8_name_the_row(tmp_path: Path) -> None:
    # Latin-1 'é' (0xe9) on the third line; before: "not UTF-8 text (byte 37: ...)", no row.
    path = tmp_path / "p.jsonl"
    path.write_bytes(b'{"question_id": 1, "prediction": "a"}\n{"question_id": 2, "prediction": "b"}\n'
                     b'{"question_id": 3, "prediction": "caf\xe9"}\n')
    with pytest.raises(VqauditError, match=r"p\.jsonl: row 3: not UTF-8 text \(invalid continuation byte\)"):
        read_predictions(path)


# 2. The ChartQA split of a gold file is read from its name, never guessed -----------------------------------------

CHART_ROWS = [{"imgname": "a.png", "query": "q1?", "label": "3"}, {"imgname": "b.png", "query": "q2?", "label": "5"}]


def test_a_chartqa_gold_name_that_tells_no_split_is_refused(tmp_path: Path) -> None:
    from vqaudit.shortanswer.loaders import load_chartqa, load_gold

    # Before the fix any name without "human" was labelled test_augmented: a renamed human slice joined the
    # augmented predictions (60 joined, exit 0).
    for name, said in (("my_chartqa_gold.json", "neither"), ("human_vs_augmented.json", "both")):
        path = tmp_path / name
        path.write_text(json.dumps(CHART_ROWS), encoding="utf-8")
        with pytest.raises(VqauditError, match=rf"{name}: a ChartQA gold file's split is read from its name, and "
                           rf"this name says {said} of 'human' and 'augmented'.*--benchmark chartqa-human"):
            load_gold(path, "chartqa")
    # the explicit split (--benchmark chartqa-human / chartqa-machine) needs no name
    neutral = tmp_path / "my_chartqa_gold.json"
    assert [g.qid for g in load_gold(neutral, "chartqa-human")] == ["test_human:1", "test_human:2"]
    assert [g.qid for g in load_gold(neutral, "chartqa-machine")] == ["test_augmented:1", "test_augmented:2"]
    # ChartQA's own names, and the paper's "machine"
    for name, split in (("test_human.json", "test_human"), ("test_augmented.json", "test_augmented"),
                        ("chartqa_machine.json", "test_augmented")):
        path = tmp_path / name
        path.write_text(json.dumps(CHART_ROWS), encoding="utf-8")
        assert load_chartqa(path)[0].qid == f"{split}:1"
    # a name saying the other split than the one asked for is refused
    with pytest.raises(VqauditError, match=r"test_human\.json: the file's name says it is ChartQA's test_human "
                       "split, but chartqa-machine audits test_augmented"):
        load_gold(tmp_path / "test_human.json", "chartqa-machine")
