"""The chart renderer's reused figures give the pixels of a fresh figure, byte for byte.

``render`` draws only the data artists over a cached background (axes, ticks, title, legend) in one reused figure
per axes rectangle; the certificates' pixel checks need the exact pixels of the one-shot ``canvas.draw()`` of a
fresh figure. The expected digests below are of the decoded pixels of the images of the renderer before the reuse
(main at 528ebe8, ``build_charts(out, 30, 7, programs="all", determined=True)``; the PNG bytes of that build were
recorded here first, and main at 0878cd5 reproduced them byte for byte before its pixels were hashed), one group
per chart kind and series count. Pixels, not PNG bytes: renderer /2 changed the PNG encoding, not the pixels.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import numpy as np
import pytest

from vqaudit.suites.charts.build import build_group
from vqaudit.suites.charts.png import decode_png, pixel_sha256
from vqaudit.suites.charts.render import (
    _PIXELS,
    _Canvas,
    _draw_reference,
    _pixel_rect,
    render,
)
from vqaudit.suites.charts.tables import TABLE_NAMES, load_table
from vqaudit.suites.charts.world import CHART_KINDS, World, sample_world

# group id -> SHA-256 over "path=pixel_sha256;" of its images, sorted by path (seed 7, all programs, D views)
MAIN_PIXELS = {
    "charts-00000": "14e699851f9bd58e4d872ecdcc44b99a5aaa44acaceca9ae2a727afb1dfceaec",  # line, 2 series
    "charts-00001": "6e9b256c4d53572b898ae5fa96759cb4d21876d8e71978414cfe67e8ceca1b59",  # dot, 1
    "charts-00002": "04c37af78fb1d843ac1a22861e7503adcd3d70b282f42a862d6d328c075cfaad",  # hbar, 1
    "charts-00003": "6029c1f3ac61b38f46466950c010c29347e2d21d9937b51182867fdbd6ca5d6c",  # dot, 2
    "charts-00004": "c91ed3bb7a595df3e7ca95dd2f9ca89981e7b3557fbefd20c4b46ffca3592303",  # vbar, 1
    "charts-00005": "b73f568d216d0951fea52ee6b3a7b84543f26bc1548714f9bfa8325f834c7380",  # hbar, 2
    "charts-00006": "9e00ddfbc3bdcd7d73c4324afa3ada5cac94a1a1dfec751056e4d039c2d971eb",  # vbar, 2
    "charts-00008": "cf9893560a3e90ebbbb7d3e94aad1eb5c94a92f421b66c5ba1edb6f4d01fbff7",  # line, 1
}


def _digest(images: dict[str, bytes]) -> str:
    pixels = "".join(f"{p}={pixel_sha256(decode_png(b))};" for p, b in sorted(images.items()))
    return hashlib.sha256(pixels.encode()).hexdigest()


def test_groups_of_every_kind_give_the_pixels_of_the_renderer_before_the_reuse() -> None:
    # built out of order, so each figure switches layouts and kinds between groups
    for gid in (
        "charts-00005",
        "charts-00000",
        "charts-00002",
        "charts-00008",
        "charts-00001",
        "charts-00006",
        "charts-00003",
        "charts-00004",
    ):
        build = build_group(7, int(gid[-5:]), programs="all", determined=True)
        assert _digest(build.images) == MAIN_PIXELS[gid], gid


def _worlds() -> list[World]:
    rng = np.random.default_rng(19)
    out: list[World] = []
    for kind in CHART_KINDS:
        for n_series in (1, 2):
            for name in TABLE_NAMES:
                table = load_table(name)
                if n_series > len(table.series):
                    continue
                world = sample_world(table, kind, n_series, int(rng.integers(4, 8)), rng)
                if world is not None:
                    out.append(world)
                    break
    return out


def test_reused_figure_equals_a_fresh_figure_for_every_kind_with_and_without_value_labels() -> None:
    worlds = _worlds()
    assert {w.kind for w in worlds} == set(CHART_KINDS)
    # the value-label row (a leak the checker must catch) is per-world text drawn after the title
    cases = [*worlds, *(replace(w, value_labels=True) for w in worlds)]
    for w in [*cases, *reversed(cases)]:  # every layout is shown again after others were
        edited = w.with_value(0, 1, w.values[0][0])
        for x in (w, edited):
            assert np.array_equal(render(x), _draw_reference(x)), (x.kind, len(x.series), x.value_labels)


def test_render_output_is_read_only_so_the_memo_cannot_be_corrupted() -> None:
    world = _worlds()[0]
    pixels = render(world)
    with pytest.raises(ValueError):
        pixels[0, 0] = 0
    assert render(world) is pixels


def test_a_layout_that_differs_only_in_category_names_is_redrawn_from_the_last_one_exactly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a group's invalid-reference world (I) has the original's layout with one category replaced: its background
    # is made from the original's by redrawing only the category texts; it must equal a fresh figure's pixels
    composed: list[tuple[str, bool]] = []
    redraw = _Canvas._redraw_categories

    def spy(self: _Canvas, world: World) -> bool:
        done = redraw(self, world)
        composed.append((world.kind, done))
        return done

    monkeypatch.setattr(_Canvas, "_redraw_categories", spy)
    kinds: set[str] = set()
    for g in range(12):
        build = build_group(5, g, programs="all", determined=True)
        invalid = next(v for v in build.views if v.state == "I")
        world = World.from_json(invalid.meta["world"])
        original = World.from_json(next(v for v in build.views if v.state == "original").meta["world"])
        assert world.categories != original.categories and len(world.categories) == len(original.categories)
        render(original)  # show the original's layout again (the build's last render was I itself)
        _PIXELS.pop(world, None)
        assert np.array_equal(render(world), _draw_reference(world)), (g, world.kind)
        kinds.add(world.kind)
    assert kinds == set(CHART_KINDS)
    assert {kind for kind, done in composed if done} == set(CHART_KINDS)  # the redraw path ran for every kind


def test_pixel_rect_covers_the_box_and_margin_in_whole_pixels_inside_the_figure() -> None:
    from matplotlib.transforms import Bbox

    # floor(10.2 - 1.5), floor(20.7 - 1.5), ceil(30.5 + 1.5), ceil(40.0 + 1.5)
    assert _pixel_rect(Bbox.from_extents(10.2, 20.7, 30.5, 40.0), 1.5) == (8, 19, 32, 42)
    assert _pixel_rect(Bbox.from_extents(-5.0, -3.0, 700.0, 500.0), 1.5) == (0, 0, 640, 480)  # clipped
