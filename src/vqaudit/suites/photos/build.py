"""Build a photo answerability benchmark: original / control / M views of real photographs (seed 000, §3.1, §6.2).

Inputs (``source``): ``"coco"`` with a COCO instances file (``annotations``) and its image folder
(``images_dir``), or, when both are omitted, the bundled public-domain / CC0 photos shipped by scikit-image with
hand-drawn boxes (``data/skimage_instances.json``, credits in ``data/CREDITS.md``); ``"gqa"`` with a GQA
scene-graph file (``annotations``), a GQA question file (``questions``) and the image folder
(``images_dir/<imageId>.jpg``). COCO photos are not bundled: most are under non-commercial Flickr licences.

Candidates: every templated question of every photo (:func:`~vqaudit.suites.photos.coco.enumerate_questions`),
or every GQA question whose executed answer equals its gold answer, kept by
:func:`~vqaudit.suites.photos.plan.plan_group`. They are ordered once per seed (families round-robin in an order
drawn by ``numpy.random.default_rng([seed])``); group ``g`` is candidate ``g`` of that order and draws its own
randomness (the appearance-matched control) from ``default_rng([seed, g])``, so the same seed gives
byte-identical files whatever the number of workers.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, partial
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from vqaudit.errors import VqauditError
from vqaudit.files import sha256_bytes, sha256_file
from vqaudit.schema import Group, Obligation, PhotoGroupMeta, View
from vqaudit.suites.common import GroupBuild, build_benchmark, map_groups, versions
from vqaudit.suites.photos.coco import Photo, enumerate_questions, load_coco
from vqaudit.suites.photos.cues import residual_cues
from vqaudit.suites.photos.gqa import answer_text, execute, load_questions, load_scene_graphs
from vqaudit.suites.photos.graph import Question, Step
from vqaudit.suites.photos.masks import MASK_KINDS, apply_masks
from vqaudit.suites.photos.plan import MaskedView, Plan, matched_control, plan_group

STATES = ("original", "control", "M")
BUNDLED = "bundled"


@dataclass(frozen=True)
class Inputs:
    """Resolved inputs: kind (``coco``, ``bundled`` or ``gqa``), paths and the input files' SHA-256.

    The digest is part of the key of the per-process candidate cache, so an edited file is never served its old
    pool. Paths are strings so the record is hashable and picklable (sent to worker processes).
    """

    kind: str
    annotations: str
    images_dir: str
    questions: str = ""
    digest: str = ""


@dataclass(frozen=True)
class Candidate:
    """A kept question with its photo and plan."""

    photo: Photo
    plan: Plan


@dataclass(frozen=True)
class Pool:
    """Every kept candidate of an input (in input order) and the rejected ones counted by reason."""

    candidates: tuple[Candidate, ...]
    rejected: dict[str, int]


def resolve_inputs(
    source: str, images_dir: Path | None, annotations: Path | None, questions: Path | None = None
) -> Inputs:
    """Check the builder's input arguments and resolve the bundled default.

    Args:
        source: ``coco`` or ``gqa`` (``--source``).
        images_dir: the image folder (``--images``).
        annotations: the COCO instances or GQA scene-graph file (``--annotations``).
        questions: the GQA question file (``--questions``).

    Raises:
        VqauditError: an unknown source, a missing argument, or a path that does not exist; the message names
            the command-line flag (``--images``, ``--annotations``, ``--questions``).
    """
    if source not in ("coco", "gqa"):
        raise VqauditError(f"--source must be 'coco' or 'gqa' (got {source!r})")
    if source == "coco" and images_dir is None and annotations is None:
        data = Path(str(resources.files("vqaudit.suites.photos") / "data"))
        return Inputs(
            BUNDLED,
            str(data / "skimage_instances.json"),
            str(data),
            digest=sha256_file(data / "skimage_instances.json"),
        )
    needed = {"--images": images_dir, "--annotations": annotations}  # named by the CLI flag the user types
    if source == "gqa":
        needed["--questions"] = questions
    for flag, path in needed.items():
        if path is None:
            raise VqauditError(
                f"--source {source} needs {flag}"
                + (" (or neither --images nor --annotations, for the bundled photos)" if source == "coco" else "")
            )
        if not path.exists():
            raise VqauditError(f"{flag} {path}: not found")
    digest = sha256_file(Path(str(annotations))) + (sha256_file(questions) if questions is not None else "")
    return Inputs(source, str(annotations), str(images_dir), str(questions or ""), digest)


def _gqa_photos(inputs: Inputs) -> tuple[dict[str, Photo], list[Question]]:
    graphs = load_scene_graphs(Path(inputs.annotations))
    photos = {
        k: Photo(g, f"{k}.jpg", "GQA (Hudson & Manning 2019), Visual Genome images, CC BY 4.0")
        for k, g in graphs.items()
    }
    return photos, list(load_questions(Path(inputs.questions)).values())


@cache
def candidate_pool(inputs: Inputs) -> Pool:
    """Plan every question of an input once per process; keep the certifiable ones."""
    rejected: Counter[str] = Counter()
    pairs: list[tuple[Photo, Question]] = []
    if inputs.kind == "gqa":
        photos, questions = _gqa_photos(inputs)
        for q in questions:
            if q.image_id not in photos:
                rejected["no_scene_graph"] += 1
                continue
            try:
                got = answer_text(execute(q.program, photos[q.image_id].graph, q.id).answer)
            except VqauditError:
                rejected["unsupported_operation"] += 1
                continue
            if got != q.answer:
                rejected["answer_mismatch"] += 1
                continue
            pairs.append((photos[q.image_id], q))
    else:
        for photo in load_coco(Path(inputs.annotations)):
            pairs += [(photo, q) for q in enumerate_questions(photo.graph)]
    kept = []
    for photo, q in pairs:
        plan = plan_group(q, photo.graph)
        if isinstance(plan, str):
            rejected[plan] += 1
        else:
            kept.append(Candidate(photo, plan))
    return Pool(tuple(kept), dict(sorted(rejected.items())))


def family(q: Question) -> str:
    """The question's family: the COCO template family or GQA's detailed type (else its structural type)."""
    return q.types.get("detailed") or q.types.get("structural") or ""


def _round_robin(queues: list[list[int]]) -> list[int]:
    order: list[int] = []
    while any(queues):
        for queue in queues:
            if queue:
                order.append(queue.pop(0))
    return order


@cache
def candidate_order(inputs: Inputs, seed: int) -> tuple[int, ...]:
    """Candidate indices in the seed's order, spread over families and photos.

    Families take turns (round-robin, family order drawn with ``default_rng([seed])``); within a family the
    photos take turns (photo order drawn too) and each photo's questions are shuffled.
    """
    pool = candidate_pool(inputs)
    rng = np.random.default_rng([seed])
    by_family: dict[str, dict[str, list[int]]] = {}
    for i, c in enumerate(pool.candidates):
        by_family.setdefault(family(c.plan.question), {}).setdefault(c.photo.graph.image_id, []).append(i)
    queues = []
    for name in sorted(by_family):
        photos = [by_family[name][k] for k in sorted(by_family[name])]
        photos = [[p[j] for j in rng.permutation(len(p))] for p in photos]
        queues.append(_round_robin([photos[j] for j in rng.permutation(len(photos))]))
    return tuple(_round_robin([queues[j] for j in rng.permutation(len(queues))]))


def _load_rgb(inputs: Inputs, photo: Photo) -> np.ndarray[Any, np.dtype[np.uint8]]:
    path = Path(inputs.images_dir) / photo.file_name
    if not path.is_file():
        raise VqauditError(
            f"{path}: image of {photo.graph.image_id} not found in the --images folder {inputs.images_dir}"
        )
    with Image.open(path) as im:
        rgb = np.asarray(im.convert("RGB"), dtype=np.uint8)
    if rgb.shape[:2] != (photo.graph.height, photo.graph.width):
        raise VqauditError(
            f"{path}: image is {rgb.shape[1]}x{rgb.shape[0]} but the annotations say "
            f"{photo.graph.width}x{photo.graph.height}"
        )
    return rgb


def png_bytes(rgb: np.ndarray[Any, np.dtype[np.uint8]]) -> bytes:
    """Encode a photo view as PNG with Pillow at zlib level 1 (byte-identical for one Pillow and zlib version)."""
    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, format="PNG", compress_level=1)  # lossless; 2x faster than level 6, +10% bytes
    return buf.getvalue()


def view_obligation(program: Sequence[Step], answer: str) -> Obligation:
    """A supported view's obligation: answer ``answer``, a number when the program counts, else text."""
    counting = any(s.operation == "count" for s in program)
    return Obligation(kind="answer", gold=(answer,), answer_type="number" if counting else "text")


