"""GQA scene graphs and questions: frozen records and loaders for the published GQA layout.

Layout (Hudson & Manning, GQA, CVPR 2019; the ``sceneGraphs/*.json`` and ``questions/*.json`` files):

- scene graphs: ``{image_id: {"width", "height", "objects": {object_id: {"name", "x", "y", "w", "h",
  "attributes": [str], "relations": [{"name", "object"}]}}}}``; boxes are in pixels, ``(x, y)`` the top-left
  corner, y growing downwards; a relation ``{"name": r, "object": o}`` listed under object ``s`` reads
  "s r o" (``s`` is the subject);
- questions: ``{question_id: {"imageId", "question", "answer", "semantic": [{"operation", "argument",
  "dependencies"}], "types": {"structural", "semantic", "detailed"}, ...}}``; other keys (``fullAnswer``,
  ``annotations``, ``semanticStr``, ...) are kept in ``extra``.

Every malformed entry raises :class:`~vqaudit.errors.VqauditError` naming the file, the image or question id
(the "row") and the field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError


@dataclass(frozen=True)
class Relation:
    """A directed relation ``subject name object``; stored on the subject, ``target`` is the object id."""

    name: str
    target: str


@dataclass(frozen=True)
class Obj:
    """One scene-graph object: id, name, box ``(x, y, w, h)`` in pixels, attributes and outgoing relations."""

    id: str
    name: str
    x: float
    y: float
    w: float
    h: float
    attributes: tuple[str, ...] = ()
    relations: tuple[Relation, ...] = ()

    @property
    def box(self) -> tuple[float, float, float, float]:
        """``(x, y, w, h)`` in pixels."""
        return (self.x, self.y, self.w, self.h)

    @property
    def area(self) -> float:
        """Box area in square pixels."""
        return self.w * self.h

    def to_json(self) -> dict[str, Any]:
        """The object in GQA's layout (without its id, which is the key in ``objects``)."""
        return {
            "name": self.name,
            "x": self.x,
            "y": self.y,
            "w": self.w,
            "h": self.h,
            "attributes": list(self.attributes),
            "relations": [{"name": r.name, "object": r.target} for r in self.relations],
        }


@dataclass(frozen=True)
class SceneGraph:
    """One image's scene graph: image id, size in pixels and objects (in file order)."""

    image_id: str
    width: int
    height: int
    objects: tuple[Obj, ...]

    def by_id(self) -> dict[str, Obj]:
        """Objects keyed by id."""
        return {o.id: o for o in self.objects}

    def without(self, ids: frozenset[str] | set[str]) -> SceneGraph:
        """The graph with objects ``ids`` removed, together with every relation that names them."""
        kept = tuple(
            replace(o, relations=tuple(r for r in o.relations if r.target not in ids))
            for o in self.objects
            if o.id not in ids
        )
        return replace(self, objects=kept)

    def to_json(self) -> dict[str, Any]:
        """The graph in GQA's layout (the value under the image id)."""
        return {"width": self.width, "height": self.height, "objects": {o.id: o.to_json() for o in self.objects}}


@dataclass(frozen=True)
class Step:
    """One step of a GQA ``semantic`` program."""

    operation: str
    argument: str
    dependencies: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The step in GQA's layout."""
        return {"operation": self.operation, "argument": self.argument, "dependencies": list(self.dependencies)}


@dataclass(frozen=True)
class Question:
    """A GQA question: id, image id, text, gold answer, semantic program and types."""

    id: str
    image_id: str
    text: str
    answer: str
    program: tuple[Step, ...]
    types: Mapping[str, str] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The question in GQA's layout (the value under the question id)."""
        return {
            **dict(self.extra),
            "imageId": self.image_id,
            "question": self.text,
            "answer": self.answer,
            "semantic": [s.to_json() for s in self.program],
            "types": dict(self.types),
        }


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise VqauditError(f"{path}: file not found") from None
    except json.JSONDecodeError as exc:
        raise VqauditError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}") from None
    if not isinstance(data, dict):
        raise VqauditError(f"{path}: expected a JSON object keyed by id, got {type(data).__name__}")
    return data


