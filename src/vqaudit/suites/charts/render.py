"""Deterministic chart renderer.

A world is drawn with matplotlib's Agg canvas at a fixed figure size, a fixed axes rectangle and the world's
declared axis range (never autoscaled), so the pixel rectangle of a category's column band is a function of the
category's index and the chart layout alone, never of any value (seed 000, §3.2: "the mask position never
depends on the hidden value"); :mod:`vqaudit.suites.charts.masks` derives the masks from that layout.

Images are RGB ``uint8`` arrays of shape (480, 640, 3); :mod:`vqaudit.suites.charts.png` encodes, decodes and
hashes them.
"""

from __future__ import annotations

import functools
import unicodedata
from collections import OrderedDict
from dataclasses import replace
from typing import Any

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.transforms import Bbox

from vqaudit.suites.charts.world import World

WIDTH, HEIGHT, DPI = 640, 480, 100
RENDERER = "vqaudit-charts-agg/2"
"""Renderer and image-format version in the manifest; /2: unfiltered PNG at zlib level 1 (pixels as /1's)."""
COLORS = ("#1f77b4", "#ff7f0e")
MARKERS = ("o", "s")
_TICK_REACH_PX = (3.5 + 0.8 / 2) * DPI / 72 + 1.0
"""How far outside the axes box spines and tick marks can paint: tick length plus half its width (matplotlib's
default 3.5 pt and 0.8 pt), plus a pixel of antialiasing."""
_RC: Any = {
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.linewidth": 0.8,
    "path.simplify": False,
    "text.antialiased": True,
}


@functools.cache
def _font() -> Any:
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    return FT2Font(font_manager.findfont(font_manager.FontProperties(family=_RC["font.family"])))


def undrawable_characters(text: str) -> list[str]:
    """The characters of ``text`` the chart font (``font.family`` of the renderer) has no glyph for.

    matplotlib draws such a character as an empty box or not at all, so a label holding one (an emoji, a script
    DejaVu Sans lacks) would not read as what the world says it is. Whitespace is not listed.

    Returns:
        ``U+XXXX NAME`` of each distinct such character, in order of first appearance (empty: every glyph exists).
    """
    font = _font()
    out: dict[str, None] = {}
    for ch in text:
        if not ch.isspace() and font.get_char_index(ord(ch)) == 0:
            out.setdefault(f"U+{ord(ch):04X} {unicodedata.name(ch, 'UNNAMED')}")
    return list(out)


def axes_rect(world: World) -> tuple[float, float, float, float]:
    """The axes rectangle ``(left, bottom, width, height)`` in figure fractions, fixed per chart kind.

    Every pixel rectangle derived from it (the masks of :mod:`vqaudit.suites.charts.masks`) depends on the
    layout alone.
    """
    if world.kind == "hbar":
        return (0.30, 0.10, 0.64, 0.74)
    return (0.11, 0.24, 0.85, 0.60)


def _legend_handle(world: World, s: int) -> Any:
    if world.kind in ("vbar", "hbar"):
        return Patch(color=COLORS[s], label=world.series[s])
    line = 2 if world.kind == "line" else 0
    return Line2D([], [], color=COLORS[s], marker=MARKERS[s], linewidth=line, label=world.series[s])


def _value_label_row(fig: Figure, world: World) -> list[Any]:
    """Values as text under the plot area, one line per series (a leak the checker must catch)."""
    left, _, w, _ = axes_rect(world)
    texts = []
    for s, row in enumerate(world.values):
        text = "  ".join(f"{c}: {float(v):g}" for c, v in zip(world.categories, row, strict=True))
        texts.append(fig.text(left + w / 2, 0.03 + 0.035 * s, text, ha="center", fontsize=7, color=COLORS[s]))
    return texts


def _layout_key(world: World) -> World:
    """What a world's pixels depend on apart from its values: the world with its value table emptied."""
    return replace(world, values=())


def _add_data(ax: Any, world: World) -> list[Any]:
    """Add the world's data artists (bars, line segments, markers; all zorder 3) to ``ax``; return them in order."""
    added: list[Any] = []
    n = len(world.categories)
    pos = np.arange(n, dtype=float)
    lo = float(world.axis_lo)
    k = len(world.series)
    width = 0.6 if k == 1 else 0.35
    for s, (name, row) in enumerate(zip(world.series, world.values, strict=True)):
        vals = np.array([float(v) for v in row])
        offset = 0.0 if k == 1 else (s - 0.5) * width
        style: dict[str, Any] = {"color": COLORS[s], "label": name, "zorder": 3}
        if world.kind == "vbar":
            added += ax.bar(pos + offset, vals - lo, width, bottom=lo, **style).patches
        elif world.kind == "hbar":
            added += ax.barh(pos + offset, vals - lo, width, left=lo, **style).patches
        elif world.kind == "line":
            # Each segment is its own path, so rasterizing one segment never depends on a far-away vertex.
            for j in range(n - 1):
                added += ax.plot(
                    pos[j : j + 2],
                    vals[j : j + 2],
                    linewidth=2,
                    solid_capstyle="round",
                    color=COLORS[s],
                    zorder=3,
                    snap=False,
                )
            added += ax.plot(pos, vals, linestyle="none", marker=MARKERS[s], markersize=7, **style)
        else:
            added += ax.plot(pos, vals, linestyle="none", marker=MARKERS[s], markersize=8, **style)
    return added


