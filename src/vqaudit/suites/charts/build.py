"""Build a chart answerability benchmark: five views per group over worlds drawn from real tables.

States (papers.md; seed 000, §3.1): ``original``; ``S`` (a non-queried cell changes, answer kept); ``C`` (the
queried cell changes, answer changes); ``M`` (the queried category's band is masked over the whole plot area;
abstain, with a checked witness); ``I`` (the queried category is replaced by another real category of the same
table; abstain, the lookup is undefined). Group ``g`` draws everything from ``numpy.random.default_rng([seed, g])``,
so the same seed gives byte-identical views, images, certificates and manifest, whatever the number of workers.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from vqaudit.errors import VqauditError
from vqaudit.files import sha256_bytes
from vqaudit.schema import ChartGroupMeta, Group, Obligation, View
from vqaudit.suites.charts.certify import Certificate, certify_world
from vqaudit.suites.charts.masks import Mask, apply_mask, category_mask
from vqaudit.suites.charts.png import pixel_sha256, png_bytes
from vqaudit.suites.charts.program_text import answer_unit, program_to_json, question
from vqaudit.suites.charts.programs import (
    PROGRAM_KINDS,
    Answer,
    Program,
    answer_text,
    category_cells,
    evaluate_world,
    is_numeric,
    sample_program,
)
from vqaudit.suites.charts.real_table import RealTable
from vqaudit.suites.charts.render import RENDERER, render
from vqaudit.suites.charts.tables import TABLE_NAMES, load_table
from vqaudit.suites.charts.witness import Witness, find_witness, make_certificate, make_determined_certificate
from vqaudit.suites.charts.world import (
    CHART_KINDS,
    World,
    distinct_value,
    replace_category,
    sample_world,
)
from vqaudit.suites.common import GroupBuild, build_benchmark, map_groups, versions

STATES = ("original", "S", "C", "M", "I")


def _draw_world(rng: np.random.Generator) -> tuple[RealTable, World, int, int, World]:
    for _ in range(100):
        table = load_table(TABLE_NAMES[int(rng.integers(len(TABLE_NAMES)))])
        kind = CHART_KINDS[int(rng.integers(len(CHART_KINDS)))]
        n_series = 1 if len(table.series) == 1 or rng.random() < 0.5 else 2
        world = sample_world(table, kind, n_series, int(rng.integers(4, 8)), rng)
        if world is None:
            continue
        s, c = int(rng.integers(n_series)), int(rng.integers(len(world.categories)))
        invalid = replace_category(world, c, table, rng)
        if invalid is not None:
            return table, world, s, c, invalid
    raise VqauditError("could not draw a chart world after 100 attempts")  # pragma: no cover


def _edit(
    world: World, cells: list[tuple[int, int]], program: Program, keep: bool, rng: np.random.Generator
) -> World | None:
    """A one-cell edit among ``cells`` that keeps (S) or changes (C) the program's answer; None if none found."""
    answer = evaluate_world(program, world)
    for _ in range(40):
        si, ci = cells[int(rng.integers(len(cells)))]
        edited = world.with_value(si, ci, distinct_value(world, world.values[si][ci], rng))
        new = evaluate_world(program, edited)
        if new is not None and (new == answer) == keep and _readable(new):
            return edited
    return None


def _readable(answer: Answer | None) -> bool:
    """Numeric answers must have a finite decimal expansion (a model cannot be asked for 13/3 exactly)."""
    return answer is not None and "/" not in answer_text(answer)


def view_obligation(program: Program, world: World, answer: Answer | None) -> Obligation:
    """The obligation of a supported view: answer ``answer`` (the program's on ``world``) as number or text."""
    assert answer is not None
    if is_numeric(program):
        return Obligation(
            kind="answer", gold=(answer_text(answer),), answer_type="number", unit=answer_unit(program, world)
        )
    return Obligation(kind="answer", gold=(answer_text(answer),), answer_type="text")


@dataclass(frozen=True)
class Plan:
    """A planned group: its table, program, the world of every state, the M witness and certificates."""

    table: RealTable
    program: Program
    worlds: dict[str, World]
    m_witness: Witness | None
    m_cert: Certificate
    d_view: tuple[int, Mask, Certificate] | None


def _plan(rng: np.random.Generator, programs: str, determined: bool) -> Plan | None:
    table, world, s, c, invalid = _draw_world(rng)
    kind = "lookup" if programs == "lookup" else PROGRAM_KINDS[int(rng.integers(len(PROGRAM_KINDS)))]
    program = sample_program(world, kind, s, c, rng)
    return plan_group(rng, table, world, s, c, invalid, program, determined)


