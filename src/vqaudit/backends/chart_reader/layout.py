"""Pixel geometry of a chart: the plot frame (spines), tick marks, masks and mark colours.

Everything here reads an RGB ``uint8`` array of shape (H, W, 3) and nothing else. Coordinates are pixel indices
(row, column), top-left origin. The methods are the classic ones of chart-reading pipelines (spine and tick
detection by dark-pixel runs, colour segmentation of marks); see ``docs/chart-reader.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Pixels = NDArray[np.uint8]

DARK = 300
"""A pixel is *dark* (spine, tick mark, text) when its R+G+B is below this (0..765)."""
SATURATED = 60
"""A pixel is *coloured* (a data mark, a legend handle) when max(RGB) - min(RGB) is at least this."""
_SPINE_SHARE = 0.3
_TICK_REACH = 6


@dataclass(frozen=True)
class Frame:
    """The plot area's spines: ``left``/``right`` columns and ``top``/``bottom`` rows of the frame lines."""

    left: int
    top: int
    right: int
    bottom: int

    def transposed(self) -> Frame:
        """The same frame in a transposed image (rows and columns swapped)."""
        return Frame(left=self.top, top=self.left, right=self.bottom, bottom=self.right)


def dark(px: Pixels) -> NDArray[np.bool_]:
    """Boolean map of dark pixels, shape (H, W)."""
    return np.asarray(px.astype(np.int32).sum(axis=2) < DARK)


def _runs(mask: NDArray[np.bool_]) -> list[tuple[int, int]]:
    """Half-open ``[start, end)`` runs of True in a 1-D boolean array."""
    padded = np.concatenate(([False], mask, [False])).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def _extent(line: NDArray[np.bool_]) -> tuple[int, int] | None:
    hits = np.flatnonzero(line)
    return (int(hits[0]), int(hits[-1])) if hits.size else None


@dataclass(frozen=True)
class Rect:
    """A uniformly filled rectangle: columns ``x0:x1``, rows ``y0:y1`` (half-open) and its RGB colour."""

    x0: int
    y0: int
    x1: int
    y1: int
    colour: tuple[int, int, int]


