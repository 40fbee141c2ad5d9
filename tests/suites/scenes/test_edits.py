"""S, C and M edits on a hand-checked real scene (CLEVR_val_000000) (seed 000 §3.1, appendix C.1).

CLEVR_val_000000 objects: 0 large brown rubber cylinder, 1 large gray rubber cube, 2 small green rubber cylinder,
3 large purple metal sphere, 4 small gray metal cube.
"""

from __future__ import annotations

import numpy as np
import pytest

from vqaudit.suites.scenes.camera import fit_camera
from vqaudit.suites.scenes.edits import edit_referent, edit_unrelated, layout_ok, with_attribute
from vqaudit.suites.scenes.occlusion import occlude
from vqaudit.suites.scenes.programs import Node, answer, execute
from vqaudit.suites.scenes.render import instance_ids, render
from vqaudit.suites.scenes.scene import Scene, load_scenes


def _color_of(size: str, material: str, shape: str) -> tuple[Node, ...]:
    return (
        Node("scene"),
        Node("filter_size", (0,), (size,)),
        Node("filter_material", (1,), (material,)),
        Node("filter_shape", (2,), (shape,)),
        Node("unique", (3,)),
        Node("query_color", (4,)),
    )


@pytest.fixture(scope="module")
def scene() -> Scene:
    return load_scenes("val")[0]


def test_s_changes_only_objects_outside_the_dependency_set_and_keeps_every_output(scene: Scene) -> None:
    prog = _color_of("large", "metal", "sphere")  # deps: large {0, 1, 3}; answer purple
    assert answer(prog, scene) == "purple"
    for seed in range(5):
        s = edit_unrelated(prog, scene, fit_camera(scene), np.random.default_rng(seed))
        assert s is not None and s.supported and s.answer == "purple"
        change = s.evidence["change"]
        assert change["object"] in (2, 4)
        assert (change["attribute"], change["to"]) != ("size", "large")  # would join filter_size(large)
        assert execute(prog, s.scene) == execute(prog, scene)


def test_c_on_this_question_can_only_recolour_the_sphere(scene: Scene) -> None:
    # changing 0 or 1 into a metal sphere breaks `unique`; other changes of 0 and 1 leave the answer; changing
    # 3's size, material or shape empties the filter: only a new colour of object 3 changes the (valid) answer
    prog = _color_of("large", "metal", "sphere")
    for seed in range(5):
        c = edit_referent(prog, scene, fit_camera(scene), np.random.default_rng(seed), max_tries=200)
        assert c is not None and c.supported
        assert (c.evidence["change"]["object"], c.evidence["change"]["attribute"]) == (3, "color")
        assert c.answer == c.evidence["change"]["to"] != "purple"


def test_a_large_referent_is_never_occluded(scene: Scene) -> None:
    # every dependency-set object of this question is large; a large occluder cannot hide a large object
    assert occlude(_color_of("large", "metal", "sphere"), scene, fit_camera(scene), np.random.default_rng(0)) is None


@pytest.mark.slow
def test_m_hides_the_small_cube_and_a_recoloured_completion_is_a_pixel_identical_witness(scene: Scene) -> None:
    prog = _color_of("small", "metal", "cube")  # the small gray metal cube (object 4)
    cam = fit_camera(scene)
    m = occlude(prog, scene, cam, np.random.default_rng(1))
    assert m is not None
    ev = m.edit.evidence
    assert ev["status"] == "ambiguous" and not m.edit.supported
    assert ev["referent"] == 4 and 4 in ev["hidden"]
    assert not np.any(instance_ids(m.edit.scene, cam) == 4)
    assert answer(prog, m.edit.scene) == "gray"  # the occluder keeps the answer
    w = ev["witness"]
    assert w["object"] in ev["hidden"] and w["answer"] != "gray"
    alt = m.edit.scene.with_object(
        w["object"], with_attribute(m.edit.scene.objects[w["object"]], w["change"]["attribute"], w["change"]["to"])
    )
    assert answer(prog, alt) == w["answer"]
    assert np.array_equal(render(alt, cam).rgb, m.rendered.rgb)


def test_size_change_keeps_the_object_on_the_ground_and_layout_catches_overlaps(scene: Scene) -> None:
    big = with_attribute(scene.objects[4], "size", "large")
    assert big.xyz[2] == 0.7 and big.xyz[:2] == scene.objects[4].xyz[:2]
    assert layout_ok(scene)
    on_top = scene.with_object(
        2, scene.objects[2].__class__(**{**scene.objects[2].__dict__, "xyz": scene.objects[4].xyz})
    )
    assert not layout_ok(on_top)
