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
from pathlib import Path
from xml.etree import ElementTree
from xml.parsers import expat

from vqaudit.errors import VqauditError
from vqaudit.xlsx_sheet import _NS, _parser, _SheetReader, _TooLarge
from vqaudit.xlsx_sheet import MAX_CELL_CHARS as MAX_CELL_CHARS
from vqaudit.xlsx_sheet import MAX_CELLS as MAX_CELLS
from vqaudit.xlsx_sheet import Cell as Cell
from vqaudit.xlsx_sheet import XlsxDate as XlsxDate
from vqaudit.xlsx_sheet import XlsxUnreadable as XlsxUnreadable

_REL_NS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PKG_REL_NS = "{http://schemas.openxmlformats.org/package/2006/relationships}"

MAX_PART_BYTES = 256 * 2**20
"""The most bytes one part of a workbook (a sheet, the shared strings, the styles) may inflate to: 256 MiB, ten
times the sheet of a 100,000-row VLMEvalKit result with 1 KB replies."""
MAX_SHARED_STRINGS = 5_000_000
"""The most entries of the shared-string table (at most one per cell)."""
MAX_WORKBOOK_BYTES = 512 * 2**20
"""The most bytes a gzip-compressed workbook (``.xlsx.gz``) may inflate to before its zip is opened."""
_CHUNK = 2**20
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
