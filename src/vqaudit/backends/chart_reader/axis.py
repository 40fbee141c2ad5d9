"""The value axis of a chart read from pixels: tick labels parsed as exact numbers, a robust line through them.

The axis is a least-squares line through the tick marks whose labels parse as numbers, fitted on the pair model
with most inliers (robust to misread labels); its step is the gcd of the label differences. Positions are canonical
rows (:mod:`vqaudit.backends.chart_reader.chart`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations

import numpy as np

from vqaudit.backends.chart_reader.ocr import TextBox

_NUMBER = re.compile(r"^[-\u2212]?\d{1,3}(?:[,\s]\d{3})*(?:\.\d+)?$|^[-\u2212]?\d+(?:\.\d+)?$")


def parse_number(text: str) -> Fraction | None:
    """A tick label's number as an exact rational ("1,500" -> 1500, "2.5" -> 5/2), or None."""
    t = text.strip().replace("\u2212", "-")
    if not _NUMBER.match(t):
        return None
    return Fraction(re.sub(r"[,\s]", "", t))


@dataclass(frozen=True)
class Axis:
    """The value axis: ``value = a + b * pos`` for a canonical row position ``pos`` (pixels).

    Attributes:
        a: intercept (value units).
        b: slope (value units per pixel; negative when values grow upwards).
        origin: one tick value (the grid of the answer is ``origin + k * step``).
        step: the tick step read from the labels (exact rational, > 0).
        ticks: the ``(position, value)`` pairs the fit used.
    """

    a: float
    b: float
    origin: Fraction
    step: Fraction
    ticks: tuple[tuple[float, Fraction], ...]

    def value(self, pos: float) -> float:
        """Value at a canonical row position."""
        return self.a + self.b * pos

    def pos(self, value: float) -> float:
        """Canonical row position of a value."""
        return (value - self.a) / self.b


def _gcd(a: Fraction, b: Fraction) -> Fraction:
    """Greatest common divisor of two non-negative rationals (gcd(0, b) = b)."""
    while b:
        a, b = b, a - b * (a // b)
    return abs(a)


def fit_axis(points: list[tuple[float, Fraction]], tick_px: float | None = None) -> Axis | None:
    """Robust line through (position, value) pairs: the pair model with most inliers (<= 2.5 px), refitted.

    The tick step is the gcd of the label differences, divided down to the tick marks' spacing ``tick_px``
    (pixels) when labels were skipped.
    """
    pts = sorted(set(points))
    if len(pts) < 2:
        return None
    best: list[tuple[float, Fraction]] = []
    for (p1, v1), (p2, v2) in combinations(pts, 2):
        if p1 == p2 or v1 == v2:
            continue
        b = float(v2 - v1) / (p2 - p1)
        a = float(v1) - b * p1
        inl = [(p, v) for p, v in pts if abs((float(v) - a) / b - p) <= 2.5]
        if len(inl) > len(best):
            best = inl
    if len(best) < 2:
        return None
    pos = np.array([p for p, _ in best])
    val = np.array([float(v) for _, v in best])
    b, a = np.polyfit(pos, val, 1)
    values = sorted({v for _, v in best})
    step = Fraction(0)
    for x, y in zip(values, values[1:], strict=False):
        step = _gcd(step, y - x)
    if tick_px and step > 0:  # labels may skip ticks: the tick marks' spacing gives the step itself
        k = round(float(step) / (abs(float(b)) * tick_px))
        if k > 1 and abs(float(step) / k - abs(float(b)) * tick_px) <= 0.05 * float(step) / k:
            step /= k
    return Axis(a=float(a), b=float(b), origin=values[0], step=step, ticks=tuple(best))


def snap(anchor: float, ticks: list[float], spacing: float) -> float | None:
    """The tick nearest ``anchor`` when within 0.45 of the tick ``spacing``; ``anchor`` itself without ticks."""
    if not ticks:
        return anchor
    near = min(ticks, key=lambda t: abs(t - anchor))
    return near if abs(near - anchor) <= 0.45 * spacing else None


def value_axis(boxes: list[TextBox], ticks: list[float], vertical: bool) -> Axis | None:
    """The value axis fitted through the labels that parse as numbers, each snapped to its tick mark."""
    points: list[tuple[float, Fraction]] = []
    for box in boxes:
        value = parse_number(box.text)
        if value is None:
            continue
        anchor = box.cy if vertical else box.cx
        pos = snap(anchor, ticks, 12.0) if ticks else anchor
        if pos is not None:
            points.append((pos, value))
    return fit_axis(points, float(np.median(np.diff(sorted(ticks)))) if len(ticks) >= 2 else None)