def find_fills(px: Pixels, min_side: int = 6) -> list[Rect]:
    """Opaque unsaturated rectangles: 4-connected areas of one exact grey colour (not white, not dark).

    An area counts when it fills at least 97% of its bounding box and both sides are at least ``min_side`` px
    (text anti-aliasing and 1-px gridlines never qualify). These are the candidates for masks.
    """
    import cv2

    rgb = px.astype(np.int32)
    spread = rgb.max(axis=2) - rgb.min(axis=2)
    level = rgb.max(axis=2)
    same = np.zeros(level.shape, dtype=bool)
    same[:-1, :-1] = (px[:-1, :-1] == px[1:, :-1]).all(axis=2) & (px[:-1, :-1] == px[:-1, 1:]).all(axis=2)
    same[-1, :], same[:, -1] = same[-2, :], same[:, -2]
    cand = same & (spread < 8) & (level > 60) & (level < 245)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(cand.astype(np.uint8), connectivity=4)
    out: list[Rect] = []
    for i in range(1, n):
        x, y, w, h, area = (int(v) for v in stats[i])
        if w < min_side or h < min_side or area < 0.97 * w * h:
            continue
        # the last row/column of the area fails the neighbour test; grow the box back to the painted pixels
        x1, y1 = min(x + w + 1, px.shape[1]), min(y + h + 1, px.shape[0])
        c = px[y + h // 2, x + w // 2]
        out.append(Rect(x, y, x1, y1, (int(c[0]), int(c[1]), int(c[2]))))
    return out


def _dark_lines(d: NDArray[np.bool_], axis: int) -> list[int]:
    """Rows (axis 1) or columns (axis 0) holding a contiguous dark run of at least 15% of the image size."""
    lines = d if axis == 1 else d.T
    edges = np.diff(np.pad(lines, ((0, 0), (1, 1))).astype(np.int8), axis=1)
    r_start, c_start = np.nonzero(edges == 1)
    _, c_end = np.nonzero(edges == -1)  # row-major order: the k-th end closes the k-th start
    longest = np.zeros(lines.shape[0], dtype=np.int64)
    np.maximum.at(longest, r_start, c_end - c_start)
    found = np.flatnonzero(longest >= 0.15 * lines.shape[1]).tolist()
    return [int(f) for k, f in enumerate(found) if k == 0 or found[k - 1] != f - 1]


def ink_box(px: Pixels, rect: tuple[int, int, int, int]) -> tuple[int, int, int, int] | None:
    """The bounding box ``(x0, y0, x1, y1)`` of the non-white pixels inside ``rect``, or None when it is blank."""
    x0, y0, x1, y1 = rect
    region = px[max(y0, 0) : y1, max(x0, 0) : x1]
    if region.size == 0:
        return None
    ink = region.min(axis=2) < 235
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    if rows.size == 0:
        return None
    return (
        max(x0, 0) + int(cols[0]),
        max(y0, 0) + int(rows[0]),
        max(x0, 0) + int(cols[-1]) + 1,
        max(y0, 0) + int(rows[-1]) + 1,
    )


def coloured_rows(px: Pixels, y0: int, y1: int) -> tuple[int, int] | None:
    """First and last row in ``[y0, y1)`` holding saturated pixels (legend handles above the plot), or None."""
    region = px[max(y0, 0) : y1].astype(np.int16)
    sat = (region.max(axis=2) - region.min(axis=2)) >= SATURATED
    rows = np.flatnonzero(sat.sum(axis=1) >= 2)
    return None if rows.size == 0 else (max(y0, 0) + int(rows[0]), max(y0, 0) + int(rows[-1]))


def find_frame(px: Pixels, fills: list[Rect] | None = None) -> Frame | None:
    """Find the plot frame: the outermost long dark rows and columns (spines).

    A spine is a row (column) with a contiguous dark run of at least 15% of the image width (height). Bars are
    drawn above the spines, and a mask may cover one: a missing spine is recovered from the edge of a mask that
    reaches that side (masks start on the frame), else from the dark extent of a perpendicular spine.

    Args:
        px: RGB image, shape (H, W, 3).
        fills: the image's uniform rectangles (:func:`find_fills`), if already computed.

    Returns:
        The frame, or None when no frame at least 20 px across each way can be found.
    """
    d = dark(px)
    h, w = d.shape
    fills = find_fills(px) if fills is None else fills
    rows, cols = _dark_lines(d, 1), _dark_lines(d, 0)
    top = rows[0] if rows and rows[0] < h / 2 else None
    bottom = rows[-1] if rows and rows[-1] >= h / 2 else None
    left = cols[0] if cols and cols[0] < w / 2 else None
    right = cols[-1] if cols and cols[-1] >= w / 2 else None
    big = [f for f in fills if (f.x1 - f.x0) * (f.y1 - f.y0) >= 400]
    tall = [f for f in big if f.y1 - f.y0 > f.x1 - f.x0]  # a mask over a column band starts on the frame
    wide = [f for f in big if f.y1 - f.y0 <= f.x1 - f.x0]  # a mask over a row band likewise
    if top is None and wide:
        top = min(f.y0 for f in wide)
    if bottom is None and wide:
        bottom = max(f.y1 - 1 for f in wide)
    if left is None and tall:
        left = min(f.x0 for f in tall)
    if right is None and tall:
        right = max(f.x1 - 1 for f in tall)
    if (left is None or right is None) and bottom is not None and (span := _extent(d[bottom])) is not None:
        left, right = (span[0] if left is None else left), (span[1] if right is None else right)
    if (top is None or bottom is None) and right is not None and (span := _extent(d[:, right])) is not None:
        top, bottom = (span[0] if top is None else top), (span[1] if bottom is None else bottom)
    if top is None or bottom is None or left is None or right is None:
        return None
    if right - left < 20 or bottom - top < 20:
        return None
    return Frame(left=left, top=top, right=right, bottom=bottom)


def _centres(runs: list[tuple[int, int]], max_len: int = 4) -> list[float]:
    return [(a + b - 1) / 2 for a, b in runs if b - a <= max_len]


def ticks_left(px: Pixels, frame: Frame) -> list[float]:
    """Row centres of the tick marks left of the left spine (short dark strokes within 6 px of it)."""
    d = dark(px)
    found: list[float] = []
    for off in (3, 4, 2):
        col = frame.left - off
        if col < 0:
            continue
        lo, hi = max(frame.top - 3, 0), min(frame.bottom + 4, d.shape[0])
        found = [lo + c for c in _centres(_runs(d[lo:hi, col]))]
        if len(found) >= 2:
            break
    return found


def ticks_below(px: Pixels, frame: Frame) -> list[float]:
    """Column centres of the tick marks below the bottom spine (short dark strokes within 6 px of it).

    The offsets 4 and 3 come first: a mask may cover the frame plus 2 px, and a tick mark is about 5 px long.
    """
    d = dark(px)
    found: list[float] = []
    for off in (4, 3, 5):
        row = frame.bottom + off
        if row >= d.shape[0]:
            continue
        lo, hi = max(frame.left - 3, 0), min(frame.right + 4, d.shape[1])
        found = [lo + c for c in _centres(_runs(d[row, lo:hi]))]
        if len(found) >= 2:
            break
    return found


def gridline_axis(px: Pixels, frame: Frame) -> str | None:
    """Which way the value gridlines run: ``"rows"`` (horizontal lines), ``"cols"`` or None when there are none.

    A gridline is a row (column) inside the frame where at least 40% of the pixels are one light grey
    (all channels equal, 180..245).
    """
    inner = px[frame.top + 2 : frame.bottom - 1, frame.left + 2 : frame.right - 1].astype(np.int32)
    if inner.size == 0:
        return None
    grey = (inner[:, :, 0] == inner[:, :, 1]) & (inner[:, :, 1] == inner[:, :, 2])
    grey &= (inner[:, :, 0] >= 180) & (inner[:, :, 0] <= 245)
    n_rows = int((grey.mean(axis=1) >= 0.4).sum())
    n_cols = int((grey.mean(axis=0) >= 0.4).sum())
    if n_rows == n_cols == 0:
        return None
    return "rows" if n_rows >= n_cols else "cols"


def mask_bands(fills: list[Rect], frame: Frame, vertical: bool) -> list[tuple[int, int]]:
    """Bands ``[a, b)`` along the category axis covered by a fill that spans the whole value range.

    A mask (seed 000, §3.2) hides a category's band across the full value axis: for a vertical value axis a
    fill covering every row from the top to the bottom spine, for a horizontal one every column from the left
    to the right spine. Bands are columns for a vertical value axis, rows otherwise.
    """
    out: list[tuple[int, int]] = []
    for f in fills:
        if vertical and f.y0 <= frame.top + 1 and f.y1 >= frame.bottom:
            out.append((f.x0, f.x1))
        elif not vertical and f.x0 <= frame.left + 1 and f.x1 >= frame.right:
            out.append((f.y0, f.y1))
    return sorted(out)


def colour_distance(px: NDArray[np.int32], colour: tuple[int, int, int]) -> NDArray[np.float64]:
    """Euclidean RGB distance of every pixel to ``colour``; shape (H, W)."""
    diff = px - np.asarray(colour, dtype=np.int32)[None, None, :]
    return np.asarray(np.sqrt((diff * diff).sum(axis=2)), dtype=np.float64)


def saturated_colours(px: Pixels, min_share: float = 0.0, min_pixels: int = 20) -> list[tuple[int, int, int]]:
    """The distinct saturated colours of a region, most frequent first (exact colours of at least ``min_pixels``).

    Anti-aliased edges blend a mark's colour with the background, so only colours that occur on many pixels
    count; colours within 40 of a more frequent one are merged into it.
    """
    flat = px.reshape(-1, 3)
    spread = flat.max(axis=1).astype(np.int16) - flat.min(axis=1)
    sat = flat[spread >= SATURATED].astype(np.int32)
    if sat.size == 0:
        return []
    values, counts = np.unique(sat, axis=0, return_counts=True)
    order = np.argsort(-counts)
    out: list[tuple[int, int, int]] = []
    for i in order:
        if counts[i] < max(min_pixels, min_share * sat.shape[0]):
            break
        c = (int(values[i][0]), int(values[i][1]), int(values[i][2]))
        if all(np.hypot(np.hypot(c[0] - o[0], c[1] - o[1]), c[2] - o[2]) >= 40 for o in out):
            out.append(c)
    return out
