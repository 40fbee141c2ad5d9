"""Leak audit of masked chart views: does anything in the saved image still give away the hidden value?

A masked (``M``) view is certified by a witness: two worlds that render, under the same mask, to identical
pixels (seed 000, §3.2). That check is exact, but it only covers the two worlds it was given; this audit
attacks the saved image directly, the way a model would. For every hidden cell (each series at the masked
category) two readers look at the image **with the mask ignored**:

- ``reader``: the OCR chart reader (:mod:`vqaudit.backends.chart_reader`), asked the lookup of that cell: it
  reads printed value labels, and measures the mark wherever the mark still shows (a mask that misses the
  column);
- ``probe``: a pixel probe that needs no label: for a line leaving a visible neighbour vertex towards the
  masked category, the straight continuation of its visible part, up to the category's tick position (a
  segment that leaves the mask betrays the hidden vertex). It only uses segments whose far vertex is the
  masked category (the neighbour's tick lies outside the mask).

A **leak** is a hidden cell whose value either recovers exactly (the same rational). Genuine builds have none;
the designed faults ``value_label_leak`` and ``line_leak`` of ``audit-checker`` leak by construction, and
``shifted_mask`` leaves the queried mark in plain view.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from vqaudit.backends.chart_reader import Ocr, answer_text, read_chart, read_lookup
from vqaudit.backends.chart_reader.chart import Chart
from vqaudit.backends.chart_reader.layout import colour_distance, ticks_below, ticks_left
from vqaudit.backends.chart_reader.measure import COLOUR_TOL, all_marks, choose_grid, measure, snap_value
from vqaudit.backends.chart_reader.reader import series_colour
from vqaudit.errors import VqauditError
from vqaudit.files import read_json
from vqaudit.progress import track
from vqaudit.schema import View
from vqaudit.store import load_benchmark
from vqaudit.suites.charts.faults import FAULT_KINDS, design_faults
from vqaudit.suites.charts.png import decode_png
from vqaudit.suites.charts.world import World

LEAKING_FAULTS = ("value_label_leak", "line_leak", "shifted_mask")
"""Designed faults whose saved image shows the hidden value (the audit must find every one)."""


@dataclass(frozen=True)
class Leak:
    """A hidden cell recovered from a masked view's pixels.

    Attributes:
        view_id: the masked view.
        series: the hidden cell's series.
        category: the hidden cell's category.
        value: the hidden value, exact decimal text (what was recovered, too).
        method: ``reader`` or ``probe``.
        how: what the method saw (one sentence).
    """

    view_id: str
    series: str
    category: str
    value: str
    method: str
    how: str


def _edge_row(chart: Chart, colour: tuple[int, int, int], col: int) -> float | None:
    """Centre row (canonical) of the longest run of ``colour`` in one column of the plot area."""
    f = chart.frame
    assert f is not None
    if not f.left < col < f.right:
        return None
    line = colour_distance(chart.canon[f.top + 1 : f.bottom, col : col + 1].astype(np.int32), colour)[:, 0]
    hits = np.flatnonzero(line < COLOUR_TOL)
    if hits.size == 0:
        return None
    groups = np.split(hits, np.flatnonzero(np.diff(hits) > 1) + 1)
    run = max(groups, key=len)
    return f.top + 1 + float(run[0] + run[-1]) / 2


def probe_line(chart: Chart, colour: tuple[int, int, int], ticks: list[float], c: int) -> list[tuple[Fraction, str]]:
    """Extrapolate the visible segments entering the mask over category ``c`` to the category's position.

    Args:
        chart: the read chart (canonical coordinates).
        colour: the series colour.
        ticks: category tick positions (canonical columns), one per category, in order.
        c: index of the masked category.

    Returns:
        ``(value, how)`` per side whose neighbour vertex is visible and whose segment reaches the mask edge.
    """
    axis = chart.axis
    if axis is None or not 0 <= c < len(ticks):
        return []
    x_c = ticks[c]
    band = next(((a, b) for a, b in chart.masks if a - 1 <= x_c <= b), None)
    if band is None:
        return []
    visible = [m.value for m in all_marks(chart, colour)]
    out: list[tuple[Fraction, str]] = []
    for j, edge in ((c - 1, band[0] - 2), (c + 1, band[1] + 1)):
        if not 0 <= j < len(ticks) or band[0] - 3 <= ticks[j] <= band[1] + 3:
            continue  # no neighbour, or the neighbour vertex is under the mask: its segment ends there
        vertex = measure(chart, colour, ticks[j])
        y_edge = _edge_row(chart, colour, edge)
        if vertex is None or vertex.bar or y_edge is None or abs(edge - ticks[j]) < 3:
            continue
        y_j = axis.pos(vertex.value)
        y_c = y_j + (y_edge - y_j) * (x_c - ticks[j]) / (edge - ticks[j])
        value = snap_value(axis, choose_grid(axis, visible), axis.value(y_c))
        side = "left" if j < c else "right"
        out.append((value, f"the line from the {side} neighbour, continued through the mask edge"))
    return out


def hidden_leaks(view_id: str, pixels: np.ndarray, world: World, c: int, ocr: Ocr) -> list[Leak]:
    """Every hidden cell (each series at category ``c`` of ``world``) recovered exactly from ``pixels``.

    Args:
        view_id: recorded on the leaks.
        pixels: the saved (masked) image, RGB (H, W, 3) uint8.
        world: the world the image shows (its values are the hidden truth).
        c: index of the masked category.
        ocr: the OCR engine.
    """
    chart = read_chart(pixels, ocr)
    category = world.categories[c]
    leaks: list[Leak] = []
    ticks: list[float] = []
    if chart.frame is not None:
        raw = chart.frame if chart.vertical else chart.frame.transposed()
        ticks = ticks_below(pixels, raw) if chart.vertical else ticks_left(pixels, raw)
    for s, series in enumerate(world.series):
        truth = world.values[s][c]
        reading = read_lookup(chart, [(series, category)], ignore_mask=True)
        if reading.value == truth:
            leaks.append(Leak(view_id, series, category, answer_text(truth), "reader", reading.reason))
            continue
        colour = series_colour(chart, series)
        if colour is None or len(ticks) != len(world.categories):
            continue
        for value, how in probe_line(chart, colour, ticks, c):
            if value == truth:
                leaks.append(Leak(view_id, series, category, answer_text(truth), "probe", how))
                break
    return leaks


def _masked_index(view: View, cert: dict[str, Any]) -> tuple[World, int]:
    try:
        world = World.from_json(cert.get("world_a", view.meta["world"]))
        return world, int(cert["mask"]["category_index"])
    except (KeyError, TypeError, ValueError) as exc:
        raise VqauditError(f"view {view.view_id}: certificate has no usable world or mask: {exc!r}") from None


def audit_leaks(bench_dir: Path, *, max_views: int | None = None, ocr: Ocr | None = None) -> tuple[int, list[Leak]]:
    """Run both readers on every masked view of a chart benchmark.

    Returns:
        ``(views checked, leaks)``.

    Raises:
        VqauditError: the benchmark cannot be read, is not a chart benchmark, or a certificate is unusable.
    """
    bench = load_benchmark(bench_dir, check_images=True)
    if bench.manifest.get("source") != "charts":
        raise VqauditError(f"{bench_dir}: audit-leaks reads chart benchmarks, not {bench.manifest.get('source')!r}")
    views = [v for v in bench.views if v.state == "M"][:max_views]
    ocr = ocr or Ocr()
    leaks: list[Leak] = []
    for view in track(views, f"audit-leaks {bench_dir}: masked views read", len(views)):
        cert = read_json(bench_dir / str(view.meta.get("certificate", "")))
        if not isinstance(cert, dict):
            raise VqauditError(f"{bench_dir}: certificate of {view.view_id} is not a JSON object")
        world, c = _masked_index(view, cert)
        leaks += hidden_leaks(view.view_id, decode_png(bench.image_path(view).read_bytes()), world, c, ocr)
    return len(views), leaks


def audit_fault_leaks(
    bench_dir: Path, *, max_views: int = 6, ocr: Ocr | None = None, kinds: tuple[str, ...] = FAULT_KINDS
) -> dict[str, list[int]]:
    """Design ``audit-checker``'s faults from a benchmark's masked views and count the leaking ones.

    Returns:
        ``{kind: [faults designed, faults with a leak]}`` plus ``"genuine": [views, views with a leak]``.

    Raises:
        VqauditError: the benchmark cannot be read or has fewer than two masked views.
    """
    bench = load_benchmark(bench_dir, check_images=False)
    views = [v for v in bench.views if v.source == "charts" and v.state == "M"][:max_views]
    if len(views) < 2:
        raise VqauditError(f"{bench_dir}: need at least two masked chart views to design faults")
    genuine = [(v, read_json(bench_dir / str(v.meta["certificate"])), bench.image_path(v).read_bytes()) for v in views]
    ocr = ocr or Ocr()
    table: dict[str, list[int]] = {kind: [0, 0] for kind in kinds}
    faults = list(design_faults(genuine, kinds))
    for fault in track(faults, f"audit-leaks {bench_dir}: faults read", len(faults)):
        world, c = _masked_index(fault.view, fault.certificate)
        found = hidden_leaks(fault.view.view_id, decode_png(fault.image_png), world, c, ocr)
        table[fault.kind][0] += 1
        table[fault.kind][1] += bool(found)
    clean = [not hidden_leaks(v.view_id, decode_png(img), *_masked_index(v, cert), ocr) for v, cert, img in genuine]
    table["genuine"] = [len(genuine), len(genuine) - sum(clean)]
    return table
