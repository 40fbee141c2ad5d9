"""The M edit: an added occluder hides a referent; the label comes from completions of what is hidden.

An occluder (a new large CLEVR cube or cylinder) is placed on the ground between the camera and a referent (an
object of the program's dependency set) so that the referent has no visible pixel in the instance buffer. The
occluder must not change the program's answer. The hidden objects are those with no visible pixel.

Label (seed 000, §3.1; the chart "witness" idea of §3.2 carried to scenes): the M view obliges abstention only
with a **witness**: a second completion of what is hidden (one hidden object with one attribute changed, or
removed) whose rendered RGB image is *identical* to the M image (re-rendered and compared byte for byte) and whose
answer differs (preferably a valid answer; a completion in which the question's presupposition fails, e.g. the
referent no longer exists, also counts). If no completion in that space gives a different outcome with identical
pixels, the view is a *determined* masked view: answerable, with the observed answer, and the record says so.
The completion space is declared in the evidence; worlds with extra hidden objects are not part of it.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from vqaudit.suites.scenes.camera import Camera
from vqaudit.suites.scenes.edits import Edit, attribute_changes, footprint, layout_ok, with_attribute
from vqaudit.suites.scenes.programs import Program, answer, answer_text, dependency_set, execute, metadata
from vqaudit.suites.scenes.render import Rendered, instance_ids, render
from vqaudit.suites.scenes.scene import Scene, SceneObject

GROUND_LIMIT = 4.0  # |x|, |y| of an occluder's centre (CLEVR places objects in [-3, 3])
_DISTANCES = (0.0, 0.15, 0.35, 0.6, 0.9)
_LATERAL = (0.0, 0.12, -0.12, 0.25, -0.25)
COMPLETION_SPACE = "one hidden object: any single attribute changed (size, color, material, shape), or removed"


@dataclass(frozen=True)
class Masked:
    """A certified M view: the edit (with its label) and the render it was certified on."""

    edit: Edit
    rendered: Rendered


def _referents(program: Program, scene: Scene, rng: np.random.Generator) -> list[int]:
    outputs = execute(program, scene)
    uniques = [o for n, o in zip(program, outputs, strict=True) if n.type == "unique" and isinstance(o, int)]
    deps = sorted(dependency_set(program, outputs))
    first = list(dict.fromkeys(reversed(uniques)))  # the last referent first
    rest = [deps[int(k)] for k in rng.permutation(len(deps)) if deps[int(k)] not in first]
    # a large occluder (height 1.4) cannot hide a large referent: the camera looks down on both tops
    return [i for i in first + rest if scene.objects[i].size == "small"]


def _occluders(scene: Scene, camera: Camera, target: int, rng: np.random.Generator) -> list[SceneObject]:
    ref = scene.objects[target]
    to_cam = np.array([camera.centre[0] - ref.xyz[0], camera.centre[1] - ref.xyz[1]])
    u = to_cam / np.linalg.norm(to_cam)
    w = np.array([-u[1], u[0]])
    colors = metadata()["types"]["Color"]
    out = []
    for shape in ("cube", "cylinder"):
        for dist in _DISTANCES:
            for lat in _LATERAL:
                color = str(colors[int(rng.integers(len(colors)))])
                material = "rubber" if rng.random() < 0.5 else "metal"
                probe = SceneObject(shape, color, "large", material, (0.0, 0.0, 0.7), 0.0)
                gap = footprint(ref) + footprint(probe) + 0.06 + dist
                x, y = np.array(ref.xyz[:2]) + gap * u + lat * w
                # a cube shows its diagonal to the referent: widest cover
                rot = float(math.atan2(u[1], u[0]) + math.pi / 4) if shape == "cube" else 0.0
                out.append(SceneObject(shape, color, "large", material, (float(x), float(y), 0.7), rot))
    return out


def _in_frame(obj: SceneObject, camera: Camera) -> bool:
    if abs(obj.xyz[0]) > GROUND_LIMIT or abs(obj.xyz[1]) > GROUND_LIMIT:
        return False
    u, v, depth = camera.project(np.array([obj.xyz]))[0]
    return bool(depth > 0 and 0 <= u < camera.width and 0 <= v < camera.height)


def _completions(scene: Scene, hidden: list[int]) -> list[tuple[int, str, str | None, Scene]]:
    """The declared completion space, cheapest to certify first: colour, material, shape, size, removal."""
    order = {"color": 0, "material": 1, "shape": 2, "size": 3}
    out: list[tuple[int, str, str | None, Scene]] = []
    for h in hidden:
        changes = sorted(attribute_changes(scene.objects[h]), key=lambda c: order[c[0]])
        for attr, value in changes:
            out.append((h, attr, value, scene.with_object(h, with_attribute(scene.objects[h], attr, value))))
        kept = tuple(o for i, o in enumerate(scene.objects) if i != h)
        out.append((h, "removed", None, Scene(name=scene.name, objects=kept, directions=scene.directions)))
    return out


def find_witness(
    program: Program, scene: Scene, camera: Camera, hidden: list[int], rgb: np.ndarray
) -> tuple[dict[str, Any] | None, int, int]:
    """Search the completion space for a world with identical pixels and a different outcome.

    A different valid answer is preferred; failing that, a completion where the program is invalid (a
    ``unique`` referent no longer exists or is no longer unique: the question's presupposition fails) is also a
    witness that the image does not determine the answer.

    Returns:
        ``(witness or None, completions examined, completions rendered)``.
    """
    base = answer(program, scene)
    examined = rendered = 0
    fallback: dict[str, Any] | None = None
    for h, attr, value, alt in _completions(scene, hidden):
        examined += 1
        other = answer(program, alt)
        if other == base or not layout_ok(alt) or (other is None and fallback is not None):
            continue
        rendered += 1
        if not np.array_equal(render(alt, camera).rgb, rgb):
            continue
        change: Any = (
            "removed" if value is None else {"attribute": attr, "from": scene.objects[h].attr(attr), "to": value}
        )
        witness = {
            "object": h,
            "change": change,
            "pixels_identical": True,
            "answer": None if other is None else answer_text(other),
            "program_valid": other is not None,
        }
        if other is not None:
            return witness, examined, rendered
        fallback = witness
    return fallback, examined, rendered


def occlude(
    program: Program,
    scene: Scene,
    camera: Camera,
    rng: np.random.Generator,
    max_referents: int = 3,
    allow_determined: bool = True,
) -> Masked | None:
    """The M edit: hide a referent behind an added occluder and certify the label.

    Tries referents (the last ``unique`` referent first) and occluder placements in a fixed order; the first
    placement whose M view has a witness is returned (label: abstain). Without any witness, the first fully
    hidden placement is returned as a determined masked view (label: answer) when ``allow_determined``.

    Returns:
        The certified masked view, or None when no placement hides a referent without changing the answer.
    """
    base = answer(program, scene)
    determined: Masked | None = None
    for target in _referents(program, scene, rng)[:max_referents]:
        for occ in _occluders(scene, camera, target, rng):
            edited = scene.with_added(occ)
            if not _in_frame(occ, camera) or not layout_ok(edited) or answer(program, edited) != base:
                continue
            ids = instance_ids(edited, camera)
            if np.any(ids == target):
                continue
            counts = np.bincount(ids[ids >= 0].ravel(), minlength=len(edited.objects))
            hidden = [i for i in range(len(scene.objects)) if counts[i] == 0]
            shot = render(edited, camera)
            witness, examined, rendered = find_witness(program, edited, camera, hidden, shot.rgb)
            evidence: dict[str, Any] = {
                "referent": target,
                "hidden": hidden,
                "occluder": occ.to_json(),
                "occluder_index": len(scene.objects),
                "answer_observed_world": answer_text(base),
                "checks": {"referent_visible_pixels": 0, "occluder_keeps_answer": True, "layout_ok": True},
                "completion_space": COMPLETION_SPACE,
                "completions_examined": examined,
                "completions_rendered": rendered,
                "image_pixel_sha256": hashlib.sha256(shot.rgb.tobytes()).hexdigest(),
            }
            desc = (
                f"a large {occ.color} {occ.material} {occ.shape} is added in front of object {target}, which "
                f"has no visible pixel"
            )
            if witness is not None:
                evidence.update(status="ambiguous", witness=witness)
                return Masked(
                    Edit(
                        state="M",
                        scene=edited,
                        answer=None,
                        supported=False,
                        description=desc
                        + "; a hidden completion with identical pixels "
                        + (
                            f"answers {witness['answer']!r}"
                            if witness["program_valid"]
                            else "makes the question's referent fail"
                        )
                        + ", so the image does not determine the answer",
                        evidence=evidence,
                    ),
                    shot,
                )
            if determined is None and allow_determined:
                evidence.update(status="determined", witness=None)
                determined = Masked(
                    Edit(
                        state="M",
                        scene=edited,
                        answer=base,
                        supported=True,
                        description=desc + "; every completion in the declared space keeps the "
                        "answer (determined masked view)",
                        evidence=evidence,
                    ),
                    shot,
                )
            break  # one fully hidden placement per referent
    return determined
