"""Designed faulty certificates: the checker must reject every one (seed 000, appendix D: the witness conditions).

Each fault starts from a genuine certificate of a built benchmark and breaks one witness condition the way a
faulty builder would, *saving an image consistent with the fault* wherever that is possible, so the checker has
to catch the fault by its conditions and not merely because the saved image changed. Kinds:

- ``autoscaled_axis``: both worlds drawn on an axis fitted to their own values (the declared axis is ignored);
- ``value_label_leak``: the chart prints every value as text outside the plot area, so the mask hides nothing;
- ``shifted_mask``: the mask covers the neighbouring category's band instead of the queried one;
- ``line_leak``: a line chart masked with only its category slot; the segments leaving it betray the value;
- ``out_of_axis``: the alternative world puts the hidden value above the axis range (it renders clipped);
- ``off_grid``: the alternative world puts the hidden value between two grid points;
- ``identical_answers``: the alternative world equals the original one;
- ``tampered_image``: the saved image has pixels changed outside the mask;
- ``swapped_world``: the certificate's ``world_a`` is another group's world.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from vqaudit.schema import View
from vqaudit.suites.charts.masks import apply_mask, category_mask
from vqaudit.suites.charts.png import decode_png, pixel_sha256, png_bytes
from vqaudit.suites.charts.render import render
from vqaudit.suites.charts.world import World, fraction_text

FAULT_KINDS = (
    "autoscaled_axis",
    "value_label_leak",
    "shifted_mask",
    "line_leak",
    "out_of_axis",
    "off_grid",
    "identical_answers",
    "tampered_image",
    "swapped_world",
)


@dataclass(frozen=True)
class Fault:
    """One designed fault: the view it claims to certify, the faulty certificate and the image saved with it."""

    kind: str
    view: View
    certificate: dict[str, Any]
    image_png: bytes


@dataclass(frozen=True)
class _Genuine:
    view: View
    cert: dict[str, Any]
    image: bytes
    other_world: dict[str, Any]


def _set_worlds(cert: dict[str, Any], wa: World, wb: World) -> dict[str, Any]:
    out = copy.deepcopy(cert)
    out["world_a"], out["world_b"] = wa.to_json(), wb.to_json()
    return out


def _consistent_image(cert: dict[str, Any], wa: World) -> tuple[dict[str, Any], bytes]:
    """Render the masked image a faulty builder would have saved for ``wa`` under the certificate's mask."""
    mask = category_mask(wa, int(cert["mask"]["category_index"]), str(cert["mask"]["name"]))
    pixels = apply_mask(render(wa), mask)
    out = copy.deepcopy(cert)
    out["mask"]["rect_px"] = [mask.x0, mask.y0, mask.x1, mask.y1]
    out["image_pixel_sha256"] = pixel_sha256(pixels)
    return out, png_bytes(pixels)


def _view_with_world(view: View, world: World) -> View:
    """The view as a faulty builder would have written it for ``world``."""
    return view.model_copy(update={"meta": {**view.meta, "world": world.to_json()}})


def _worlds(g: _Genuine) -> tuple[World, World, int]:
    wa, wb = World.from_json(g.cert["world_a"]), World.from_json(g.cert["world_b"])
    return wa, wb, wa.categories.index(str(g.cert["program"]["category"]))


def _hidden_series(g: _Genuine, wa: World) -> int:
    return wa.series.index(str(g.cert["program"]["series"]))


def _autoscaled(g: _Genuine) -> Fault:
    wa, wb, _ = _worlds(g)
    values = [v for w in (wa, wb) for row in w.values for v in row]
    lo, hi = min(values) - wa.grid_step, max(values) + wa.grid_step
    fa, fb = replace(wa, axis_lo=lo, axis_hi=hi), replace(wb, axis_lo=lo, axis_hi=hi)
    cert, image = _consistent_image(_set_worlds(g.cert, fa, fb), fa)
    return Fault("autoscaled_axis", _view_with_world(g.view, fa), cert, image)


def _value_labels(g: _Genuine) -> Fault:
    wa, wb, _ = _worlds(g)
    fa, fb = replace(wa, value_labels=True), replace(wb, value_labels=True)
    cert, image = _consistent_image(_set_worlds(g.cert, fa, fb), fa)
    return Fault("value_label_leak", _view_with_world(g.view, fa), cert, image)


