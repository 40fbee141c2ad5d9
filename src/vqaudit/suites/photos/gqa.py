"""Execute GQA ``semantic`` programs on a scene graph and compute each question's dependency set.

Layout and loaders: :mod:`vqaudit.suites.photos.graph` (re-exported here). Step ``k`` applies ``operation`` to
the outputs of its ``dependencies`` and to its ``argument`` (GQA, Hudson & Manning 2019). Arguments:

- ``select``: ``"name (id,id,...)"``; the listed ids are GQA's annotated referents and are used when given,
  restricted to objects still in the graph (a removed object is gone); ``"name (-)"`` selects every object
  called ``name``; ``"scene"`` selects all objects;
- ``relate``: ``"name,relation,s|o (ids)"``; ``s``: the result objects are the *subjects* of ``relation``
  towards an input object, ``o``: they are its *objects*; ``name`` ``"_"`` means any name;
- ``filter <type>`` / ``filter``: an attribute value, ``not(value)`` to exclude;
- ``query``: ``name``, an attribute type (``color``, ``material``, ...), ``hposition`` or ``vposition``;
- ``verify <type>``: a value; ``verify rel``: a relate argument (yes iff the relation holds);
- ``choose <type>``: ``"a|b"``; ``choose rel``: ``"name,rel1|rel2,s|o (ids)"`` (answers ``left``/``right``
  for ``to the left of``/``to the right of``, else the relation);
- ``exist``, ``and``, ``or``, ``same``/``different`` (``same color`` or ``same`` with the type as argument),
  ``common`` (the first attribute type, in :data:`ATTRIBUTE_TYPES` order, both objects share);
- ``count`` (a vqaudit extension, not in GQA: the number of objects; used by the COCO generator).

Values are an object set (a tuple of ids in graph order), ``bool``, ``int``, ``str`` or ``None`` (undefined:
a query on no object or on objects with different values, an attribute the object lacks, an operation on an
undefined input). Undefined propagates to the answer. Positions: an object is ``left``/``right`` when its box
centre lies in the left/right third of the image width, else ``middle``; ``top``/``bottom``/``middle`` likewise
for the height.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vqaudit.errors import VqauditError
from vqaudit.suites.photos.graph import (
    Obj,
    Question,
    SceneGraph,
    Step,
    load_questions,
    load_scene_graphs,
)

__all__ = [
    "ATTRIBUTE_TYPES",
    "Execution",
    "Value",
    "answer_text",
    "argument_ids",
    "dependency_set",
    "execute",
    "load_questions",
    "load_scene_graphs",
    "position",
]

Value = tuple[str, ...] | bool | int | str | None

ATTRIBUTE_TYPES: dict[str, frozenset[str]] = {
    "color": frozenset(
        {
            "white",
            "black",
            "blue",
            "green",
            "red",
            "brown",
            "yellow",
            "gray",
            "grey",
            "orange",
            "pink",
            "purple",
            "silver",
            "gold",
            "beige",
            "tan",
            "dark",
            "light",
        }
    ),
    "material": frozenset(
        {
            "wood",
            "wooden",
            "metal",
            "metallic",
            "plastic",
            "glass",
            "ceramic",
            "porcelain",
            "leather",
            "cloth",
            "concrete",
            "stone",
            "paper",
            "steel",
        }
    ),
    "shape": frozenset({"round", "square", "rectangular", "triangular", "circular", "oval"}),
    "size": frozenset({"small", "large", "big", "little", "tiny", "huge", "tall", "short", "long"}),
    "pattern": frozenset({"striped", "checkered", "dotted", "plaid", "patterned"}),
}
"""Attribute vocabulary by type (GQA attributes carry no type; ``query color`` picks the colour among them)."""

_ARG = re.compile(r"^(?P<body>.*?)\s+\((?P<ids>[^()]*)\)\s*$")
_KINDS = frozenset({"name", "hposition", "vposition", *ATTRIBUTE_TYPES})
_SHORT = {"to the left of": "left", "to the right of": "right"}


@dataclass(frozen=True)
class Execution:
    """The output of every step (``outputs[k]`` for step k) and the answer (the last output)."""

    outputs: tuple[Value, ...]

    @property
    def answer(self) -> Value:
        """The program's answer: the output of its last step."""
        return self.outputs[-1]


