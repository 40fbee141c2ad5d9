"""ChartQA tables as declared tables for imported chart groups (``vqaudit build charts --from chartqa``).

**ChartQA** (vis-nlp/ChartQA, ``ChartQA Dataset/test/tables/<name>.csv``): one ``Entity,<series>...`` CSV table
per chart, values as printed (``19.3%``). A table has no axis of its own: as for the bundled tables, the axis is
declared per table from the whole table before any question is drawn (``0`` or a round lower bound, up to the
first round number at or above the largest value), never per chart (seed 000, §3.2: the mask position and the
domain never depend on a hidden value).

The grid and the group build follow the rules of :mod:`vqaudit.suites.charts.imported`.
"""

from __future__ import annotations

import csv
import io
from fractions import Fraction
from pathlib import Path

from vqaudit.errors import VqauditError
from vqaudit.suites.charts.imported import (
    MAX_GRID_POINTS,
    MAX_SERIES,
    ImportedPlot,
    ImportResult,
    fit_grid,
    labels_skip,
    parse_number,
    table_name,
)
from vqaudit.suites.charts.real_table import RealTable


def _nice_ceiling(value: Fraction) -> Fraction:
    """The smallest of 1, 2, 2.5, 5 times a power of ten that is at least ``value`` (> 0)."""
    power = Fraction(1)
    while power * 10 <= value:
        power *= 10
    while power > value:
        power /= 10
    for m in (1, 2, Fraction(5, 2), 5, 10):
        if m * power >= value:
            return m * power
    return 10 * power  # pragma: no cover


def chartqa_table(
    path: Path, *, grid: Fraction | None = None, max_grid_points: int = MAX_GRID_POINTS
) -> RealTable | str:
    """One ChartQA CSV table as a declared table, or the reason it is skipped.

    Rows are categories and columns series; a table with more series columns than rows whose column headers are
    all numbers (years) is transposed (OWID tables). Cells ``-``, ``nan`` or empty are missing; categories with a
    missing cell are left out. The axis: ``[0, nice(max)]`` (or ``[-nice(-min), ...]`` with negative values),
    ticks at a fifth of the span; the grid: the values' printed precision (or ``grid``).

    Raises:
        VqauditError: a file that is not a readable CSV table (naming it and the row).
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise VqauditError(f"{path}: not a readable UTF-8 CSV file: {exc}") from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)  # an unclosed quote is an error, not a cell
    rows: list[list[str]] = []
    try:
        rows.extend(reader)
    except csv.Error as exc:
        raise VqauditError(f"{path}: row {len(rows)} (line {reader.line_num}): not a valid CSV table: {exc}") from None
    if len(rows) < 2 or len(rows[0]) < 2:
        return "fewer than two columns or no data row"
    header = [h.strip() for h in rows[0]]
    for r, row in enumerate(rows[1:], start=1):
        if len(row) != len(header):
            raise VqauditError(f"{path}: row {r}: {len(row)} cells where the header has {len(header)}")
    cats = [row[0].strip() for row in rows[1:]]
    cols = header[1:]
    cells = {
        (s, c): parse_number(row[j + 1]) for row, c in zip(rows[1:], cats, strict=True) for j, s in enumerate(cols)
    }
    transpose = len(cols) > len(cats) and all(parse_number(h) is not None for h in cols)
    if transpose:
        cells = {(c, s): v for (s, c), v in cells.items()}
        cats, cols = cols, cats
    if len(set(cats)) != len(cats) or len(set(cols)) != len(cols):
        return "a category or series name repeats"
    bad_label = labels_skip([*cats, *cols])
    if bad_label is not None:
        return bad_label[0]
    if len(cols) > MAX_SERIES:
        return f"more than {MAX_SERIES} series"
    complete = [c for c in cats if all(cells.get((s, c)) is not None for s in cols)]
    values = {(s, c): v for (s, c), v in cells.items() if c in complete and v is not None}
    if len(complete) < 3:
        return "fewer than three categories with complete data"
    low, high = min(values.values()), max(values.values())
    if high <= 0:
        return "no positive value"
    axis_hi = _nice_ceiling(high)
    axis_lo = Fraction(0) if low >= 0 else -_nice_ceiling(-low)
    fitted = fit_grid(list(values.values()), axis_lo, axis_hi, grid, max_grid_points)
    if isinstance(fitted, str):
        return fitted
    unit = "%" if "%" in text else ""
    value_label = header[1] if len(cols) == 1 and not transpose else "Value"
    return RealTable(
        name=table_name("chartqa", path.stem, [header, cats, cols, [[s, c, str(v)] for (s, c), v in values.items()]]),
        title=path.stem,
        category_label="Year" if transpose else (header[0] or "Category"),
        value_label=value_label,
        unit=unit,
        categories=tuple(complete),
        series=tuple(cols),
        values={k: float(v) for k, v in values.items()},
        ordered=transpose,
        axis_lo=axis_lo,
        axis_hi=axis_hi,
        grid_step=fitted,
        tick_step=(axis_hi - axis_lo) / 5,
        source=f"ChartQA table {path.name}",
    )


def read_chartqa(tables: Path, *, grid: Fraction | None = None, max_grid_points: int = MAX_GRID_POINTS) -> ImportResult:
    """Every ``*.csv`` table of a ChartQA ``tables/`` folder, in name order (see :func:`chartqa_table`).

    Raises:
        VqauditError: the folder is missing or holds no CSV file, or a file is unreadable.
    """
    if not tables.is_dir():
        raise VqauditError(f"{tables}: ChartQA tables folder not found")
    files = sorted(tables.glob("*.csv"))
    if not files:
        raise VqauditError(f"{tables}: no .csv table in the folder")
    result = ImportResult([], {}, len(files))
    for path in files:
        table = chartqa_table(path, grid=grid, max_grid_points=max_grid_points)
        if isinstance(table, str):
            result.skip(table, path.name)
            continue
        result.plots.append(ImportedPlot(table, "line" if table.ordered else "vbar", None, None, path.name))
    return result
