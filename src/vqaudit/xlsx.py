"""A small stdlib reader for the first worksheet of an .xlsx file (VLMEvalKit result sheets).

VLMEvalKit writes its per-item results (``<model>_<dataset>.xlsx``) with pandas/openpyxl. Reading them needs no
third-party package: an .xlsx file is a zip of XML parts (ECMA-376 Part 1, §18.3 worksheets, §18.4 shared
strings). Only what result sheets use is supported: shared strings, inline strings, formula string results,
booleans and numbers. Numbers are rendered as pandas + ``str()`` renders them in VLMEvalKit: an integral value
as an integer ("3"), other values by Python's shortest ``repr`` of the float ("0.57").
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from pathlib import Path
from xml.etree import ElementTree

from vqaudit.errors import VqauditError

_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL_NS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PKG_REL_NS = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_CELL_REF = re.compile(r"^([A-Z]+)(\d+)$")


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
        One list per sheet row (the header included), each as long as the widest row; an empty cell is None.

    Raises:
        VqauditError: the file is missing, not a zip, or not a readable workbook (the message names the file).
    """
    if not path.is_file():
        raise VqauditError(f"{path}: file not found")
    try:
        with zipfile.ZipFile(path) as archive:
            shared: list[str] = []
            if "xl/sharedStrings.xml" in archive.namelist():
                root = ElementTree.fromstring(archive.read("xl/sharedStrings.xml"))
                shared = [_text_of(si) for si in root.iter(f"{_NS}si")]
            sheet = ElementTree.fromstring(archive.read(_first_sheet_path(archive)))
    except (zipfile.BadZipFile, KeyError, ValueError, ElementTree.ParseError) as exc:
        raise VqauditError(f"{path}: not a readable .xlsx workbook: {exc}") from None
    rows: list[list[str | None]] = []
    width = 0
    for row_el in sheet.iter(f"{_NS}row"):
        cells: dict[int, str | None] = {}
        for position, cell in enumerate(row_el.iter(f"{_NS}c")):
            match = _CELL_REF.match(cell.get("r", ""))
            col = _column_index(match.group(1)) if match else position
            kind = cell.get("t", "n")
            value_el = cell.find(f"{_NS}v")
            raw = value_el.text if value_el is not None and value_el.text is not None else None
            if kind == "s" and raw is not None:
                try:
                    cells[col] = shared[int(raw)]
                except (ValueError, IndexError):
                    raise VqauditError(f"{path}: cell {cell.get('r')}: bad shared-string index {raw!r}") from None
            elif kind == "inlineStr":
                is_el = cell.find(f"{_NS}is")
                cells[col] = _text_of(is_el) if is_el is not None else ""
            elif kind == "b" and raw is not None:
                cells[col] = "True" if raw == "1" else "False"
            elif kind in ("str", "e"):
                cells[col] = raw
            else:
                cells[col] = None if raw is None else _number_text(raw)
        row_width = max(cells) + 1 if cells else 0
        width = max(width, row_width)
        rows.append([cells.get(i) for i in range(row_width)])
    return [r + [None] * (width - len(r)) for r in rows]
