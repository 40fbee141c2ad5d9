"""Measure a data mark by colour along its category, and round it to the grid the chart's marks sit on.

Works on a :class:`~vqaudit.backends.chart_reader.chart.Chart` (canonical coordinates: values along rows,
categories along columns). A **bar** is the run of the series colour from the axis base; its value is at the
run's far edge. A **marker** (line vertex or dot) is the run of the series colour at the category's column; its
value is at the run's centre. Which kind a chart has is decided once per colour: bars touch the axis base.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from vqaudit.backends.chart_reader.axis import Axis
from vqaudit.backends.chart_reader.chart import Chart
from vqaudit.backends.chart_reader.layout import colour_distance

COLOUR_TOL = 45.0
"""RGB distance under which a pixel belongs to a mark's colour (anti-aliased edges are further)."""
GRID_DIVISIONS = (1, 2, 4, 5, 10, 20)
"""Candidate grids: the tick step divided by these; the coarsest one that fits every mark is used."""


@dataclass(frozen=True)
class Mark:
    """A measured mark: its value (axis units, float), whether it is a bar, and where it was measured."""

    value: float
    bar: bool
    column: float
    run: tuple[int, int] = (0, 0)
    clipped: tuple[bool, bool] = (False, False)

    @property
    def length(self) -> int:
        """Length in pixels of the measured run of the mark's colour."""
        return self.run[1] - self.run[0]


def _colour_map(chart: Chart, colour: tuple[int, int, int], c0: int, c1: int) -> np.ndarray:
    f = chart.frame
    assert f is not None
    region = chart.canon[f.top + 1 : f.bottom, c0:c1].astype(np.int32)
    return colour_distance(region, colour) < COLOUR_TOL


def _base_at_bottom(axis: Axis, chart: Chart) -> bool:
    """True when the axis base (lowest tick) is at the bottom of the canonical frame (values grow upwards)."""
    return axis.b < 0


def _band(chart: Chart, pos: float) -> tuple[int, int]:
    f = chart.frame
    assert f is not None
    half = 0.5 * chart.spacing
    return max(int(np.floor(pos - half)) + 1, f.left + 1), min(int(np.ceil(pos + half)), f.right)


def _runs_1d(line: np.ndarray) -> list[tuple[int, int]]:
    padded = np.concatenate(([False], line, [False])).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def measure(chart: Chart, colour: tuple[int, int, int], pos: float) -> Mark | None:
    """Measure the mark of ``colour`` at category position ``pos`` (canonical column); None when no mark is seen.

    Bars: the column of the band with most pixels of the colour; the run touching the base; the value at the
    run's far edge (pixel boundary). Markers: the longest run of the colour in the category's own column (and
    its neighbours); the value at the run's centre.
    """
    f, axis = chart.frame, chart.axis
    if f is None or axis is None:
        return None
    c0, c1 = _band(chart, pos)
    if c1 <= c0:
        return None
    hits = _colour_map(chart, colour, c0, c1)
    counts = hits.sum(axis=0)
    if counts.max(initial=0) == 0:
        return None
    base_bottom = _base_at_bottom(axis, chart)
    n_rows = hits.shape[0]
    col = int(np.argmax(counts))
    runs = _runs_1d(hits[:, col])
    touching = [r for r in runs if (r[1] >= n_rows - 2 if base_bottom else r[0] <= 1)]
    if touching and (touching[0][1] - touching[0][0]) >= 3 and _wide(counts, col) >= 0.2 * chart.spacing:
        r0, r1 = touching[0]
        edge = (r0 - 0.5) if base_bottom else (r1 - 0.5)
        return Mark(axis.value(f.top + 1 + edge), True, c0 + col)
    centre = int(round(pos)) - c0
    best: tuple[int, int, int] | None = None
    for dc in (0, -1, 1):
        cc = centre + dc
        if not 0 <= cc < hits.shape[1]:
            continue
        for a, b in _runs_1d(hits[:, cc]):
            if best is None or b - a > best[1] - best[0]:
                best = (a, b, cc)
    if best is None or best[1] - best[0] < 3:
        return None
    a, b, cc = best
    region = chart.canon[f.top + 1 : f.bottom, c0 + cc].astype(np.int32)
    others = [np.asarray(c) for c in chart.colours if np.hypot.reduce(np.asarray(c) - np.asarray(colour)) > 60]

    def covered(rows: tuple[int, int]) -> bool:
        """Another series' colour next to the run, or the plot area's edge cutting the marker off."""
        return any(not 0 <= r < n_rows or any(np.hypot.reduce(region[r] - o) < 60 for o in others) for r in rows)

    clipped = (covered((a - 1, a - 2)), covered((b, b + 1)))
    return Mark(
        axis.value(f.top + 1 + (a + b - 1) / 2),
        False,
        pos,
        (f.top + 1 + a, f.top + 1 + b),
        (bool(clipped[0]), bool(clipped[1])),
    )


