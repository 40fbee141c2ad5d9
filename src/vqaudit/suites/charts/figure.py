"""The chart figure: its fixed size and axes rectangle, the font, and the artists a world is drawn with.

Every property here is fixed per chart kind or set from the world's declared layout (axis range, ticks, labels),
never from a value, so a category's pixel band depends on the layout alone (seed 000, §3.2: "the mask position
never depends on the hidden value"). :mod:`vqaudit.suites.charts.render` draws worlds with these artists on
reused canvases; :mod:`vqaudit.suites.charts.masks` derives the masks from :func:`axes_rect`.
"""

from __future__ import annotations

import functools
import unicodedata
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from vqaudit.suites.charts.world import World

WIDTH, HEIGHT, DPI = 640, 480, 100
"""Image width and height in pixels, and the figure's dots per inch."""
COLORS = ("#1f77b4", "#ff7f0e")
"""Series colours (one or two series)."""
MARKERS = ("o", "s")
"""Series markers of dot and line charts."""
RC: Any = {
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.linewidth": 0.8,
    "path.simplify": False,
    "text.antialiased": True,
}
"""The matplotlib settings every chart is drawn under (``matplotlib.rc_context``)."""


@functools.cache
def _font() -> Any:
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    return FT2Font(font_manager.findfont(font_manager.FontProperties(family=RC["font.family"])))


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


def legend_handle(world: World, s: int) -> Any:
    """The legend entry of series ``s``: a colour patch for bar charts, a marker (and line) for the others."""
    if world.kind in ("vbar", "hbar"):
        return Patch(color=COLORS[s], label=world.series[s])
    line = 2 if world.kind == "line" else 0
    return Line2D([], [], color=COLORS[s], marker=MARKERS[s], linewidth=line, label=world.series[s])


def value_label_row(fig: Figure, world: World) -> list[Any]:
    """Values as text under the plot area, one line per series (a leak the checker must catch)."""
    left, _, w, _ = axes_rect(world)
    texts = []
    for s, row in enumerate(world.values):
        text = "  ".join(f"{c}: {float(v):g}" for c, v in zip(world.categories, row, strict=True))
        texts.append(fig.text(left + w / 2, 0.03 + 0.035 * s, text, ha="center", fontsize=7, color=COLORS[s]))
    return texts


def add_data(ax: Any, world: World) -> list[Any]:
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


def setup_axes(fig: Figure, world: World) -> Any:
    """The fixed axes of a world's layout: rectangle, declared range, ticks, tick labels, axis labels and grid."""
    ax = fig.add_axes(axes_rect(world))
    configure_axes(ax, world)
    return ax


def configure_axes(ax: Any, world: World) -> None:
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


def set_data(artists: list[Any], world: World) -> None:
    """Give the data artists :func:`add_data` made for ``world``'s layout the values of ``world``.

    Sets exactly what :func:`add_data` would have computed for these values (bar lengths ``value - axis_lo``,
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


def rgb(canvas: FigureCanvasAgg) -> np.ndarray:
    """The canvas's pixels as a new RGB ``uint8`` array of shape (480, 640, 3) (alpha dropped)."""
    rgba = np.asarray(canvas.buffer_rgba())  # type: ignore[no-untyped-call]
    out = np.empty((*rgba.shape[:2], 3), dtype=np.uint8)
    for ch in range(3):  # one strided copy per channel: 4x faster than ascontiguousarray(rgba[:, :, :3])
        out[:, :, ch] = rgba[:, :, ch]
    return out
