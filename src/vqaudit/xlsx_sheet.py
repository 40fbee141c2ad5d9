"""The cells of an .xlsx worksheet: the streaming SpreadsheetML parser, the worksheet reader and the cell records.

A worksheet part (ECMA-376 Part 1, §18.3.1.73 ``<row>``, §18.3.1.4 ``<c>``) is parsed by expat as it is
inflated, one cell at a time, into :data:`Cell` values: text (numbers rendered as pandas + ``str()`` render them
in VLMEvalKit), booleans, :class:`XlsxDate`, :class:`XlsxUnreadable`. The per-cell limits (:data:`MAX_CELL_CHARS`,
:data:`MAX_CELLS`) are checked here as the cells come; the zip, the parts and the public reader are
:mod:`vqaudit.xlsx`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from xml.parsers import expat

from vqaudit.errors import VqauditError

_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_MAIN = _NS[1:-1]
_CELL_REF = re.compile(r"^([A-Z]+)(\d+)$")

MAX_CELL_CHARS = 2**22
"""The most characters one cell (or one shared string) may hold: 4 Mi, 128 times Excel's own limit of 32,767
characters per cell (Microsoft, "Excel specifications and limits"), which writers such as openpyxl do not enforce."""
MAX_CELLS = 5_000_000
"""The most cells a sheet may hold, counted as its rows times its widest row (the table this reader returns):
a 300,000-row result of 16 columns."""


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

    ``reason`` completes "a cell that ..."; ``raw`` is what :func:`vqaudit.xlsx.read_xlsx_rows` gives for it (the
    error's text, or None for a formula without a result, as before this type existed).
    """

    reason: str
    raw: str | None

    def __str__(self) -> str:
        return self.raw or ""


Cell = str | bool | XlsxDate | XlsxUnreadable | None
"""One cell of :func:`vqaudit.xlsx.read_xlsx_cells`: text, a boolean, a date-formatted number, an unreadable cell,
or None."""


def _column_index(letters: str) -> int:
    index = 0
    for ch in letters:
        index = index * 26 + (ord(ch) - 64)
    return index - 1


def _number_text(raw: str) -> str:
    try:
        value = float(raw)
    except ValueError:
        return raw
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


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