def _get(entry: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(entry, dict):
        raise VqauditError(f"{where}: expected an object, got {type(entry).__name__}")
    if key not in entry:
        raise VqauditError(f"{where}, field '{key}': missing")
    value = entry[key]
    if isinstance(value, bool) or not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise VqauditError(f"{where}, field '{key}': expected {names}, got {value!r}")
    return value


def parse_object(obj_id: str, raw: Any, where: str) -> Obj:
    """Parse one GQA object entry; ``where`` prefixes error messages (file and image id)."""
    at = f"{where}, object {obj_id}"
    x, y, w, h = (float(_get(raw, k, (int, float), at)) for k in ("x", "y", "w", "h"))
    if w <= 0 or h <= 0:
        raise VqauditError(f"{at}, field 'w'/'h': box size must be positive, got {w} x {h}")
    attrs = raw.get("attributes", [])
    if not isinstance(attrs, list) or not all(isinstance(a, str) for a in attrs):
        raise VqauditError(f"{at}, field 'attributes': expected a list of strings")
    rels = raw.get("relations", [])
    if not isinstance(rels, list):
        raise VqauditError(f"{at}, field 'relations': expected a list")
    relations = tuple(
        Relation(_get(r, "name", str, f"{at}, relation {i}"), str(_get(r, "object", (str, int), f"{at}, relation {i}")))
        for i, r in enumerate(rels)
    )
    return Obj(obj_id, _get(raw, "name", str, at).strip(), x, y, w, h, tuple(a.strip() for a in attrs), relations)


def parse_scene_graph(image_id: str, raw: Any, where: str = "scene graph") -> SceneGraph:
    """Parse one image's scene graph (GQA layout).

    Raises:
        VqauditError: a missing or mistyped field, a non-positive box, or a relation naming an unknown object.
    """
    at = f"{where}, image {image_id}"
    width, height = _get(raw, "width", int, at), _get(raw, "height", int, at)
    objects_raw = _get(raw, "objects", dict, at)
    objects = tuple(parse_object(str(k), v, at) for k, v in objects_raw.items())
    ids = {o.id for o in objects}
    for o in objects:
        for r in o.relations:
            if r.target not in ids:
                raise VqauditError(f"{at}, object {o.id}, field 'relations': unknown object {r.target!r}")
    return SceneGraph(str(image_id), width, height, objects)


def load_scene_graphs(path: Path) -> dict[str, SceneGraph]:
    """Load a GQA scene-graph file (``{image_id: graph}``), keeping file order.

    Raises:
        VqauditError: an unreadable file or a malformed entry (file, image id, object id and field named).
    """
    return {str(k): parse_scene_graph(str(k), v, str(path)) for k, v in _read(path).items()}


def parse_step(raw: Any, k: int, where: str) -> Step:
    """Parse step ``k`` of a ``semantic`` program; dependencies must name earlier steps."""
    at = f"{where}, field 'semantic[{k}]'"
    op = _get(raw, "operation", str, at).strip()
    arg = raw.get("argument", "") if isinstance(raw, dict) else ""
    if not isinstance(arg, str):
        raise VqauditError(f"{at}.argument: expected a string, got {arg!r}")
    deps = _get(raw, "dependencies", list, at)
    if not all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d < k for d in deps):
        raise VqauditError(f"{at}.dependencies: each must be the index of an earlier step, got {deps!r}")
    return Step(op, arg, tuple(deps))


def parse_question(qid: str, raw: Any, where: str = "questions") -> Question:
    """Parse one GQA question entry.

    Raises:
        VqauditError: a missing or mistyped field, or an empty or malformed ``semantic`` program.
    """
    at = f"{where}, question {qid}"
    steps = _get(raw, "semantic", list, at)
    if not steps:
        raise VqauditError(f"{at}, field 'semantic': empty program")
    program = tuple(parse_step(s, k, at) for k, s in enumerate(steps))
    types = raw.get("types", {})
    if not isinstance(types, dict):
        raise VqauditError(f"{at}, field 'types': expected an object")
    known = {"imageId", "question", "answer", "semantic", "types"}
    return Question(
        id=str(qid),
        image_id=str(_get(raw, "imageId", (str, int), at)),
        text=_get(raw, "question", str, at),
        answer=_get(raw, "answer", str, at),
        program=program,
        types={str(k): str(v) for k, v in types.items()},
        extra={k: v for k, v in raw.items() if k not in known},
    )


def load_questions(path: Path) -> dict[str, Question]:
    """Load a GQA question file (``{question_id: question}``), keeping file order.

    Raises:
        VqauditError: an unreadable file or a malformed entry (file, question id and field named).
    """
    return {str(k): parse_question(str(k), v, str(path)) for k, v in _read(path).items()}
