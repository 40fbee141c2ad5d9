"""A small stdlib reader for the first worksheet of an .xlsx file (VLMEvalKit result sheets).

VLMEvalKit writes its per-item results (``<model>_<dataset>.xlsx``) with pandas/openpyxl (gzip-compressed
``.xlsx.gz`` copies are read too). Reading them needs no
third-party package: an .xlsx file is a zip of XML parts (ECMA-376 Part 1, §18.3 worksheets, §18.4 shared
strings). Only what result sheets use is supported: shared strings, inline strings, formula string results,
booleans and numbers. Numbers are rendered as pandas + ``str()`` renders them in VLMEvalKit: an integral value
as an integer ("3"), other values by Python's shortest ``repr`` of the float ("0.57").

:func:`read_xlsx_rows` gives every cell as text (a boolean as "True"/"False", a date as its serial number);
:func:`read_xlsx_cells` keeps what the cell is: a boolean as a Python bool and a number in a date or time format
(ECMA-376 §18.8.30 built-in formats 14-22, 27-36, 45-47, 50-58, or a custom format with d, m, y, h or s) as an
:class:`XlsxDate`, so that callers can refuse what no model writes.
"""

from __future__ import annotations

import gzip
import io
import posixpath
import re
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

from vqaudit.errors import VqauditError

_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL_NS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PKG_REL_NS = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_CELL_REF = re.compile(r"^([A-Z]+)(\d+)$")


@dataclass(frozen=True)
class XlsxDate:
    """A number cell shown as a date or time: ``serial`` is the stored number as text (days since 1899-12-30)."""

    serial: str

    def __str__(self) -> str:
        return self.serial


@dataclass(frozen=True)
class XlsxUnreadable:
    """A cell with no usable value: a formula saved without its result, or a spreadsheet error (``#DIV/0!``).

    ``reason`` completes "a cell that ..."; ``raw`` is what :func:`read_xlsx_rows` gives for it (the error's text,
    or None for a formula without a result, as before this type existed).
    """

    reason: str
    raw: str | None

    def __str__(self) -> str:
        return self.raw or ""


Cell = str | bool | XlsxDate | XlsxUnreadable | None
"""One cell of :func:`read_xlsx_cells`: text, a boolean, a date-formatted number, an unreadable cell, or None."""

_DATE_FORMATS = frozenset((*range(14, 23), *range(27, 37), *range(45, 48), *range(50, 59)))
_FORMAT_LITERALS = re.compile(r'"[^"]*"|\\.|\[[^\]]*\]')


def _date_styles(archive: zipfile.ZipFile) -> frozenset[int]:
    """The indices of the cell styles (``cellXfs``) that show a number as a date or time."""
    if "xl/styles.xml" not in archive.namelist():
        return frozenset()
    root = ElementTree.fromstring(archive.read("xl/styles.xml"))
    custom = set()
    for fmt in root.iter(f"{_NS}numFmt"):
        code = _FORMAT_LITERALS.sub("", fmt.get("formatCode", "")).lower()
        if any(c in code for c in "dmyhs") and "general" not in code:
            custom.add(int(fmt.get("numFmtId", "-1")))
    xfs = root.find(f"{_NS}cellXfs")
    if xfs is None:
        return frozenset()
    out = set()
    for i, xf in enumerate(xfs.iter(f"{_NS}xf")):
        fmt_id = int(xf.get("numFmtId", "0"))
        if fmt_id in _DATE_FORMATS or fmt_id in custom:
            out.add(i)
    return frozenset(out)


def _archive(path: Path) -> zipfile.ZipFile:
    """The workbook's zip; a gzip-compressed workbook (``.xlsx.gz``, gzip magic bytes) is decompressed first."""
    with path.open("rb") as handle:
        magic = handle.read(2)
    if magic == b"\x1f\x8b":
        try:
            return zipfile.ZipFile(io.BytesIO(gzip.decompress(path.read_bytes())))
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise VqauditError(f"{path}: not a readable gzip file ({exc})") from None
    return zipfile.ZipFile(path)


def sheet_names(path: Path) -> list[str]:
    """The names of the workbook's sheets, in order (only the first is read).

    Raises:
        VqauditError: the file is not a readable workbook.
    """
    try:
        with _archive(path) as archive:
            workbook = ElementTree.fromstring(archive.read("xl/workbook.xml"))
    except (zipfile.BadZipFile, KeyError, ElementTree.ParseError, OSError) as exc:
        raise VqauditError(f"{path}: not a readable .xlsx workbook: {exc}") from None
    return [s.get("name", "") for s in workbook.iter(f"{_NS}sheet")]


def _column_index(letters: str) -> int:
    index = 0
    for ch in letters:
        index = index * 26 + (ord(ch) - 64)
    return index - 1


def _text_of(element: ElementTree.Element) -> str:
    # Rich text (<r><t>..</t></r>) and plain <t> both: concatenate every <t> below the element.
    return "".join(t.text or "" for t in element.iter(f"{_NS}t"))


