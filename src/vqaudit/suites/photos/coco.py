"""COCO instance annotations as GQA-style scene graphs, and GQA-style questions with programs over them.

Objects (COCO 2017 ``instances_*.json``: ``images``, ``annotations``, ``categories``): one object per
annotation, id = the annotation id, name = the category name, box = ``bbox`` ``[x, y, w, h]`` in pixels.
Attributes only where an annotation gives them (an optional ``"attributes": [str]`` key, used by the bundled
hand-drawn annotations; COCO itself has none); a crowd annotation (``iscrowd`` 1) gets the attribute ``crowd``
and its category is never asked about. Relations are derived from the boxes only (centres ``cx, cy``):

- ``A to the left of B`` iff ``cx(A) < x(B)`` and ``cx(B) > x(A) + w(A)`` (each centre lies beyond the other
  box's near edge); ``to the right of`` is its converse;
- ``A above B`` iff ``cy(A) < y(B)`` and ``cy(B) > y(A) + h(A)`` (y grows downwards); ``below`` the converse;
- ``A next to B`` iff A is left or right of B, their vertical extents overlap by at least half the shorter
  height, and the horizontal gap is at most half the narrower width.

Questions (:func:`enumerate_questions`) follow GQA's program layout; families: ``exist``, ``count`` (the
vqaudit ``count`` operation), ``query_rel``, ``verify_rel``, ``choose_rel``, ``position``, ``query_attr``,
``verify_attr``. A referent called "the X" must be the only object named X; referents must cover at least
``min_area`` of the image and may not be crowds.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vqaudit.errors import VqauditError
from vqaudit.suites.photos.gqa import ATTRIBUTE_TYPES, answer_text, execute, position
from vqaudit.suites.photos.graph import Obj, Question, Relation, SceneGraph, Step

FAMILIES = ("exist", "count", "query_rel", "verify_rel", "choose_rel", "position", "query_attr", "verify_attr")
GEOMETRIC_RELATIONS = ("to the left of", "to the right of", "above", "below", "next to")
MAX_COUNT = 4
_CONTRAST = {
    "color": ("red", "blue", "green", "yellow", "white", "black"),
    "material": ("wood", "metal", "plastic", "glass"),
    "shape": ("round", "square"),
    "size": ("small", "large"),
    "pattern": ("striped", "dotted"),
}
_PLURAL = {
    "person": "people",
    "mouse": "mice",
    "sheep": "sheep",
    "skis": "skis",
    "scissors": "scissors",
    "knife": "knives",
    "bus": "buses",
    "glass": "glasses",
    "wine glass": "wine glasses",
    "bench": "benches",
    "couch": "couches",
    "sandwich": "sandwiches",
    "toothbrush": "toothbrushes",
    "skateboard": "skateboards",
}


@dataclass(frozen=True)
class Photo:
    """One COCO image: its scene graph, file name and credit line (licence and source URL)."""

    graph: SceneGraph
    file_name: str
    credit: str


def plural(name: str) -> str:
    """English plural of a COCO category name (irregular forms from a small table)."""
    if name in _PLURAL:
        return _PLURAL[name]
    return name + ("es" if name.endswith(("s", "sh", "ch", "x")) else "s")


def article(name: str) -> str:
    """``an`` before a vowel letter, else ``a``."""
    return "an" if name[:1].lower() in "aeiou" else "a"


def _rel(a: Obj, b: Obj) -> list[str]:
    """Geometric relations ``a r b`` from the boxes (module docstring)."""
    out = []
    acx, acy, bcx, bcy = a.x + a.w / 2, a.y + a.h / 2, b.x + b.w / 2, b.y + b.h / 2
    left, right = acx < b.x and bcx > a.x + a.w, bcx < a.x and acx > b.x + b.w
    if left:
        out.append("to the left of")
    if right:
        out.append("to the right of")
    if acy < b.y and bcy > a.y + a.h:
        out.append("above")
    if bcy < a.y and acy > b.y + b.h:
        out.append("below")
    overlap = min(a.y + a.h, b.y + b.h) - max(a.y, b.y)
    gap = max(b.x - (a.x + a.w), a.x - (b.x + b.w))
    if (left or right) and overlap >= 0.5 * min(a.h, b.h) and gap <= 0.5 * min(a.w, b.w):
        out.append("next to")
    return out


def with_relations(objects: list[Obj]) -> tuple[Obj, ...]:
    """The objects with their derived geometric relations (targets in object order, relations in fixed order)."""
    return tuple(
        Obj(
            a.id,
            a.name,
            a.x,
            a.y,
            a.w,
            a.h,
            a.attributes,
            tuple(Relation(r, b.id) for b in objects if b.id != a.id for r in _rel(a, b)),
        )
        for a in objects
    )


def _field(entry: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(entry, dict) or key not in entry:
        raise VqauditError(f"{where}, field '{key}': missing")
    value = entry[key]
    if isinstance(value, bool) or not isinstance(value, kind):
        raise VqauditError(f"{where}, field '{key}': unexpected value {value!r}")
    return value


def coco_photos(data: dict[str, Any], where: str = "annotations") -> tuple[Photo, ...]:
    """Turn a COCO instances dict into photos with GQA-style scene graphs, in ``images`` order.

    Raises:
        VqauditError: a missing or mistyped field, naming ``where``, the list, the row and the field; an
            annotation naming an unknown image or category; a box of non-positive size.
    """
    images = _field(data, "images", list, where)
    anns = _field(data, "annotations", list, where)
    cats = {
        int(_field(c, "id", int, f"{where}, categories[{i}]")): str(_field(c, "name", str, f"{where}, categories[{i}]"))
        for i, c in enumerate(_field(data, "categories", list, where))
    }
    licences = {lic.get("id"): f"{lic.get('name', '')} ({lic.get('url', '')})" for lic in data.get("licenses", [])}
    by_image: dict[int, list[Obj]] = {}
    for i, ann in enumerate(anns):
        at = f"{where}, annotations[{i}]"
        box = _field(ann, "bbox", list, at)
        if len(box) != 4 or not all(isinstance(v, int | float) for v in box) or box[2] <= 0 or box[3] <= 0:
            raise VqauditError(f"{at}, field 'bbox': expected [x, y, w, h] with positive w, h, got {box!r}")
        cat = _field(ann, "category_id", int, at)
        if cat not in cats:
            raise VqauditError(f"{at}, field 'category_id': unknown category {cat}")
        attrs = tuple(str(a) for a in ann.get("attributes", [])) + (("crowd",) if ann.get("iscrowd") else ())
        x, y, w, h = (float(v) for v in box)
        obj = Obj(str(_field(ann, "id", int, at)), cats[cat], x, y, w, h, attrs)
        by_image.setdefault(_field(ann, "image_id", int, at), []).append(obj)
    photos = []
    for i, im in enumerate(images):
        at = f"{where}, images[{i}]"
        image_id = _field(im, "id", int, at)
        graph = SceneGraph(
            str(image_id),
            _field(im, "width", int, at),
            _field(im, "height", int, at),
            with_relations(by_image.pop(image_id, [])),
        )
        url = im.get("flickr_url") or im.get("coco_url") or im.get("url", "")
        credit = f"{licences.get(im.get('license'), im.get('credit', 'unknown licence'))}; {url}".strip("; ")
        photos.append(Photo(graph, _field(im, "file_name", str, at), credit))
    if by_image:
        raise VqauditError(f"{where}: annotations name unknown image ids {sorted(by_image)[:5]}")
    return tuple(photos)


def load_coco(path: Path) -> tuple[Photo, ...]:
    """Load a COCO instances file (see :func:`coco_photos`). Raises VqauditError naming the file on errors."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise VqauditError(f"{path}: file not found") from None
    except json.JSONDecodeError as exc:
        raise VqauditError(f"{path}: not valid JSON (line {exc.lineno}): {exc.msg}") from None
    if not isinstance(data, dict):
        raise VqauditError(f"{path}: expected a COCO instances object")
    return coco_photos(data, str(path))


