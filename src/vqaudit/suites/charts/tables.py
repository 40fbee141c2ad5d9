"""Chart tables by name: the twelve bundled real tables and the imported tables a benchmark declares.

:func:`load_table` returns a :class:`~vqaudit.suites.charts.real_table.RealTable`: a bundled one
(:mod:`vqaudit.suites.charts.bundled_tables`, names in ``TABLE_NAMES``; read once, every value checked against the
table's declared axis range) or one an imported chart (PlotQA plot, ChartQA table) declared with
:func:`declare_table`, from its benchmark's ``tables/`` folder (:mod:`vqaudit.suites.charts.declared_tables`).
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

from vqaudit.errors import VqauditError
from vqaudit.suites.charts.bundled_tables import LOADERS
from vqaudit.suites.charts.real_table import RealTable

TABLE_NAMES: tuple[str, ...] = tuple(LOADERS)

_DECLARED: dict[str, RealTable] = {}
"""Imported tables (PlotQA plots, ChartQA tables) declared by a benchmark's ``tables/*.json`` files."""
TABLES_DIR = "tables"
"""The benchmark subfolder holding the declared tables of imported charts (one ``<name>.json`` each; their JSON form:
:mod:`vqaudit.suites.charts.declared_tables`)."""


def declare_table(table: RealTable) -> None:
    """Make an imported table known to :func:`load_table` (its name must not be a bundled table's).

    Raises:
        VqauditError: the name is a bundled table's, or the name is declared with other content.
    """
    if table.name in LOADERS:
        raise VqauditError(f"declared table {table.name!r}: the name of a bundled table")
    known = _DECLARED.get(table.name)
    if known is not None and known != table:
        raise VqauditError(f"declared table {table.name!r}: declared twice with different content")
    _DECLARED[table.name] = table


def load_table(name: str) -> RealTable:
    """Load one real table by name: a bundled one (see ``TABLE_NAMES``) or a declared imported one.

    Raises:
        VqauditError: for an unknown name, or if a real value falls outside the table's declared axis range.
    """
    declared = _DECLARED.get(name)
    if declared is not None:
        return declared
    return _load_bundled(name)


@cache
def _load_bundled(name: str) -> RealTable:
    if name not in LOADERS:
        raise VqauditError(
            f"unknown chart table {name!r}; known: {', '.join(TABLE_NAMES)} (an imported chart's "
            f"table is declared in its benchmark's {TABLES_DIR}/ folder)"
        )
    table = LOADERS[name]()
    for (s, c), v in table.values.items():
        if not table.axis_lo <= Fraction(v) <= table.axis_hi:
            raise VqauditError(f"table {name}: value {v} of ({s}, {c}) is outside the declared axis range")
    return table
