"""The chart renderer's reused figures give the bytes of a fresh figure (issue 19, item 1).

``render`` draws only the data artists over a cached background in one reused figure per axes rectangle; the
certificates' pixel checks need the exact pixels of the one-shot ``canvas.draw()`` of a fresh figure. The expected
image digests below were recorded from the build of the renderer before the reuse (main at 528ebe8,
``build_charts(out, 30, 7, programs="all", determined=True)``), one group per chart kind and series count.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import numpy as np
import pytest

from vqaudit.store import sha256_bytes
from vqaudit.suites.charts.build import build_group
from vqaudit.suites.charts.render import _draw_reference, render
from vqaudit.suites.charts.tables import TABLE_NAMES, load_table
from vqaudit.suites.charts.world import CHART_KINDS, World, sample_world

# group id -> SHA-256 over "path=sha256;" of its images, sorted by path (main 528ebe8, seed 7, all programs, D views)
MAIN_IMAGES = {
    "charts-00000": "9e280777a9c5b7b91ff073293e6cec290ddd73b3fafb38eb294dd1a87fbebd8f",  # line, 2 series
    "charts-00001": "ff09f8ee973581eb6682e78dadec94236c607765aeacb79bde8a70e605784134",  # dot, 1
    "charts-00002": "6369a97009ab0d90cf2e65d355952328e04aaa68aab1f2a509af1f4a46c26357",  # hbar, 1
    "charts-00003": "86544304abe040cc20277fcca61f31cd5ebd67908b7e173ae03a2947d45908ed",  # dot, 2
    "charts-00004": "123052c36af8b5a4481597d81f13413b856df706e713834dece0dd90dd67b052",  # vbar, 1
    "charts-00005": "71aab940c436bbd78638e83078ed611411b09331c4c1b3244b728cb91fddde54",  # hbar, 2
    "charts-00006": "8e82017e110451e5a1c4183e42a5727fcdcf6a13bcc72edc0fc9950e470c54a4",  # vbar, 2
    "charts-00008": "7fd155f54eeece3092b3f77ee3ed28896e8cc06133089b56f2d9203f84bd62a0",  # line, 1
}


def _digest(images: dict[str, bytes]) -> str:
    return hashlib.sha256("".join(f"{p}={sha256_bytes(b)};" for p, b in sorted(images.items())).encode()).hexdigest()


def test_groups_of_every_kind_give_the_images_of_the_renderer_before_the_reuse() -> None:
    # built out of order, so each figure switches layouts and kinds between groups
    for gid in ("charts-00005", "charts-00000", "charts-00002", "charts-00008", "charts-00001", "charts-00006",
                "charts-00003", "charts-00004"):
        build = build_group(7, int(gid[-5:]), programs="all", determined=True)
        assert _digest(build.images) == MAIN_IMAGES[gid], gid


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
