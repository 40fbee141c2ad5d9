"""The records of a prediction file: JSON, JSON Lines, CSV/TSV read strictly, and the first sheet of an xlsx.

Each reader yields ``(row, record)`` with the 1-based row number errors name (a CSV/TSV header is row 1). JSON
numbers with a fraction or exponent keep their written text (:class:`JsonNumber`). CSV and TSV are read with
the ``csv`` module in strict mode, and three quoting slips that would silently merge rows are refused (an
unterminated quote, a quote closing a field early, a quoted field whose inner lines look like rows of their
own: :func:`_check_spanning`). What a record's fields mean is :mod:`vqaudit.shortanswer.importers`' business;
the column names both read are here.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError

ID_KEYS = ("question_id", "questionId", "qid", "id", "index", "doc_id", "textvqa_question_id")
PRED_KEYS = ("prediction", "pred", "text", "output", "response", "model_answer")
GOLD_KEYS = ("gt_answers", "answers", "gold", "label", "target")
QUESTION_KEYS = ("question", "query")
IMAGE_KEYS = ("image", "image_path", "image_id", "imgname", "file_name")
_SHORT_ROW = "\x00vqaudit:short-row\x00"  # csv restval: marks the fields of a row shorter than the header


class JsonNumber(float):
    """A JSON number with a fraction or exponent, carrying its text as written (``1.50`` stays ``"1.50"``).

    It is a float everywhere else (``str()`` gives the float's repr, as before), so only the prediction rule
    (:func:`vqaudit.shortanswer.prediction_rows.prediction_text`) sees the written text.
    """

    text: str

    def __new__(cls, text: str) -> JsonNumber:
        """The float of ``text`` (a JSON number's text), carrying ``text``."""
        number = super().__new__(cls, text)
        number.text = text
        return number


def json_loads(text: str) -> Any:
    """``json.loads`` keeping each fractional number's text (:class:`JsonNumber`); integers stay ints."""
    return json.loads(text, parse_float=JsonNumber)


def file_suffix(path: Path) -> str:
    """The lower-cased format suffix of ``path``, under a ``.gz`` (``p.jsonl.gz`` -> ``.jsonl``; ``p.gz`` -> ``""``)."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        return suffixes[-2] if len(suffixes) >= 2 else ""
    return path.suffix.lower()


def open_text(path: Path) -> io.TextIOBase:
    """``path`` (gunzipped when it ends in ``.gz``) as UTF-8 text with an optional BOM, newlines kept for ``csv``."""
    if path.suffix.lower() == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline="")
    return io.TextIOWrapper(path.open("rb"), encoding="utf-8-sig", newline="")


def iter_json_records(path: Path) -> Iterator[tuple[int, Any]]:
    """``(row, record)`` of a JSON Lines file (row = line), a JSON list, or an object holding the records.

    The object is lmms-eval's ``{"logs": [...]}`` or records keyed by question id (the key becomes
    ``question_id`` where a record has no id field).

    Raises:
        VqauditError: invalid JSON (naming the row or line and column), or another top-level shape.
    """
    if file_suffix(path) == ".jsonl":
        with open_text(path) as handle:
            for row, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    yield row, json_loads(line)
                except json.JSONDecodeError as exc:
                    raise VqauditError(f"{path}: row {row}: not valid JSON: {exc.msg}") from None
        return
    try:
        with open_text(path) as handle:
            data = json_loads(handle.read())
    except json.JSONDecodeError as exc:
        raise VqauditError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}") from None
    if isinstance(data, dict) and isinstance(data.get("logs"), list):
        data = data["logs"]
    elif isinstance(data, dict) and data and all(isinstance(v, dict) for v in data.values()):
        data = [v if any(k in v for k in ID_KEYS) else {"question_id": key, **v} for key, v in data.items()]
    if not isinstance(data, list):
        raise VqauditError(
            f"{path}: expected a JSON list of records, an object of records keyed by question id, "
            "or lmms-eval {'logs': [...]}"
        )
    for i in range(len(data)):  # each record is let go once read, so a reader keeping less holds less
        record, data[i] = data[i], None
        yield i + 1, record


def iter_table(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(row, {column: cell})`` of an xlsx (first sheet), CSV or TSV file; row 1 is the header, empty cells None.

    Raises:
        VqauditError: an empty sheet, a first sheet without predictions in a workbook of several, a row wider or
            narrower than the header, or a quoting slip (module docstring), naming the file, row and field.
    """
    suffix = file_suffix(path)
    if suffix == ".xlsx":
        from vqaudit.xlsx import read_xlsx_cells, sheet_names  # zipfile and XML only for an xlsx

        rows = read_xlsx_cells(path)
        sheets = sheet_names(path)
        more = (
            f" (only the first of the workbook's {len(sheets)} sheets, {sheets[0]!r}, is read; the others are "
            f"{', '.join(repr(n) for n in sheets[1:])}: put the predictions in the first sheet)"
            if len(sheets) > 1
            else ""
        )
        if not rows:
            raise VqauditError(f"{path}: the sheet is empty{more}")
        header = [str(h) if h is not None else "" for h in rows[0]]
        if more and not any(k in header for k in PRED_KEYS):
            raise VqauditError(f"{path}: row 1, field 'prediction': missing (looked for {', '.join(PRED_KEYS)}){more}")
        for row, values in enumerate(rows[1:], start=2):
            yield row, dict(zip(header, values, strict=False))
        return
    delimiter, kind = ("\t", "TSV") if suffix in (".tsv", ".tab") else (",", "CSV")
    with open_text(path) as handle:
        reader = csv.DictReader(handle, delimiter=delimiter, restval=_SHORT_ROW, strict=True)
        row, start = 1, 2  # row 1 is the header; ``start`` is the physical line the next row starts on
        try:
            _check_separator(path, list(reader.fieldnames or ()), delimiter)
            for row, rec in enumerate(reader, start=2):
                header = list(reader.fieldnames or ())
                _check_width(path, row, rec, len(header))
                if reader.line_num > start:
                    _check_spanning(path, row, start, rec, header, delimiter)
                start = reader.line_num + 1
                yield row, {k: (None if v == "" else v) for k, v in rec.items()}
        except csv.Error as exc:
            raise _quote_error(path, row + 1, start, reader.fieldnames or (), delimiter, kind, exc) from None


def _check_separator(path: Path, header: list[str], delimiter: str) -> None:
    """Refuse a table whose header reads as one column holding the other separator (a TSV named .csv, or the reverse).

    Read with the wrong separator every row is one field, and the join would only say the prediction column is
    missing.
    """
    if len(header) != 1:
        return
    other, right, name = ("\t", ".tsv", "tab") if delimiter == "," else (",", ".csv", "comma")
    if other in header[0]:
        raise VqauditError(
            f"{path}: row 1 (header): one column {header[0][:40]!r} holding {name}s: the file is "
            f"{name}-separated but named {file_suffix(path)}; give it the {right} suffix"
        )


_QUOTING_HINT = (
    "write the file with a CSV writer (Python's csv module, pandas to_csv), which quotes such fields "
    "and doubles the quotes inside them, or as JSON Lines, which needs no quoting"
)


def _quote_error(
    path: Path, row: int, line: int, header: Any, delimiter: str, kind: str, exc: csv.Error
) -> VqauditError:
    """The one-line error for a CSV/TSV record the strict reader refuses (an unterminated or misplaced quote)."""
    field = _quoted_field(path, line, delimiter)
    name = f", field '{header[field]}'" if header and field is not None and field < len(header) else ""
    where = f"{path}: row {row} (line {line}){name}"
    if "unexpected end of data" in str(exc):
        return VqauditError(
            f"{where}: a quoted field starts here and is never closed (an unmatched '\"' swallows "
            f"the rest of the file); {_QUOTING_HINT}"
        )
    return VqauditError(
        f"{where}: not valid {kind}: {exc} (a '\"' ends a quoted field in the middle of it); {_QUOTING_HINT}"
    )


def _quoted_field(path: Path, line: int, delimiter: str) -> int | None:
    """The 0-based index of the field on physical line ``line`` whose quoting is broken, or None.

    Broken: a quote opened at the start of the field and never closed on the line, or closed and followed by
    something other than the delimiter or the line's end.
    """
    try:
        with open_text(path) as handle:
            text = next((t for n, t in enumerate(handle, start=1) if n == line), "")
    except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile, zlib.error):
        return None
    text = text.rstrip("\r\n")
    field, quoted, closed, at_start, i = 0, False, False, True, 0
    while i < len(text):
        ch = text[i]
        if quoted:
            if ch == '"' and text[i + 1 : i + 2] == '"':
                i += 1
            elif ch == '"':
                quoted, closed = False, True
        elif ch == delimiter:
            field, at_start, closed = field + 1, True, False
            i += 1
            continue
        elif closed:
            return field
        elif ch == '"' and at_start:
            quoted = True
        at_start = False
        i += 1
    return field if quoted else None