def _setup_axes(fig: Figure, world: World) -> Any:
    """The fixed axes of a world's layout: rectangle, declared range, ticks, tick labels, axis labels and grid."""
    ax = fig.add_axes(axes_rect(world))
    _configure_axes(ax, world)
    return ax


def _configure_axes(ax: Any, world: World) -> None:
    """Set every layout property of ``ax`` (range, ticks, tick labels with their rotation, axis labels, grid)."""
    n = len(world.categories)
    pos = np.arange(n, dtype=float)
    lo, hi = float(world.axis_lo), float(world.axis_hi)
    ticks = np.arange(lo, hi + float(world.tick_step) / 2, float(world.tick_step))
    value_label = f"{world.value_label} ({world.unit})" if world.unit else world.value_label
    rotate = any(len(c) > 6 for c in world.categories)
    if world.kind == "hbar":
        ax.set_xlim(lo, hi)
        ax.set_xticks(ticks)
        ax.set_ylim(n - 0.5, -0.5)
        ax.set_yticks(pos, list(world.categories))
        ax.set_xlabel(value_label)
        ax.set_ylabel(world.category_label)
        ax.grid(axis="x", color="#dddddd", linewidth=0.8, zorder=0)
    else:
        ax.set_ylim(lo, hi)
        ax.set_yticks(ticks)
        ax.set_xlim(-0.5, n - 0.5)
        ax.set_xticks(pos, list(world.categories), rotation=30 if rotate else 0, ha="right" if rotate else "center")
        ax.set_ylabel(value_label)
        ax.set_xlabel(world.category_label)
        ax.grid(axis="y", color="#dddddd", linewidth=0.8, zorder=0)
    ax.set_axisbelow(True)


