"""Masks, the keep rule and control choice (docs/photos.md), hand-computed on the GQA fixture graph.

Fixture: ``tests/fixtures/photos/gqa`` (300x200 image; boxes x, y, w, h: man 1 (20, 40, 60, 140), hat 2
(35, 30, 30, 20), table 3 (130, 110, 100, 60), cup 4 (150, 90, 20, 25), chair 5 (240, 100, 50, 90), cup 6
(200, 95, 18, 20)). Margin = max(4, 0.05 * max(w, h)) px, outward-rounded.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vqaudit.suites.photos.gqa import load_questions, load_scene_graphs
from vqaudit.suites.photos.graph import Question, Step
from vqaudit.suites.photos.masks import FILL_RGB, apply_masks, covered_fraction, inpaint, mask_rect, raster
from vqaudit.suites.photos.plan import Plan, matched_control, plan_group

FIX = Path(__file__).parents[2] / "fixtures" / "photos" / "gqa"
G = load_scene_graphs(FIX / "sceneGraphs.json")["img1"]
Q = load_questions(FIX / "questions.json")


def test_mask_rect_adds_the_margin_and_clips() -> None:
    assert mask_rect((10, 20, 30, 40), 100, 100) == (6, 16, 44, 64)  # margin max(4, 2) = 4
    assert mask_rect((0, 0, 200, 100), 150, 150) == (0, 0, 150, 110)  # margin 10, clipped to the image
    assert mask_rect((240, 100, 50, 90), 300, 200) == (235, 95, 295, 195)  # margin 4.5, rounded outward


def test_fill_and_blur_touch_only_the_rectangles() -> None:
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, (60, 80, 3), dtype=np.uint8)
    rect = (10, 5, 30, 25)
    inside = raster([rect], 80, 60)
    for kind in ("fill", "blur", "inpaint"):
        out = apply_masks(rgb, [rect], kind)
        assert np.array_equal(out[~inside], rgb[~inside]), kind
        assert not np.array_equal(out[inside], rgb[inside]), kind
    assert (apply_masks(rgb, [rect], "fill")[inside] == FILL_RGB).all()


def test_inpaint_of_a_constant_surround_is_that_constant() -> None:
    # 100x80 < 160 px: no resampling, so diffusion from a constant boundary gives exactly the constant.
    rgb = np.full((80, 100, 3), (10, 200, 30), dtype=np.uint8)
    rgb[20:50, 30:70] = np.random.default_rng(1).integers(0, 256, (30, 40, 3), dtype=np.uint8)
    mask = raster([(30, 20, 70, 50)], 100, 80)
    assert (inpaint(rgb, mask) == (10, 200, 30)).all()


def test_inpaint_obeys_the_maximum_principle_on_a_gradient() -> None:
    ramp = np.tile(np.linspace(0, 250, 100).astype(np.uint8)[None, :, None], (80, 1, 3))
    mask = raster([(30, 20, 70, 50)], 100, 80)
    out = inpaint(ramp, mask)[mask].astype(int)
    lo, hi = int(ramp[0, 29, 0]), int(ramp[0, 70, 0])  # values on the left and right borders of the hole
    assert lo <= out.min() and out.max() <= hi


def test_covered_fraction() -> None:
    cover = raster([mask_rect(G.by_id()["3"].box, 300, 200)], 300, 200)  # table rect (125, 105, 235, 175)
    assert covered_fraction(G.by_id()["6"].box, cover) == 0.5  # cup 6 rows 95..115: 105..115 covered
    assert covered_fraction(G.by_id()["1"].box, cover) == 0.0


def _plan(qid: str) -> Plan:
    plan = plan_group(Q[qid], G)
    assert isinstance(plan, Plan), plan
    return plan


def test_query_color_keeps_m_undefined_and_picks_the_closest_area_control() -> None:
    plan = _plan("q02")  # What color is the hat? -> red
    assert plan.dependencies == {"2"} and plan.m.rects == ((31, 26, 69, 54),)  # hat + 4 px
    assert plan.m.removed == {"2"} and plan.m.answer is None
    # M area 38*28 = 1064; candidates not overlapping the hat: cup 4 rect 28*33 = 924 (ratio 1.1515), cup 6
    # 26*28 = 728 (1.4615); man's rect overlaps the hat, table (7700) and chair (6000) are over 3x.
    assert (plan.control_object, plan.area_ratio, plan.control.answer) == ("4", 1.1515, "red")


def test_existence_control_removes_objects_mostly_under_its_mask() -> None:
    plan = _plan("q04")  # Is there a red cup on the table? -> yes
    assert plan.dependencies == {"3", "4", "6"} and plan.m.answer == "no"
    # M union = table rect 110*70 + cup parts above it 28*19 + 26*14 = 8596 px; man rect 74*154 = 11396
    # (ratio 1.3257) beats chair 60*100 (1.4327); the man's rect covers 17/20 rows of the hat -> removed too.
    assert (plan.control_object, plan.area_ratio) == ("1", 1.3257)
    assert plan.control.removed == {"1", "2"} and plan.control.answer == "yes"


def test_m_removes_objects_half_covered_by_the_masks() -> None:
    plan = _plan("q03")  # Is the table wooden? The table rect covers half of cup 6 -> removed with it.
    assert plan.m.removed == {"3", "6"} and plan.m.answer is None


def test_rejections() -> None:
    both = Question(
        "x1",
        "img1",
        "Are there both a hat and a dog?",
        "no",
        (
            Step("select", "hat (2)"),
            Step("exist", "?", (0,)),
            Step("select", "dog (-)"),
            Step("exist", "?", (2,)),
            Step("and", "", (1, 3)),
        ),
    )
    assert plan_group(both, G) == "evidence_not_removed"  # and(no, no) is still "no"
    dog = Question("x2", "img1", "Is there a dog?", "no", (Step("select", "dog (-)"), Step("exist", "?", (0,))))
    assert plan_group(dog, G) == "no_dependencies"
    # Left/right of the table: M masks man + table (74*154 + 110*70 = 19,096 px); the chair's rect (6,000 px) is
    # 3.18x smaller, the cups smaller still (> 3x), the hat's rect overlaps the man's box -> no control.
    assert plan_group(Q["q05"], G) == "no_control"


def test_matched_control_moves_the_m_masks_off_the_evidence() -> None:
    plan = _plan("q02")
    view = matched_control(plan, G, np.random.default_rng([0, 0]))
    assert view is not None and len(view.rects) == 1
    (a, b, c, d), (x0, y0, x1, y1) = view.rects[0], plan.m.rects[0]
    assert (c - a, d - b) == (x1 - x0, y1 - y0)  # same shape, moved
    hat = G.by_id()["2"]
    assert not (a < hat.x + hat.w and hat.x < c and b < hat.y + hat.h and hat.y < d)
    assert view.answer == "red"


@pytest.mark.parametrize("kind", ["fill", "blur", "inpaint"])
def test_masks_are_deterministic(kind: str) -> None:
    rgb = np.random.default_rng(3).integers(0, 256, (200, 300, 3), dtype=np.uint8)
    rects = [(31, 26, 69, 54), (125, 105, 235, 175)]
    assert np.array_equal(apply_masks(rgb, rects, kind), apply_masks(rgb.copy(), rects, kind))
