"""Deterministic chart renderer and pixel-space masks.

A world is drawn with matplotlib's Agg canvas at a fixed figure size, a fixed axes rectangle and the world's
declared axis range (never autoscaled), so the pixel rectangle of a category's column band is a function of the
category's index and the chart layout alone, never of any value (seed 000, §3.2: "the mask position never
depends on the hidden value"). Masks are opaque rectangles painted onto the rendered pixels.

Images are RGB ``uint8`` arrays of shape (480, 640, 3). The **pixel hash** is the SHA-256 of the array's shape
and bytes, so two PNG files with different bytes but the same decoded pixels hash equally.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from typing import Any

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from PIL import Image

from vqaudit.suites.charts.world import World

WIDTH, HEIGHT, DPI = 640, 480, 100
MASK_FILL = (150, 150, 150)
COLORS = ("#1f77b4", "#ff7f0e")
MARKERS = ("o", "s")
_RC: Any = {
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.linewidth": 0.8,
    "path.simplify": False,
    "text.antialiased": True,
}


@dataclass(frozen=True)
class Mask:
    """An opaque rectangle in pixel coordinates: columns ``x0:x1``, rows ``y0:y1`` (half-open, top-left origin).

    ``name`` says how it was derived: ``slot`` (the category's own column band) or ``neighbors`` (the band from
    the previous category's position to the next one's, which also hides the line segments entering the
    hidden point).
    """

    name: str
    category_index: int
    x0: int
    y0: int
    x1: int
    y1: int

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"name": self.name, "category_index": self.category_index,
                "rect_px": [self.x0, self.y0, self.x1, self.y1], "fill": list(MASK_FILL)}


def _axes_rect(world: World) -> tuple[float, float, float, float]:
    if world.kind == "hbar":
        return (0.30, 0.10, 0.64, 0.74)
    return (0.11, 0.24, 0.85, 0.60)


def _legend_handle(world: World, s: int) -> Any:
    if world.kind in ("vbar", "hbar"):
        return Patch(color=COLORS[s], label=world.series[s])
    line = 2 if world.kind == "line" else 0
    return Line2D([], [], color=COLORS[s], marker=MARKERS[s], linewidth=line, label=world.series[s])


def _value_label_row(fig: Figure, world: World) -> None:
    """Values as text under the plot area, one line per series (a leak the checker must catch)."""
    left, _, w, _ = _axes_rect(world)
    n = len(world.categories)
    for s, row in enumerate(world.values):
        text = "  ".join(f"{c}: {float(v):g}" for c, v in zip(world.categories, row, strict=True))
        fig.text(left + w / 2, 0.03 + 0.035 * s, text, ha="center", fontsize=7, color=COLORS[s])
    del n


def _draw(world: World) -> tuple[FigureCanvasAgg, Any]:
    fig = Figure(figsize=(WIDTH / DPI, HEIGHT / DPI), dpi=DPI, facecolor="white")
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes(_axes_rect(world))
    n = len(world.categories)
    pos = np.arange(n, dtype=float)
    lo, hi = float(world.axis_lo), float(world.axis_hi)
    ticks = np.arange(lo, hi + float(world.tick_step) / 2, float(world.tick_step))
    k = len(world.series)
    width = 0.6 if k == 1 else 0.35
    for s, (name, row) in enumerate(zip(world.series, world.values, strict=True)):
        vals = np.array([float(v) for v in row])
        offset = 0.0 if k == 1 else (s - 0.5) * width
        style: dict[str, Any] = {"color": COLORS[s], "label": name, "zorder": 3}
        if world.kind == "vbar":
            ax.bar(pos + offset, vals - lo, width, bottom=lo, **style)
        elif world.kind == "hbar":
            ax.barh(pos + offset, vals - lo, width, left=lo, **style)
        elif world.kind == "line":
            # Each segment is its own path, so rasterizing one segment never depends on a far-away vertex.
            for j in range(n - 1):
                ax.plot(pos[j : j + 2], vals[j : j + 2], linewidth=2, solid_capstyle="round", color=COLORS[s],
                        zorder=3, snap=False)
            ax.plot(pos, vals, linestyle="none", marker=MARKERS[s], markersize=7, **style)
        else:
            ax.plot(pos, vals, linestyle="none", marker=MARKERS[s], markersize=8, **style)
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
    fig.text(0.5, 0.955, world.title, ha="center", va="center", fontsize=11)
    if world.value_labels:
        _value_label_row(fig, world)
    if k > 1:
        handles = [_legend_handle(world, s) for s in range(k)]
        fig.legend(handles=handles, loc="center", bbox_to_anchor=(0.5, 0.895), ncol=k, frameon=False)
    return canvas, ax


def render(world: World) -> np.ndarray:
    """Render a world to an RGB array of shape (480, 640, 3), dtype uint8. Deterministic for a given world."""
    with matplotlib.rc_context(_RC):
        canvas, _ = _draw(world)
        canvas.draw()  # type: ignore[no-untyped-call]
        rgba = np.asarray(canvas.buffer_rgba())  # type: ignore[no-untyped-call]
    return np.ascontiguousarray(rgba[:, :, :3])


def category_mask(world: World, category_index: int, name: str) -> Mask:
    """The pixel rectangle of a named mask for one category; depends on layout and index only, never on values.

    ``slot``: data interval ``[i - 0.5, i + 0.5]`` along the category axis; ``neighbors``: ``[i - 1, i + 1]``
    (clipped to the plot area). Across the value axis the mask spans the whole plot area plus 2 px, so
    the spines inside the band are covered too.

    Raises:
        ValueError: for an unknown mask name or an index outside the world's categories.
    """
    n = len(world.categories)
    if not 0 <= category_index < n:
        raise ValueError(f"category index {category_index} outside 0..{n - 1}")
    half = {"slot": 0.5, "neighbors": 1.0}.get(name)
    if half is None:
        raise ValueError(f"unknown mask {name!r}")
    left, bottom, w, h = _axes_rect(world)
    ax0, ax1 = left * WIDTH, (left + w) * WIDTH  # display x of the plot area
    ay0, ay1 = (1 - bottom - h) * HEIGHT, (1 - bottom) * HEIGHT  # image rows of the plot area (top, bottom)
    a, b = max(category_index - half, -0.5), min(category_index + half, n - 0.5)
    if world.kind == "hbar":  # categories run top to bottom along the y axis
        r0 = ay0 + (a + 0.5) / n * (ay1 - ay0)
        r1 = ay0 + (b + 0.5) / n * (ay1 - ay0)
        return Mask(name, category_index, int(np.floor(ax0)) - 2, int(np.floor(r0)), int(np.ceil(ax1)) + 2,
                    int(np.ceil(r1)))
    c0 = ax0 + (a + 0.5) / n * (ax1 - ax0)
    c1 = ax0 + (b + 0.5) / n * (ax1 - ax0)
    return Mask(name, category_index, int(np.floor(c0)), int(np.floor(ay0)) - 2, int(np.ceil(c1)),
                int(np.ceil(ay1)) + 2)


def apply_mask(pixels: np.ndarray, mask: Mask) -> np.ndarray:
    """A copy of ``pixels`` with the mask rectangle painted opaque ``MASK_FILL``."""
    out = pixels.copy()
    out[max(mask.y0, 0) : mask.y1, max(mask.x0, 0) : mask.x1] = MASK_FILL
    return out


def pixel_sha256(pixels: np.ndarray) -> str:
    """SHA-256 of decoded pixels (shape and RGB bytes), independent of the PNG encoding."""
    digest = hashlib.sha256(repr(pixels.shape).encode())
    digest.update(np.ascontiguousarray(pixels, dtype=np.uint8).tobytes())
    return digest.hexdigest()


def png_bytes(pixels: np.ndarray) -> bytes:
    """Encode RGB pixels as PNG with no metadata (byte-identical for identical pixels)."""
    buf = io.BytesIO()
    Image.fromarray(pixels, mode="RGB").save(buf, format="PNG", compress_level=6)
    return buf.getvalue()


def decode_png(data: bytes) -> np.ndarray:
    """Decode PNG bytes to an RGB uint8 array."""
    with Image.open(io.BytesIO(data)) as img:
        return np.asarray(img.convert("RGB"))