def _check_spanning(path: Path, row: int, line: int, rec: dict[Any, Any], header: Any, delimiter: str) -> None:
    """Refuse a quoted field running over lines that look like rows of their own (a stray quote's swallow).

    A field legitimately spanning lines (a multi-line prediction, written by a CSV writer) is kept. A stray
    ``"`` at the start of a field and another one at the end of a later row make one field of the rows
    between: the field's lines then have the header's number of fields, and (when the header has an id
    column) an id of the row's own kind in that column (digits when the row's id is digits). Such a line is
    refused, naming it.
    """
    width = len(header)
    id_col = next((header.index(k) for k in ID_KEYS if k in header), None)
    own_id = rec.get(header[id_col]) if id_col is not None else None
    for name, value in rec.items():
        if not isinstance(value, str) or "\n" not in value and "\r" not in value:
            continue
        for offset, inner in enumerate(value.splitlines()[1:], start=1):
            parts = inner.split(delimiter)
            if width < 2 or len(parts) != width:
                continue
            if id_col is not None:
                cell = parts[id_col].strip()
                if not cell or any(c.isspace() for c in cell):
                    continue
                if isinstance(own_id, str) and own_id.isdigit() and not cell.isdigit():
                    continue
            raise VqauditError(
                f"{path}: row {row} (line {line}), field '{name}': this quoted field runs over "
                f"line {line + offset}, which looks like a row of its own ({width} fields); an "
                f"unmatched '\"' at the start of the field joins the rows between into one; "
                f"{_QUOTING_HINT}"
            )


def _check_width(path: Path, row: int, rec: dict[Any, Any], header: int) -> None:
    """Refuse a CSV/TSV row with more or fewer fields than the header (a quoting slip shifts every column)."""
    if None in rec:
        raise VqauditError(f"{path}: row {row}: {header + len(rec[None])} fields where the header has {header}")
    short = next((k for k, v in rec.items() if v == _SHORT_ROW), None)
    if short is not None:
        raise VqauditError(f"{path}: row {row}, field '{short}': missing (the row has fewer fields than the header)")
