"""The photo checker: re-derives every group's labels from its scene graph and re-applies its masks (``verify``).

For each group of a photo benchmark (:func:`vqaudit.suites.photos.build.build_photos`) this re-derives, from the
group's ``scene_graph`` and each view's ``program`` and ``masked`` meta, without trusting the builder:

- the answer: the program executed on the scene graph (:func:`vqaudit.suites.photos.gqa.execute`); every
  supported view's gold is that answer;
- each masked view: the objects its rectangles remove and the re-executed answer (the keep rule of
  :func:`vqaudit.suites.photos.plan.masked`): ``M`` masks every dependency box and must change or undefine the
  answer (abstain); ``control`` and ``matched`` must keep it;
- each masked image: the group's original photo with the view's rectangles masked by the benchmark's mask kind
  (:func:`vqaudit.suites.photos.masks.apply_masks`) and encoded as the builder does must equal the file byte for
  byte (the decoded pixels, where the manifest's Pillow or zlib version is not this process's); the original's
  pixels must have the scene graph's size, and for the bundled photos equal the bundled file's.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import PIL
from PIL import Image

from vqaudit.errors import VqauditError
from vqaudit.executors import current
from vqaudit.files import read_json
from vqaudit.schema import Group, Obligation, View
from vqaudit.suites.photos.build import png_bytes, view_obligation
from vqaudit.suites.photos.gqa import answer_text, dependency_set, execute
from vqaudit.suites.photos.graph import Question, SceneGraph, parse_scene_graph, parse_step
from vqaudit.suites.photos.masks import MASK_KINDS, apply_masks, mask_rect
from vqaudit.suites.photos.plan import masked


@dataclass(frozen=True)
class PhotoGroup:
    """One photo group as :func:`check_photo_group` needs it: records and image bytes by view id.

    ``bundled`` holds the bundled source photo's bytes when the benchmark was built from the bundled photos.
    """

    group: Group
    views: tuple[View, ...]
    images: dict[str, bytes]
    bundled: bytes | None


def verify_photo_groups(
    bench_dir: Path, views: Sequence[View], groups: Sequence[Group], missing: set[str], *, workers: int
) -> list[tuple[str, str]]:
    """Re-derive every photo group (:func:`check_photo_group`) on the current executor; ``(id, problem)`` pairs.

    Images are read here, on the driver; views whose image is in ``missing`` (already a fault) are re-derived
    without their image.
    """
    try:
        manifest = read_json(bench_dir / "manifest.json")
    except VqauditError as exc:
        return [("manifest", str(exc))]
    manifest = manifest if isinstance(manifest, dict) else {}
    versions = manifest.get("versions")
    versions = versions if isinstance(versions, dict) else {}
    same_encoder = versions.get("pillow") == PIL.__version__  # Pillow's PNG bytes depend on its version
    bundled_dir = (
        Path(str(resources.files("vqaudit.suites.photos") / "data")) if manifest.get("input") == "bundled" else None
    )
    by_id = {v.view_id: v for v in views}
    items = (
        _load(bench_dir, g, tuple(by_id[i] for i in g.view_ids if i in by_id), missing, bundled_dir) for g in groups
    )
    check = partial(_check, str(manifest.get("mask", "")), same_encoder)
    return [fault for faults in current().map(check, items, workers=workers, chunksize=4) for fault in faults]


def _load(
    bench_dir: Path, group: Group, views: tuple[View, ...], missing: set[str], bundled_dir: Path | None
) -> PhotoGroup:
    images = {
        v.view_id: (bench_dir / v.image).read_bytes()
        for v in views
        if v.view_id not in missing and (bench_dir / v.image).is_file()
    }
    bundled = None
    name = group.meta.get("file")
    if bundled_dir is not None and isinstance(name, str) and "/" not in name and "\\" not in name:
        path = bundled_dir / name
        bundled = path.read_bytes() if path.is_file() else b""
    return PhotoGroup(group, views, images, bundled)


def _check(mask_kind: str, same_encoder: bool, item: PhotoGroup) -> list[tuple[str, str]]:
    return check_photo_group(item, mask_kind=mask_kind, same_encoder=same_encoder)


def _decode(data: bytes) -> np.ndarray[Any, np.dtype[np.uint8]]:
    with Image.open(io.BytesIO(data)) as im:
        return np.asarray(im.convert("RGB"), dtype=np.uint8)


def check_photo_group(item: PhotoGroup, *, mask_kind: str, same_encoder: bool = True) -> list[tuple[str, str]]:
    """Re-derive one photo group (module docstring); return ``(view or group id, problem)`` pairs (empty = valid).

    Args:
        item: the group, its views and their image bytes.
        mask_kind: the manifest's ``mask`` (one of :data:`vqaudit.suites.photos.masks.MASK_KINDS`).
        same_encoder: the manifest's Pillow and zlib versions are this process's, so PNG bytes are compared;
            otherwise decoded pixels are.
    """
    group = item.group
    gid = group.group_id
    try:
        graph = parse_scene_graph(str(group.meta["image_id"]), group.meta["scene_graph"], "groups.jsonl")
    except (KeyError, VqauditError) as exc:
        return [(gid, f"groups.jsonl, group {gid}, field 'meta.scene_graph': {exc}")]
    by_state = {v.state: v for v in item.views}
    if "original" not in by_state or "M" not in by_state:
        return [(gid, f"groups.jsonl, group {gid}: states {sorted(by_state)}, expected original, control and M")]
    faults: list[tuple[str, str]] = []
    original = by_state["original"]
    try:
        program = tuple(parse_step(s, k, f"view {original.view_id}") for k, s in enumerate(original.meta["program"]))
        question = Question(
            id=str(original.meta["question_id"]),
            image_id=graph.image_id,
            text=original.question,
            answer="",
            program=program,
        )
        answer = answer_text(execute(program, graph, question.id).answer)
    except (KeyError, TypeError, VqauditError) as exc:
        return [(original.view_id, f"views.jsonl, view {original.view_id}, field 'meta.program': {exc}")]
    if answer is None:
        return [(gid, f"groups.jsonl, group {gid}: the program has no answer on the scene graph")]
    supported = view_obligation(program, answer)
    deps = dependency_set(program, graph)
    rgb = _original_pixels(item, original, graph, faults)
    for view in item.views:
        where = f"views.jsonl, view {view.view_id}"
        if view.question != group.question or view.meta.get("program") != original.meta.get("program"):
            faults.append((view.view_id, f"{where}, field 'question': not the group's question and program"))
        if view.state == "original":
            if view.obligation != supported:
                faults.append(
                    (
                        view.view_id,
                        f"{where}, field 'obligation': {_gold(view.obligation)} but the "
                        f"program answers {answer!r} on the scene graph",
                    )
                )
            continue
        faults += _check_masked(item, view, graph, question, answer, deps, supported, rgb, mask_kind, same_encoder)
    return faults


def _gold(obligation: Obligation) -> str:
    return "abstain" if obligation.kind == "abstain" else f"gold {list(obligation.gold)!r}"


def _original_pixels(
    item: PhotoGroup, original: View, graph: SceneGraph, faults: list[tuple[str, str]]
) -> np.ndarray[Any, np.dtype[np.uint8]] | None:
    data = item.images.get(original.view_id)
    if data is None:
        return None
    where = f"views.jsonl, view {original.view_id}, field 'image'"
    try:
        rgb = _decode(data)
    except Exception as exc:  # noqa: BLE001 - any decoding failure is a fault
        faults.append((original.view_id, f"{where}: {original.image} does not decode ({exc})"))
        return None
    if rgb.shape[:2] != (graph.height, graph.width):
        faults.append(
            (
                original.view_id,
                f"{where}: {original.image} is {rgb.shape[1]}x{rgb.shape[0]}, the scene "
                f"graph says {graph.width}x{graph.height}",
            )
        )
        return None
    if item.bundled is not None:
        try:
            same = item.bundled != b"" and np.array_equal(_decode(item.bundled), rgb)
        except Exception:  # noqa: BLE001 - an unreadable bundled photo matches nothing
            same = False
        if not same:
            faults.append(
                (original.view_id, f"{where}: {original.image} is not the bundled photo {item.group.meta.get('file')}")
            )
    return rgb


def _check_masked(
    item: PhotoGroup,
    view: View,
    graph: SceneGraph,
    question: Question,
    answer: str,
    deps: frozenset[str],
    supported: Obligation,
    rgb: np.ndarray[Any, np.dtype[np.uint8]] | None,
    mask_kind: str,
    same_encoder: bool,
) -> list[tuple[str, str]]:
    where = f"views.jsonl, view {view.view_id}"
    try:
        rects = tuple((int(r[0]), int(r[1]), int(r[2]), int(r[3])) for r in view.meta["masked"]["rects"])
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        return [(view.view_id, f"{where}, field 'meta.masked.rects': malformed ({exc!r})")]
    by = graph.by_id()
    if view.state == "M":
        ids = deps
        want = tuple(mask_rect(by[i].box, graph.width, graph.height) for i in sorted(deps))
        if rects != want:
            return [(view.view_id, f"{where}, field 'meta.masked.rects': not the masks of the dependency boxes")]
    elif view.state == "control":
        ids = frozenset({str(item.group.meta.get("control_object"))})
    else:
        ids = frozenset()
    try:
        redone = masked(question, graph, rects, frozenset(i for i in ids if i in by))
    except VqauditError as exc:
        return [(view.view_id, f"{where}, field 'meta.masked': the program fails on the masked graph ({exc})")]
    faults = []
    if view.state == "M":
        if redone.answer == answer:
            faults.append((view.view_id, f"{where}, field 'meta.masked': the masks leave the answer {answer!r}"))
        if view.obligation != Obligation(kind="abstain"):
            faults.append(
                (
                    view.view_id,
                    f"{where}, field 'obligation': {_gold(view.obligation)} but the masks "
                    "remove the evidence (abstain)",
                )
            )
    else:
        if redone.answer != answer:
            faults.append(
                (view.view_id, f"{where}, field 'meta.masked': the masks change the answer to {redone.answer!r}")
            )
        if view.obligation != supported:
            faults.append(
                (
                    view.view_id,
                    f"{where}, field 'obligation': {_gold(view.obligation)} but the program "
                    f"answers {answer!r} with these masks",
                )
            )
    recorded = view.meta["masked"]
    if sorted(redone.removed) != recorded.get("removed") or redone.answer != recorded.get("answer"):
        faults.append(
            (view.view_id, f"{where}, field 'meta.masked': removed objects or answer are not the re-executed ones")
        )
    data = item.images.get(view.view_id)
    if rgb is None or data is None or mask_kind not in MASK_KINDS:
        if mask_kind not in MASK_KINDS:
            faults.append((view.view_id, f"manifest.json, field 'mask': unknown mask kind {mask_kind!r}"))
        return faults
    pixels = apply_masks(rgb, rects, mask_kind)
    same = png_bytes(pixels) == data if same_encoder else _same_pixels(pixels, data)
    if not same:
        faults.append(
            (
                view.view_id,
                f"{where}, field 'image': {view.image} is not the original photo with the "
                f"view's masks ({mask_kind}) applied",
            )
        )
    return faults


def _same_pixels(pixels: np.ndarray[Any, np.dtype[np.uint8]], data: bytes) -> bool:
    try:
        return bool(np.array_equal(_decode(data), pixels))
    except Exception:  # noqa: BLE001 - a file that does not decode is not the masked photo
        return False
