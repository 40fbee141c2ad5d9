"""The chart reader abstains ("cannot read the value axis") when it cannot read a chart's value axis, instead of
claiming the view answerable with a null answer: on a 12-group build (seed 12) the horizontal-bar chart of group 4
had its masked (M) and invalid-reference (I) views both "answered" that way."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest
from tests.backends.test_chart_reader import _request, _world

from vqaudit.backends import load_backend
from vqaudit.prompts.answerability import answerability_prompt
from vqaudit.store import load_benchmark
from vqaudit.suites.charts.build import build_charts
from vqaudit.suites.charts.png import png_bytes
from vqaudit.suites.charts.render import render

AXIS_PROBLEM = "cannot read the value axis (no numeric value axis could be read from the tick labels)"


def _ask(backend: object, question: str, png: bytes) -> dict[str, object]:
    reply = asyncio.run(backend.complete(_request(answerability_prompt(question), png)))  # type: ignore[attr-defined]
    out: dict[str, object] = json.loads(reply)
    return out


def test_a_chart_whose_tick_labels_are_erased_is_abstained_on() -> None:
    pytest.importorskip("rapidocr")
    backend = load_backend("baseline:chart-reader")
    pixels = render(_world()).copy()
    pixels[:, :66] = 255  # the vbar frame's left edge is column 70 (test_chart_reader): erase the tick labels
    reply = _ask(backend, "What is the value of 1950 for Feb, in %?", png_bytes(pixels))
    assert reply == {"answerable": False, "answer": None, "reason": AXIS_PROBLEM}
    # the same chart with its labels is read (the world's Feb value for 1950 is 11/2)
    assert _ask(backend, "What is the value of 1950 for Feb, in %?", png_bytes(render(_world())))["answer"] == "5.5"


def test_a_blank_image_is_abstained_on() -> None:
    pytest.importorskip("rapidocr")
    backend = load_backend("baseline:chart-reader")
    reply = _ask(
        backend, "What is the value of 1950 for Feb, in %?", png_bytes(np.full((480, 640, 3), 255, dtype=np.uint8))
    )
    assert reply == {
        "answerable": False,
        "answer": None,
        "reason": "cannot read the value axis (no plot frame (axis lines) found)",
    }


@pytest.mark.slow
def test_the_seed_12_horizontal_bar_chart(tmp_path: Path) -> None:
    pytest.importorskip("rapidocr")
    bench = tmp_path / "bench"
    build_charts(bench, 12, 12, workers=1)
    loaded = load_benchmark(bench)
    group = next(g for g in loaded.groups if g.group_id == "charts-00004")
    assert group.meta["kind"] == "hbar"
    backend = load_backend("baseline:chart-reader")
    views = [v for v in loaded.views if v.group_id == group.group_id]
    replies = {v.state: _ask(backend, v.question, (bench / v.image).read_bytes()) for v in views}
    assert replies == {
        state: {"answerable": False, "answer": None, "reason": AXIS_PROBLEM}
        for state in ("original", "S", "C", "M", "I")
    }
