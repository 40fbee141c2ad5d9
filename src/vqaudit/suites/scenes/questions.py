"""Question generation from the official CLEVR 1.0 templates over a scene, deterministic with a numpy generator.

This re-implements the search of CLEVR's ``question_generation/generate_questions.py`` (``instantiate_templates_dfs``)
with a seeded ``numpy.random.Generator`` instead of Python's global ``random``:

- template nodes are instantiated in order; composite nodes (``filter_unique``, ``relate_filter_count``, ...) expand
  into ``relate`` / ``filter_<attr>`` nodes plus ``unique`` / ``count`` / ``exist``, choosing among the attribute
  combinations that the partially executed program makes valid (a ``unique`` must see exactly one object; count
  and exist filters also get combinations that match nothing, as many as the generator adds);
- the template's constraints are enforced: ``NEQ``, ``NULL`` (the parameter must be unspecified) and ``OUT_NEQ``
  (two nodes must have different outputs);
- degenerate questions are rejected: the program must be valid, and replacing any ``relate`` node by the whole scene
  must change the answer (``question_engine.is_degenerate``; CLEVR's generator only calls it for templates with a
  raw ``relate`` node, which no 1.0 template has). For ``less_than`` / ``greater_than`` that rule rejects every
  instance (a count can only grow when its relate is dropped, so one side always keeps the answer), so there a
  question is rejected only when *every* relate is redundant;
- text: one of the template's phrasings, each value replaced by a random synonym (``synonyms.json``), unspecified
  values dropped (``thing`` for a shape), optional ``[...]`` parts kept with probability 1/2, and the "other"
  heuristic of the generator.

Supported families (``SUPPORTED_FAMILIES``) are the five whose generated questions were checked against real traced
CLEVR questions: ``zero_hop``, ``one_hop``, ``compare_integer``, ``single_or`` and ``same_relate`` (57 templates).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from vqaudit.errors import VqauditError
from vqaudit.suites.scenes.programs import Node, Output, Program, answer, execute, metadata
from vqaudit.suites.scenes.scene import ATTRIBUTES, Scene, relationships

SUPPORTED_FAMILIES = ("zero_hop", "one_hop", "compare_integer", "single_or", "same_relate")
MAX_STATES = 1500
MAX_OPTIONS = 24  # random attribute combinations tried per composite node (CLEVR tries all, shuffled)
_TYPE_OF_ATTR = {"size": "Size", "color": "Color", "material": "Material", "shape": "Shape"}


@dataclass(frozen=True)
class Template:
    """One CLEVR question template: family file, index in it, phrasings, program nodes, params, constraints."""

    family: str
    index: int
    text: tuple[str, ...]
    nodes: tuple[dict[str, Any], ...]
    params: dict[str, str]
    constraints: tuple[dict[str, Any], ...]

    @property
    def template_id(self) -> str:
        """``<family>/<index>``, e.g. ``one_hop/3``."""
        return f"{self.family}/{self.index}"


@dataclass(frozen=True)
class Question:
    """A generated question: text, program, answer on the scene, template and chosen parameter values."""

    text: str
    program: Program
    answer: Output
    template_id: str
    values: tuple[tuple[str, str], ...]


def _data(name: str) -> Any:
    return json.loads((resources.files("vqaudit.suites.scenes") / "data" / name).read_text(encoding="utf-8"))


@cache
def synonyms() -> dict[str, list[str]]:
    """CLEVR's ``synonyms.json``."""
    data: dict[str, list[str]] = _data("synonyms.json")
    return data


@cache
def templates(family: str) -> tuple[Template, ...]:
    """The templates of one family file of ``CLEVR_1.0_templates`` (e.g. ``one_hop``).

    Raises:
        VqauditError: an unknown family.
    """
    try:
        raw = _data(f"templates/{family}.json")
    except FileNotFoundError:
        raise VqauditError(f"unknown CLEVR template family {family!r}") from None
    return tuple(
        Template(
            family=family,
            index=i,
            text=tuple(t["text"]),
            nodes=tuple(t["nodes"]),
            params={p["name"]: p["type"] for p in t["params"]},
            constraints=tuple(t["constraints"]),
        )
        for i, t in enumerate(raw)
    )


@dataclass(frozen=True)
class _State:
    nodes: tuple[Node, ...]
    vals: tuple[tuple[str, str], ...]
    input_map: tuple[tuple[int, int], ...]
    next_node: int