def unclip(axis: Axis, mark: Mark, typical: float) -> Mark:
    """A marker partly covered by another series' marker: re-centre it from its uncovered end.

    ``typical`` is the run length of this colour's uncovered markers (pixels). Only one covered end can be
    corrected; a marker covered at both ends (or not at all) is returned as is.
    """
    if mark.bar or mark.clipped[0] == mark.clipped[1] or mark.length >= typical - 1:
        return mark
    centre = (mark.run[1] - (typical + 1) / 2) if mark.clipped[0] else (mark.run[0] + (typical - 1) / 2)
    return Mark(axis.value(centre), False, mark.column, mark.run, mark.clipped)


def _wide(counts: np.ndarray, col: int) -> int:
    """Width of the run of columns around ``col`` holding at least half its count of colour pixels."""
    keep = counts >= 0.5 * counts[col]
    lo = hi = col
    while lo > 0 and keep[lo - 1]:
        lo -= 1
    while hi + 1 < len(keep) and keep[hi + 1]:
        hi += 1
    return hi - lo + 1


def choose_grid(axis: Axis, values: list[float]) -> Fraction:
    """The coarsest grid ``step / d`` (``d`` in GRID_DIVISIONS) on which every measured value lies.

    A value lies on a grid when it is within ``min(1 px, 0.3 grid spacing)`` of a grid point, in pixels (the
    precision of a snapped bar end or a marker centre). With no values, or none that fits, the finest grid.
    """
    px_per_unit = 1.0 / abs(axis.b)
    for d in GRID_DIVISIONS:
        g = float(axis.step) / d
        tol = min(1.0, 0.3 * g * px_per_unit)
        if values and all(
            abs(v - float(axis.origin) - g * round((v - float(axis.origin)) / g)) * px_per_unit <= tol for v in values
        ):
            return axis.step / d
    return axis.step / GRID_DIVISIONS[-1]


def snap_value(axis: Axis, grid: Fraction, value: float) -> Fraction:
    """``value`` rounded to the nearest point ``origin + k * grid`` (exact rational)."""
    k = round((value - float(axis.origin)) / float(grid))
    return axis.origin + k * grid


def all_marks(chart: Chart, colour: tuple[int, int, int]) -> list[Mark]:
    """The marks of one colour at every category position the chart has (unmeasurable ones left out).

    Markers partly covered by another series' marker are re-centred (:func:`unclip`) from the typical length of
    this colour's uncovered markers.
    """
    out = [m for cat in chart.categories if (m := measure(chart, colour, cat.pos)) is not None]
    lengths = [m.length for m in out if not m.bar]
    if chart.axis is None or not lengths:
        return out
    values, counts = np.unique(lengths, return_counts=True)
    typical = float(values[counts == counts.max()].max())  # the most common run length (ties: the longer)
    return [unclip(chart.axis, m, typical) for m in out]