def split_argument(argument: str) -> tuple[str, tuple[str, ...] | None]:
    """Split ``"body (id,id)"`` into the body and the ids; ``(-)`` or no parentheses gives ``None`` ids."""
    m = _ARG.match(argument.strip())
    if m is None:
        return argument.strip(), None
    ids = tuple(i.strip() for i in m["ids"].split(",") if i.strip() and i.strip() != "-")
    return m["body"].strip(), ids or None


def argument_ids(question: Question) -> frozenset[str]:
    """Every object id named in the arguments of a question's program (GQA's annotation of the referents)."""
    found: set[str] = set()
    for step in question.program:
        ids = split_argument(step.argument)[1]
        found.update(ids or ())
    return frozenset(found)


def position(obj: Obj, graph: SceneGraph, axis: str) -> str:
    """``left``/``middle``/``right`` (axis ``h``) or ``top``/``middle``/``bottom`` (axis ``v``) by box centre thirds."""
    centre, extent = (obj.x + obj.w / 2, graph.width) if axis == "h" else (obj.y + obj.h / 2, graph.height)
    names = ("left", "middle", "right") if axis == "h" else ("top", "middle", "bottom")
    return names[0] if centre < extent / 3 else names[2] if centre > 2 * extent / 3 else names[1]


def _attr(obj: Obj, graph: SceneGraph, kind: str) -> str | None:
    if kind == "name":
        return obj.name
    if kind in ("hposition", "vposition"):
        return position(obj, graph, kind[0])
    vocab = ATTRIBUTE_TYPES.get(kind)
    if vocab is None:
        raise VqauditError(
            f"unknown attribute type {kind!r} (known: name, hposition, vposition, {', '.join(ATTRIBUTE_TYPES)})"
        )
    return next((a for a in obj.attributes if a in vocab), None)


def _has(obj: Obj, graph: SceneGraph, kind: str, value: str) -> bool:
    if kind in ("name", "hposition", "vposition"):
        return _attr(obj, graph, kind) == value
    return value in obj.attributes


def _relate(inputs: tuple[str, ...], body: str, graph: SceneGraph, rels: tuple[str, ...]) -> dict[str, str]:
    """Objects related to an input object by one of ``rels``: id -> the relation that holds (first match)."""
    parts = [p.strip() for p in body.split(",")]
    if len(parts) != 3 or parts[2] not in ("s", "o"):
        raise VqauditError(f"relate argument {body!r}: expected 'name,relation,s|o'")
    name, role = parts[0], parts[2]
    found: dict[str, str] = {}
    objs = graph.by_id()
    for o in graph.objects:
        if name != "_" and o.name != name:
            continue
        for rel in rels:
            if role == "s":
                hit = any(r.name == rel and r.target in inputs and r.target != o.id for r in o.relations)
            else:
                hit = any(
                    r.name == rel and r.target == o.id
                    for i in inputs
                    if i in objs and i != o.id
                    for r in objs[i].relations
                )
            if hit:
                found.setdefault(o.id, rel)
    return found


def _one(value: Value) -> tuple[str, ...] | None:
    return value if isinstance(value, tuple) else None


def _single(objs: tuple[str, ...] | None, graph: SceneGraph, kind: str) -> str | None:
    """The common value of ``kind`` over a non-empty set, or None when empty, missing or not unique."""
    if not objs:
        return None
    by = graph.by_id()
    values = {_attr(by[i], graph, kind) for i in objs}
    return values.pop() if len(values) == 1 else None


