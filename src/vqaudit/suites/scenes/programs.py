"""Executor for CLEVR functional programs (every function of CLEVR's ``question_generation/metadata.json``).

A program is a list of nodes in topological order; node ``k`` applies function ``type`` to the outputs of the
nodes listed in ``inputs`` and to its ``value_inputs`` (the template's side inputs: a colour, a relation, ...).
Semantics follow CLEVR's ``question_engine.py`` (Johnson et al., CVPR 2017): object sets are ascending tuples of
object indices; ``unique`` of a set that is not a singleton is invalid and invalidates every later node; ``relate``
reads the scene's spatial relationships (``scene.relationships``); ``same_<attr>`` excludes the object itself.
Template-only functions (``filter``, ``filter_unique``, ``relate_filter_count``, ...) take their side inputs in
the order ``[relation,] size, color, material, shape``, where ``""`` (and ``"thing"`` for a shape) means "any".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.suites.scenes.scene import ATTRIBUTES, Scene, relationships

Output = int | bool | str | tuple[int, ...] | None
"""A node output: object set (tuple), object index / integer, bool, attribute value, or None when invalid."""


@dataclass(frozen=True)
class Node:
    """One program node: function name, indices of its input nodes, and its value (side) inputs."""

    type: str
    inputs: tuple[int, ...] = ()
    values: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The node in CLEVR's public JSON layout (``type``, ``inputs``, ``value_inputs``)."""
        return {"type": self.type, "inputs": list(self.inputs), "value_inputs": list(self.values)}


Program = tuple[Node, ...]


