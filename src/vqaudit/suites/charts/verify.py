"""The chart checker (seed 000, appendix D).

``vqaudit verify`` re-derives every chart view from its meta (gold, state relations, question, image bytes) and
re-checks every masked view's witness certificate or proof; ``vqaudit audit-checker`` runs the designed-fault
suite against the same checker (:mod:`vqaudit.suites.charts.fault_suite`).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import numpy as np

from vqaudit.errors import VqauditError
from vqaudit.executors import current
from vqaudit.files import read_json
from vqaudit.schema import Group, Obligation, View
from vqaudit.suites.charts.build import view_obligation
from vqaudit.suites.charts.declared_tables import declare_benchmark_tables
from vqaudit.suites.charts.masks import Mask, apply_mask, category_mask
from vqaudit.suites.charts.png import decode_png, pixel_sha256, png_bytes
from vqaudit.suites.charts.program_text import program_from_json, question
from vqaudit.suites.charts.programs import Program, evaluate_world
from vqaudit.suites.charts.real_table import RealTable
from vqaudit.suites.charts.render import render
from vqaudit.suites.charts.tables import TABLES_DIR, declare_table, load_table
from vqaudit.suites.charts.witness import DETERMINED_FORMAT, verify_certificate, verify_determined
from vqaudit.suites.charts.world import World


def verify_view(bench_dir: Path, view: View) -> list[str]:
    """The failed conditions of one masked chart view's certificate (M: witness; D: proof) (empty = verified).

    Besides :func:`vqaudit.suites.charts.witness.verify_certificate`, checks that the view has a certificate,
    that the certificate names this view, and that its ``world_a`` is the view's world.
    """
    try:
        declare_benchmark_tables(bench_dir)  # imported charts: the tables their domains are declared in
    except VqauditError as exc:
        return [str(exc)]
    return check_loaded(load_for_check(bench_dir, view))


def load_for_check(bench_dir: Path, view: View) -> tuple[View, object, bytes | None]:
    """``(view, certificate or the reason it is unusable, image bytes or None)``: what :func:`check_loaded` needs.

    Read on the driver, so a check can run on any machine (``--executor ray``) without the benchmark folder.
    """
    cert_path = view.meta.get("certificate")
    if not isinstance(cert_path, str) or not (bench_dir / cert_path).is_file():
        return view, _Unusable("no certificate"), None
    try:
        cert = read_json(bench_dir / cert_path)
    except VqauditError as exc:
        return view, _Unusable(str(exc)), None
    image = bench_dir / view.image
    if not image.is_file():
        return view, _Unusable(f"image {view.image} missing"), None
    return view, cert, image.read_bytes()


@dataclass(frozen=True)
class _Unusable:
    """Stands for a certificate that could not be read: the problem to report."""

    problem: str


def check_loaded(item: tuple[View, object, bytes | None]) -> list[str]:
    """:func:`check_certificate` of an item of :func:`load_for_check` (its problem if it could not be read)."""
    view, cert, image = item
    if isinstance(cert, _Unusable) or image is None:
        return [cert.problem if isinstance(cert, _Unusable) else "image missing"]
    return check_certificate(view, cert, image)


def check_certificate(
    view: View, cert: object, image_png: bytes, render_world: Callable[[World], np.ndarray] = render
) -> list[str]:
    """The failed conditions of a certificate for ``view`` against the image bytes (empty = verified).

    ``render_world`` renders a world (default :func:`~vqaudit.suites.charts.render.render`; ``verify`` passes one
    that remembers the group's renders).
    """
    if not isinstance(cert, dict) or cert.get("view_id") != view.view_id:
        return ["certificate names another view"]
    if cert.get("format") == DETERMINED_FORMAT:
        if view.obligation.kind != "answer" or view.obligation.gold != (cert.get("answer"),):
            return ["the view's gold answer is not the certified answer"]
        if cert.get("world") != view.meta.get("world"):
            return ["certificate world is not the view's world"]
        return verify_determined(cert, image_png, render_world)
    if view.obligation.kind != "abstain":
        return ["a witnessed (unanswerable) view must oblige abstention"]
    try:
        if World.from_json(cert["world_a"]) != World.from_json(view.meta["world"]):
            return ["certificate world_a is not the view's world"]
    except (KeyError, TypeError, VqauditError) as exc:
        return [f"malformed world: {exc}"]
    return verify_certificate(cert, image_png, render_world)


def verify_chart_views(
    bench_dir: Path, views: Sequence[View], groups: Sequence[Group], missing: set[str], *, workers: int
) -> list[tuple[str, str]]:
    """Re-derive every chart group from its views' meta (:func:`check_chart_group`) on the current executor.

    Images, certificates and the manifest's zlib version are read here, on the driver, so the checks can run on
    any machine (``--executor ray``); views whose image is in ``missing`` (already a fault) are re-derived without
    their image.
    """
    try:
        tables = benchmark_tables(bench_dir)
    except VqauditError as exc:
        return [(v.view_id, str(exc)) for v in views]
    same_zlib = _manifest_zlib(bench_dir) == zlib.ZLIB_RUNTIME_VERSION
    by_id = {v.view_id: v for v in views}
    members = [tuple(by_id[i] for i in g.view_ids if i in by_id) for g in groups]
    loaded = (_load_group(bench_dir, g, m, missing) for g, m in zip(groups, members, strict=True))
    check = partial(_check_group_declared, tables, same_zlib)
    results = current().map(check, loaded, workers=workers, chunksize=8)
    return [fault for faults in results for fault in faults]


def _manifest_zlib(bench_dir: Path) -> str | None:
    """The zlib version the manifest says the images were compressed with (None if it does not say)."""
    try:
        manifest = read_json(bench_dir / "manifest.json")
    except VqauditError:
        return None
    versions = manifest.get("versions") if isinstance(manifest, dict) else None
    return str(versions.get("zlib")) if isinstance(versions, dict) and "zlib" in versions else None


@dataclass(frozen=True)
class GroupFiles:
    """One chart group as :func:`check_chart_group` needs it: records, image bytes and certificates by view id.

    A view whose image is missing has no entry in ``images``; a certificate that could not be read is an
    :class:`_Unusable` naming the problem.
    """

    group: Group
    views: tuple[View, ...]
    images: dict[str, bytes]
    certificates: dict[str, object]


def _load_group(bench_dir: Path, group: Group, views: Sequence[View], missing: set[str]) -> GroupFiles:
    images: dict[str, bytes] = {}
    certs: dict[str, object] = {}
    for view in views:
        if view.view_id not in missing and (bench_dir / view.image).is_file():
            images[view.view_id] = (bench_dir / view.image).read_bytes()
        if view.state in ("M", "D"):
            _, cert, _ = load_for_check(bench_dir, view)
            certs[view.view_id] = cert
    return GroupFiles(group, tuple(views), images, certs)


def _check_group_declared(tables: tuple[RealTable, ...], same_zlib: bool, item: GroupFiles) -> list[tuple[str, str]]:
    for table in tables:
        declare_table(table)
    return check_chart_group(item, same_zlib=same_zlib)


def check_chart_group(item: GroupFiles, *, same_zlib: bool = True) -> list[tuple[str, str]]:
    """Re-derive one chart group from what its views declare; return ``(view or group id, problem)`` pairs.

    From each view's ``meta`` (its world and the group's program; seed 000 §3.1, appendix D):

    - the gold: ``M`` and ``I`` oblige abstention; every other state's gold is the program's answer on the view's
      world (:func:`vqaudit.suites.charts.build.view_obligation`);
    - the states' relations: ``S`` changes one cell and keeps the answer, ``C`` changes one cell and the answer,
      ``M`` and ``D`` draw the original world, ``I`` has no answer (the queried category replaced);
    - the question: the program's question on the original world, for every view and the group;
    - the image: the view's world rendered (masked as its certificate says, for ``M`` and ``D``) and encoded
      (:func:`vqaudit.suites.charts.png.png_bytes`) must equal the file byte for byte; when the manifest's zlib
      version is not this process's (``same_zlib`` False) the decoded pixels are compared instead;
    - ``M`` and ``D``: the witness certificate or proof (:func:`check_certificate`).

    Every world is rendered once, however many views and certificates draw it.
    """
    renders: dict[World, np.ndarray] = {}

    def render_world(world: World) -> np.ndarray:
        if world not in renders:
            renders[world] = render(world)
        return renders[world]

    faults: list[tuple[str, str]] = []
    worlds: dict[str, World] = {}
    program = None
    for view in item.views:
        where = f"views.jsonl, view {view.view_id}"
        try:
            worlds[view.view_id] = World.from_json(view.meta["world"])
            view_program = program_from_json(view.meta["program"])
        except (KeyError, TypeError, ValueError, IndexError, VqauditError) as exc:
            faults.append((view.view_id, f"{where}, field 'meta': malformed world or program ({exc})"))
            continue
        if program is None:
            program = view_program
        elif view_program != program:
            faults.append((view.view_id, f"{where}, field 'meta.program': not the group's program"))
    by_state = {v.state: v for v in item.views if v.view_id in worlds}
    if program is None or "original" not in by_state:
        return faults or [(item.group.group_id, "groups.jsonl: the group has no readable original view")]
    original = worlds[by_state["original"].view_id]
    faults += _states_problems(item, by_state, worlds, program, original)
    try:
        text = question(program, original)
    except VqauditError as exc:
        return [*faults, (item.group.group_id, f"groups.jsonl: the program has no question ({exc})")]
    if item.group.question != text:
        faults.append(
            (
                item.group.group_id,
                f"groups.jsonl, group {item.group.group_id}, field 'question': not the program's question {text!r}",
            )
        )
    for view in item.views:
        if view.view_id not in worlds:
            continue
        where = f"views.jsonl, view {view.view_id}"
        world = worlds[view.view_id]
        if view.question != text:
            faults.append((view.view_id, f"{where}, field 'question': not the program's question {text!r}"))
        if view.meta.get("kind") != world.kind:
            faults.append((view.view_id, f"{where}, field 'meta.kind': not the world's kind {world.kind!r}"))
        expected = _expected_obligation(view.state, program, world)
        if expected is None:
            faults.append(
                (
                    view.view_id,
                    f"{where}, field 'obligation': the program has no answer on the view's "
                    "world, but the view obliges an answer",
                )
            )
        elif view.obligation != expected:
            faults.append(
                (
                    view.view_id,
                    f"{where}, field 'obligation': gold {_gold(view.obligation)} but the "
                    f"view's world and program give {_gold(expected)}",
                )
            )
        cert = item.certificates.get(view.view_id)
        data = item.images.get(view.view_id)
        if data is None:
            continue  # a missing image is already a fault of its own
        if view.state in ("M", "D"):
            if isinstance(cert, _Unusable):
                faults.append((view.view_id, cert.problem))
                continue
            faults += [(view.view_id, p) for p in check_certificate(view, cert, data, render_world)]
            mask = _certificate_mask(cert, world)
            if mask is None:
                continue  # the certificate check named the malformed mask
        else:
            mask = None
        try:
            pixels = render_world(world) if mask is None else apply_mask(render_world(world), mask)
        except Exception as exc:  # noqa: BLE001 - a world that does not render is a fault of the view, not a crash
            faults.append((view.view_id, f"{where}, field 'meta.world': does not render ({exc})"))
            continue
        if not _same_image(pixels, data, same_zlib):
            faults.append(
                (
                    view.view_id,
                    f"{where}, field 'image': {view.image} is not the render of the view's "
                    "world" + (" under its certificate's mask" if view.state in ("M", "D") else ""),
                )
            )
    return faults


def _gold(obligation: Obligation) -> str:
    return "abstain" if obligation.kind == "abstain" else repr(list(obligation.gold))


def _expected_obligation(state: str, program: Program, world: World) -> Obligation | None:
    if state in ("M", "I"):
        return Obligation(kind="abstain")
    answer = evaluate_world(program, world)
    return None if answer is None else view_obligation(program, world, answer)


def _certificate_mask(cert: object, world: World) -> Mask | None:
    try:
        mask_json = cert["mask"]  # type: ignore[index]
        return category_mask(world, int(mask_json["category_index"]), str(mask_json["name"]))
    except (KeyError, TypeError, ValueError, IndexError):
        return None


def _same_image(pixels: np.ndarray, data: bytes, same_zlib: bool) -> bool:
    if same_zlib:
        return png_bytes(pixels) == data
    try:
        return pixel_sha256(decode_png(data)) == pixel_sha256(pixels)
    except Exception:  # noqa: BLE001 - a file that does not decode is not the render
        return False


def _one_cell_changed(a: World, b: World) -> bool:
    """True when ``b`` is ``a`` with exactly one value changed (same layout, labels and domain)."""
    if replace(a, values=b.values) != b:
        return False
    return sum(x != y for ra, rb in zip(a.values, b.values, strict=True) for x, y in zip(ra, rb, strict=True)) == 1


def _states_problems(
    item: GroupFiles, by_state: dict[str, View], worlds: dict[str, World], program: Program, original: World
) -> list[tuple[str, str]]:
    """The relations between a group's states (S keeps the answer, C changes it, M/D draw the original world)."""
    states = set(by_state)
    faults: list[tuple[str, str]] = []
    gid = item.group.group_id
    if not {"original", "S", "C", "I"} <= states or not states & {"M", "D"}:
        faults.append(
            (gid, f"groups.jsonl, group {gid}: states {sorted(states)}, expected original, S, C, I and M or D")
        )
    answer = evaluate_world(program, original)
    for state, view in by_state.items():
        world = worlds[view.view_id]
        where = f"views.jsonl, view {view.view_id}, field 'meta.world'"
        if state in ("M", "D") and world != original:
            faults.append((view.view_id, f"{where}: a masked view must draw the original world"))
        elif state in ("S", "C"):
            keeps = state == "S"
            if not _one_cell_changed(original, world):
                faults.append((view.view_id, f"{where}: {state} must change exactly one cell of the original"))
            elif (evaluate_world(program, world) == answer) != keeps:
                faults.append((view.view_id, f"{where}: {state} must {'keep' if keeps else 'change'} the answer"))
        elif state == "I" and evaluate_world(program, world) is not None:
            faults.append((view.view_id, f"{where}: the program still answers on the I world"))
    return faults


def benchmark_tables(bench_dir: Path) -> tuple[RealTable, ...]:
    """Declare the imported tables of ``bench_dir/tables/`` here and return them, to declare on the workers too.

    A worker of the ``ray`` executor is another process, maybe on another machine, that did not read them.

    Raises:
        VqauditError: a file there that is not a declared table.
    """
    declare_benchmark_tables(bench_dir)
    folder = bench_dir / TABLES_DIR
    return tuple(load_table(p.stem) for p in sorted(folder.glob("*.json"))) if folder.is_dir() else ()


def _check_declared(tables: tuple[RealTable, ...], item: tuple[View, object, bytes | None]) -> list[str]:
    for table in tables:
        declare_table(table)
    return check_loaded(item)