def _step(step: Step, inputs: list[Value], graph: SceneGraph) -> Value:
    op, _, kind = step.operation.partition(" ")
    body, ids = split_argument(step.argument)
    by = graph.by_id()
    first = _one(inputs[0]) if inputs else None
    arity = 0 if op == "select" else 2 if op in ("and", "or") else 1
    if len(inputs) < arity:
        raise VqauditError(f"needs {arity} dependencies, has {len(inputs)}")
    if any(v is None for v in inputs):
        return None
    if op in ("filter", "query", "verify", "choose") and (kind or body) not in _KINDS and kind not in ("", "rel"):
        raise VqauditError(f"unsupported GQA operation {step.operation!r}")
    if op == "select":
        if body == "scene":
            return tuple(o.id for o in graph.objects)
        if ids is not None:
            return tuple(i for i in ids if i in by)
        return tuple(o.id for o in graph.objects if o.name == body)
    if op == "count":
        return None if first is None else len(first)
    if op == "exist":
        return None if first is None else bool(first)
    if op == "relate":
        return None if first is None else tuple(_relate(first, body, graph, (body.split(",")[1].strip(),)))
    if op == "filter":
        neg = body.startswith("not(") and body.endswith(")")
        value = body[4:-1].strip() if neg else body
        return None if first is None else tuple(i for i in first if _has(by[i], graph, kind or "any", value) != neg)
    if op == "query":
        return _single(first, graph, body)
    if op == "verify":
        if not first:
            return None
        if kind == "rel":
            return bool(_relate(first, body, graph, (body.split(",")[1].strip(),)))
        if kind in ("name", "hposition", "vposition"):
            found = _single(first, graph, kind)
            return None if found is None else found == body
        return all(body in by[i].attributes for i in first)
    if op == "choose":
        if not first:
            return None
        options = tuple(o.strip() for o in (body.split(",")[1] if kind == "rel" else body).split("|"))
        if kind == "rel":
            hit = set(_relate(first, body, graph, options).values())
            if len(hit) != 1:
                return None
            rel = hit.pop()
            return _SHORT.get(rel, rel)
        chosen = _single(first, graph, kind)
        return chosen if chosen in options else None
    if op in ("and", "or"):
        a, b = inputs[0], inputs[1]
        if not isinstance(a, bool) or not isinstance(b, bool):
            return None
        return (a and b) if op == "and" else (a or b)
    if op in ("same", "different", "common"):
        objs = [i for v in inputs for i in (_one(v) or ())]
        if len(objs) < 2:
            return None
        if op == "common":
            return next(
                (
                    t
                    for t in ATTRIBUTE_TYPES
                    if len({_attr(by[i], graph, t) for i in objs}) == 1 and _attr(by[objs[0]], graph, t)
                ),
                None,
            )
        values = [_attr(by[i], graph, kind or body) for i in objs]
        if any(v is None for v in values):
            return None
        return (len(set(values)) == 1) == (op == "same")
    raise VqauditError(f"unsupported GQA operation {step.operation!r}")


def execute(program: tuple[Step, ...], graph: SceneGraph, where: str = "program") -> Execution:
    """Run a GQA program on a scene graph.

    Args:
        program: the ``semantic`` steps in order.
        graph: the scene graph (possibly with some objects removed).
        where: prefix for error messages (e.g. the question id).

    Returns:
        The output of every step; the answer is the last output (None when undefined).

    Raises:
        VqauditError: an unsupported operation, a malformed argument or an unknown attribute type, naming
            ``where`` and the step index.
    """
    outputs: list[Value] = []
    for k, step in enumerate(program):
        try:
            outputs.append(_step(step, [outputs[d] for d in step.dependencies], graph))
        except VqauditError as exc:
            raise VqauditError(f"{where}, step {k} ({step.operation}): {exc}") from None
    return Execution(tuple(outputs))


def dependency_set(program: tuple[Step, ...], graph: SceneGraph) -> frozenset[str]:
    """The objects a program's answer depends on: every object in any step's object-set output.

    For ``choose rel`` and ``verify rel`` the objects the argument names count too, whether or not the relation
    holds (a "no" is evidence about both objects): its ids when annotated, else every object with its name
    (every related object for ``_``).
    """
    run = execute(program, graph)
    deps: set[str] = set()
    by = graph.by_id()
    for step, out in zip(program, run.outputs, strict=True):
        if isinstance(out, tuple):
            deps.update(out)
        op, _, kind = step.operation.partition(" ")
        if op in ("verify", "choose") and kind == "rel":
            body, ids = split_argument(step.argument)
            name = body.split(",")[0].strip()
            if ids is not None:
                deps.update(i for i in ids if i in by)
            elif name != "_":
                deps.update(o.id for o in graph.objects if o.name == name)
            inputs = _one(run.outputs[step.dependencies[0]]) or ()
            deps.update(_relate(inputs, body, graph, tuple(r.strip() for r in body.split(",")[1].split("|"))))
    return frozenset(deps)


def answer_text(value: Value) -> str | None:
    """GQA's answer string of a value: ``yes``/``no`` for booleans, digits for counts, the string itself."""
    if value is None or isinstance(value, tuple):
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)