def build_group(inputs: Inputs, seed: int, g: int, mask: str = "fill", matched: bool = False) -> GroupBuild:
    """Build group ``g``: three views (four with ``matched``) and their PNG images.

    Raises:
        VqauditError: ``g`` beyond the number of certifiable candidates, or an image that is missing or whose
            size differs from its annotation.
    """
    order = candidate_order(inputs, seed)
    if g >= len(order):
        raise VqauditError(f"only {len(order)} certifiable photo groups exist in this input (asked for group {g})")
    cand = candidate_pool(inputs).candidates[order[g]]
    plan, graph, q = cand.plan, cand.photo.graph, cand.plan.question
    rng = np.random.default_rng([seed, g])
    matched_view = matched_control(plan, graph, rng) if matched else None
    rgb = _load_rgb(inputs, cand.photo)
    group_id = f"photos-{g:05d}"
    program = [s.to_json() for s in q.program]
    cues = residual_cues(q, plan.answer, plan.m.rects)
    masked: dict[str, MaskedView | None] = {"original": None, "control": plan.control, "M": plan.m}
    if matched_view is not None:
        masked["matched"] = matched_view
    views: list[View] = []
    images: dict[str, bytes] = {}
    for state, view in masked.items():
        data = png_bytes(rgb if view is None else apply_masks(rgb, view.rects, mask))
        view_id = f"{group_id}-{state}"
        image = f"images/{view_id}.png"
        images[image] = data
        meta: dict[str, Any] = {
            "image_id": graph.image_id,
            "file": cand.photo.file_name,
            "question_id": q.id,
            "program": program,
            "mask": mask if view else None,
            "masked": view.to_json() if view else None,
        }
        obligation = Obligation(kind="abstain") if state == "M" else view_obligation(q.program, plan.answer)
        views.append(
            View(
                view_id=view_id,
                group_id=group_id,
                source="photos",
                state=state,
                image=image,
                image_sha256=sha256_bytes(data),
                question=q.text,
                obligation=obligation,
                meta=meta,
            )
        )
    group = Group(
        group_id=group_id,
        source="photos",
        question=q.text,
        view_ids=tuple(v.view_id for v in views),
        meta={
            "image_id": graph.image_id,
            "file": cand.photo.file_name,
            "credit": cand.photo.credit,
            "question_id": q.id,
            "family": family(q),
            "answer": plan.answer,
            "program": program,
            "dependencies": sorted(plan.dependencies),
            "control_object": plan.control_object,
            "area_ratio": plan.area_ratio,
            "mask": mask,
            "spatial_answer": "spatial_answer" in cues,
            "residual_cue": bool(cues),
            "residual_cue_reasons": list(cues),
            "scene_graph": graph.to_json(),
            "matched": matched_view.to_json() if matched_view else None,
        },
    )
    return GroupBuild(group=group, views=tuple(views), images=images)