def plan_group(
    rng: np.random.Generator,
    table: RealTable,
    world: World,
    s: int,
    c: int,
    invalid: World,
    program: Program,
    determined: bool,
) -> Plan | None:
    """Edits, certificate and witness of one group whose world, queried cell and program are chosen.

    Returns None when the answer is unreadable, the invalid-reference world still answers, or no S or C edit is
    found (the caller draws again or skips). Raises VqauditError when every mask leaks (no pixel witness).
    """
    if not _readable(evaluate_world(program, world)) or evaluate_world(program, invalid) is not None:
        return None
    queried = (s, c)
    all_cells = [(si, ci) for si in range(len(world.series)) for ci in range(len(world.categories))]
    world_s = _edit(world, [x for x in all_cells if x != queried], program, True, rng)
    world_c = _edit(world, [queried], program, False, rng)
    if world_s is None or world_c is None:
        return None
    m_cert = certify_world(world, category_cells(world, world.categories[c]), program)
    worlds = {"original": world, "S": world_s, "C": world_c, "M": world, "I": invalid}
    witness = None
    if m_cert.determined:
        worlds["D"] = worlds.pop("M")  # the mask leaves the answer determined: a supported masked view
    else:
        assert m_cert.witness is not None
        witness = find_witness(world, s, c, rng)
        alt = world
        for (name, cat), value in m_cert.witness[1].items():
            alt = alt.with_value(world.series.index(name), world.categories.index(cat), value)
        if not np.array_equal(apply_mask(render(alt), witness.mask), apply_mask(render(world), witness.mask)):
            raise VqauditError(f"{table.name}: the certified witness is visible through the {witness.mask.name} mask")
        witness = Witness(mask=witness.mask, world_b=alt, rejected=witness.rejected)
    d_view = None
    if determined and "D" not in worlds:
        for ci in rng.permutation(len(world.categories)).tolist():
            if ci == c:
                continue
            cert = certify_world(world, category_cells(world, world.categories[ci]), program)
            if cert.determined:
                d_view = (int(ci), category_mask(world, int(ci), "neighbors" if world.kind == "line" else "slot"), cert)
                worlds["D"] = world
                break
    return Plan(table, program, worlds, witness, m_cert, d_view)


def build_group(seed: int, g: int, programs: str = "lookup", determined: bool = False) -> GroupBuild:
    """Build group ``g`` of a benchmark with ``seed``: its views, PNG images and certificates.

    Args:
        seed: build seed.
        g: group index; the group draws from ``numpy.random.default_rng([seed, g])``.
        programs: ``"lookup"`` (the paper's fixed lookup question) or ``"all"`` (every program kind of
            :data:`vqaudit.suites.charts.programs.PROGRAM_KINDS`).
        determined: also add a ``D`` view when some other masked category leaves the answer determined.

    Raises:
        VqauditError: if no mask yields a pixel witness (the build fails loudly rather than writing an unproven
            label), or no admissible group can be drawn.
    """
    rng = np.random.default_rng([seed, g])
    plan = None
    for _ in range(50):
        plan = _plan(rng, programs, determined)
        if plan is not None:
            break
    if plan is None:
        raise VqauditError(f"group {g}: no admissible question after 50 draws")
    return group_from_plan(plan, f"charts-{g:05d}")


