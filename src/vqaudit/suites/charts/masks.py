"""Pixel-space masks of chart categories: opaque rectangles painted onto rendered pixels.

A mask's rectangle is a function of the chart layout (:func:`vqaudit.suites.charts.figure.axes_rect`: a fixed
axes rectangle per chart kind) and the category's index alone, never of any value (seed 000, §3.2: "the mask
position never depends on the hidden value").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from vqaudit.suites.charts.figure import HEIGHT, WIDTH, axes_rect
from vqaudit.suites.charts.world import World

MASK_FILL = (150, 150, 150)
"""The RGB colour every mask is painted with."""


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
        return {
            "name": self.name,
            "category_index": self.category_index,
            "rect_px": [self.x0, self.y0, self.x1, self.y1],
            "fill": list(MASK_FILL),
        }


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
    left, bottom, w, h = axes_rect(world)
    ax0, ax1 = left * WIDTH, (left + w) * WIDTH  # display x of the plot area
    ay0, ay1 = (1 - bottom - h) * HEIGHT, (1 - bottom) * HEIGHT  # image rows of the plot area (top, bottom)
    a, b = max(category_index - half, -0.5), min(category_index + half, n - 0.5)
    if world.kind == "hbar":  # categories run top to bottom along the y axis
        r0 = ay0 + (a + 0.5) / n * (ay1 - ay0)
        r1 = ay0 + (b + 0.5) / n * (ay1 - ay0)
        return Mask(
            name, category_index, int(np.floor(ax0)) - 2, int(np.floor(r0)), int(np.ceil(ax1)) + 2, int(np.ceil(r1))
        )
    c0 = ax0 + (a + 0.5) / n * (ax1 - ax0)
    c1 = ax0 + (b + 0.5) / n * (ax1 - ax0)
    return Mask(
        name, category_index, int(np.floor(c0)), int(np.floor(ay0)) - 2, int(np.ceil(c1)), int(np.ceil(ay1)) + 2
    )


def apply_mask(pixels: np.ndarray, mask: Mask) -> np.ndarray:
    """A copy of ``pixels`` with the mask rectangle painted opaque ``MASK_FILL``."""
    out = pixels.copy()
    out[max(mask.y0, 0) : mask.y1, max(mask.x0, 0) : mask.x1] = MASK_FILL
    return out
