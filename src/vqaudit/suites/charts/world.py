"""Chart worlds: small tables of exact rational values on a declared grid inside a fixed axis range.

A **world** (seed 000, §3.2) is one complete data table plus the chart that draws it: kind, labels, categories,
series, values, and the declared domain (``grid_step``, ``[axis_lo, axis_hi]``). A world is **admissible** when
every value is a multiple of ``grid_step`` inside the axis range and the domain equals the one declared for its
source table (so an autoscaled or widened axis is not admissible).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Literal, cast

import numpy as np

from vqaudit.errors import VqauditError
from vqaudit.suites.charts.real_table import RealTable
from vqaudit.suites.charts.tables import load_table

ChartKind = Literal["vbar", "hbar", "line", "dot"]
CHART_KINDS: tuple[ChartKind, ...] = ("vbar", "hbar", "line", "dot")


def fraction_text(value: Fraction) -> str:
    """Exact decimal text of a rational with a terminating expansion ("12.5", "3000"), else "p/q"."""
    if value.denominator == 1:
        return str(value.numerator)
    den = value.denominator
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den != 1:
        return f"{value.numerator}/{value.denominator}"
    digits = max(twos, fives)
    scaled = abs(value) * 10**digits
    text = str(scaled.numerator).rjust(digits + 1, "0")
    sign = "-" if value < 0 else ""
    return f"{sign}{text[:-digits]}.{text[-digits:]}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class World:
    """One complete chart world. ``values[s][c]`` is the value of series ``s`` at category ``c``.

    ``value_labels`` prints every value as text in a row under the plot area. vqaudit's builders never set it:
    it exists so the fault-injection suite can show that the checker rejects a chart whose text leaks the hidden
    value outside the mask.
    """

    table: str
    kind: ChartKind
    title: str
    category_label: str
    value_label: str
    unit: str
    categories: tuple[str, ...]
    series: tuple[str, ...]
    values: tuple[tuple[Fraction, ...], ...]
    axis_lo: Fraction
    axis_hi: Fraction
    grid_step: Fraction
    tick_step: Fraction
    value_labels: bool = False

    def value(self, series: str, category: str) -> Fraction | None:
        """The value of a cell, or None when the category (or series) is not in this world."""
        if series not in self.series or category not in self.categories:
            return None
        return self.values[self.series.index(series)][self.categories.index(category)]

    def with_value(self, s: int, c: int, value: Fraction) -> World:
        """A copy with cell (series index ``s``, category index ``c``) set to ``value``."""
        rows = [list(row) for row in self.values]
        rows[s][c] = value
        return replace(self, values=tuple(tuple(r) for r in rows))

    def grid_values(self) -> list[Fraction]:
        """All admissible values of one cell, ascending: the grid points inside the axis range."""
        lo = -((-self.axis_lo) // self.grid_step)
        hi = self.axis_hi // self.grid_step
        return [Fraction(k) * self.grid_step for k in range(int(lo), int(hi) + 1)]

    def admissibility_problems(self) -> list[str]:
        """Why this world is not admissible (empty when it is).

        Checks: the domain equals the declared domain of the source table; every value lies on the grid and
        inside the axis range; the value table has one row per series and one column per category.
        """
        problems: list[str] = []
        try:
            table = load_table(self.table)
        except VqauditError as exc:
            return [str(exc)]
        declared = (table.axis_lo, table.axis_hi, table.grid_step, table.tick_step)
        if (self.axis_lo, self.axis_hi, self.grid_step, self.tick_step) != declared:
            problems.append(
                f"domain [{self.axis_lo}, {self.axis_hi}] step {self.grid_step} differs from the declared "
                f"[{table.axis_lo}, {table.axis_hi}] step {table.grid_step} of table {self.table}"
            )
        if len(self.values) != len(self.series) or any(len(r) != len(self.categories) for r in self.values):
            problems.append("value table shape does not match series x categories")
        for s, row in zip(self.series, self.values, strict=False):
            for c, v in zip(self.categories, row, strict=False):
                if not self.axis_lo <= v <= self.axis_hi:
                    problems.append(f"value {fraction_text(v)} of ({s}, {c}) is outside the axis range")
                elif (v / self.grid_step).denominator != 1:
                    problems.append(f"value {fraction_text(v)} of ({s}, {c}) is off the grid")
        return problems

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict; rationals as exact text."""
        return {
            "table": self.table,
            "kind": self.kind,
            "title": self.title,
            "category_label": self.category_label,
            "value_label": self.value_label,
            "unit": self.unit,
            "categories": list(self.categories),
            "series": list(self.series),
            "values": [[fraction_text(v) for v in row] for row in self.values],
            "axis_lo": fraction_text(self.axis_lo),
            "axis_hi": fraction_text(self.axis_hi),
            "grid_step": fraction_text(self.grid_step),
            "tick_step": fraction_text(self.tick_step),
            **({"value_labels": True} if self.value_labels else {}),
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> World:
        """Inverse of :meth:`to_json`. Raises VqauditError on a missing or malformed field."""
        try:
            kind = data["kind"]
            if kind not in CHART_KINDS:
                raise ValueError(f"unknown chart kind {kind!r}")
            if Fraction(data["grid_step"]) <= 0 or Fraction(data["tick_step"]) <= 0:
                raise ValueError("grid_step and tick_step must be positive")
            return World(
                table=str(data["table"]),
                kind=cast(ChartKind, kind),
                title=str(data["title"]),
                category_label=str(data["category_label"]),
                value_label=str(data["value_label"]),
                unit=str(data["unit"]),
                categories=tuple(str(c) for c in data["categories"]),
                series=tuple(str(s) for s in data["series"]),
                values=tuple(tuple(Fraction(v) for v in row) for row in data["values"]),
                axis_lo=Fraction(data["axis_lo"]),
                axis_hi=Fraction(data["axis_hi"]),
                grid_step=Fraction(data["grid_step"]),
                tick_step=Fraction(data["tick_step"]),
                value_labels=bool(data.get("value_labels", False)),
            )
        except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
            raise VqauditError(f"malformed chart world: {exc}") from None


def snap(value: float, table: RealTable) -> Fraction:
    """Snap a real value to the nearest grid point of ``table``'s domain (ties to even), clamped to the axis."""
    k = round(Fraction(value) / table.grid_step)
    snapped = Fraction(k) * table.grid_step
    return min(max(snapped, table.axis_lo), table.axis_hi)


def _complete(table: RealTable, series: tuple[str, ...], category: str) -> bool:
    return all((s, category) in table.values for s in series)


def sample_world(
    table: RealTable, kind: ChartKind, n_series: int, n_categories: int, rng: np.random.Generator
) -> World | None:
    """Draw a world from a real table: ``n_series`` series, ``n_categories`` categories with complete data.

    Ordered tables (years, months) give a consecutive window; others a random subset kept in table order.
    Values are the real values snapped onto the table's grid. Returns None when the table has too few complete
    categories for the request (the caller draws again), always leaving at least one complete category out of
    the world so an invalid-reference view can name it.
    """
    if n_series > len(table.series):
        return None
    picks = sorted(rng.choice(len(table.series), size=n_series, replace=False).tolist())
    series = tuple(table.series[i] for i in picks)
    complete = [c for c in table.categories if _complete(table, series, c)]
    if len(complete) <= n_categories:
        return None
    if table.ordered:
        start = int(rng.integers(0, len(complete) - n_categories + 1))
        cats = complete[start : start + n_categories]
    else:
        idx = sorted(rng.choice(len(complete), size=n_categories, replace=False).tolist())
        cats = [complete[i] for i in idx]
    values = tuple(tuple(snap(table.values[(s, c)], table) for c in cats) for s in series)
    if any(len(set(row)) < 2 for row in values):
        return None  # a flat series (real values snapped to one grid point) invites guessing from the trend
    title = f"{table.title}, {series[0]}" if n_series == 1 else table.title
    return World(
        table=table.name,
        kind=kind,
        title=title,
        category_label=table.category_label,
        value_label=table.value_label,
        unit=table.unit,
        categories=tuple(cats),
        series=series,
        values=values,
        axis_lo=table.axis_lo,
        axis_hi=table.axis_hi,
        grid_step=table.grid_step,
        tick_step=table.tick_step,
    )


def replace_category(world: World, c: int, table: RealTable, rng: np.random.Generator) -> World | None:
    """Invalid-reference edit: category ``c`` is replaced by another real category of the same table.

    The replacement has complete data for the world's series and is not already in the world; its cells take
    their real (snapped) values. For ordered tables the categories are re-sorted into table order. Returns None
    if the table has no such category.
    """
    present = set(world.categories)
    spare = [x for x in table.categories if x not in present and _complete(table, world.series, x)]
    if not spare:
        return None
    new = spare[int(rng.integers(0, len(spare)))]
    columns = {cat: [row[i] for row in world.values] for i, cat in enumerate(world.categories)}
    del columns[world.categories[c]]
    columns[new] = [snap(table.values[(s, new)], table) for s in world.series]
    cats = list(world.categories)
    cats[c] = new
    if table.ordered:
        order = {name: i for i, name in enumerate(table.categories)}
        cats.sort(key=order.__getitem__)
    values = tuple(tuple(columns[cat][s] for cat in cats) for s in range(len(world.series)))
    return replace(world, categories=tuple(cats), values=values)


def distinct_value(world: World, current: Fraction, rng: np.random.Generator) -> Fraction:
    """A grid value at least a tenth of the axis span away from ``current`` (for S and C edits and witnesses)."""
    span = world.axis_hi - world.axis_lo
    far = [v for v in world.grid_values() if abs(v - current) >= span / 10]
    return far[int(rng.integers(0, len(far)))]
