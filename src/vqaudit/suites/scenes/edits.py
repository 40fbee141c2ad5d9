"""Scene edits with program-derived labels: S (unrelated object changed) and C (referent changed).

Seed 000, §3.1 and appendix C.1: a scene group keeps one question fixed over the original scene, an edit that keeps
the answer (S: "changes an unrelated cylinder"), an edit that changes it (C: "changes the referent's color") and an
occluded referent (M, ``occlusion``). Every label here is re-checked by executing the program on the edited scene:

- ``S`` changes one attribute of an object outside the program's dependency set (``programs.dependency_set``) and
  is kept only if *every* node output is unchanged (so the answer is kept for the same reason);
- ``C`` changes one attribute of an object in the dependency set and is kept only if the program stays valid and
  its answer differs.

Both also require a legal CLEVR layout (objects do not overlap) and every object to stay visible (at least
``MIN_VISIBLE`` pixels in the instance buffer), so the edited image still supports an answer.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from vqaudit.errors import VqauditError
from vqaudit.suites.scenes.camera import Camera
from vqaudit.suites.scenes.geometry import scale
from vqaudit.suites.scenes.programs import Output, Program, answer_text, dependency_set, execute, metadata
from vqaudit.suites.scenes.render import instance_ids
from vqaudit.suites.scenes.scene import ATTRIBUTES, Scene, SceneObject

MIN_VISIBLE = 100  # pixels; CLEVR requires 200 in its own renders (--min_pixels_per_object)
MIN_GAP = 0.05  # world units between the footprints of two objects
_TYPE = {"size": "Size", "color": "Color", "material": "Material", "shape": "Shape"}


@dataclass(frozen=True)
class Edit:
    """A certified edited scene.

    Attributes:
        state: ``S``, ``C`` or ``M``.
        scene: the edited scene.
        answer: the program's answer on the edited scene (the gold answer when ``supported``).
        supported: True when the view obliges an answer, False when it obliges abstention.
        description: one human-readable sentence.
        evidence: JSON-ready record of what was changed and which checks passed.
    """

    state: str
    scene: Scene
    answer: Output
    supported: bool
    description: str
    evidence: dict[str, Any]


def footprint(obj: SceneObject) -> float:
    """Radius of a vertical cylinder about the object's centre that contains its ground footprint."""
    return scale(obj) * (2.0**0.5 if obj.shape == "cube" else 1.0)


def layout_ok(scene: Scene) -> bool:
    """True when no two objects' footprints come closer than ``MIN_GAP``."""
    objs = scene.objects
    for i in range(len(objs)):
        for j in range(i + 1, len(objs)):
            d = float(np.hypot(objs[i].xyz[0] - objs[j].xyz[0], objs[i].xyz[1] - objs[j].xyz[1]))
            if d < footprint(objs[i]) + footprint(objs[j]) + MIN_GAP:
                return False
    return True


def visible_counts(scene: Scene, camera: Camera) -> list[int]:
    """Visible pixels of every object in the instance buffer, in object order."""
    ids = instance_ids(scene, camera)
    counts = np.bincount(ids[ids >= 0].ravel(), minlength=len(scene.objects))
    return [int(c) for c in counts]


def all_visible(scene: Scene, camera: Camera) -> bool:
    """True when every object has at least ``MIN_VISIBLE`` visible pixels."""
    return min(visible_counts(scene, camera)) >= MIN_VISIBLE


def with_attribute(obj: SceneObject, attr: str, value: str) -> SceneObject:
    """A copy of ``obj`` with one attribute changed; a size change keeps the object on the ground."""
    if attr not in ATTRIBUTES:
        raise VqauditError(f"unknown attribute {attr!r}; expected one of {ATTRIBUTES}")
    fields: dict[str, Any] = {attr: value}
    new = replace(obj, **fields)
    if attr == "size":
        s = scale(new)
        new = replace(new, xyz=(obj.xyz[0], obj.xyz[1], s))
    return new


def attribute_changes(obj: SceneObject) -> list[tuple[str, str]]:
    """Every single-attribute change of ``obj``: (attribute, new value), in ATTRIBUTES then metadata order."""
    out = []
    for attr in ATTRIBUTES:
        for value in metadata()["types"][_TYPE[attr]]:
            if value != obj.attr(attr):
                out.append((attr, str(value)))
    return out


def _candidates(scene: Scene, objects: list[int], rng: np.random.Generator) -> list[tuple[int, str, str]]:
    cands = [(i, a, v) for i in objects for a, v in attribute_changes(scene.objects[i])]
    return [cands[int(k)] for k in rng.permutation(len(cands))]


def _record(scene: Scene, index: int, attr: str, value: str) -> dict[str, Any]:
    return {"object": index, "attribute": attr, "from": scene.objects[index].attr(attr), "to": value}


def edit_unrelated(
    program: Program, scene: Scene, camera: Camera, rng: np.random.Generator, max_tries: int = 40
) -> Edit | None:
    """The S edit: change an attribute of an object outside the dependency set, all node outputs kept.

    Returns:
        The certified edit, or None when no candidate (at most ``max_tries`` tried, in ``rng`` order) passes.
    """
    outputs = execute(program, scene)
    deps = dependency_set(program, outputs)
    others = [i for i in range(len(scene.objects)) if i not in deps]
    for index, attr, value in _candidates(scene, others, rng)[:max_tries]:
        edited = scene.with_object(index, with_attribute(scene.objects[index], attr, value))
        if execute(program, edited) != outputs or not layout_ok(edited) or not all_visible(edited, camera):
            continue
        change = _record(scene, index, attr, value)
        return Edit(
            state="S",
            scene=edited,
            answer=outputs[-1],
            supported=True,
            description=f"object {index} ({_name(scene.objects[index])}) changes {attr} "
            f"from {change['from']} to {value}; it is outside the program's dependency set",
            evidence={
                "change": change,
                "dependency_set": sorted(deps),
                "checks": {
                    "outside_dependency_set": True,
                    "node_outputs_unchanged": True,
                    "layout_ok": True,
                    "all_objects_visible": True,
                },
                "answer": answer_text(outputs[-1]),
            },
        )
    return None


def edit_referent(
    program: Program, scene: Scene, camera: Camera, rng: np.random.Generator, max_tries: int = 40
) -> Edit | None:
    """The C edit: change an attribute of an object in the dependency set so the (valid) answer changes.

    Returns:
        The certified edit, or None when no candidate (at most ``max_tries`` tried, in ``rng`` order) passes.
    """
    outputs = execute(program, scene)
    deps = sorted(dependency_set(program, outputs))
    for index, attr, value in _candidates(scene, deps, rng)[:max_tries]:
        edited = scene.with_object(index, with_attribute(scene.objects[index], attr, value))
        new = execute(program, edited)[-1]
        if new is None or new == outputs[-1] or not layout_ok(edited) or not all_visible(edited, camera):
            continue
        change = _record(scene, index, attr, value)
        return Edit(
            state="C",
            scene=edited,
            answer=new,
            supported=True,
            description=f"referent {index} ({_name(scene.objects[index])}) changes {attr} "
            f"from {change['from']} to {value}; the answer changes",
            evidence={
                "change": change,
                "dependency_set": deps,
                "checks": {
                    "in_dependency_set": True,
                    "answer_changed": True,
                    "program_valid": True,
                    "layout_ok": True,
                    "all_objects_visible": True,
                },
                "answer_before": answer_text(outputs[-1]),
                "answer": answer_text(new),
            },
        )
    return None


def _name(obj: SceneObject) -> str:
    return f"{obj.size} {obj.color} {obj.material} {obj.shape}"
