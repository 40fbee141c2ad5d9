"""Read a chart's structure from pixels: frame, value axis, category labels, legend, masks, printed values.

The classic chart-reading pipeline (as in ChartOCR / ReVision-style systems): OCR of the chart's text; the value
axis is a least-squares line through the tick marks whose labels parse as numbers (robust to misread labels);
categories are the labels next to the category-axis tick marks; legend entries are labels with a coloured
handle on their left. Everything is computed from the image alone.

Coordinates are *canonical*: the image is transposed for a horizontal value axis, so that the value axis always
runs along rows and the categories along columns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from vqaudit.backends.chart_reader.axis import Axis, parse_number, snap, value_axis
from vqaudit.backends.chart_reader.layout import (
    Frame,
    Pixels,
    coloured_rows,
    find_fills,
    find_frame,
    gridline_axis,
    ink_box,
    mask_bands,
    saturated_colours,
    ticks_below,
    ticks_left,
)
from vqaudit.backends.chart_reader.ocr import Ocr, TextBox

_PAIR = re.compile(r"([^:]+?)\s*[:\uff1a]\s*([-\u2212]?\d[\d,]*(?:\.\d+)?)")
_WORD_PAIR = re.compile(r"([A-Za-z][^\d:;]*?)\s*[:;]?\s*([-\u2212]?\d[\d,]*(?:\.\d+)?)(?![\d.])")
_CONFUSABLE = str.maketrans({"l": "i", "|": "i", "!": "i", "\u2019": "'"})


def normalize_label(text: str) -> str:
    """Canonical form of a label for matching: case-folded, no spaces or punctuation, ``l``/``|`` read as ``i``.

    OCR reads a capital ``I`` as ``l`` ("lowa"); digits are kept apart ("1952" never matches "1957").
    """
    folded = text.casefold().translate(_CONFUSABLE)
    return re.sub(r"[\s.,:;'\"`\u00b4_()\[\]-]+", "", folded)


@dataclass(frozen=True)
class Category:
    """A category label and its position along the category axis (canonical column, pixels)."""

    text: str
    pos: float


@dataclass(frozen=True)
class ValueLabel:
    """A value printed as text ("CATEGORY: NUMBER") outside the plot area, with its text colour (or None)."""

    category: str
    value: Fraction
    colour: tuple[int, int, int] | None


@dataclass(frozen=True)
class Chart:
    """What the reader found in one chart image (see the module docstring for coordinates).

    ``problem`` is set (and the other fields may be empty) when no frame or no value axis could be read.
    """

    vertical: bool
    canon: Pixels
    frame: Frame | None
    axis: Axis | None
    categories: tuple[Category, ...]
    spacing: float
    legend: tuple[tuple[str, tuple[int, int, int]], ...]
    colours: tuple[tuple[int, int, int], ...]
    masks: tuple[tuple[int, int], ...]
    value_labels: tuple[ValueLabel, ...]
    texts: tuple[TextBox, ...] = field(default=())
    problem: str | None = None


def _spacing(ticks: list[float], span: float, n: int) -> float:
    if len(ticks) >= 2:
        return float(np.median(np.diff(sorted(ticks))))
    return span / max(n, 1)


def _categories(boxes: list[TextBox], ticks: list[float], frame: Frame, vertical: bool) -> tuple[list[Category], float]:
    span = (frame.right - frame.left) if vertical else (frame.bottom - frame.top)
    spacing = _spacing(ticks, span, len(boxes))
    best: dict[float, tuple[float, TextBox]] = {}
    loose: list[Category] = []
    for box in boxes:
        if not box.text:
            continue
        if vertical:
            anchor, gap = (box.x1 if box.slanted else box.cx), box.y0 - frame.bottom
        else:
            anchor, gap = box.cy, frame.left - box.x1
        pos = snap(anchor, ticks, spacing)
        if pos is None:
            continue
        if not ticks:
            loose.append(Category(box.text, pos))
        elif pos not in best or gap < best[pos][0]:
            best[pos] = (gap, box)
    cats = [Category(box.text, pos) for pos, (_, box) in best.items()] + loose
    return sorted(cats, key=lambda c: c.pos), spacing


def _handle_colour(px: Pixels, box: TextBox) -> tuple[int, int, int] | None:
    y0, y1 = int(max(box.y0, 0)), int(min(box.y1 + 1, px.shape[0]))
    x0, x1 = int(max(box.x0 - 40, 0)), int(max(box.x0 + min(30.0, (box.x1 - box.x0) / 2), 0))
    if y1 <= y0 or x1 <= x0:
        return None
    found = saturated_colours(px[y0:y1, x0:x1], min_pixels=8)
    return found[0] if found else None


def _text_colour(px: Pixels, box: TextBox, colours: tuple[tuple[int, int, int], ...]) -> tuple[int, int, int] | None:
    """The data colour nearest to the saturated pixels of a text box (None for black text)."""
    y0, y1 = int(max(box.y0, 0)), int(min(box.y1 + 1, px.shape[0]))
    x0, x1 = int(max(box.x0, 0)), int(min(box.x1 + 1, px.shape[1]))
    region = px[y0:y1, x0:x1].reshape(-1, 3).astype(np.int32)
    spread = region.max(axis=1) - region.min(axis=1)
    sat = region[spread >= max(60, 0.8 * int(spread.max(initial=0)))]  # the glyphs' cores, not their blended edges
    if sat.shape[0] < 5 or not colours:
        return None
    core = np.median(sat, axis=0)
    return min(colours, key=lambda c: float(np.hypot.reduce(core - np.asarray(c))))


def _value_labels(px: Pixels, boxes: list[TextBox], colours: tuple[tuple[int, int, int], ...]) -> list[ValueLabel]:
    out: list[ValueLabel] = []
    for box in boxes:
        pairs = _PAIR.findall(box.text)
        words = _WORD_PAIR.findall(box.text)
        if len(words) >= 2:  # a row of values whose colons OCR dropped (one "name number" is a plain label)
            pairs += words
        if not pairs:
            continue
        colour = _text_colour(px, box, colours)
        for name, number in pairs:
            value = parse_number(number)
            if value is not None and name.strip():
                out.append(ValueLabel(name.strip(), value, colour))
    return out


def _coloured_text(px: Pixels, ocr: Ocr, frame: Frame, colours: tuple[tuple[int, int, int], ...]) -> list[ValueLabel]:
    """Values printed in a series colour below the plot, read on one copy per colour holding only that colour.

    Black text (tick labels, the axis title) and the other series' rows may overlap coloured value labels;
    keeping only the pixels nearest to one data colour separates them, and gives the row its series colour.
    Costs nothing on a chart with no coloured text below the plot.
    """
    region = px[frame.bottom + 6 :].astype(np.int32)
    spread = region.max(axis=2) - region.min(axis=2)
    if int((spread >= 60).sum()) < 30 or not colours:
        return []
    dists = np.stack([np.sqrt(((region - np.asarray(c)) ** 2).sum(axis=2)) for c in colours])
    nearest = dists.argmin(axis=0)
    out: list[ValueLabel] = []
    for k, colour in enumerate(colours):
        keep = (spread >= 12) & (nearest == k)
        if int(keep.sum()) < 30:
            continue
        only = np.where(keep[:, :, None], region, 255).astype(np.uint8)
        texts = ocr.recognize(only, ocr.detect(only))
        out += [ValueLabel(v.category, v.value, colour) for v in _value_labels(only, texts, ())]
    return out


def _failed(px: Pixels, problem: str, texts: list[TextBox] | None = None) -> Chart:
    return Chart(
        vertical=True,
        canon=px,
        frame=None,
        axis=None,
        categories=(),
        spacing=0.0,
        legend=(),
        colours=(),
        masks=(),
        value_labels=(),
        texts=tuple(texts or ()),
        problem=problem,
    )


def _box(quad: tuple[tuple[float, float], ...]) -> TextBox:
    return TextBox(quad, "", 0.0)


def _spread(boxes: list[TextBox], key: str, n: int = 5) -> list[TextBox]:
    """At most ``n`` boxes evenly spread along ``key`` (the first and the last always kept)."""
    ordered = sorted(boxes, key=lambda b: float(getattr(b, key)))
    if len(ordered) <= n:
        return ordered
    picks = sorted({round(i * (len(ordered) - 1) / (n - 1)) for i in range(n)})
    return [ordered[i] for i in picks]


def _upright(box: TextBox) -> bool:
    """False for text running vertically (a rotated axis title), which the reader never needs."""
    return (box.y1 - box.y0) <= 1.5 * (box.x1 - box.x0)


def read_chart(px: Pixels, ocr: Ocr) -> Chart:
    """Read the structure of a chart image (RGB, shape (H, W, 3), uint8).

    Only the text the reading needs is recognized (detection finds every box): up to five value-axis tick
    labels spread along the axis, every category-side label, the legend entries (boxes above the plot with a
    coloured handle on their left) and any other text below the plot (printed values). The title and the
    rotated axis titles are never recognized.

    Returns:
        A Chart; its ``problem`` says why reading stopped (no plot frame, no numeric value axis) when it did.
    """
    fills = find_fills(px)
    frame = find_frame(px, fills)
    if frame is None:
        return _failed(px, "no plot frame (axis lines) found")
    inner = (frame.left + 2, frame.top + 2, frame.right - 2, frame.bottom - 2)
    h, w = px.shape[:2]
    margins = [(0, frame.top - 15, frame.left - 1, frame.bottom + 15), (0, frame.bottom + 6, w, h)]
    legend_rows = coloured_rows(px, 0, frame.top - 1)  # a legend shows coloured handles; no legend, no search
    if legend_rows is not None:
        margins.append((0, max(legend_rows[0] - 10, 0), w, min(legend_rows[1] + 11, frame.top - 1)))
    margins = [box for m in margins if (box := ink_box(px, m)) is not None]
    found = [_box(q) for q in ocr.detect(px, margins) if not _inside(q, inner)]
    left = [t for t in found if t.cx < frame.left and frame.top - 15 <= t.cy <= frame.bottom + 15 and _upright(t)]
    below = [t for t in found if t.cy > frame.bottom and _upright(t)]
    above = [t for t in found if t.cy < frame.top and _handle_colour(px, t) is not None]
    grid = gridline_axis(px, frame)
    if grid is None:
        wanted = left + below + above
    elif grid == "rows":
        wanted = _spread(left, "cy") + below + above
    else:
        wanted = left + _spread(below, "cx") + above
    texts = ocr.recognize(px, [_clip(t.quad, frame) for t in wanted])
    by_quad = {q.quad: TextBox(q.quad, t.text, t.score) for q, t in zip(wanted, texts, strict=False)}
    left, below, above = ([by_quad[t.quad] for t in group if t.quad in by_quad] for group in (left, below, above))
    t_left, t_below = ticks_left(px, frame), ticks_below(px, frame)
    if grid is None:
        n_left = sum(parse_number(t.text) is not None for t in left)
        n_below = sum(parse_number(t.text) is not None for t in below)
        vertical = n_left >= n_below
    else:
        vertical = grid == "rows"
    axis = value_axis(left if vertical else below, t_left if vertical else t_below, vertical)
    if axis is None:
        return _failed(px, "no numeric value axis could be read from the tick labels", texts)
    cats, spacing = _categories(below if vertical else left, t_below if vertical else t_left, frame, vertical)
    canon = px if vertical else np.ascontiguousarray(px.transpose(1, 0, 2))
    cframe = frame if vertical else frame.transposed()
    interior = canon[cframe.top + 2 : cframe.bottom - 1, cframe.left + 2 : cframe.right - 1]
    # every 4th pixel is plenty; a colour must hold 3% of the coloured pixels (anti-aliased blends do not)
    colours = tuple(saturated_colours(interior[::2, ::2], min_share=0.03, min_pixels=8))
    legend = tuple((t.text, c) for t in above if t.text and (c := _handle_colour(px, t)) is not None)
    masks = tuple(mask_bands(fills, frame, vertical))
    labels = tuple(
        _coloured_text(px, ocr, frame, colours) + _value_labels(px, below if vertical else below + left, colours)
    )
    return Chart(
        vertical=vertical,
        canon=canon,
        frame=cframe,
        axis=axis,
        categories=tuple(cats),
        spacing=spacing,
        legend=legend,
        colours=colours,
        masks=masks,
        value_labels=labels,
        texts=tuple(texts),
    )


def _clip(quad: tuple[tuple[float, float], ...], frame: Frame) -> tuple[tuple[float, float], ...]:
    """Keep an upright box off the frame and its tick marks (6 px), so a tick is never read as a digit."""
    xs, ys = [p[0] for p in quad], [p[1] for p in quad]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    if abs(quad[0][1] - quad[1][1]) > 2:
        return quad
    if x0 < frame.left <= x1 + 6 and x1 > frame.left - 6:
        x1 = frame.left - 6
    if y0 > frame.bottom - 4 and y0 < frame.bottom + 6 and x0 > frame.left:
        y0 = frame.bottom + 6
    if x1 - x0 < 4 or y1 - y0 < 4:
        return quad
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


def _inside(quad: tuple[tuple[float, float], ...], rect: tuple[int, int, int, int]) -> bool:
    cx = sum(p[0] for p in quad) / len(quad)
    cy = sum(p[1] for p in quad) / len(quad)
    return rect[0] < cx < rect[2] and rect[1] < cy < rect[3]