def _ids(objs: list[Obj]) -> str:
    return ",".join(o.id for o in objs)


def enumerate_questions(graph: SceneGraph, min_area: float = 0.01) -> list[Question]:
    """Every templated question of every family over one scene graph, in a fixed order.

    Args:
        graph: a scene graph with geometric relations (:func:`coco_photos`).
        min_area: smallest referent box as a fraction of the image area, in [0, 1).

    Returns:
        Questions whose program has a defined answer on ``graph``; ids are ``"<image>-<family>-<k>"``.
    """
    names = Counter(o.name for o in graph.objects)
    crowded = {o.name for o in graph.objects if "crowd" in o.attributes}
    big = [o for o in graph.objects if o.area >= min_area * graph.width * graph.height and o.name not in crowded]
    unique = [o for o in big if names[o.name] == 1]
    out: list[tuple[str, str, list[tuple[str, str, list[int]]]]] = []
    for name in sorted({o.name for o in big}):
        objs = [o for o in graph.objects if o.name == name]
        if len(objs) <= MAX_COUNT:
            select: tuple[str, str, list[int]] = ("select", f"{name} ({_ids(objs)})", [])
            out.append(("exist", f"Is there {article(name)} {name} in the picture?", [select, ("exist", "?", [0])]))
            out.append(("count", f"How many {plural(name)} are there?", [select, ("count", "", [0])]))
    by = graph.by_id()
    for b in unique:
        for rel in GEOMETRIC_RELATIONS[:4]:
            hits = [by[o.id] for o in graph.objects if any(r.name == rel and r.target == b.id for r in o.relations)]
            if hits and len({h.name for h in hits}) == 1 and len(hits) <= 3 and hits[0].name not in crowded:
                out.append(
                    (
                        "query_rel",
                        f"What is {rel} the {b.name}?",
                        [
                            ("select", f"{b.name} ({b.id})", []),
                            ("relate", f"_,{rel},s ({_ids(hits)})", [0]),
                            ("query", "name", [1]),
                        ],
                    )
                )
        for a in unique:
            if a.id == b.id:
                continue
            for rel in GEOMETRIC_RELATIONS[:4]:
                out.append(
                    (
                        "verify_rel",
                        f"Is the {a.name} {rel} the {b.name}?",
                        [("select", f"{b.name} ({b.id})", []), ("verify rel", f"{a.name},{rel},s ({a.id})", [0])],
                    )
                )
            out.append(
                (
                    "choose_rel",
                    f"Is the {a.name} to the left or to the right of the {b.name}?",
                    [
                        ("select", f"{b.name} ({b.id})", []),
                        ("choose rel", f"{a.name},to the left of|to the right of,s ({a.id})", [0]),
                    ],
                )
            )
    for a in unique:
        if position(a, graph, "h") != "middle":
            out.append(
                (
                    "position",
                    f"On which side of the picture is the {a.name}?",
                    [("select", f"{a.name} ({a.id})", []), ("query", "hposition", [0])],
                )
            )
        for kind, vocab in ATTRIBUTE_TYPES.items():
            have = [v for v in a.attributes if v in vocab]
            if not have:
                continue
            what = "color" if kind == "color" else kind
            out.append(
                (
                    "query_attr",
                    f"What {what} is the {a.name}?",
                    [("select", f"{a.name} ({a.id})", []), ("query", kind, [0])],
                )
            )
            others = [v for v in _CONTRAST[kind] if v not in a.attributes]
            other = others[sum(map(ord, a.id)) % len(others)]  # fixed per object, spread over the values
            for value in (have[0], other):
                out.append(
                    (
                        "verify_attr",
                        f"Is the {a.name} {value}?",
                        [("select", f"{a.name} ({a.id})", []), (f"verify {kind}", value, [0])],
                    )
                )
    questions = []
    for k, (family, text, steps) in enumerate(out):
        program = tuple(Step(op, arg, tuple(deps)) for op, arg, deps in steps)
        answer = answer_text(execute(program, graph).answer)
        if answer is not None:
            questions.append(
                Question(
                    f"{graph.image_id}-{family}-{k:04d}",
                    graph.image_id,
                    text,
                    answer,
                    program,
                    {"structural": family, "semantic": "vqaudit-coco", "detailed": family},
                )
            )
    return questions


def sample_questions(graph: SceneGraph, n: int, rng: np.random.Generator, min_area: float = 0.01) -> list[Question]:
    """``n`` questions (fewer if the graph has fewer) drawn family-balanced with ``rng``: deterministic per seed.

    Families are visited in an ``rng`` order, round-robin; within a family questions are drawn without
    replacement.
    """
    pools: dict[str, list[Question]] = {}
    for q in enumerate_questions(graph, min_area):
        pools.setdefault(q.types["detailed"], []).append(q)
    order = [pools[f] for f in FAMILIES if f in pools]
    shuffled = [[p[i] for i in rng.permutation(len(p))] for p in order]
    fam_order = rng.permutation(len(shuffled)).tolist()
    out: list[Question] = []
    while len(out) < n and any(shuffled):
        for f in fam_order:
            if shuffled[f] and len(out) < n:
                out.append(shuffled[f].pop(0))
    return out