def _number_text(raw: str) -> str:
    try:
        value = float(raw)
    except ValueError:
        return raw
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


def _first_sheet_path(archive: zipfile.ZipFile) -> str:
    workbook = ElementTree.fromstring(archive.read("xl/workbook.xml"))
    sheet = workbook.find(f"{_NS}sheets/{_NS}sheet")
    if sheet is None:
        raise ValueError("the workbook lists no sheet")
    rel_id = sheet.get(f"{_REL_NS}id")
    rels = ElementTree.fromstring(archive.read("xl/_rels/workbook.xml.rels"))
    for rel in rels.iter(f"{_PKG_REL_NS}Relationship"):
        if rel.get("Id") == rel_id:
            target = rel.get("Target", "")
            return target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join("xl", target))
    raise ValueError(f"sheet relationship {rel_id!r} not found")


def read_xlsx_rows(path: Path) -> list[list[str | None]]:
    """Read the first worksheet of an .xlsx file as rows of cell texts.

    Args:
        path: the .xlsx file.

    Returns:
        One list per sheet row (the header included), each as long as the widest row; an empty cell is None,
        a boolean "True" / "False", a date its serial number.

    Raises:
        VqauditError: the file is missing, not a zip, or not a readable workbook (the message names the file).
    """
    return [[c if c is None or isinstance(c, str) else c.raw if isinstance(c, XlsxUnreadable) else str(c)
             for c in row] for row in read_xlsx_cells(path)]


def read_xlsx_cells(path: Path) -> list[list[Cell]]:
    """Read the first worksheet of an .xlsx file as rows of cells, booleans and dates kept as such.

    Args:
        path: the .xlsx file.

    Returns:
        One list per sheet row (the header included), each as long as the widest row: text (numbers as
        :func:`read_xlsx_rows` renders them), a bool, an :class:`XlsxDate`, an :class:`XlsxUnreadable` (an error
        cell, or a formula saved without its result), or None for an empty cell.

    Raises:
        VqauditError: the file is missing, not a zip, or not a readable workbook (the message names the file).
    """
    if not path.is_file():
        raise VqauditError(f"{path}: file not found")
    try:
        with _archive(path) as archive:
            shared: list[str] = []
            if "xl/sharedStrings.xml" in archive.namelist():
                root = ElementTree.fromstring(archive.read("xl/sharedStrings.xml"))
                shared = [_text_of(si) for si in root.iter(f"{_NS}si")]
            dates = _date_styles(archive)
            sheet = ElementTree.fromstring(archive.read(_first_sheet_path(archive)))
    except (zipfile.BadZipFile, KeyError, ValueError, ElementTree.ParseError) as exc:
        raise VqauditError(f"{path}: not a readable .xlsx workbook: {exc}") from None
    rows: list[list[Cell]] = []
    width = 0
    for row_el in sheet.iter(f"{_NS}row"):
        cells: dict[int, Cell] = {}
        for position, cell in enumerate(row_el.iter(f"{_NS}c")):
            match = _CELL_REF.match(cell.get("r", ""))
            col = _column_index(match.group(1)) if match else position
            kind = cell.get("t", "n")
            value_el = cell.find(f"{_NS}v")
            raw = value_el.text if value_el is not None and value_el.text is not None else None
            if kind == "e":
                cells[col] = XlsxUnreadable(f"holds the spreadsheet error {raw}", raw)
            elif raw is None and kind != "inlineStr" and cell.find(f"{_NS}f") is not None:
                cells[col] = XlsxUnreadable("is a formula saved without its result (written by a library that "
                                            "does not compute formulas, e.g. openpyxl); open and save the file in "
                                            "a spreadsheet program, or write values instead of formulas", None)
            elif kind == "s" and raw is not None:
                try:
                    cells[col] = shared[int(raw)]
                except (ValueError, IndexError):
                    raise VqauditError(f"{path}: cell {cell.get('r')}: bad shared-string index {raw!r}") from None
            elif kind == "inlineStr":
                is_el = cell.find(f"{_NS}is")
                cells[col] = _text_of(is_el) if is_el is not None else ""
            elif kind == "b" and raw is not None:
                cells[col] = raw == "1"
            elif kind == "str":
                cells[col] = raw
            elif raw is not None and kind in ("n", "d") and _style(cell) in dates:
                cells[col] = XlsxDate(_number_text(raw) if kind == "n" else raw)
            else:
                cells[col] = None if raw is None else _number_text(raw)
        row_width = max(cells) + 1 if cells else 0
        width = max(width, row_width)
        rows.append([cells.get(i) for i in range(row_width)])
    return [r + [None] * (width - len(r)) for r in rows]


def _style(cell: ElementTree.Element) -> int:
    try:
        return int(cell.get("s", "0"))
    except ValueError:
        return 0
