"""Declared tables of imported charts on disk: their JSON form and a benchmark's ``tables/`` folder.

An imported chart (PlotQA plot, ChartQA table; :mod:`vqaudit.suites.charts.imported`) has no bundled table: its
:class:`~vqaudit.suites.charts.real_table.RealTable` is written into the benchmark as ``tables/<name>.json``
(:func:`table_to_json`) and declared again from there (:func:`declare_benchmark_tables`) before ``verify`` or
``audit-checker`` look it up with :func:`~vqaudit.suites.charts.tables.load_table`.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.suites.charts.real_table import RealTable
from vqaudit.suites.charts.tables import TABLES_DIR, declare_table


def table_to_json(table: RealTable) -> dict[str, Any]:
    """A declared table as JSON: every field; values as ``[series, category, value]`` rows (float ``repr``)."""
    return {
        "name": table.name,
        "title": table.title,
        "category_label": table.category_label,
        "value_label": table.value_label,
        "unit": table.unit,
        "categories": list(table.categories),
        "series": list(table.series),
        "values": [[s, c, repr(v)] for (s, c), v in table.values.items()],
        "ordered": table.ordered,
        "axis_lo": str(table.axis_lo),
        "axis_hi": str(table.axis_hi),
        "grid_step": str(table.grid_step),
        "tick_step": str(table.tick_step),
        "source": table.source,
    }


def table_from_json(data: Any) -> RealTable:
    """Inverse of :func:`table_to_json`. Raises VqauditError naming the field that is missing or malformed."""
    if not isinstance(data, dict):
        raise VqauditError("declared table: expected a JSON object")
    try:
        values = {(str(s), str(c)): float(v) for s, c, v in data["values"]}
        return RealTable(
            name=str(data["name"]),
            title=str(data["title"]),
            category_label=str(data["category_label"]),
            value_label=str(data["value_label"]),
            unit=str(data["unit"]),
            categories=tuple(str(c) for c in data["categories"]),
            series=tuple(str(x) for x in data["series"]),
            values=values,
            ordered=bool(data["ordered"]),
            axis_lo=Fraction(data["axis_lo"]),
            axis_hi=Fraction(data["axis_hi"]),
            grid_step=Fraction(data["grid_step"]),
            tick_step=Fraction(data["tick_step"]),
            source=str(data["source"]),
        )
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise VqauditError(f"declared table {data.get('name')!r}: malformed field: {exc!r}") from None


def declare_benchmark_tables(bench_dir: Path) -> int:
    """Declare every ``bench_dir/tables/*.json`` table (imported charts); return how many the folder holds.

    Raises:
        VqauditError: a file that is not a declared table (naming it).
    """
    folder = bench_dir / TABLES_DIR
    if not folder.is_dir():
        return 0
    files = sorted(folder.glob("*.json"))
    for path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise VqauditError(f"{path}: not a readable declared table: {exc}") from None
        table = table_from_json(data)
        if f"{table.name}.json" != path.name:
            raise VqauditError(f"{path}: holds table {table.name!r}, not the one its name says")
        declare_table(table)
    return len(files)
