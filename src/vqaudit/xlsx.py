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

A workbook is a zip, so a small file can inflate to gigabytes (a "zip bomb"). The reader never trusts the sizes a
zip declares: every part is decompressed in 1 MiB chunks into a streaming XML parser (expat), counting what
actually came out, and a workbook is refused (one line naming the file, the part and the limit) as soon as one
part inflates past :data:`MAX_PART_BYTES`, one cell's text passes :data:`MAX_CELL_CHARS`, the sheet's rows times
its widest row pass :data:`MAX_CELLS`, or the shared-string table passes :data:`MAX_SHARED_STRINGS` entries. A 1.6
MB workbook whose one cell inflates to 1.5 GB is refused after a few MiB were inflated. Entity expansion
("billion laughs") is refused by expat itself (expat 2.4 and later, bundled with every supported Python, stop an
amplification attack).
"""

from __future__ import annotations

import gzip
import io
import posixpath
import re
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree
from xml.parsers import expat

from vqaudit.errors import VqauditError

_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL_NS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PKG_REL_NS = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_CELL_REF = re.compile(r"^([A-Z]+)(\d+)$")

MAX_PART_BYTES = 256 * 2**20
"""The most bytes one part of a workbook (a sheet, the shared strings, the styles) may inflate to: 256 MiB, ten
times the sheet of a 100,000-row VLMEvalKit result with 1 KB replies."""
MAX_CELL_CHARS = 2**22
"""The most characters one cell (or one shared string) may hold: 4 Mi, 128 times Excel's own limit of 32,767
characters per cell (Microsoft, "Excel specifications and limits"), which writers such as openpyxl do not enforce."""
MAX_CELLS = 5_000_000
"""The most cells a sheet may hold, counted as its rows times its widest row (the table this reader returns):
a 300,000-row result of 16 columns."""
MAX_SHARED_STRINGS = 5_000_000
"""The most entries of the shared-string table (at most one per cell)."""
MAX_WORKBOOK_BYTES = 512 * 2**20
"""The most bytes a gzip-compressed workbook (``.xlsx.gz``) may inflate to before its zip is opened."""
_CHUNK = 2**20


class _TooLarge(Exception):
    """A limit of this reader was passed; the message completes "``FILE``: ..."."""


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


def _stream_part(archive: zipfile.ZipFile, name: str, parser: expat.XMLParserType) -> None:
    """Inflate the part ``name`` in 1 MiB chunks into ``parser``, refusing it past :data:`MAX_PART_BYTES`.

    Raises:
        KeyError: no such part. _TooLarge: the part inflates (or declares) more than the limit.
        expat.ExpatError: the part is not well-formed XML.
    """
    info = archive.getinfo(name)
    limit = f"{name} inflates to more than {MAX_PART_BYTES // 2**20} MiB (the reader's limit per part"
    if info.file_size > MAX_PART_BYTES:
        raise _TooLarge(f"{limit}; it declares {info.file_size} bytes)")
    total = 0
    with archive.open(info) as handle:
        while chunk := handle.read(_CHUNK):
            total += len(chunk)
            if total > MAX_PART_BYTES:  # the declared size can lie: count what actually came out
                raise _TooLarge(f"{limit}; a zip bomb?)")
            parser.Parse(chunk, False)
    parser.Parse(b"", True)


def _read_part(archive: zipfile.ZipFile, name: str) -> ElementTree.Element:
    """A small part (workbook, relationships, styles) as an element tree, inflated under :data:`MAX_PART_BYTES`."""
    builder = ElementTree.XMLParser()
    info = archive.getinfo(name)
    if info.file_size > MAX_PART_BYTES:
        raise _TooLarge(
            f"{name} inflates to more than {MAX_PART_BYTES // 2**20} MiB (the reader's limit per part; "
            f"it declares {info.file_size} bytes)"
        )
    total = 0
    with archive.open(info) as handle:
        while chunk := handle.read(_CHUNK):
            total += len(chunk)
            if total > MAX_PART_BYTES:
                raise _TooLarge(
                    f"{name} inflates to more than {MAX_PART_BYTES // 2**20} MiB (the reader's limit "
                    "per part; a zip bomb?)"
                )
            builder.feed(chunk)
    root: ElementTree.Element = builder.close()
    return root


def _date_styles(archive: zipfile.ZipFile) -> frozenset[int]:
    """The indices of the cell styles (``cellXfs``) that show a number as a date or time."""
    if "xl/styles.xml" not in archive.namelist():
        return frozenset()
    root = _read_part(archive, "xl/styles.xml")
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
            with gzip.open(path, "rb") as handle:
                data = handle.read(MAX_WORKBOOK_BYTES + 1)
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise VqauditError(f"{path}: not a readable gzip file ({exc})") from None
        if len(data) > MAX_WORKBOOK_BYTES:
            raise VqauditError(
                f"{path}: the gzip-compressed workbook inflates to more than "
                f"{MAX_WORKBOOK_BYTES // 2**20} MiB (the reader's limit; a gzip bomb?)"
            )
        return zipfile.ZipFile(io.BytesIO(data))
    return zipfile.ZipFile(path)


def sheet_names(path: Path) -> list[str]:
    """The names of the workbook's sheets, in order (only the first is read).

    Raises:
        VqauditError: the file is not a readable workbook.
    """
    try:
        with _archive(path) as archive:
            workbook = _read_part(archive, "xl/workbook.xml")
    except _TooLarge as exc:
        raise VqauditError(f"{path}: {exc}") from None
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
    workbook = _read_part(archive, "xl/workbook.xml")
    sheet = workbook.find(f"{_NS}sheets/{_NS}sheet")
    if sheet is None:
        raise ValueError("the workbook lists no sheet")
    rel_id = sheet.get(f"{_REL_NS}id")
    rels = _read_part(archive, "xl/_rels/workbook.xml.rels")
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
    return [
        [c if c is None or isinstance(c, str) else c.raw if isinstance(c, XlsxUnreadable) else str(c) for c in row]
        for row in read_xlsx_cells(path)
    ]


def read_xlsx_cells(path: Path) -> list[list[Cell]]:
    """Read the first worksheet of an .xlsx file as rows of cells, booleans and dates kept as such.

    Args:
        path: the .xlsx file.

    Returns:
        One list per sheet row (the header included), each as long as the widest row: text (numbers as
        :func:`read_xlsx_rows` renders them), a bool, an :class:`XlsxDate`, an :class:`XlsxUnreadable` (an error
        cell, or a formula saved without its result), or None for an empty cell.

    Raises:
        VqauditError: the file is missing, not a zip, or not a readable workbook, or it passes one of the limits
            :data:`MAX_PART_BYTES`, :data:`MAX_CELL_CHARS`, :data:`MAX_CELLS`, :data:`MAX_SHARED_STRINGS`,
            :data:`MAX_WORKBOOK_BYTES` (the message names the file, and the part or cell and the limit).
    """
    if not path.is_file():
        raise VqauditError(f"{path}: file not found")
    try:
        with _archive(path) as archive:
            shared: list[str] = []
            if "xl/sharedStrings.xml" in archive.namelist():
                shared = _shared_strings(archive)
            dates = _date_styles(archive)
            sheet = _SheetReader(path, shared, dates)
            _stream_part(archive, _first_sheet_path(archive), sheet.parser)
    except _TooLarge as exc:
        raise VqauditError(f"{path}: {exc}") from None
    except (zipfile.BadZipFile, KeyError, ValueError, ElementTree.ParseError, expat.ExpatError) as exc:
        raise VqauditError(f"{path}: not a readable .xlsx workbook: {exc}") from None
    return [r + [None] * (sheet.width - len(r)) for r in sheet.rows]


_MAIN = _NS[1:-1]


def _parser(
    start: Callable[[str, dict[str, str]], None], end: Callable[[str], None], text: Callable[[str], None]
) -> expat.XMLParserType:
    """An expat parser calling ``start(local, attrs)``, ``end(local)`` for SpreadsheetML elements, and ``text``.

    Elements of other namespaces (extensions) get local name ``""``; attribute names keep expat's
    ``"URI local"`` form for namespaced attributes, so plain ``r``, ``t``, ``s`` are read as in the schema.
    """
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.buffer_text = True

    def local(name: str) -> str:
        uri, _, tag = name.rpartition(" ")
        return tag if uri == _MAIN else ""

    parser.StartElementHandler = lambda name, attrs: start(local(name), attrs)
    parser.EndElementHandler = lambda name: end(local(name))
    parser.CharacterDataHandler = text
    return parser


def _shared_strings(archive: zipfile.ZipFile) -> list[str]:
    """The shared-string table (ECMA-376 §18.4.8 ``<si>``: every ``<t>`` below it, rich text runs joined)."""
    shared: list[str] = []
    parts: list[str] = []
    state = {"in_si": 0, "in_t": 0, "chars": 0}

    def start(tag: str, _attrs: dict[str, str]) -> None:
        if tag == "si":
            state["in_si"], state["chars"] = 1, 0
            parts.clear()
        elif tag == "t" and state["in_si"]:
            state["in_t"] += 1

    def end(tag: str) -> None:
        if tag == "t" and state["in_t"]:
            state["in_t"] -= 1
        elif tag == "si":
            state["in_si"] = 0
            shared.append("".join(parts))
            if len(shared) > MAX_SHARED_STRINGS:
                raise _TooLarge(
                    f"xl/sharedStrings.xml holds more than {MAX_SHARED_STRINGS} shared strings (the reader's limit)"
                )

    def text(data: str) -> None:
        if state["in_t"]:
            state["chars"] += len(data)
            if state["chars"] > MAX_CELL_CHARS:
                raise _TooLarge(
                    f"xl/sharedStrings.xml: shared string {len(shared)} holds more than "
                    f"{MAX_CELL_CHARS} characters (the reader's limit per cell; a zip bomb?)"
                )
            parts.append(data)

    parser = _parser(start, end, text)
    _stream_part(archive, "xl/sharedStrings.xml", parser)
    return shared


class _SheetReader:
    """Streams a worksheet part (ECMA-376 §18.3.1.73 ``<row>``, §18.3.1.4 ``<c>``) into rows of cells.

    Holds only the rows read so far and the current cell's text, so memory follows the table, not the part.
    """

    def __init__(self, path: Path, shared: list[str], dates: frozenset[int]) -> None:
        self.path, self.shared, self.dates = path, shared, dates
        self.rows: list[list[Cell]] = []
        self.width = 0
        self.cells: dict[int, Cell] = {}
        self.position = 0
        self.attrs: dict[str, str] = {}
        self.value: list[str] | None = None
        self.inline: list[str] | None = None
        self.formula = False
        self.in_v = False
        self.in_t = 0
        self.chars = 0
        self.parser = _parser(self.start, self.end, self.text)

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        if tag == "row":
            self.cells, self.position = {}, 0
        elif tag == "c":
            self.attrs, self.value, self.inline, self.formula, self.chars = attrs, None, None, False, 0
        elif tag == "v":
            self.in_v = True
            self.value = self.value if self.value is not None else []
        elif tag == "f":
            self.formula = True
        elif tag == "is":
            self.inline = []
        elif tag == "t" and self.inline is not None:
            self.in_t += 1

    def text(self, data: str) -> None:
        if self.in_v and self.value is not None:
            self.value.append(data)
        elif self.in_t and self.inline is not None:
            self.inline.append(data)
        else:
            return
        self.chars += len(data)
        if self.chars > MAX_CELL_CHARS:
            where = self.attrs.get("r") or f"{len(self.rows) + 1}:{self.position + 1}"
            raise _TooLarge(
                f"cell {where} holds more than {MAX_CELL_CHARS} characters (the reader's limit per cell; a zip bomb?)"
            )

    def end(self, tag: str) -> None:
        if tag == "v":
            self.in_v = False
        elif tag == "t" and self.in_t:
            self.in_t -= 1
        elif tag == "c":
            self._cell()
        elif tag == "row":
            row_width = max(self.cells) + 1 if self.cells else 0
            width = max(self.width, row_width)
            if (len(self.rows) + 1) * width > MAX_CELLS:
                raise _TooLarge(
                    f"the first sheet holds more than {MAX_CELLS} cells, counted as rows times its "
                    f"widest row ({len(self.rows) + 1} rows of {width}; the reader's limit)"
                )
            self.width = width
            self.rows.append([self.cells.get(i) for i in range(row_width)])

    def _cell(self) -> None:
        match = _CELL_REF.match(self.attrs.get("r", ""))
        col = _column_index(match.group(1)) if match else self.position
        self.position += 1
        if (len(self.rows) + 1) * (col + 1) > MAX_CELLS:
            raise _TooLarge(
                f"cell {self.attrs.get('r')} lies beyond the reader's limit of {MAX_CELLS} cells "
                "(rows times the widest row)"
            )
        kind = self.attrs.get("t", "n")
        raw = "".join(self.value) if self.value else None
        cell: Cell
        if kind == "e":
            cell = XlsxUnreadable(f"holds the spreadsheet error {raw}", raw)
        elif raw is None and kind != "inlineStr" and self.formula:
            cell = XlsxUnreadable(
                "is a formula saved without its result (written by a library that does not "
                "compute formulas, e.g. openpyxl); open and save the file in a spreadsheet "
                "program, or write values instead of formulas",
                None,
            )
        elif kind == "s" and raw is not None:
            try:
                cell = self.shared[int(raw)]
            except (ValueError, IndexError):
                raise VqauditError(
                    f"{self.path}: cell {self.attrs.get('r')}: bad shared-string index {raw!r}"
                ) from None
        elif kind == "inlineStr":
            cell = "".join(self.inline) if self.inline is not None else ""
        elif kind == "b" and raw is not None:
            cell = raw == "1"
        elif kind == "str":
            cell = raw
        elif raw is not None and kind in ("n", "d") and _style(self.attrs) in self.dates:
            cell = XlsxDate(_number_text(raw) if kind == "n" else raw)
        else:
            cell = None if raw is None else _number_text(raw)
        self.cells[col] = cell


def _style(attrs: dict[str, str]) -> int:
    try:
        return int(attrs.get("s", "0"))
    except ValueError:
        return 0
