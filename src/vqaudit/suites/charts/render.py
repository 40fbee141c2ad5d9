"""Deterministic chart renderer.

A world is drawn with matplotlib's Agg canvas at a fixed figure size, a fixed axes rectangle and the world's
declared axis range (never autoscaled), so the pixel rectangle of a category's column band is a function of the
category's index and the chart layout alone, never of any value (seed 000, §3.2: "the mask position never
depends on the hidden value"); :mod:`vqaudit.suites.charts.masks` derives the masks from that layout.

Images are RGB ``uint8`` arrays of shape (480, 640, 3); :mod:`vqaudit.suites.charts.png` encodes, decodes and
hashes them. The figure's size, axes rectangle, font and artists are :mod:`vqaudit.suites.charts.figure`; this
module draws worlds with them, reusing one canvas per axes rectangle.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace
from typing import Any

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from vqaudit.suites.charts.figure import (
    DPI,
    HEIGHT,
    RC,
    WIDTH,
    add_data,
    axes_rect,
    configure_axes,
    legend_handle,
    rgb,
    set_data,
    setup_axes,
    value_label_row,
)
from vqaudit.suites.charts.world import World

RENDERER = "vqaudit-charts-agg/2"
"""Renderer and image-format version in the manifest; /2: unfiltered PNG at zlib level 1 (pixels as /1's)."""
_TICK_REACH_PX = (3.5 + 0.8 / 2) * DPI / 72 + 1.0
"""How far outside the axes box spines and tick marks can paint: tick length plus half its width (matplotlib's
default 3.5 pt and 0.8 pt), plus a pixel of antialiasing."""


def _layout_key(world: World) -> World:
    """What a world's pixels depend on apart from its values: the world with its value table emptied."""
    return replace(world, values=())


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
            self.data = add_data(self.ax, world)
        self.key, self.frame = _layout_key(world), frame

    def _draw_frame(self, world: World) -> None:
        """Draw the whole background of ``world``'s layout; record where its category-axis texts are."""
        for artist in self.overlay:
            artist.remove()
        self.overlay = []
        configure_axes(self.ax, world)
        self.overlay.append(self.fig.text(0.5, 0.955, world.title, ha="center", va="center", fontsize=11))
        if len(world.series) > 1:
            handles = [legend_handle(world, s) for s in range(len(world.series))]
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
        configure_axes(self.ax, world)
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
        set_data(self.data, world)
        labels = value_label_row(self.fig, world) if world.value_labels else []
        try:
            self.canvas.restore_region(self.background)  # type: ignore[no-untyped-call]
            renderer = self.canvas.get_renderer()  # type: ignore[no-untyped-call]
            for artist in self.data:  # in creation order (all at zorder 3)
                artist.draw(renderer)
            if not self.baked:
                title, *legend = self.overlay
                for artist in [title, *labels, *legend]:  # texts at zorder 3 in creation order, then the legend
                    artist.draw(renderer)
            return rgb(self.canvas)
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


_CANVASES: dict[bool, _Canvas] = {}
_PIXELS: OrderedDict[World, np.ndarray] = OrderedDict()
_MAX_PIXELS = 16


def _draw_reference(world: World) -> np.ndarray:
    """A fresh figure drawn with one ``canvas.draw()``: the definition of a world's pixels (used by the tests)."""
    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(WIDTH / DPI, HEIGHT / DPI), dpi=DPI, facecolor="white")
        canvas = FigureCanvasAgg(fig)
        ax = setup_axes(fig, world)
        add_data(ax, world)
        fig.text(0.5, 0.955, world.title, ha="center", va="center", fontsize=11)
        if world.value_labels:
            value_label_row(fig, world)
        k = len(world.series)
        if k > 1:
            handles = [legend_handle(world, s) for s in range(k)]
            fig.legend(handles=handles, loc="center", bbox_to_anchor=(0.5, 0.895), ncol=k, frameon=False)
        canvas.draw()  # type: ignore[no-untyped-call]
        return rgb(canvas)


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
    with matplotlib.rc_context(RC):
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
