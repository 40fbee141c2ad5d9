"""The record a chart world is drawn from: a real table's cells and its declared domain.

A :class:`RealTable` is one of the bundled tables (:mod:`vqaudit.suites.charts.bundled_tables`) or the declared
table of an imported chart (:mod:`vqaudit.suites.charts.declared_tables`); both are looked up by name with
:func:`~vqaudit.suites.charts.tables.load_table`. Its **declared domain** is a finite rational grid (``grid_step``)
inside a fixed axis range ``[axis_lo, axis_hi]``, set from the whole table before any world is drawn, so it never
depends on the values of a particular chart (seed 000, §3.2: "axes are exogenous").
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class RealTable:
    """A real table reduced to (series, category) -> value, with its declared chart domain.

    ``values`` holds only the cells present in the source (missing cells are absent). ``ordered`` says whether
    categories have a natural order (years, months) that a chart must keep.
    """

    name: str
    title: str
    category_label: str
    value_label: str
    unit: str
    categories: tuple[str, ...]
    series: tuple[str, ...]
    values: dict[tuple[str, str], float]
    ordered: bool
    axis_lo: Fraction
    axis_hi: Fraction
    grid_step: Fraction
    tick_step: Fraction
    source: str