class _Canvas:
    """One reused figure per axes rectangle, showing one layout at a time.

    For a layout, the background (figure, axes, ticks, labels, grid, and the title and legend; no data) is
    rasterized once (or made from the previous layout's when only the category names differ, see
    :meth:`_redraw_categories`), and the layout's data artists are made once; each world then sets the artists' values
    (bar lengths, line and marker heights), restores the background and draws the data artists. Matplotlib's own
    draw order for the figure :func:`_draw_reference` builds is: figure patch; the axes (patch, grid and axis at
    zorder 0.5, spines 2.5, data 3); the figure texts at zorder 3 in creation order (title, value labels); the
    legend at 5. Data artists are clipped to the axes box, so when the title and legend lie outside it (checked
    with a 3 px margin; true of every layout here) drawing them before the data gives the same bytes. Otherwise,
    and for the per-world value labels, they are drawn after the data, in matplotlib's order. A new layout
    reconfigures the same axes (every layout property is set again), which reuses matplotlib's tick objects.
    """

    def __init__(self, world: World) -> None:
        self.fig = Figure(figsize=(WIDTH / DPI, HEIGHT / DPI), dpi=DPI, facecolor="white")
        self.canvas = FigureCanvasAgg(self.fig)
        self.ax = self.fig.add_axes(axes_rect(world))
        self.key: World | None = None
        self.overlay: list[Any] = []
        self.data: list[Any] = []
        self.baked = False
        self.background: Any = None
        self.frame: tuple[World, int] | None = None
        self.category_box: Any = None
        self.keep_out: list[Any] = []

    def show(self, world: World) -> None:
        """Configure the axes for ``world``'s layout, make its data artists and rasterize its background."""
        frame = _frame_key(world)
        composable = self.key is not None and self.baked and frame == self.frame
        self.key = None
        if not (composable and self._redraw_categories(world)):  # else the data artists fit the layout as they are
            for artist in self.data:
                artist.remove()
            self.data = []
            self._draw_frame(world)
            self.data = _add_data(self.ax, world)
        self.key, self.frame = _layout_key(world), frame

    def _draw_frame(self, world: World) -> None:
        """Draw the whole background of ``world``'s layout; record where its category-axis texts are."""
        for artist in self.overlay:
            artist.remove()
        self.overlay = []
        _configure_axes(self.ax, world)
        self.overlay.append(self.fig.text(0.5, 0.955, world.title, ha="center", va="center", fontsize=11))
        if len(world.series) > 1:
            handles = [_legend_handle(world, s) for s in range(len(world.series))]
            self.overlay.append(
                self.fig.legend(
                    handles=handles, loc="center", bbox_to_anchor=(0.5, 0.895), ncol=len(world.series), frameon=False
                )
            )
        self.canvas.draw()  # type: ignore[no-untyped-call]
        renderer = self.canvas.get_renderer()  # type: ignore[no-untyped-call]
        box = self.ax.bbox
        extents = [artist.get_window_extent(renderer) for artist in self.overlay]
        self.baked = not world.value_labels and all(_apart(e, box, 3.0) for e in extents)
        if not self.baked:  # draw them after the data, as matplotlib does
            for artist in self.overlay:
                artist.set_visible(False)
            self.canvas.draw()  # type: ignore[no-untyped-call]
            for artist in self.overlay:
                artist.set_visible(True)
        self.background = self.canvas.copy_from_bbox(self.fig.bbox)  # type: ignore[no-untyped-call]
        category_axis, value_axis = _axes_of(self.ax, world)
        self.category_box = category_axis.get_tightbbox(renderer)
        reach = _TICK_REACH_PX
        self.keep_out = [
            Bbox.from_extents(box.x0 - reach, box.y0 - reach, box.x1 + reach, box.y1 + reach),
            value_axis.get_tightbbox(renderer),
            *extents,
        ]

    def _redraw_categories(self, world: World) -> bool:
        """Turn the shown background into ``world``'s, whose layout differs only in its category names.

        Only the category axis's tick labels and label differ (the tick positions, the value axis, title and
        legend are the same), and they are drawn onto the figure's white, apart from everything else. So the
        rectangle covering the old and new texts (plus 1.5 px) is reset to white and the new texts are drawn in
        matplotlib's order (tick labels in tick order, then the axis label). Returns False, changing nothing
        but the axes' configuration, when that rectangle comes near any other artist (axes box with spines and
        ticks, value-axis texts, title, legend); the caller then draws the whole frame.
        """
        renderer = self.canvas.get_renderer()  # type: ignore[no-untyped-call]
        category_axis, _ = _axes_of(self.ax, world)
        _configure_axes(self.ax, world)
        new_box = category_axis.get_tightbbox(renderer)
        if new_box is None or self.category_box is None:
            return False
        c0, y0, c1, y1 = _pixel_rect(Bbox.union([self.category_box, new_box]), 1.5)
        rect = Bbox.from_extents(c0, y0, c1, y1)
        if not all(_apart(rect, other, 0.0) for other in self.keep_out if other is not None):
            return False
        self.canvas.restore_region(self.background)  # type: ignore[no-untyped-call]
        pixels = np.asarray(self.canvas.buffer_rgba())  # type: ignore[no-untyped-call]
        pixels[HEIGHT - y1 : HEIGHT - y0, c0:c1] = 255  # the opaque white figure patch, as under a fresh figure's text
        for tick in category_axis.get_major_ticks(len(category_axis.get_majorticklocs())):
            tick.label1.draw(renderer)
            tick.label2.draw(renderer)
        category_axis.label.draw(renderer)
        self.background = self.canvas.copy_from_bbox(self.fig.bbox)  # type: ignore[no-untyped-call]
        self.category_box = new_box
        return True

    def draw(self, world: World) -> np.ndarray:
        """The RGB pixels of ``world`` (which must have the shown layout); the figure is left as it was."""
        _set_data(self.data, world)
        labels = _value_label_row(self.fig, world) if world.value_labels else []
        try:
            self.canvas.restore_region(self.background)  # type: ignore[no-untyped-call]
            renderer = self.canvas.get_renderer()  # type: ignore[no-untyped-call]
            for artist in self.data:  # in creation order (all at zorder 3)
                artist.draw(renderer)
            if not self.baked:
                title, *legend = self.overlay
                for artist in [title, *labels, *legend]:  # texts at zorder 3 in creation order, then the legend
                    artist.draw(renderer)
            return _rgb(self.canvas)
        finally:
            for artist in labels:
                artist.remove()


def _frame_key(world: World) -> tuple[World, int]:
    """What a layout's background depends on apart from the category names.

    That is the world without values and names, and the number of categories (which fixes the tick positions).
    """
    return replace(world, values=(), categories=()), len(world.categories)


