"""Witnesses for "missing" chart labels, and the checker that re-verifies them (seed 000, §3.2, appendix D).

A masked view is labelled *abstain* only with a **witness**: two complete admissible worlds that differ only in
hidden cells, render with the same mask to identical pixels, and give different answers to the view's question.
The builder searches masks in a fixed order (``slot``, then ``neighbors``) and keeps the first one whose masked
renders are pixel-identical; a mask that leaks (a line segment leaving the band betrays the hidden value) is
recorded in the certificate as rejected, with the number of differing pixels that exposed it.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from vqaudit.errors import VqauditError
from vqaudit.suites.charts.render import (
    Mask,
    apply_mask,
    category_mask,
    decode_png,
    pixel_sha256,
    render,
)
from vqaudit.suites.charts.world import World, distinct_value, fraction_text

MASK_ORDER = ("slot", "neighbors")
CERTIFICATE_FORMAT = "vqaudit-chart-witness/1"


def lookup(world: World, series: str, category: str) -> Fraction | None:
    """The lookup program: the value of ``series`` at ``category``; None (undefined) if the category is absent."""
    return world.value(series, category)


@dataclass(frozen=True)
class Witness:
    """A certified mask with its alternative world, and the masks rejected before it."""

    mask: Mask
    world_b: World
    rejected: tuple[dict[str, Any], ...]


def find_witness(world: World, s: int, c: int, rng: np.random.Generator, pixels: np.ndarray | None = None) -> Witness:
    """Find a mask over category ``c`` and a world differing only in cell (``s``, ``c``) that it cannot tell apart.

    Args:
        world: the complete world of the masked view (``world_a``).
        s: series index of the queried (hidden) cell.
        c: category index of the queried (hidden) cell.
        rng: source of the alternative value (a grid value at least a tenth of the axis span away).
        pixels: the unmasked render of ``world``, if already computed.

    Returns:
        The first mask in ``MASK_ORDER`` under which ``world`` and the alternative render pixel-identically.

    Raises:
        VqauditError: when every mask leaks (the build must fail loudly rather than write an unproven label).
    """
    pixels_a = render(world) if pixels is None else pixels
    alt = distinct_value(world, world.values[s][c], rng)
    world_b = world.with_value(s, c, alt)
    pixels_b = render(world_b)
    rejected: list[dict[str, Any]] = []
    for name in MASK_ORDER:
        mask = category_mask(world, c, name)
        a, b = apply_mask(pixels_a, mask), apply_mask(pixels_b, mask)
        differing = int((a != b).any(axis=2).sum())
        if differing == 0:
            return Witness(mask=mask, world_b=world_b, rejected=tuple(rejected))
        rejected.append({"mask": name, "alt_value": fraction_text(alt), "differing_pixels": differing})
    raise VqauditError(
        f"no witness for {world.kind} chart of table {world.table}, cell ({world.series[s]}, {world.categories[c]}): "
        f"every mask leaks ({rejected})"
    )


def make_certificate(
    *, view_id: str, group_id: str, world: World, s: int, c: int, witness: Witness, image_pixel_sha256: str
) -> dict[str, Any]:
    """The JSON certificate of one masked view. See :func:`verify_certificate` for what is re-checked."""
    series, category = world.series[s], world.categories[c]
    answer_a, answer_b = lookup(world, series, category), lookup(witness.world_b, series, category)
    assert answer_a is not None and answer_b is not None  # both worlds contain the queried category
    return {
        "format": CERTIFICATE_FORMAT,
        "view_id": view_id,
        "group_id": group_id,
        "program": {"op": "lookup", "series": series, "category": category},
        "domain": {"axis_lo": fraction_text(world.axis_lo), "axis_hi": fraction_text(world.axis_hi),
                   "grid_step": fraction_text(world.grid_step)},
        "hidden_cells": [[name, category] for name in world.series],
        "mask": witness.mask.to_json(),
        "rejected_masks": list(witness.rejected),
        "world_a": world.to_json(),
        "world_b": witness.world_b.to_json(),
        "answer_a": fraction_text(answer_a),
        "answer_b": fraction_text(answer_b),
        "image_pixel_sha256": image_pixel_sha256,
    }


def verify_certificate(cert: dict[str, Any], image_png: bytes) -> list[str]:
    """Re-check one witness certificate against the saved image; return the failed conditions (empty = valid).

    Conditions (seed 000, §3.2): both worlds admissible (on the grid, inside the declared fixed axis range of
    their table); both render without error; they differ only in hidden cells of the queried category; the
    recorded mask is the one the layout gives for that category (it never depends on values); the lookup
    answers are defined and differ and match the recorded ones; each world's masked render is pixel-identical
    to the saved image (SHA-256 of decoded pixels, not of PNG bytes).
    """
    problems: list[str] = []
    try:
        wa, wb = World.from_json(cert["world_a"]), World.from_json(cert["world_b"])
        program, mask_json = cert["program"], cert["mask"]
        series, category = str(program["series"]), str(program["category"])
    except (KeyError, TypeError, VqauditError) as exc:
        return [f"malformed certificate: {exc}"]
    for label, w in (("world_a", wa), ("world_b", wb)):
        problems += [f"{label} not admissible: {p}" for p in w.admissibility_problems()]
    if program.get("op") != "lookup":
        problems.append(f"unsupported program {program.get('op')!r}")
    if (wa.kind, wa.categories, wa.series) != (wb.kind, wb.categories, wb.series) or wa.title != wb.title:
        problems.append("the two worlds differ in layout (kind, categories, series or title)")
        return problems
    if category not in wa.categories or series not in wa.series:
        return [*problems, "queried cell not in the worlds"]
    c = wa.categories.index(category)
    for s_i, (row_a, row_b) in enumerate(zip(wa.values, wb.values, strict=True)):
        for c_i, (va, vb) in enumerate(zip(row_a, row_b, strict=True)):
            if va != vb and c_i != c:
                problems.append(f"worlds differ in a visible cell ({wa.series[s_i]}, {wa.categories[c_i]})")
    ans_a, ans_b = lookup(wa, series, category), lookup(wb, series, category)
    if ans_a is None or ans_b is None or ans_a == ans_b:
        problems.append("answers do not differ")
    elif (fraction_text(ans_a), fraction_text(ans_b)) != (cert.get("answer_a"), cert.get("answer_b")):
        problems.append("recorded answers do not match the worlds")
    try:
        mask = category_mask(wa, c, str(mask_json["name"]))
    except (KeyError, ValueError) as exc:
        return [*problems, f"bad mask: {exc}"]
    if [mask.x0, mask.y0, mask.x1, mask.y1] != list(mask_json.get("rect_px", [])):
        problems.append(f"mask rectangle {mask_json.get('rect_px')} is not the layout's {mask.name} band")
    try:
        saved = pixel_sha256(decode_png(image_png))
    except Exception as exc:  # noqa: BLE001 - any decoding failure is a failed condition
        return [*problems, f"saved image does not decode: {exc}"]
    for label, w in (("world_a", wa), ("world_b", wb)):
        try:
            got = pixel_sha256(apply_mask(render(w), mask))
        except Exception as exc:  # noqa: BLE001 - a world that does not render fails the certificate
            problems.append(f"{label} does not render: {exc}")
            continue
        if got != saved:
            problems.append(f"masked render of {label} differs from the saved image")
    if cert.get("image_pixel_sha256") != saved:
        problems.append("recorded pixel hash does not match the saved image")
    return problems
