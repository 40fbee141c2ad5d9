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
