"""The CLEVR program executor against 55 real traced questions (275 programs) and CLEVR's metadata.json."""

from __future__ import annotations

import gzip
import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from vqaudit.errors import VqauditError
from vqaudit.suites.scenes.programs import (
    HANDLERS,
    Node,
    answer,
    answer_text,
    dependency_set,
    execute,
    metadata,
    program_from_json,
)
from vqaudit.suites.scenes.scene import SCENE_FILES, load_scenes, relationships


def raw_scene_records(split: str) -> list[dict[str, Any]]:
    """The bundled scene records of ``split`` exactly as CLEVR wrote them (with recorded relationships)."""
    path = resources.files("vqaudit.suites.scenes") / "data" / SCENE_FILES[split]
    records: list[dict[str, Any]] = json.loads(gzip.decompress(path.read_bytes()))["scenes"]
    return records


FIXTURES = Path(__file__).parents[2] / "fixtures" / "scenes" / "questions"
ATTR_OF = {"filter_size": "Size", "filter_color": "Color", "filter_material": "Material", "filter_shape": "Shape"}
SYN = json.loads((Path(__file__).parents[3] / "src/vqaudit/suites/scenes/data/synonyms.json").read_text())


def _questions() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted(FIXTURES.glob("*.json")):
        out.extend(json.loads(path.read_text())["questions"])
    return out


def _traced(out: Any) -> Any:
    return tuple(out) if isinstance(out, list) else out


def _restore_values(q: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """Fill the filter nodes whose value_inputs the trace lost (see tests/fixtures/scenes/CREDITS.md)."""
    progs = [[dict(n) for n in p] for p in q["program"]]
    scenes = load_scenes("val")
    words = f" {q['question'].lower().rstrip('?;')} ".replace(";", " ").replace("?", " ")
    for k, node in enumerate(progs[0]):
        if node["type"] not in ATTR_OF:
            continue
        known = {tuple(p[k]["value_inputs"]) for p in progs if p[k]["value_inputs"]}
        if known:
            assert len(known) == 1
            value = list(known.pop())
        else:
            cands = []
            for v in metadata()["types"][ATTR_OF[node["type"]]]:
                forms = SYN.get(v, [v])
                if not any(f" {f} " in words or f" {f}s " in words for f in forms):
                    continue
                ok = all(
                    execute((Node("scene"), Node(node["type"], (0,), (v,))), _sub(scenes[i], p[p[k]["inputs"][0]]))[1]
                    == _traced(p[k]["_output"])
                    for i, p in zip(q["image_indices"], progs, strict=True)
                )
                if ok:
                    cands.append(v)
            assert len(cands) == 1, (q["question"], k, cands)
            value = cands
        for p in progs:
            p[k]["value_inputs"] = value
    return progs


def _sub(scene: Any, node: dict[str, Any]) -> Any:
    """The scene restricted to the input node's objects, keeping object indices (others get a dummy shape)."""
    keep = set(node["_output"])
    objs = tuple(
        o if i in keep else type(o)(shape="-", color="-", size="-", material="-", xyz=o.xyz, rotation=0.0)
        for i, o in enumerate(scene.objects)
    )
    return type(scene)(name=scene.name, objects=objs, directions=scene.directions)


def test_there_are_55_traced_questions_with_275_programs() -> None:
    qs = _questions()
    assert len(qs) == 55
    assert sum(len(q["program"]) for q in qs) == 275


def test_every_node_output_of_every_traced_program_is_reproduced() -> None:
    scenes = load_scenes("val")
    n_nodes = 0
    for q in _questions():
        for image, raw, gold in zip(q["image_indices"], _restore_values(q), q["answers"], strict=True):
            program = program_from_json(raw)
            outputs = execute(program, scenes[image])
            assert outputs == [_traced(n["_output"]) for n in raw], (q["question"], image)
            assert answer(program, scenes[image]) == gold
            n_nodes += len(raw)
    assert n_nodes == 1825  # 355 scene + 240 unique + ... nodes, counted with a Counter over the five files


def test_relationships_recomputed_from_coords_equal_the_recorded_ones_on_all_1500_scenes() -> None:
    for split in ("train", "val"):
        records = raw_scene_records(split)
        for record, scene in zip(records, load_scenes(split), strict=True):
            rel = relationships(scene)
            for name in ("left", "right", "behind", "front"):
                assert [list(r) for r in rel[name]] == record["relationships"][name], scene.name


def test_every_function_of_metadata_json_has_a_handler() -> None:
    names = {f["name"] for f in metadata()["functions"]}
    assert len(names) == 35
    assert names == set(HANDLERS)


def test_template_only_functions_on_val_scene_0_by_hand() -> None:
    # CLEVR_val_000000: 0 large brown rubber cylinder, 1 large gray rubber cube, 2 small green rubber cylinder,
    # 3 large purple metal sphere, 4 small gray metal cube; right-of(0) = [1, 2, 3, 4] (recorded relationships).
    s = load_scenes("val")[0]
    run = lambda *nodes: execute((Node("scene"), *nodes), s)[-1]  # noqa: E731
    assert run(Node("filter", (0,), ("", "gray", "", "thing"))) == (1, 4)
    assert run(Node("filter_count", (0,), ("large", "", "", "thing"))) == 3
    assert run(Node("filter_exist", (0,), ("", "cyan", "", "thing"))) is False
    assert run(Node("filter_unique", (0,), ("", "", "metal", "sphere"))) == 3
    assert run(Node("filter_unique", (0,), ("", "gray", "", "cube"))) is None  # two gray cubes: invalid
    assert (
        run(
            Node("filter_unique", (0,), ("", "brown", "", "")),
            Node("relate_filter_count", (1,), ("right", "", "gray", "", "")),
        )
        == 2
    )
    assert run(Node("filter_unique", (0,), ("", "brown", "", "")), Node("same_size", (1,))) == (1, 3)
    assert (
        run(
            Node("filter_unique", (0,), ("", "brown", "", "")),
            Node("relate_filter_unique", (1,), ("right", "", "", "metal", "sphere")),
            Node("query_color", (2,)),
        )
        == "purple"
    )


def test_invalid_unique_invalidates_every_later_node() -> None:
    s = load_scenes("val")[0]
    out = execute(
        (Node("scene"), Node("filter_color", (0,), ("gray",)), Node("unique", (1,)), Node("query_shape", (2,))), s
    )
    assert out == [(0, 1, 2, 3, 4), (1, 4), None, None]


def test_answer_text_and_dependency_set() -> None:
    assert answer_text(True) == "yes" and answer_text(False) == "no" and answer_text(3) == "3"
    assert answer_text("cube") == "cube"
    with pytest.raises(VqauditError):
        answer_text((1, 2))
    s = load_scenes("val")[0]
    prog = program_from_json(
        [
            {"type": "scene", "inputs": []},
            {"type": "filter_color", "inputs": [0], "value_inputs": ["gray"]},
            {"type": "count", "inputs": [1]},
        ]
    )
    assert dependency_set(prog, execute(prog, s)) == frozenset({1, 4})


def test_malformed_programs_name_the_node() -> None:
    with pytest.raises(VqauditError, match="node 1"):
        program_from_json([{"type": "scene", "inputs": []}, {"type": "count", "inputs": [1]}])
    with pytest.raises(VqauditError, match="unknown function"):
        execute((Node("scene"), Node("frobnicate", (0,))), load_scenes("val")[0])