def build_photos(
    out: Path,
    n_groups: int,
    seed: int,
    *,
    source: str = "coco",
    workers: int = 1,
    images_dir: Path | None = None,
    annotations: Path | None = None,
    questions: Path | None = None,
    mask: str = "fill",
    matched: bool = False,
    on_group: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Build a photo benchmark folder and return its manifest.

    Args:
        out: target folder; must not exist or be empty.
        n_groups: number of groups (>= 1, at most the number of certifiable candidates of the input).
        seed: the build seed; the same seed gives byte-identical files.
        source: ``"coco"`` (the bundled photos when ``images_dir`` and ``annotations`` are both None) or
            ``"gqa"``.
        workers: processes used to build groups (results are identical for any value).
        images_dir: folder of the photos (COCO ``file_name`` / GQA ``<imageId>.jpg``).
        annotations: COCO instances file, or GQA scene-graph file.
        questions: GQA question file (``source="gqa"`` only).
        mask: mask kind for every masked view: ``fill``, ``blur`` or ``inpaint``.
        matched: add a fourth, supported view ``matched`` (the M masks moved off the evidence) where one exists.
        on_group: called after each group is written (for progress bars).

    Returns:
        The manifest written to ``out/manifest.json``: format, source, input, seed, counts, states, mask,
        versions, credits of the photos used, candidates and rejections by reason, groups per family and per
        residual-cue stratum, and the SHA-256 of every file.

    Raises:
        VqauditError: bad arguments, a non-empty output folder, too few candidates, or a missing image.
    """
    if n_groups < 1:
        raise VqauditError(f"--groups must be at least 1 (got {n_groups})")
    if workers < 1:
        raise VqauditError(f"--workers must be at least 1 (got {workers})")
    if mask not in MASK_KINDS:
        raise VqauditError(f"--mask must be one of {', '.join(MASK_KINDS)} (got {mask!r})")
    inputs = resolve_inputs(source, images_dir, annotations, questions)
    pool = candidate_pool(inputs)
    if n_groups > len(pool.candidates):
        raise VqauditError(
            f"asked for {n_groups} groups but this input has only {len(pool.candidates)} "
            "certifiable questions; lower --groups or add photos"
        )
    make = partial(build_group, inputs, seed, mask=mask, matched=matched)

    def fields(groups: Sequence[Group], views: Sequence[View]) -> dict[str, Any]:
        credits: dict[str, str] = {}
        tally: Counter[str] = Counter()
        for g in groups:
            meta = PhotoGroupMeta.of(g)
            credits[meta.file] = meta.credit
            tally[f"family:{meta.family}"] += 1
            tally.update(f"stratum:{s}" for s in ("spatial_answer", "residual_cue") if getattr(meta, s))
            tally.update(f"reason:{r}" for r in meta.residual_cue_reasons)
        return {
            "input": inputs.kind,
            "seed": seed,
            "n_groups": n_groups,
            "n_views": len(views),
            "states": sorted({v.state for v in views}, key=_state_key),
            "mask": mask,
            "versions": versions("numpy", "PIL"),
            "annotations": {"file": Path(inputs.annotations).name, "sha256": sha256_file(Path(inputs.annotations))},
            "credits": dict(sorted(credits.items())),
            "candidates": len(pool.candidates),
            "rejected_candidates": pool.rejected,
            "families": {k[7:]: v for k, v in sorted(tally.items()) if k.startswith("family:")},
            "strata": {s: tally[f"stratum:{s}"] for s in ("spatial_answer", "residual_cue")},
            "residual_cue_reasons": {k[7:]: v for k, v in sorted(tally.items()) if k.startswith("reason:")},
        }

    return build_benchmark(out, "photos", map_groups(make, n_groups, workers, chunksize=4), fields, on_group)


def _state_key(state: str) -> int:
    return (*STATES, "matched").index(state)