def group_from_plan(plan: Plan, group_id: str, extra_meta: dict[str, Any] | None = None) -> GroupBuild:
    """Render and certify the views of a planned group (original, S, C, M or D, I).

    ``extra_meta`` goes into the group's and every view's meta (e.g. the imported plot and its QA pair).
    """
    world, program, table = plan.worlds["original"], plan.program, plan.table
    c = world.categories.index(plan.m_cert.hidden_cells[0][1])
    text = question(program, world)
    pixels = render(world)
    images: dict[str, bytes] = {}
    certificates: dict[str, dict[str, Any]] = {}
    views: list[View] = []
    for state in [st for st in (*STATES, "D") if st in plan.worlds]:
        view_id = f"{group_id}-{state}"
        w = plan.worlds[state]
        px = pixels if w is world else render(w)
        meta: dict[str, Any] = {
            "table": table.name,
            "kind": w.kind,
            "program": program_to_json(program),
            "world": w.to_json(),
            **(extra_meta or {}),
        }
        if state in ("M", "I"):
            obligation = Obligation(kind="abstain")
        else:
            obligation = view_obligation(program, w, evaluate_world(program, w))
        if state == "M":
            assert plan.m_witness is not None
            px = apply_mask(px, plan.m_witness.mask)
            cert = make_certificate(
                view_id=view_id,
                group_id=group_id,
                world=world,
                program=program,
                c=c,
                witness=plan.m_witness,
                image_pixel_sha256=pixel_sha256(px),
            )
            cert["answerability"] = plan.m_cert.to_json()
        elif state == "D":
            ci, mask, dcert = (c, _queried_mask(world, c), plan.m_cert) if plan.d_view is None else plan.d_view
            px = apply_mask(px, mask)
            cert = make_determined_certificate(
                view_id=view_id,
                group_id=group_id,
                world=world,
                mask=mask,
                answerability=dcert,
                image_pixel_sha256=pixel_sha256(px),
            )
        if state in ("M", "D"):
            meta["certificate"] = f"certificates/{view_id}.json"
            certificates[meta["certificate"]] = cert
        data = png_bytes(px)
        image = f"images/{view_id}.png"
        images[image] = data
        views.append(
            View(
                view_id=view_id,
                group_id=group_id,
                source="charts",
                state=state,
                image=image,
                image_sha256=sha256_bytes(data),
                question=text,
                obligation=obligation,
                meta=meta,
            )
        )
    group = Group(
        group_id=group_id,
        source="charts",
        question=text,
        view_ids=tuple(v.view_id for v in views),
        meta={
            "table": table.name,
            "kind": world.kind,
            "n_series": len(world.series),
            "program": program_to_json(program)["op"],
            **(extra_meta or {}),
        },
    )
    return GroupBuild(group=group, views=tuple(views), images=images, certificates=certificates)


def _queried_mask(world: World, c: int) -> Mask:
    """The mask of a determined queried category: the line-chart band where segments would leak, else the slot."""
    return category_mask(world, c, "neighbors" if world.kind == "line" else "slot")


def image_versions() -> dict[str, str]:
    """The manifest's ``versions``: what labels, pixels and PNG bytes depend on.

    vqaudit, Python, matplotlib, numpy, Pillow, and the zlib that compresses the images
    (:func:`vqaudit.suites.charts.png.png_bytes`).
    """
    return dict(sorted({**versions("matplotlib", "numpy", "PIL"), "zlib": zlib.ZLIB_RUNTIME_VERSION}.items()))


def build_charts(
    out: Path,
    n_groups: int,
    seed: int,
    *,
    workers: int = 1,
    programs: str = "lookup",
    determined: bool = False,
    on_group: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Build a chart benchmark folder and return its manifest.

    Args:
        out: target folder; must not exist or be empty.
        n_groups: number of groups (>= 1); each has five views.
        seed: the build seed; the same seed gives byte-identical files.
        workers: processes used to render (results are identical for any value).
        programs: ``"lookup"`` (the paper's question) or ``"all"`` (every program kind).
        determined: add ``D`` views (masked, answer still determined, with the certifier's proof) where possible.
        on_group: called after each group is written (for progress bars).

    Returns:
        The manifest written to ``out/manifest.json``: format, source, seed, n_groups, versions, tables (with
        credits) and the SHA-256 of every image, certificate, views and groups file.

    Raises:
        VqauditError: bad arguments, a non-empty output folder, or a group whose witness search fails.
    """
    if n_groups < 1:
        raise VqauditError(f"--groups must be at least 1 (got {n_groups})")
    if programs not in ("lookup", "all"):
        raise VqauditError(f"--programs must be 'lookup' or 'all' (got {programs!r})")
    make = partial(build_group, seed, programs=programs, determined=determined)

    def fields(groups: Sequence[Group], views: Sequence[View]) -> dict[str, Any]:
        used_tables = {ChartGroupMeta.of(g).table for g in groups}
        return {
            "seed": seed,
            "n_groups": n_groups,
            "n_views": len(views),
            "states": sorted({v.state for v in views}),
            "programs": programs,
            "determined_views": determined,
            "renderer": RENDERER,
            "versions": image_versions(),
            "tables": {name: load_table(name).source for name in sorted(used_tables)},
        }

    return build_benchmark(out, "charts", map_groups(make, n_groups, workers, chunksize=8), fields, on_group)
