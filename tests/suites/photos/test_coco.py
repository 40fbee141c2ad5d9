"""COCO adapter and question generator (docs/photos.md) on real tiny-coco annotations and hand-made boxes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vqaudit.errors import VqauditError
from vqaudit.suites.photos.coco import (
    FAMILIES,
    coco_photos,
    enumerate_questions,
    load_coco,
    plural,
    sample_questions,
    with_relations,
)
from vqaudit.suites.photos.gqa import answer_text, execute
from vqaudit.suites.photos.graph import Obj

FIX = Path(__file__).parents[2] / "fixtures" / "photos" / "coco"
PHOTOS = load_coco(FIX / "instances_subset.json")


def _rels(objs: list[Obj]) -> dict[str, list[tuple[str, str]]]:
    return {o.id: [(r.name, r.target) for r in o.relations] for o in with_relations(objs)}


def test_relation_rule_on_hand_made_boxes() -> None:
    a, b = Obj("a", "cup", 0, 0, 10, 10), Obj("b", "cup", 14, 0, 10, 10)
    # cx(a) = 5 < x(b) = 14 and cx(b) = 19 > 10: left/right; gap 4 <= 5 and full vertical overlap: next to.
    assert _rels([a, b]) == {
        "a": [("to the left of", "b"), ("next to", "b")],
        "b": [("to the right of", "a"), ("next to", "a")],
    }
    far = Obj("b", "cup", 20, 0, 10, 10)  # gap 10 > half the narrower width (5): not next to
    assert _rels([a, far])["a"] == [("to the left of", "b")]
    low = Obj("c", "cup", 2, 30, 6, 6)  # cy(a) = 5 < 30 and cy(c) = 33 > 10: a above c
    assert _rels([a, low]) == {"a": [("above", "c")], "c": [("below", "a")]}
    overlap = Obj("d", "cup", 4, 4, 10, 10)  # centres inside each other's extent: no relation
    assert _rels([a, overlap]) == {"a": [], "d": []}


def test_real_coco_graph_and_its_relations() -> None:
    # Image 522418 (640x480): person (382.48, 0, 256.8, 474.31), knife (234.06, 406.61, 219.94, 42.67),
    # cake (0, 316.04, 406.65, 157.49), sink (305.45, 172.05, 57.36, 77.3) in the COCO file.
    photo = next(p for p in PHOTOS if p.graph.image_id == "522418")
    g = photo.graph
    assert (g.width, g.height, photo.file_name) == (640, 480, "000000522418.jpg")
    assert "Attribution License" in photo.credit and "127244861" in photo.credit
    by = {o.name: o for o in g.objects}
    assert set(by) == {"person", "knife", "cake", "sink"}
    rels = {(by_id.name, r.name, g.by_id()[r.target].name) for by_id in g.objects for r in by_id.relations}
    # knife: cx 344.03 < 382.48 (person's left) and person cx 510.88 > 454.00 (knife's right) -> left of.
    assert ("knife", "to the left of", "person") in rels and ("knife", "next to", "person") in rels
    # sink cy 210.70 < 406.61 and knife cy 427.95 > 249.35 -> sink above knife.
    assert ("sink", "above", "knife") in rels
    # cake cx 203.3 < 234.06 but knife cx 344.03 < cake's right 406.65 -> no left/right relation.
    assert not {r for r in rels if r[0] == "cake" and r[2] == "knife"}
    assert all(o.attributes == () for o in g.objects)  # COCO gives no attributes


def test_generated_programs_reproduce_their_answers_and_counts() -> None:
    for photo in PHOTOS:
        questions = enumerate_questions(photo.graph)
        assert len({q.id for q in questions}) == len(questions)
        for q in questions:
            assert answer_text(execute(q.program, photo.graph).answer) == q.answer
            assert q.types["detailed"] in FAMILIES
    g = next(p for p in PHOTOS if p.graph.image_id == "522418").graph
    texts = {q.text: q.answer for q in enumerate_questions(g)}
    assert texts["How many knives are there?"] == "1"
    assert texts["Is the knife to the left or to the right of the person?"] == "left"
    assert texts["What is above the knife?"] == "sink"
    assert texts["On which side of the picture is the person?"] == "right"  # centre x 510.88 > 426.67
    assert texts["Is the cake above the person?"] == "no"


def test_sampling_is_deterministic_and_family_balanced() -> None:
    g = next(p for p in PHOTOS if p.graph.image_id == "522418").graph
    a = sample_questions(g, 6, np.random.default_rng([5, 0]))
    b = sample_questions(g, 6, np.random.default_rng([5, 0]))
    assert [q.id for q in a] == [q.id for q in b]
    assert len({q.types["detailed"] for q in a}) == 6  # six families present -> one question each


def test_plural() -> None:
    assert [plural(n) for n in ("person", "knife", "cup", "bus", "dining table")] == [
        "people",
        "knives",
        "cups",
        "buses",
        "dining tables",
    ]


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (
            {"annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 0, 5]}]},
            r"annotations\[0\], field 'bbox': expected \[x, y, w, h\]",
        ),
        (
            {"annotations": [{"id": 1, "image_id": 1, "category_id": 99, "bbox": [0, 0, 4, 5]}]},
            r"annotations\[0\], field 'category_id': unknown category 99",
        ),
        (
            {"annotations": [{"id": 1, "image_id": 7, "category_id": 1, "bbox": [0, 0, 4, 5]}]},
            r"annotations name unknown image ids \[7\]",
        ),
        ({"images": [{"id": 1, "width": 10, "file_name": "a.jpg"}]}, r"images\[0\], field 'height': missing"),
    ],
)
def test_bad_coco_files_name_the_row_and_field(tmp_path: Path, patch: dict[str, object], message: str) -> None:
    data: dict[str, object] = {
        "images": [{"id": 1, "width": 10, "height": 10, "file_name": "a.jpg"}],
        "annotations": [],
        "categories": [{"id": 1, "name": "cat"}],
        **patch,
    }
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(VqauditError, match=message):
        load_coco(path)
    with pytest.raises(VqauditError, match="where-it-came-from"):
        coco_photos(data, "where-it-came-from")


def test_crowds_are_never_asked_about() -> None:
    data = {
        "images": [{"id": 1, "width": 100, "height": 100, "file_name": "a.jpg"}],
        "categories": [{"id": 1, "name": "person"}, {"id": 2, "name": "dog"}],
        "annotations": [
            {"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 40, 40], "iscrowd": 1},
            {"id": 2, "image_id": 1, "category_id": 2, "bbox": [60, 60, 30, 30]},
        ],
    }
    (photo,) = coco_photos(data)
    assert photo.graph.by_id()["1"].attributes == ("crowd",)
    assert all("person" not in q.text and "people" not in q.text for q in enumerate_questions(photo.graph))
