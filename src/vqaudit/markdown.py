"""Markdown tables, the one writer every Markdown report uses (GitHub-flavoured pipe tables).

A table is its header line, a separator line and one line per row: ``| a | b |``, ``|---|---|``, ``| 1 | 2 |``.
Cells are written as given (no escaping: callers pass cells that hold no ``|`` or newline, as every report
builds them from numbers, names and ids).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

LEFT = "---"
"""A column aligned the Markdown default way (left)."""
RIGHT = "---:"
"""A right-aligned column (numbers)."""


def row(cells: Iterable[str]) -> str:
    """One table line: ``| c1 | c2 | ... |``."""
    return "| " + " | ".join(cells) + " |"


def separator(columns: int | Sequence[str]) -> str:
    """The line under the header: ``|---|---|`` for a column count, or the given alignments (``LEFT``, ``RIGHT``)."""
    marks = [LEFT] * columns if isinstance(columns, int) else list(columns)
    return "|" + "".join(m + "|" for m in marks)


def table(header: Sequence[str], rows: Iterable[Iterable[str]], *, align: Sequence[str] | None = None) -> list[str]:
    """The lines of a table: header, separator (``align``, default all :data:`LEFT`), then one line per row."""
    return [row(header), separator(align if align is not None else len(header)), *(row(r) for r in rows)]
