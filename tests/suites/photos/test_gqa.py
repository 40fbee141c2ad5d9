"""GQA loader and program executor (Hudson & Manning, CVPR 2019) on hand-written files in the published GQA layout.

Every expected answer below is computed by hand from ``tests/fixtures/photos/gqa/sceneGraphs.json`` (one 300x200
image, six objects) and written into ``questions.json`` as the gold ``answer``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vqaudit.errors import VqauditError
from vqaudit.suites.photos.gqa import (
    answer_text,
    argument_ids,
    dependency_set,
    execute,
    load_questions,
    load_scene_graphs,
    position,
)
from vqaudit.suites.photos.graph import Step

FIX = Path(__file__).parents[2] / "fixtures" / "photos" / "gqa"
GRAPHS = load_scene_graphs(FIX / "sceneGraphs.json")
QUESTIONS = load_questions(FIX / "questions.json")
G = GRAPHS["img1"]


def test_loader_keeps_the_gqa_fields() -> None:
    assert list(GRAPHS) == ["img1"] and (G.width, G.height) == (300, 200)
    assert [o.id for o in G.objects] == ["1", "2", "3", "4", "5", "6"]
    man = G.by_id()["1"]
    assert (man.name, man.box, man.attributes) == ("man", (20.0, 40.0, 60.0, 140.0), ("tall",))
    assert [(r.name, r.target) for r in man.relations] == [("wearing", "2"), ("to the left of", "3")]
    q = QUESTIONS["q04"]
    assert (q.image_id, q.answer, q.types["detailed"]) == ("img1", "yes", "existAttrRelS")
    assert q.program[1] == Step("relate", "cup,on,s (4,6)", (0,))
    assert q.extra["isBalanced"] is True


@pytest.mark.parametrize("qid", sorted(QUESTIONS))
def test_every_hand_computed_answer_is_reproduced(qid: str) -> None:
    q = QUESTIONS[qid]
    assert answer_text(execute(q.program, G, qid).answer) == q.answer


def test_step_outputs_of_a_four_step_program() -> None:
    # table -> cups on the table (4 and 6) -> red ones (6: cup 4 is white) -> exists.
    assert execute(QUESTIONS["q04"].program, G).outputs == (("3",), ("4", "6"), ("6",), True)


@pytest.mark.parametrize(
    ("qid", "deps"),
    [
        ("q01", {"1", "2"}),
        ("q02", {"2"}),
        ("q04", {"3", "4", "6"}),
        ("q05", {"1", "3"}),
        ("q06", {"1", "3"}),
        ("q07", {"3", "5"}),
        ("q10", {"4", "6"}),
        ("q13", {"5"}),
    ],
)
def test_dependency_sets(qid: str, deps: set[str]) -> None:
    # Every object in a step's object-set output, plus the related objects of verify/choose rel.
    assert dependency_set(QUESTIONS[qid].program, G) == deps


def test_dependency_set_agrees_with_gqa_annotated_ids_where_every_referent_is_annotated() -> None:
    for qid in ("q01", "q02", "q03", "q05", "q06", "q07", "q11"):
        q = QUESTIONS[qid]
        assert dependency_set(q.program, G) == argument_ids(q), qid


def test_removing_objects_changes_or_undefines_answers() -> None:
    q = QUESTIONS
    no_man = G.without({"1"})
    assert execute(q["q01"].program, no_man).answer is None  # nobody is wearing the hat: undefined
    assert answer_text(execute(q["q05"].program, no_man).answer) == "no"  # select keeps only surviving ids
    assert "1" not in {r.target for o in no_man.objects for r in o.relations}
    assert answer_text(execute(q["q04"].program, G.without({"4"})).answer) == "yes"  # red cup 6 is still there
    assert answer_text(execute(q["q04"].program, G.without({"6"})).answer) == "no"  # only the white cup is left
    assert execute(q["q07"].program, G.without({"5"})).answer is None  # same colour of one object: undefined


def test_positions_use_box_centre_thirds() -> None:
    by = G.by_id()
    # man centre x = 20 + 30 = 50 < 100 -> left; chair 265 > 200 -> right; table 180 -> middle.
    assert [position(by[i], G, "h") for i in ("1", "5", "3")] == ["left", "right", "middle"]
    # hat centre y = 40 < 66.7 -> top; chair 145 > 133.3 -> bottom.
    assert [position(by[i], G, "v") for i in ("2", "5")] == ["top", "bottom"]


def test_unsupported_operation_names_the_question_and_step() -> None:
    prog = (Step("select", "man (1)"), Step("choose older", "man|woman", (0,)))
    with pytest.raises(VqauditError, match=r"q99, step 1 \(choose older\): unsupported GQA operation"):
        execute(prog, G, "q99")


def test_missing_inputs_are_an_error() -> None:
    with pytest.raises(VqauditError, match=r"q7, step 0 \(exist\): needs 1 dependencies, has 0"):
        execute((Step("exist", "?"),), G, "q7")
    with pytest.raises(VqauditError, match="needs 2 dependencies"):
        execute((Step("select", "man (1)"), Step("exist", "?", (0,)), Step("and", "", (1,))), G)


def _write(tmp: Path, obj: object) -> Path:
    path = tmp / "bad.json"
    path.write_text(json.dumps(obj))
    return path


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"width": 10, "height": 10, "objects": {"7": {"name": "cat", "x": 0, "y": 0, "w": 5}}},
            r"image im, object 7, field 'h': missing",
        ),
        (
            {"width": 10, "height": 10, "objects": {"7": {"name": "cat", "x": 0, "y": 0, "w": 5, "h": "2"}}},
            r"object 7, field 'h': expected int or float",
        ),
        (
            {"width": 10, "height": 10, "objects": {"7": {"name": "cat", "x": 0, "y": 0, "w": 0, "h": 2}}},
            r"object 7, field 'w'/'h': box size must be positive",
        ),
        (
            {
                "width": 10,
                "height": 10,
                "objects": {
                    "7": {"name": "cat", "x": 0, "y": 0, "w": 5, "h": 2, "relations": [{"name": "on", "object": "8"}]}
                },
            },
            r"object 7, field 'relations': unknown object '8'",
        ),
        ({"height": 10, "objects": {}}, r"image im, field 'width': missing"),
    ],
)
def test_bad_scene_graphs_name_file_row_and_field(tmp_path: Path, entry: object, message: str) -> None:
    path = _write(tmp_path, {"im": entry})
    with pytest.raises(VqauditError, match=message) as info:
        load_scene_graphs(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"imageId": "im", "question": "?", "answer": "yes", "semantic": []}, r"question q, field 'semantic': empty"),
        (
            {
                "imageId": "im",
                "question": "?",
                "semantic": [{"operation": "exist", "argument": "", "dependencies": []}],
            },
            r"question q, field 'answer': missing",
        ),
        (
            {
                "imageId": "im",
                "question": "?",
                "answer": "no",
                "semantic": [{"operation": "exist", "argument": "", "dependencies": [0]}],
            },
            r"field 'semantic\[0\]'.dependencies: each must be the index of an earlier step",
        ),
        (
            {"imageId": "im", "question": "?", "answer": "no", "semantic": [{"argument": "", "dependencies": []}]},
            r"field 'semantic\[0\]', field 'operation': missing",
        ),
    ],
)
def test_bad_questions_name_file_row_and_field(tmp_path: Path, entry: object, message: str) -> None:
    path = _write(tmp_path, {"q": entry})
    with pytest.raises(VqauditError, match=message):
        load_questions(path)


def test_missing_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(VqauditError, match="file not found"):
        load_scene_graphs(tmp_path / "none.json")
    (tmp_path / "x.json").write_text("{")
    with pytest.raises(VqauditError, match="not valid JSON"):
        load_questions(tmp_path / "x.json")


def test_a_no_from_verify_rel_depends_on_both_named_objects() -> None:
    # Is the chair to the left of the table? No (the chair is right of it): the chair is still evidence.
    for arg in ("chair,to the left of,s (5)", "chair,to the left of,s (-)"):
        program = (Step("select", "table (3)"), Step("verify rel", arg, (0,)))
        assert answer_text(execute(program, G).answer) == "no"
        assert dependency_set(program, G) == {"3", "5"}
