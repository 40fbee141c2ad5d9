"""Reading a table file of the MMBench layout: TSV, CSV (either optionally gzipped) or a VLMEvalKit .xlsx.

:func:`read_records` gives the header and the rows, every cell as text; :func:`cell_text` is the missing-cell rule
shared by the MMBench loader (:mod:`vqaudit.suites.upd.tsv`) and the release reader
(:mod:`vqaudit.suites.upd.release`): a cell is missing only when it is empty (or blank) or, in parquet, null.
Texts such as ``None``, ``nan``, ``NaN`` or ``NA`` are kept as written: pandas' ``read_csv`` (which VLMEvalKit's
``load`` calls with its defaults) would read them as NaN, but pandas and VLMEvalKit's ``dump`` write a missing
value as an empty cell, so a non-empty cell is data (an option "None" of a counting question). ``docs/upd.md``
states the rule.

Every problem raises a :class:`VqauditError` naming the file, the 1-based data row (the header is row 0) and the
field (:func:`row_error`).
"""

from __future__ import annotations

import csv
import gzip
import io
import sys
from pathlib import Path

from vqaudit.errors import VqauditError


def row_error(path: Path, row: int, field_name: str, msg: str) -> VqauditError:
    """The one error line of a bad cell: ``PATH: row ROW, field 'FIELD': MSG`` (row 0 is the header)."""
    return VqauditError(f"{path}: row {row}, field '{field_name}': {msg}")


def cell_text(value: object) -> str:
    """A cell's text, stripped; '' when the cell is missing.

    Missing means: ``None`` or a float NaN (a null in parquet / pandas) or a cell that is empty or blank. Any other
    text is kept as it is, ``"None"``, ``"nan"``, ``"NaN"`` and ``"NA"`` included (module docstring: pandas writes
    a missing value as an empty cell, so such a text is the data's own, e.g. a counting question's option "None").
    """
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return str(value).strip()


def read_records(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The header and the data rows of a TSV, CSV (either optionally ``.gz``) or .xlsx file, cells as text.

    Args:
        path: the file; TSV/CSV are UTF-8 with a header row (quoted cells may span lines); an .xlsx is read
            from its first worksheet (:func:`vqaudit.xlsx.read_xlsx_rows`). Empty cells are ''.

    Returns:
        ``(header, rows)``; row ``r`` of the file (1-based, header = row 0) is ``rows[r - 1]``.

    Raises:
        VqauditError: a missing or unreadable file, not UTF-8, or a row wider than the header (naming the row).
    """
    if path.is_dir():
        raise VqauditError(f"{path}: a folder, not a file: give the TSV, CSV or .xlsx file itself")
    if not path.is_file():
        raise VqauditError(f"{path}: file not found")
    suffixes = [x.lower() for x in path.suffixes]
    kind = suffixes[-2] if len(suffixes) >= 2 and suffixes[-1] == ".gz" else path.suffix.lower()
    if kind == ".xlsx":
        from vqaudit.xlsx import read_xlsx_rows

        table = read_xlsx_rows(path)
        if not table:
            raise VqauditError(f"{path}: row 0 (header): the sheet is empty")
        header = [h or "" for h in table[0]]
        return header, [{h: (v or "") for h, v in zip(header, values, strict=False) if h} for values in table[1:]]
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    delimiter = "," if kind == ".csv" else "\t"
    try:
        raw = gzip.decompress(path.read_bytes()) if path.suffix.lower() == ".gz" else path.read_bytes()
        text = raw.decode("utf-8-sig")
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise VqauditError(f"{path}: not a readable file: {exc}") from None
    except UnicodeDecodeError as exc:
        raise VqauditError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    # strict: a quote left open at the end of the file (a table cut off mid-cell) is an error, never a row holding
    # the fragment (Python's csv module reads it as a complete field unless strict)
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    rows: list[dict[str, str]] = []
    start = 1
    try:
        header = list(reader.fieldnames or [])
        _check_delimiter(path, kind, header)
        start = reader.line_num + 1
        for row, rec in enumerate(reader, start=1):
            if None in rec:
                raise row_error(path, row, header[-1] if header else "index", "the row has more cells than the header")
            short = [k for k, v in rec.items() if v is None]
            if short:  # DictReader fills the cells a short row lacks with None (its restval)
                raise row_error(
                    path,
                    row,
                    short[0],
                    f"the row has {len(header) - len(short)} cells where the header has "
                    f"{len(header)} (the row ends before this column: a cut or "
                    "mis-separated line?)",
                )
            rows.append({k: (v or "") for k, v in rec.items() if k is not None})
            start = reader.line_num + 1
    except csv.Error as exc:
        where = f"{path}: row {len(rows) + 1} (line {start})" if reader.line_num > 1 or rows else f"{path}: row 0"
        if "unexpected end of data" in str(exc):
            raise VqauditError(
                f"{where}: a quoted cell starts here and is never closed (the file is cut off, or a '\"' is unmatched)"
            ) from None
        raise VqauditError(f"{where}: not a valid table row: {exc}") from None
    return header, rows


def _check_delimiter(path: Path, kind: str, header: list[str]) -> None:
    """Refuse a table whose header is one column holding the other separator (a TSV named .csv, or the reverse).

    Such a file reads as one field per row, and every later check would name a missing column instead.
    """
    if len(header) != 1:
        return
    used, other, right = (",", "\t", ".tsv") if kind == ".csv" else ("\t", ",", ".csv")
    if other in header[0]:
        names = "tab" if other == "\t" else "comma"
        raise VqauditError(
            f"{path}: row 0 (header): one column {header[0][:40]!r} holding {names}s: the file is "
            f"{names}-separated but named {kind} (read as {used!r}-separated); give it the {right} "
            "suffix"
        )