def _axes_of(ax: Any, world: World) -> tuple[Any, Any]:
    """The (category, value) axis objects of ``ax`` for ``world``'s kind."""
    return (ax.yaxis, ax.xaxis) if world.kind == "hbar" else (ax.xaxis, ax.yaxis)


def _pixel_rect(box: Any, margin: float) -> tuple[int, int, int, int]:
    """Whole-pixel display rectangle ``(x0, y0, x1, y1)`` covering ``box`` grown by ``margin``, inside the figure."""
    return (
        max(int(np.floor(box.x0 - margin)), 0),
        max(int(np.floor(box.y0 - margin)), 0),
        min(int(np.ceil(box.x1 + margin)), WIDTH),
        min(int(np.ceil(box.y1 + margin)), HEIGHT),
    )


def _apart(a: Any, b: Any, margin: float) -> bool:
    """Whether two display-space boxes are more than ``margin`` pixels apart along x or y."""
    return bool(a.x0 > b.x1 + margin or a.x1 < b.x0 - margin or a.y0 > b.y1 + margin or a.y1 < b.y0 - margin)


def _set_data(artists: list[Any], world: World) -> None:
    """Give the data artists :func:`_add_data` made for ``world``'s layout the values of ``world``.

    Sets exactly what :func:`_add_data` would have computed for these values (bar lengths ``value - axis_lo``,
    line-segment and marker heights), so the artists are in the state of freshly made ones.
    """
    n = len(world.categories)
    lo = float(world.axis_lo)
    it = iter(artists)
    for row in world.values:
        vals = np.array([float(v) for v in row])
        if world.kind == "vbar":
            for length in vals - lo:
                next(it).set_height(length)
        elif world.kind == "hbar":
            for length in vals - lo:
                next(it).set_width(length)
        elif world.kind == "line":
            for j in range(n - 1):
                next(it).set_ydata(vals[j : j + 2])
            next(it).set_ydata(vals)
        else:
            next(it).set_ydata(vals)


def _rgb(canvas: FigureCanvasAgg) -> np.ndarray:
    """The canvas's pixels as a new RGB ``uint8`` array of shape (480, 640, 3) (alpha dropped)."""
    rgba = np.asarray(canvas.buffer_rgba())  # type: ignore[no-untyped-call]
    out = np.empty((*rgba.shape[:2], 3), dtype=np.uint8)
    for ch in range(3):  # one strided copy per channel: 4x faster than ascontiguousarray(rgba[:, :, :3])
        out[:, :, ch] = rgba[:, :, ch]
    return out


_CANVASES: dict[bool, _Canvas] = {}
_PIXELS: OrderedDict[World, np.ndarray] = OrderedDict()
_MAX_PIXELS = 16


def _draw_reference(world: World) -> np.ndarray:
    """A fresh figure drawn with one ``canvas.draw()``: the definition of a world's pixels (used by the tests)."""
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(WIDTH / DPI, HEIGHT / DPI), dpi=DPI, facecolor="white")
        canvas = FigureCanvasAgg(fig)
        ax = _setup_axes(fig, world)
        _add_data(ax, world)
        fig.text(0.5, 0.955, world.title, ha="center", va="center", fontsize=11)
        if world.value_labels:
            _value_label_row(fig, world)
        k = len(world.series)
        if k > 1:
            handles = [_legend_handle(world, s) for s in range(k)]
            fig.legend(handles=handles, loc="center", bbox_to_anchor=(0.5, 0.895), ncol=k, frameon=False)
        canvas.draw()  # type: ignore[no-untyped-call]
        return _rgb(canvas)


def render(world: World) -> np.ndarray:
    """Render a world to an RGB array of shape (480, 640, 3), dtype uint8. Deterministic for a given world.

    The array is read-only and may be shared: a process keeps the last 16 renders (a group renders its original
    world up to three times) and one figure per axes rectangle with the background of the last layout drawn (a
    group's views share their axes), so only the data artists are drawn per world. The pixels equal
    :func:`_draw_reference`'s byte for byte.
    """
    cached = _PIXELS.get(world)
    if cached is not None:
        _PIXELS.move_to_end(world)
        return cached
    rect = world.kind == "hbar"
    with matplotlib.rc_context(_RC):
        try:
            canvas = _CANVASES.get(rect)
            if canvas is None:
                canvas = _CANVASES[rect] = _Canvas(world)
            if canvas.key != _layout_key(world):
                canvas.show(world)
            pixels = canvas.draw(world)
        except BaseException:
            _CANVASES.pop(rect, None)  # never reuse a figure a failed draw may have left half-changed
            raise
    pixels.flags.writeable = False
    _PIXELS[world] = pixels
    if len(_PIXELS) > _MAX_PIXELS:
        _PIXELS.popitem(last=False)
    return pixels