def _shifted_mask(g: _Genuine) -> Fault:
    wa, _, c = _worlds(g)
    neighbour = c + 1 if c + 1 < len(wa.categories) else c - 1
    mask = category_mask(wa, neighbour, str(g.cert["mask"]["name"]))
    pixels = apply_mask(render(wa), mask)
    cert = copy.deepcopy(g.cert)
    cert["mask"]["rect_px"] = [mask.x0, mask.y0, mask.x1, mask.y1]
    cert["image_pixel_sha256"] = pixel_sha256(pixels)
    return Fault("shifted_mask", g.view, cert, png_bytes(pixels))


def _line_leak(g: _Genuine) -> Fault:
    wa, wb, _ = _worlds(g)
    fa, fb = replace(wa, kind="line"), replace(wb, kind="line")
    cert = _set_worlds(g.cert, fa, fb)
    cert["mask"]["name"] = "slot"
    cert, image = _consistent_image(cert, fa)
    return Fault("line_leak", _view_with_world(g.view, fa), cert, image)


def _cell_fault(kind: str, value: Callable[[World, Fraction], Fraction]) -> Callable[[_Genuine], Fault]:
    def make(g: _Genuine) -> Fault:
        wa, _, c = _worlds(g)
        s = _hidden_series(g, wa)
        wb = wa.with_value(s, c, value(wa, wa.values[s][c]))
        cert = _set_worlds(g.cert, wa, wb)
        cert["answer_b"] = fraction_text(wb.values[s][c])
        return Fault(kind, g.view, cert, g.image)

    return make


def _identical(g: _Genuine) -> Fault:
    wa, _, _ = _worlds(g)
    cert = _set_worlds(g.cert, wa, wa)
    cert["answer_b"] = cert["answer_a"]
    return Fault("identical_answers", g.view, cert, g.image)


def _tampered(g: _Genuine) -> Fault:
    pixels = decode_png(g.image).copy()
    x0 = int(g.cert["mask"]["rect_px"][0])
    pixels[2:6, max(x0 - 30, 0) : max(x0 - 26, 4)] = (255, 0, 0)  # a small red mark left of the mask, in the margin
    return Fault("tampered_image", g.view, copy.deepcopy(g.cert), png_bytes(pixels))


def _swapped(g: _Genuine) -> Fault:
    cert = copy.deepcopy(g.cert)
    cert["world_a"] = copy.deepcopy(g.other_world)
    return Fault("swapped_world", g.view, cert, g.image)


_MAKERS: dict[str, Callable[[_Genuine], Fault]] = {
    "autoscaled_axis": _autoscaled,
    "value_label_leak": _value_labels,
    "shifted_mask": _shifted_mask,
    "line_leak": _line_leak,
    "out_of_axis": _cell_fault("out_of_axis", lambda w, v: w.axis_hi + w.grid_step),
    "off_grid": _cell_fault("off_grid", lambda w, v: v + w.grid_step / 3 if v < w.axis_hi else v - w.grid_step / 3),
    "identical_answers": _identical,
    "tampered_image": _tampered,
    "swapped_world": _swapped,
}


def design_faults(
    genuine: list[tuple[View, dict[str, Any], bytes]], kinds: tuple[str, ...] = FAULT_KINDS
) -> list[Fault]:
    """Make one fault of every kind from every genuine (view, certificate, image) triple.

    Args:
        genuine: masked views with their genuine certificates and saved PNG bytes (at least two, so a world can
            be swapped with another group's).
        kinds: which fault kinds to make (see the module docstring).

    Returns:
        ``len(genuine) * len(kinds)`` faults, in a stable order.

    Raises:
        ValueError: fewer than two genuine certificates, or an unknown kind.
    """
    if len(genuine) < 2:
        raise ValueError("need at least two genuine certificates")
    unknown = [k for k in kinds if k not in _MAKERS]
    if unknown:
        raise ValueError(f"unknown fault kind(s): {unknown}")
    items = [
        _Genuine(view, cert, image, genuine[(i + 1) % len(genuine)][1]["world_a"])
        for i, (view, cert, image) in enumerate(genuine)
    ]
    return [_MAKERS[kind](g) for g in items for kind in kinds]
