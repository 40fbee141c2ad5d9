"""Re-check a built scene group from its files alone: programs, labels, edits, pixels and M witnesses.

For each group of a scenes benchmark (``build.build_scenes``) this re-derives every label from the view metadata
(the edited scene's objects and the program) and the saved PNGs, without trusting the builder:

- every supported view's gold answer is the program's answer on that view's scene;
- ``S``: the changed object is outside the original's dependency set and every node output is unchanged;
- ``C``: exactly one attribute of one dependency-set object differs and the answer differs;
- ``M``: the saved image equals a fresh render of the M scene; the referent has no visible pixel; the occluder
  keeps the answer; an ``ambiguous`` label has a witness completion whose fresh render is pixel-identical to the
  saved image and whose outcome differs; a ``determined`` label is re-searched and must have no witness.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from vqaudit.schema import SceneViewMeta, View
from vqaudit.suites.scenes.camera import Camera
from vqaudit.suites.scenes.edits import with_attribute
from vqaudit.suites.scenes.occlusion import find_witness
from vqaudit.suites.scenes.programs import answer, answer_text, dependency_set, execute, program_from_json
from vqaudit.suites.scenes.render import instance_ids, render
from vqaudit.suites.scenes.scene import ATTRIBUTES, Scene, scene_from_json


def _scene(view: View, directions: dict[str, Any]) -> Scene:
    return scene_from_json(
        {"objects": SceneViewMeta.of(view).objects, "directions": directions, "name": view.view_id},
        where=f"view {view.view_id}: meta",
    )


def camera_from_json(data: dict[str, Any]) -> Camera:
    """Rebuild a camera from ``Camera.to_json``."""
    rot = tuple(tuple(float(x) for x in row) for row in data["rotation"])
    c = data["centre"]
    return Camera(
        rotation=rot,  # type: ignore[arg-type]
        centre=(float(c[0]), float(c[1]), float(c[2])),
        focal=float(data["focal"]),
        width=int(data["width"]),
        height=int(data["height"]),
    )


def _diff(a: Scene, b: Scene) -> list[tuple[int, str]]:
    return [
        (i, attr)
        for i, (x, y) in enumerate(zip(a.objects, b.objects, strict=False))
        for attr in ATTRIBUTES
        if x.attr(attr) != y.attr(attr)
    ]


def check_group(views: Sequence[View], camera: dict[str, Any], directions: dict[str, Any], root: Path) -> list[str]:
    """Problems found in one group (empty when every label is re-derived), each naming the view.

    Args:
        views: the group's four views (any order).
        camera: the group's ``meta["camera"]``.
        directions: the CLEVR ``directions`` of the group's source scene.
        root: the benchmark folder (images are read from it).
    """
    by = {v.state: v for v in views}
    if sorted(by) != ["C", "M", "S", "original"]:
        return [f"group {views[0].group_id}: states {sorted(by)}"]
    problems: list[str] = []
    program = program_from_json(SceneViewMeta.of(by["original"]).program)
    scenes = {s: _scene(v, directions) for s, v in by.items()}
    base = execute(program, scenes["original"])
    for state, view in by.items():
        value = answer(program, scenes[state])
        ob = view.obligation
        if ob.kind == "answer" and (value is None or ob.gold != (answer_text(value),)):
            said = "nothing" if value is None else repr(answer_text(value))
            problems.append(
                f"views.jsonl, view {view.view_id}, field 'obligation': gold {list(ob.gold)!r} but the "
                f"program answers {said} on the view's scene"
            )
    changed = _diff(scenes["original"], scenes["S"])
    deps = dependency_set(program, base)
    if len(changed) != 1 or changed[0][0] in deps or execute(program, scenes["S"]) != base:
        problems.append(f"{by['S'].view_id}: S must change one attribute outside {sorted(deps)}, outputs kept")
    changed = _diff(scenes["original"], scenes["C"])
    if len(changed) != 1 or changed[0][0] not in deps or answer(program, scenes["C"]) == base[-1]:
        problems.append(f"{by['C'].view_id}: C must change one referent attribute and the answer")
    cam = camera_from_json(camera)
    for state in ("original", "S", "C"):
        if not np.array_equal(render(scenes[state], cam).rgb, _saved(root, by[state])):
            problems.append(f"{by[state].view_id}: the saved image is not the render of the view's scene")
    texts = {v.question for v in views}
    if len(texts) != 1:
        problems.append(f"group {views[0].group_id}: its views ask different questions")
    problems += _check_masked(by["M"], program, scenes["M"], base[-1], cam, root)
    return problems


def _saved(root: Path, view: View) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO((root / view.image).read_bytes())).convert("RGB"))


def _check_masked(view: View, program: Any, scene: Scene, base: Any, camera: Camera, root: Path) -> list[str]:
    ev = SceneViewMeta.of(view).evidence
    saved = _saved(root, view)
    problems = []
    if not np.array_equal(render(scene, camera).rgb, saved):
        problems.append(f"{view.view_id}: the saved image is not the render of the M scene")
    if np.any(instance_ids(scene, camera) == ev["referent"]):
        problems.append(f"{view.view_id}: referent {ev['referent']} is visible")
    if answer(program, scene) != base:
        problems.append(f"{view.view_id}: the occluder changes the answer")
    if ev["status"] == "ambiguous":
        if view.obligation.kind != "abstain":
            problems.append(f"{view.view_id}: an ambiguous M view must oblige abstention")
        w = ev["witness"]
        alt = _apply(scene, w)
        other = answer(program, alt)
        if other == base or not np.array_equal(render(alt, camera).rgb, saved):
            problems.append(f"{view.view_id}: the witness does not render identically with a different outcome")
    else:
        found, _, _ = find_witness(program, scene, camera, list(ev["hidden"]), saved)
        if found is not None or view.obligation.kind != "answer":
            problems.append(f"{view.view_id}: a determined M view has a witness or is not answerable")
    return problems


def _apply(scene: Scene, witness: dict[str, Any]) -> Scene:
    h = int(witness["object"])
    change = witness["change"]
    if change == "removed":
        kept = tuple(o for i, o in enumerate(scene.objects) if i != h)
        return Scene(name=scene.name, objects=kept, directions=scene.directions)
    return scene.with_object(h, with_attribute(scene.objects[h], str(change["attribute"]), str(change["to"])))
