"""Build a CLEVR scene answerability benchmark: four views per group over real CLEVR scene graphs.

States (papers.md; seed 000, §3.1 and appendix C.1): ``original``; ``S`` (an object outside the program's
dependency set changes one attribute; every node output and so the answer is kept); ``C`` (a referent changes one
attribute; the answer changes); ``M`` (an added occluder leaves a referent no visible pixel; abstain when a hidden
completion with identical pixels answers differently, else a *determined* masked view that keeps its answer).
Group ``g`` draws everything from ``numpy.random.default_rng([seed, g])`` (scene, template family then template,
question, edits), so
the same seed gives byte-identical views, images and manifest whatever the number of workers. A candidate whose
question or edits cannot be certified is dropped and redrawn; the reasons are counted in the group and manifest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import Any

import numpy as np

from vqaudit.errors import VqauditError
from vqaudit.files import sha256_bytes
from vqaudit.schema import Group, Obligation, SceneGroupMeta, View
from vqaudit.suites.common import GroupBuild, build_benchmark, map_groups, versions
from vqaudit.suites.scenes.camera import Camera, fit_camera
from vqaudit.suites.scenes.edits import Edit, all_visible, edit_referent, edit_unrelated
from vqaudit.suites.scenes.occlusion import Masked, occlude
from vqaudit.suites.scenes.programs import Output, answer_text, program_to_json
from vqaudit.suites.scenes.questions import SUPPORTED_FAMILIES, Question, generate, templates
from vqaudit.suites.scenes.render import RENDERER, png_bytes, render
from vqaudit.suites.scenes.scene import Scene, load_scenes

STATES = ("original", "S", "C", "M")
MAX_ATTEMPTS = 200
CREDITS = {
    "scenes": "CLEVR v1.0 train scenes 0-999 and val scenes 0-499 (Johnson et al., CVPR 2017), CC BY 4.0",
    "templates": "CLEVR 1.0 question templates, metadata.json, synonyms.json, properties.json from "
    "facebookresearch/clevr-dataset-gen @ f0ce2c8, BSD licence",
}


@dataclass(frozen=True)
class _Draw:
    scene: Scene
    camera: Camera
    question: Question
    edits: tuple[Edit, Edit]
    masked: Masked
    rejected: dict[str, int]


@cache
def _all_scenes() -> tuple[Scene, ...]:
    return load_scenes("train") + load_scenes("val")


def _draw(rng: np.random.Generator, allow_determined: bool) -> _Draw:
    scenes = _all_scenes()
    rejected: Counter[str] = Counter()
    for _ in range(MAX_ATTEMPTS):
        scene = scenes[int(rng.integers(len(scenes)))]
        camera = fit_camera(scene)
        family = templates(SUPPORTED_FAMILIES[int(rng.integers(len(SUPPORTED_FAMILIES)))])  # families equally likely
        question = generate(scene, family[int(rng.integers(len(family)))], rng)
        if question is None:
            rejected["no_question"] += 1
            continue
        s_edit = edit_unrelated(question.program, scene, camera, rng)
        if s_edit is None:
            rejected["no_S_edit"] += 1
            continue
        c_edit = edit_referent(question.program, scene, camera, rng)
        if c_edit is None:
            rejected["no_C_edit"] += 1
            continue
        if not all_visible(scene, camera):
            rejected["original_object_hidden"] += 1
            continue
        masked = occlude(question.program, scene, camera, rng, allow_determined=allow_determined)
        if masked is None:
            rejected["no_M_occluder" if allow_determined else "no_M_witness"] += 1
            continue
        return _Draw(scene, camera, question, (s_edit, c_edit), masked, dict(sorted(rejected.items())))
    raise VqauditError(f"no certifiable scene group after {MAX_ATTEMPTS} attempts")  # pragma: no cover


def obligation_for(value: Output, supported: bool) -> Obligation:
    """The obligation of a view: abstain, or answer with CLEVR's answer string (counts are numbers)."""
    if not supported:
        return Obligation(kind="abstain")
    kind = "number" if isinstance(value, int) and not isinstance(value, bool) else "text"
    return Obligation(kind="answer", gold=(answer_text(value),), answer_type=kind)