@cache
def metadata() -> dict[str, Any]:
    """CLEVR's ``metadata.json``: the types and the function signatures of the program language."""
    text = (resources.files("vqaudit.suites.scenes") / "data" / "metadata.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def program_from_json(nodes: Sequence[dict[str, Any]], where: str = "program") -> Program:
    """Parse a CLEVR program (``value_inputs`` or the generator's ``side_inputs``).

    Raises:
        VqauditError: naming ``where`` and the node index when a node is malformed or reads a later node.
    """
    out: list[Node] = []
    for k, raw in enumerate(nodes):
        try:
            node = Node(
                type=str(raw["type"]),
                inputs=tuple(int(i) for i in raw.get("inputs", [])),
                values=tuple(str(v) for v in raw.get("value_inputs", raw.get("side_inputs", []))),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise VqauditError(f"{where}: node {k}: malformed ({exc})") from None
        if any(i < 0 or i >= k for i in node.inputs):
            raise VqauditError(f"{where}: node {k}, field 'inputs': {list(node.inputs)} must name earlier nodes")
        out.append(node)
    return tuple(out)


def program_to_json(program: Program) -> list[dict[str, Any]]:
    """The program in CLEVR's public JSON layout."""
    return [n.to_json() for n in program]


class _Ctx:
    """Per-execution cache of the scene's relationships."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        self._rel: dict[str, tuple[tuple[int, ...], ...]] | None = None

    def related(self, relation: str, index: int) -> tuple[int, ...]:
        if self._rel is None:
            self._rel = relationships(self.scene)
        if relation not in self._rel:
            raise VqauditError(f"unknown relation {relation!r}")
        return self._rel[relation][index]


def _objs(value: Output) -> tuple[int, ...]:
    if not isinstance(value, tuple):
        raise VqauditError(f"expected an object set, got {value!r}")
    return value


def _obj(value: Output) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise VqauditError(f"expected an object index, got {value!r}")
    return value


def _filter(ctx: _Ctx, objs: tuple[int, ...], attr: str, value: str) -> tuple[int, ...]:
    if value == "" or (attr == "shape" and value == "thing"):
        return objs
    return tuple(i for i in objs if ctx.scene.objects[i].attr(attr) == value)


def _filter_all(ctx: _Ctx, objs: tuple[int, ...], values: Sequence[str]) -> tuple[int, ...]:
    if len(values) != 4:
        raise VqauditError(f"a template filter takes 4 side inputs (size, color, material, shape), got {values!r}")
    for attr, value in zip(ATTRIBUTES, values, strict=True):
        objs = _filter(ctx, objs, attr, value)
    return objs


def _unique(objs: tuple[int, ...]) -> int | None:
    return objs[0] if len(objs) == 1 else None


def _same(ctx: _Ctx, index: int, attr: str) -> tuple[int, ...]:
    ref = ctx.scene.objects[index].attr(attr)
    return tuple(j for j, o in enumerate(ctx.scene.objects) if j != index and o.attr(attr) == ref)


Handler = Callable[[_Ctx, list[Output], tuple[str, ...]], Output]


def _one(values: tuple[str, ...]) -> str:
    if len(values) != 1:
        raise VqauditError(f"expected one value input, got {list(values)!r}")
    return values[0]


def _relate_filter(c: _Ctx, a: list[Output], v: tuple[str, ...]) -> tuple[int, ...]:
    return _filter_all(c, c.related(v[0], _obj(a[0])), v[1:])


HANDLERS: dict[str, Handler] = {
    "scene": lambda c, a, v: tuple(range(len(c.scene.objects))),
    "unique": lambda c, a, v: _unique(_objs(a[0])),
    "relate": lambda c, a, v: c.related(_one(v), _obj(a[0])),
    "union": lambda c, a, v: tuple(sorted(set(_objs(a[0])) | set(_objs(a[1])))),
    "intersect": lambda c, a, v: tuple(sorted(set(_objs(a[0])) & set(_objs(a[1])))),
    "count": lambda c, a, v: len(_objs(a[0])),
    "exist": lambda c, a, v: len(_objs(a[0])) > 0,
    "equal_integer": lambda c, a, v: a[0] == a[1],
    "less_than": lambda c, a, v: _obj(a[0]) < _obj(a[1]),
    "greater_than": lambda c, a, v: _obj(a[0]) > _obj(a[1]),
    "equal_object": lambda c, a, v: a[0] == a[1],
    "filter": lambda c, a, v: _filter_all(c, _objs(a[0]), v),
    "filter_unique": lambda c, a, v: _unique(_filter_all(c, _objs(a[0]), v)),
    "filter_count": lambda c, a, v: len(_filter_all(c, _objs(a[0]), v)),
    "filter_exist": lambda c, a, v: len(_filter_all(c, _objs(a[0]), v)) > 0,
    "relate_filter": _relate_filter,
    "relate_filter_unique": lambda c, a, v: _unique(_relate_filter(c, a, v)),
    "relate_filter_count": lambda c, a, v: len(_relate_filter(c, a, v)),
    "relate_filter_exist": lambda c, a, v: len(_relate_filter(c, a, v)) > 0,
}


def _attr_handlers(attr: str) -> dict[str, Handler]:
    return {
        f"filter_{attr}": lambda c, a, v: _filter(c, _objs(a[0]), attr, _one(v)),
        f"query_{attr}": lambda c, a, v: c.scene.objects[_obj(a[0])].attr(attr),
        f"same_{attr}": lambda c, a, v: _same(c, _obj(a[0]), attr),
        f"equal_{attr}": lambda c, a, v: a[0] == a[1],
    }


for _attr in ATTRIBUTES:
    HANDLERS.update(_attr_handlers(_attr))


def execute(program: Program, scene: Scene) -> list[Output]:
    """Run ``program`` on ``scene`` and return every node's output, in node order.

    Once a node is invalid (``unique`` of a non-singleton) it and every later node output None, as CLEVR's
    ``answer_question`` stops at ``'__INVALID__'``.

    Raises:
        VqauditError: an unknown function, a wrong number of inputs, or an input of the wrong type.
    """
    ctx = _Ctx(scene)
    outputs: list[Output] = []
    for k, node in enumerate(program):
        handler = HANDLERS.get(node.type)
        if handler is None:
            raise VqauditError(f"program node {k}: unknown function {node.type!r}")
        if outputs and outputs[-1] is None:
            outputs.extend([None] * (len(program) - k))
            break
        args = [outputs[i] for i in node.inputs]
        try:
            outputs.append(handler(ctx, args, node.values))
        except (IndexError, VqauditError) as exc:
            raise VqauditError(f"program node {k} ({node.type}): {exc}") from None
    return outputs


def answer(program: Program, scene: Scene) -> Output:
    """The program's answer on ``scene`` (the last node's output; None when the program is invalid there)."""
    return execute(program, scene)[-1]


def answer_text(value: Output) -> str:
    """CLEVR's answer string: ``yes``/``no`` for booleans, the number for counts, the attribute value otherwise.

    Raises:
        VqauditError: for an invalid answer or an object set (never a final answer in CLEVR).
    """
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | str):
        return str(value)
    raise VqauditError(f"not a final answer: {value!r}")


def dependency_set(program: Program, outputs: Sequence[Output]) -> frozenset[int]:
    """Objects the program's answer depends on: members of every non-``scene`` node's object output.

    ``scene`` nodes are excluded (they list every object); ``unique`` outputs and object sets are included, and so
    are the anchors of ``relate`` and ``same_<attr>`` (they are ``unique`` outputs).
    """
    deps: set[int] = set()
    for node, out in zip(program, outputs, strict=True):
        if node.type == "scene" or out is None:
            continue
        if isinstance(out, tuple):
            deps.update(out)
        elif node.type in ("unique", "filter_unique", "relate_filter_unique") and isinstance(out, int):
            deps.add(out)
    return frozenset(deps)
