"""Witnesses for "missing" chart labels, and the checker that re-verifies them (seed 000, §3.2, appendix D).

A masked view is labelled *abstain* only with a **witness**: two complete admissible worlds that differ only in
hidden cells, render with the same mask to identical pixels, and give different answers to the view's question.
The builder searches masks in a fixed order (``slot``, then ``neighbors``) and keeps the first one whose masked
renders are pixel-identical; a mask that leaks (a line segment leaving the band betrays the hidden value) is
recorded in the certificate as rejected, with the number of differing pixels that exposed it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from vqaudit.errors import VqauditError
from vqaudit.suites.charts.certificate_check import recheck_certificate
from vqaudit.suites.charts.certify import Certificate
from vqaudit.suites.charts.masks import Mask, apply_mask, category_mask
from vqaudit.suites.charts.png import decode_png, pixel_sha256
from vqaudit.suites.charts.program_text import program_from_json, program_to_json
from vqaudit.suites.charts.programs import Program, answer_text, evaluate_world, world_table
from vqaudit.suites.charts.render import render
from vqaudit.suites.charts.world import World, distinct_value, fraction_text

MASK_ORDER = ("slot", "neighbors")
CERTIFICATE_FORMAT = "vqaudit-chart-witness/1"
DETERMINED_FORMAT = "vqaudit-chart-determined/1"


def certify_table_json(world: World) -> list[list[str]]:
    """A world's table in the answerability certificate's layout: ``[series, category, value]`` rows."""
    return [[s, c, fraction_text(v)] for (s, c), v in world_table(world).items()]


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
        if np.array_equal(a, b):
            return Witness(mask=mask, world_b=world_b, rejected=tuple(rejected))
        differing = differing_pixels(a, b)
        rejected.append({"mask": name, "alt_value": fraction_text(alt), "differing_pixels": differing})
    raise VqauditError(
        f"no witness for {world.kind} chart of table {world.table}, cell ({world.series[s]}, {world.categories[c]}): "
        f"every mask leaks ({rejected})"
    )


def differing_pixels(a: np.ndarray, b: np.ndarray) -> int:
    """Number of pixels (rows x columns) where two RGB arrays of one shape differ in any channel."""
    diff = a != b
    return int(np.count_nonzero(diff[:, :, 0] | diff[:, :, 1] | diff[:, :, 2]))


def make_certificate(
    *,
    view_id: str,
    group_id: str,
    world: World,
    program: Program,
    c: int,
    witness: Witness,
    image_pixel_sha256: str,
) -> dict[str, Any]:
    """The JSON certificate of one masked, unanswerable view. See :func:`verify_certificate` for the checks."""
    answer_a, answer_b = evaluate_world(program, world), evaluate_world(program, witness.world_b)
    assert answer_a is not None and answer_b is not None  # both worlds contain every cell the program reads
    return {
        "format": CERTIFICATE_FORMAT,
        "view_id": view_id,
        "group_id": group_id,
        "program": program_to_json(program),
        "domain": {
            "axis_lo": fraction_text(world.axis_lo),
            "axis_hi": fraction_text(world.axis_hi),
            "grid_step": fraction_text(world.grid_step),
        },
        "hidden_cells": [[name, world.categories[c]] for name in world.series],
        "mask": witness.mask.to_json(),
        "rejected_masks": list(witness.rejected),
        "world_a": world.to_json(),
        "world_b": witness.world_b.to_json(),
        "answer_a": answer_text(answer_a),
        "answer_b": answer_text(answer_b),
        "image_pixel_sha256": image_pixel_sha256,
    }


def make_determined_certificate(
    *, view_id: str, group_id: str, world: World, mask: Mask, answerability: Certificate, image_pixel_sha256: str
) -> dict[str, Any]:
    """The JSON certificate of a masked view whose answer the visible cells still determine (state ``D``)."""
    return {
        "format": DETERMINED_FORMAT,
        "view_id": view_id,
        "group_id": group_id,
        "program": program_to_json(answerability.program),
        "mask": mask.to_json(),
        "world": world.to_json(),
        "answer": answer_text(answerability.answer),
        "answerability": answerability.to_json(),
        "image_pixel_sha256": image_pixel_sha256,
    }


def verify_certificate(
    cert: dict[str, Any], image_png: bytes, render_world: Callable[[World], np.ndarray] = render
) -> list[str]:
    """Re-check one witness certificate against the saved image; return the failed conditions (empty = valid).

    Conditions (seed 000, §3.2): both worlds admissible (on the grid, inside the declared fixed axis range of
    their table); both render without error; they differ only in hidden cells of the queried category; the
    recorded mask is the one the layout gives for that category (it never depends on values); the lookup
    answers are defined and differ and match the recorded ones; each world's masked render is pixel-identical
    to the saved image (SHA-256 of decoded pixels, not of PNG bytes).

    ``render_world`` renders a world (default :func:`~vqaudit.suites.charts.render.render`); ``vqaudit verify``
    passes one that remembers the group's renders, so a world drawn by several views is rendered once.
    """
    try:
        wa, wb = World.from_json(cert["world_a"]), World.from_json(cert["world_b"])
        program, mask_json = program_from_json(cert["program"]), cert["mask"]
        category = wa.categories[int(mask_json["category_index"])]
    except (KeyError, TypeError, ValueError, IndexError, VqauditError) as exc:
        return [f"malformed certificate: {exc!r}"]
    problems = _field_problems(cert, wa, category) + _cheap_problems(wa, wb, cert, program, category)
    if problems:  # do not spend renders on a certificate that already failed
        return problems
    c = wa.categories.index(category)
    try:
        mask = category_mask(wa, c, str(mask_json["name"]))
    except (KeyError, ValueError) as exc:
        return [f"bad mask: {exc}"]
    if [mask.x0, mask.y0, mask.x1, mask.y1] != list(mask_json.get("rect_px", [])):
        problems.append(f"mask rectangle {mask_json.get('rect_px')} is not the layout's {mask.name} band")
    try:
        saved = pixel_sha256(decode_png(image_png))
    except Exception as exc:  # noqa: BLE001 - any decoding failure is a failed condition
        return [*problems, f"saved image does not decode: {exc}"]
    for label, w in (("world_a", wa), ("world_b", wb)):
        try:
            got = pixel_sha256(apply_mask(render_world(w), mask))
        except Exception as exc:  # noqa: BLE001 - a world that does not render fails the certificate
            problems.append(f"{label} does not render: {exc}")
            continue
        if got != saved:
            problems.append(f"masked render of {label} differs from the saved image")
    if cert.get("image_pixel_sha256") != saved:
        problems.append("recorded pixel hash does not match the saved image")
    return problems


def _field_problems(cert: dict[str, Any], wa: World, category: str) -> list[str]:
    """The recorded fields must say what the worlds imply: format, hidden cells, domain, proof present."""
    problems: list[str] = []
    if cert.get("format") != CERTIFICATE_FORMAT:
        problems.append(f"field 'format': expected {CERTIFICATE_FORMAT!r}")
    if cert.get("hidden_cells") != [[name, category] for name in wa.series]:
        problems.append("field 'hidden_cells': not the masked category's cells")
    domain = {
        "axis_lo": fraction_text(wa.axis_lo),
        "axis_hi": fraction_text(wa.axis_hi),
        "grid_step": fraction_text(wa.grid_step),
    }
    if cert.get("domain") != domain:
        problems.append("field 'domain': not world_a's declared domain")
    if not isinstance(cert.get("answerability"), dict):
        problems.append("field 'answerability': the certifier's decision is missing")
    if not isinstance(cert.get("rejected_masks", []), list):
        problems.append("field 'rejected_masks': not a list")
    return problems


def _cheap_problems(wa: World, wb: World, cert: dict[str, Any], program: Program, category: str) -> list[str]:
    """Conditions checked without rendering: admissibility, layout, differing cells, answers, table certificate."""
    problems: list[str] = []
    for label, w in (("world_a", wa), ("world_b", wb)):
        problems += [f"{label} not admissible: {p}" for p in w.admissibility_problems()]
    same_layout = (wa.kind, wa.categories, wa.series, wa.title, wa.value_labels) == (
        wb.kind,
        wb.categories,
        wb.series,
        wb.title,
        wb.value_labels,
    )
    if not same_layout:
        return [*problems, "the two worlds differ in layout (kind, categories, series, title or labels)"]
    if category not in wa.categories:
        return [*problems, "masked category not in the worlds"]
    c = wa.categories.index(category)
    for s_i, (row_a, row_b) in enumerate(zip(wa.values, wb.values, strict=True)):
        for c_i, (va, vb) in enumerate(zip(row_a, row_b, strict=True)):
            if va != vb and c_i != c:
                problems.append(f"worlds differ in a visible cell ({wa.series[s_i]}, {wa.categories[c_i]})")
    ans_a, ans_b = evaluate_world(program, wa), evaluate_world(program, wb)
    if ans_a is None or ans_b is None or ans_a == ans_b:
        problems.append("answers do not differ")
    elif (answer_text(ans_a), answer_text(ans_b)) != (cert.get("answer_a"), cert.get("answer_b")):
        problems.append("recorded answers do not match the worlds")
    table_cert = cert.get("answerability")
    if isinstance(table_cert, dict):
        if table_cert.get("table") != certify_table_json(wa):
            problems.append("the answerability certificate is not about world_a")
        problems += [f"answerability certificate: {p}" for p in recheck_certificate(table_cert)]
    return problems


def verify_determined(
    cert: dict[str, Any], image_png: bytes, render_world: Callable[[World], np.ndarray] = render
) -> list[str]:
    """Re-check a determined masked view (state ``D``); return the failed conditions (empty = valid).

    Conditions: the world is admissible; the answerability certificate re-verifies (its proof is still UNSAT, or
    enumeration again finds one answer) and is about this world, this program and exactly the masked category's
    cells; the recorded answer is the world's answer; the mask is the layout's band for that category; the
    masked render is pixel-identical to the saved image. ``render_world`` as in :func:`verify_certificate`.
    """
    try:
        world = World.from_json(cert["world"])
        program = program_from_json(cert["program"])
        mask_json, table_cert = cert["mask"], cert["answerability"]
        mask = category_mask(world, int(mask_json["category_index"]), str(mask_json["name"]))
    except (KeyError, TypeError, ValueError, IndexError, VqauditError) as exc:
        return [f"malformed certificate: {exc!r}"]
    problems = [f"world not admissible: {p}" for p in world.admissibility_problems()]
    if not isinstance(table_cert, dict):
        return [*problems, "missing answerability certificate"]
    problems += [f"answerability certificate: {p}" for p in recheck_certificate(table_cert)]
    hidden = sorted([str(s), str(c)] for s, c in table_cert.get("hidden_cells", []))
    if hidden != sorted([s, world.categories[mask.category_index]] for s in world.series):
        problems.append("the proof's hidden cells are not the masked category's cells")
    if table_cert.get("table") != certify_table_json(world) or table_cert.get("program") != cert["program"]:
        problems.append("the proof is not about this world and program")
    answer = evaluate_world(program, world)
    if answer is None or answer_text(answer) != cert.get("answer") or table_cert.get("status") != "determined":
        problems.append("recorded answer is not the determined answer")
    if [mask.x0, mask.y0, mask.x1, mask.y1] != list(mask_json.get("rect_px", [])):
        problems.append(f"mask rectangle {mask_json.get('rect_px')} is not the layout's {mask.name} band")
    if problems:
        return problems
    try:
        saved = pixel_sha256(decode_png(image_png))
    except Exception as exc:  # noqa: BLE001 - any decoding failure is a failed condition
        return [f"saved image does not decode: {exc}"]
    if pixel_sha256(apply_mask(render_world(world), mask)) != saved:
        problems.append("masked render differs from the saved image")
    return problems