def build_group(seed: int, g: int, allow_determined: bool = True) -> GroupBuild:
    """Build group ``g`` of a benchmark with ``seed``: four views and their PNG images.

    ``allow_determined=False`` keeps only M views certified as ambiguous (every group then has one negative view,
    as in seed 000); otherwise a determined masked view (answerable) is written when no witness exists.

    Raises:
        VqauditError: when no certifiable group is found in ``MAX_ATTEMPTS`` draws.
    """
    rng = np.random.default_rng([seed, g])
    d = _draw(rng, allow_determined)
    group_id = f"scenes-{g:05d}"
    q = d.question
    program = program_to_json(q.program)
    original = Edit(
        state="original",
        scene=d.scene,
        answer=q.answer,
        supported=True,
        description="the real CLEVR scene",
        evidence={"answer": answer_text(q.answer)},
    )
    edits = {"original": original, "S": d.edits[0], "C": d.edits[1], "M": d.masked.edit}
    images: dict[str, bytes] = {}
    views: list[View] = []
    for state in STATES:
        edit = edits[state]
        rgb = d.masked.rendered.rgb if state == "M" else render(edit.scene, d.camera).rgb
        data = png_bytes(rgb)
        view_id = f"{group_id}-{state}"
        image = f"images/{view_id}.png"
        images[image] = data
        meta: dict[str, Any] = {
            "scene_id": d.scene.name,
            "template": q.template_id,
            "program": program,
            "edit": edit.description,
            "evidence": edit.evidence,
            "objects": [o.to_json() for o in edit.scene.objects],
        }
        if state == "M":
            meta["m_status"] = edit.evidence["status"]
        views.append(
            View(
                view_id=view_id,
                group_id=group_id,
                source="scenes",
                state=state,
                image=image,
                image_sha256=sha256_bytes(data),
                question=q.text,
                obligation=obligation_for(edit.answer, edit.supported),
                meta=meta,
            )
        )
    group = Group(
        group_id=group_id,
        source="scenes",
        question=q.text,
        view_ids=tuple(v.view_id for v in views),
        meta={
            "scene_id": d.scene.name,
            "template": q.template_id,
            "answer": answer_text(q.answer),
            "m_status": d.masked.edit.evidence["status"],
            "rejected": d.rejected,
            "camera": d.camera.to_json(),
            "directions": {k: list(v) for k, v in d.scene.directions},
        },
    )
    return GroupBuild(group=group, views=tuple(views), images=images)


def build_scenes(
    out: Path,
    n_groups: int,
    seed: int,
    *,
    workers: int = 1,
    on_group: Callable[[int], None] | None = None,
    allow_determined: bool = True,
) -> dict[str, Any]:
    """Build a CLEVR scene benchmark folder and return its manifest.

    Args:
        out: target folder; must not exist or be empty.
        n_groups: number of groups (>= 1); each has four views (original, S, C, M).
        seed: the build seed; the same seed gives byte-identical files.
        workers: processes used to build groups (results are identical for any value).
        on_group: called after each group is written (for progress bars).
        allow_determined: write a determined masked view (labelled answerable) when no occlusion of the group's
            question has a witness; with False such candidates are redrawn, so every M view obliges abstention.

    Returns:
        The manifest written to ``out/manifest.json``: format, source, seed, counts, versions, credits, template
        families, rejected candidates by reason, M labels by status, and the SHA-256 of every file.

    Raises:
        VqauditError: bad arguments, a non-empty output folder, or a group that cannot be certified.
    """
    if n_groups < 1:
        raise VqauditError(f"--groups must be at least 1 (got {n_groups})")
    if workers < 1:
        raise VqauditError(f"--workers must be at least 1 (got {workers})")
    make = partial(build_group, seed, allow_determined=allow_determined)

    def fields(groups: Sequence[Group], views: Sequence[View]) -> dict[str, Any]:
        rejected: Counter[str] = Counter()
        m_status: Counter[str] = Counter()
        for g in groups:
            meta = SceneGroupMeta.of(g)
            rejected.update(meta.rejected)
            m_status[meta.m_status] += 1
        return {
            "seed": seed,
            "n_groups": n_groups,
            "n_views": len(views),
            "states": list(STATES),
            "versions": versions("numpy", "PIL"),
            "renderer": RENDERER,
            "credits": CREDITS,
            "template_families": list(SUPPORTED_FAMILIES),
            "allow_determined": allow_determined,
            "rejected_candidates": dict(sorted(rejected.items())),
            "m_status": dict(sorted(m_status.items())),
        }

    return build_benchmark(out, "scenes", map_groups(make, n_groups, workers, chunksize=1), fields, on_group)