def _filter_options(scene: Scene, objs: tuple[int, ...]) -> dict[tuple[str | None, ...], tuple[int, ...]]:
    """Every (size, color, material, shape) combination, None = unspecified, that some object in ``objs`` has."""
    out: dict[tuple[str | None, ...], set[int]] = {}
    for i in objs:
        vals = tuple(scene.objects[i].attr(a) for a in ATTRIBUTES)
        for mask in range(16):
            key = tuple(v if (mask >> b) & 1 else None for b, v in enumerate(vals))
            out.setdefault(key, set()).add(i)
    return {k: tuple(sorted(v)) for k, v in out.items()}


def _add_empty(options: dict[tuple[str | None, ...], tuple[int, ...]], n: int, rng: np.random.Generator) -> None:
    domains = [[*metadata()["types"][_TYPE_OF_ATTR[a]], None] for a in ATTRIBUTES]
    target, tries = len(options) + n, 0
    while len(options) < target and tries < 50 * (n + 1):
        tries += 1
        key = tuple(d[int(rng.integers(len(d)))] for d in domains)
        if key not in options:
            options[key] = ()


def _expand(
    scene: Scene,
    tnode: dict[str, Any],
    state: _State,
    outputs: list[Output],
    template: Template,
    rng: np.random.Generator,
) -> list[_State]:
    kind = tnode["type"]
    imap = dict(state.input_map)
    src = imap[tnode["inputs"][0]]
    side = list(tnode["side_inputs"])
    options: dict[tuple[Any, ...], tuple[int, ...]] = {}
    if kind.startswith("relate_filter"):
        anchor = outputs[src]
        assert isinstance(anchor, int)
        unique, zero = kind.endswith("unique"), kind.endswith(("count", "exist"))
        rels = relationships(scene)
        trivial: list[tuple[tuple[Any, ...], tuple[int, ...]]] = []
        for rel in ("left", "right", "behind", "front"):
            related = rels[rel][anchor]
            for key, filtered in _filter_options(scene, tuple(range(len(scene.objects)))).items():
                inter = tuple(i for i in filtered if i in related)
                if (unique and len(inter) != 1) or (not zero and not inter):
                    continue
                if inter == filtered:
                    trivial.append(((rel, *key), inter))
                else:
                    options[(rel, *key)] = inter
        n_trivial = int(round(len(options) * 0.1 / 0.9))
        for j in rng.permutation(len(trivial))[:n_trivial]:
            options[trivial[int(j)][0]] = trivial[int(j)][1]
    else:
        objs = outputs[src]
        assert isinstance(objs, tuple)
        opts = _filter_options(scene, objs)
        if kind == "filter":
            opts.pop((None, None, None, None), None)
        if kind == "filter_unique":
            opts = {k: v for k, v in opts.items() if len(v) == 1}
        elif kind == "filter_exist":
            _add_empty(opts, len(opts), rng)
        elif kind in ("filter_count", "filter"):
            _add_empty(opts, sum(1 for v in opts.values() if len(v) == 1), rng)
        options = dict(opts)
    keys = list(options)
    out: list[_State] = []
    for j in rng.permutation(len(keys))[:MAX_OPTIONS]:
        key = keys[int(j)]
        new: list[Node] = []
        vals = dict(state.vals)
        cur = src
        names = side
        if kind.startswith("relate"):
            new.append(Node("relate", (cur,), (str(key[0]),)))
            vals[side[0]] = str(key[0])
            cur = len(state.nodes) + len(new) - 1
            key, names = key[1:], side[1:]
        for name, val in zip(names, key, strict=True):
            ptype = template.params[name]
            if val is not None:
                new.append(Node(f"filter_{ptype.lower()}", (cur,), (str(val),)))
                cur = len(state.nodes) + len(new) - 1
                vals[name] = str(val)
            else:
                vals[name] = "thing" if ptype == "Shape" else ""
        for suffix in ("unique", "count", "exist"):
            if kind.endswith(suffix):
                new.append(Node(suffix, (cur,)))
                cur = len(state.nodes) + len(new) - 1
        imap[state.next_node] = cur
        out.append(
            _State(
                state.nodes + tuple(new), tuple(sorted(vals.items())), tuple(sorted(imap.items())), state.next_node + 1
            )
        )
    return out


def _violates(template: Template, state: _State, outputs: list[Output]) -> bool:
    vals, imap = dict(state.vals), dict(state.input_map)
    for c in template.constraints:
        if c["type"] == "NEQ":
            v1, v2 = vals.get(c["params"][0]), vals.get(c["params"][1])
            if v1 is not None and v2 is not None and v1 != v2:
                return True  # (sic) CLEVR's generator skips when the two values differ
        elif c["type"] == "NULL":
            v = vals.get(c["params"][0])
            if v is not None and v not in ("", "thing"):
                return True
        elif c["type"] == "OUT_NEQ":
            i, j = imap.get(c["params"][0]), imap.get(c["params"][1])
            if i is not None and j is not None and outputs[i] == outputs[j]:
                return True
    return False


def is_degenerate(program: Program, scene: Scene, require_all: bool = False) -> bool:
    """True when the program is invalid on the scene or its ``relate`` nodes are redundant.

    CLEVR's ``question_engine.is_degenerate``: a question is degenerate when replacing *any* ``relate`` node by a
    ``scene`` node keeps the answer. With ``require_all`` it is degenerate only when replacing *each* of them does.
    """
    ans = answer(program, scene)
    if ans is None:
        return True
    kept = [
        answer(tuple(Node("scene") if i == k else n for i, n in enumerate(program)), scene) == ans
        for k, node in enumerate(program)
        if node.type == "relate"
    ]
    return bool(kept) and (all(kept) if require_all else any(kept))


def _text(template: Template, vals: dict[str, str], rng: np.random.Generator) -> str:
    text = template.text[int(rng.integers(len(template.text)))]
    for name in sorted(vals, key=len, reverse=True):
        val = vals[name]
        syn = synonyms().get(val)
        if syn:
            val = syn[int(rng.integers(len(syn)))]
        text = " ".join(text.replace(name, val).split())
    while (m := re.search(r"\[([^\[]*)\]", text)) is not None:
        text = text[: m.start()] + (m.group(1) if rng.random() > 0.5 else "") + text[m.end() :]
    text = " ".join(text.split())
    if (" other " in text or " another " in text) and _other_differs(vals):
        text = text.replace(" other ", " ").replace(" another ", " a ")
    return text


def _other_differs(vals: dict[str, str]) -> bool:
    keys = {"<Z>", "<C>", "<M>", "<S>", "<Z2>", "<C2>", "<M2>", "<S2>"}
    if set(vals) != keys:
        return False
    return any(
        vals[a] not in ("", "thing") and vals[b] not in ("", "thing") and vals[a] != vals[b]
        for a, b in (("<Z>", "<Z2>"), ("<C>", "<C2>"), ("<M>", "<M2>"), ("<S>", "<S2>"))
    )


def generate(scene: Scene, template: Template, rng: np.random.Generator) -> Question | None:
    """Instantiate ``template`` on ``scene`` once (random order from ``rng``); None if no valid question exists.

    The search stops after ``MAX_STATES`` partial programs; each composite node tries at most ``MAX_OPTIONS``
    random attribute combinations (CLEVR's generator tries all of them in random order).
    """
    stack = [_State((Node("scene"),), (), ((0, 0),), 1)]
    seen = 0
    while stack and seen < MAX_STATES:
        state = stack.pop()
        seen += 1
        outputs = execute(state.nodes, scene)
        if outputs[-1] is None or _violates(template, state, outputs):
            continue
        if state.next_node == len(template.nodes):
            # counts only grow when a relate is replaced by the whole scene, so a less_than / greater_than over
            # relate counts always survives one replacement: there only all-redundant relates are rejected
            monotone = state.nodes[-1].type in ("less_than", "greater_than")
            if is_degenerate(state.nodes, scene, require_all=monotone):
                continue
            return Question(
                text=_text(template, dict(state.vals), rng),
                program=state.nodes,
                answer=outputs[-1],
                template_id=template.template_id,
                values=state.vals,
            )
        tnode = template.nodes[state.next_node]
        if tnode["type"] in (
            "filter_unique",
            "filter_count",
            "filter_exist",
            "filter",
            "relate_filter",
            "relate_filter_unique",
            "relate_filter_count",
            "relate_filter_exist",
        ):
            stack.extend(_expand(scene, tnode, state, outputs, template, rng))
            continue
        imap = dict(state.input_map)
        inputs = tuple(imap[i] for i in tnode["inputs"])
        imap[state.next_node] = len(state.nodes)
        if tnode.get("side_inputs"):
            name = tnode["side_inputs"][0]
            domain = list(metadata()["types"][template.params[name]])
            for j in rng.permutation(len(domain)):
                val = str(domain[int(j)])
                vals = dict(state.vals)
                vals[name] = val
                stack.append(
                    _State(
                        state.nodes + (Node(tnode["type"], inputs, (val,)),),
                        tuple(sorted(vals.items())),
                        tuple(sorted(imap.items())),
                        state.next_node + 1,
                    )
                )
        else:
            stack.append(
                _State(
                    state.nodes + (Node(tnode["type"], inputs),),
                    state.vals,
                    tuple(sorted(imap.items())),
                    state.next_node + 1,
                )
            )
    return None
