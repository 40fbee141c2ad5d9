"""The OCR chart reader's parts: question and prompt parsing, label matching, axis fit, grid, pixels.

Values are hand-computed from the definitions, or known from the renderer's layout (render.py draws every chart
with the same axes rectangle, so the frame and mask pixels are fixed numbers).
"""

from __future__ import annotations

import asyncio
import json
from fractions import Fraction
from pathlib import Path

import pytest

from vqaudit.backends import BackendCallError, GenerationParams, Request, load_backend
from vqaudit.backends.chart_reader.axis import Axis, fit_axis, parse_number
from vqaudit.backends.chart_reader.chart import normalize_label
from vqaudit.backends.chart_reader.layout import find_fills, find_frame, mask_bands, ticks_below, ticks_left
from vqaudit.backends.chart_reader.measure import choose_grid, snap_value
from vqaudit.backends.chart_reader.reader import answer_text, parse_lookup
from vqaudit.errors import VqauditError
from vqaudit.prompts.answerability import ANSWERABILITY_PROMPT_ID, answerability_prompt, question_from_prompt
from vqaudit.schema import Obligation, View
from vqaudit.suites.charts.masks import apply_mask, category_mask
from vqaudit.suites.charts.png import png_bytes
from vqaudit.suites.charts.render import render
from vqaudit.suites.charts.world import World

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "chartqa"
FIXTURE = FIXTURE / "OECD_DEATHS_FROM_CANCER_COL_CRI_SVN_000015.png"


def _world(kind: str = "vbar") -> World:
    f = Fraction
    return World(
        table="unemployment",
        kind=kind,
        title="Unemployment",
        category_label="Month",
        value_label="Rate",
        unit="%",
        categories=("Jan", "Feb", "Mar", "Apr"),
        series=("1950", "1975"),
        values=((f(4), f(11, 2), f(7), f(3)), (f(6), f(2), f(19, 2), f(12))),
        axis_lo=f(0),
        axis_hi=f(12),
        grid_step=f(1, 2),
        tick_step=f(2),
    )


def test_parse_lookup_every_split() -> None:
    # the chart suite's lookup form; a name containing " for " gives one candidate per split
    assert parse_lookup("What is the value of Poverty rate for Iowa, in %?") == [("Poverty rate", "Iowa")]
    assert parse_lookup("What is the value of A for B for C?") == [("A", "B for C"), ("A for B", "C")]
    assert parse_lookup("Which month has the largest value of 1950?") == []


def test_question_from_prompt_inverts_the_builder() -> None:
    q = "What is the value of 1950 for Jan, in %?"
    assert question_from_prompt(answerability_prompt(q)) == q
    assert question_from_prompt("What is the value of 1950 for Jan?") is None
    assert question_from_prompt(answerability_prompt(q) + "\nExtra line") is None


def test_normalize_label_reads_ocr_confusions_but_keeps_digits() -> None:
    assert normalize_label("lowa") == normalize_label("Iowa")  # OCR reads capital I as l
    assert normalize_label("January2006") == normalize_label("January 2006")
    assert normalize_label("1952") != normalize_label("1957")
    assert normalize_label("No. 457") == "no457"


def test_parse_number_exact() -> None:
    assert parse_number("1,500") == 1500
    assert parse_number("2.5") == Fraction(5, 2)
    assert parse_number("\u22125") == -5
    assert parse_number("301a") is None and parse_number("Share (%)") is None


def test_fit_axis_hand_computed_and_robust_to_a_misread_label() -> None:
    # ticks every 26 px from row 365 (value 0) up to row 287 (value 30); value = (365 - row) * 10 / 26
    points = [
        (365.0, Fraction(0)),
        (339.0, Fraction(10)),
        (313.0, Fraction(20)),
        (287.0, Fraction(30)),
        (313.0, Fraction(301)),
    ]  # OCR read "30" plus a tick mark as "301" at the wrong tick
    axis = fit_axis(points, 26.0)
    assert axis is not None
    assert axis.b == pytest.approx(-10 / 26) and axis.a == pytest.approx(3650 / 26)
    assert axis.step == 10 and axis.origin == 0
    # labels on every third tick only (0, 30, 60): the tick marks' spacing divides the step down to 10
    skipped = fit_axis([(365.0, Fraction(0)), (287.0, Fraction(30)), (209.0, Fraction(60))], 26.0)
    assert skipped is not None and skipped.step == 10


def test_choose_grid_picks_the_coarsest_grid_every_mark_fits() -> None:
    axis = Axis(a=0.0, b=0.1, origin=Fraction(0), step=Fraction(10), ticks=())  # 10 px per value unit
    # 12.5 and 30.0 (+0.02 px noise): not on the grid of 5 (12.5 is 25 px off), on the grid of 2.5 (d = 4)
    assert choose_grid(axis, [12.5, 30.002]) == Fraction(5, 2)
    assert choose_grid(axis, [20.0, 40.0]) == 10
    assert snap_value(axis, Fraction(5, 2), 12.43) == Fraction(25, 2)
    assert answer_text(Fraction(25, 2)) == "12.5" and answer_text(Fraction(3000)) == "3000"


@pytest.mark.parametrize("kind", ["vbar", "hbar"])
def test_frame_ticks_and_mask_from_pixels(kind: str) -> None:
    world = _world(kind)
    mask = category_mask(world, 0, "slot")  # the first category: the mask hides a spine of the frame
    px = apply_mask(render(world), mask)
    fills = find_fills(px)
    frame = find_frame(px, fills)
    assert frame is not None
    # render.py's axes rectangle: vbar (0.11, 0.24, 0.85, 0.60) of 640x480 -> columns 70..614, rows 77..365
    # and hbar (0.30, 0.10, 0.64, 0.74) -> columns 192..602, rows 77..432. In the hbar chart the mask over the
    # first category also covers the top spine: its top is then the mask's first row, 76 (floor of 76.8).
    expected = (70, 77, 614, 365) if kind == "vbar" else (192, 76, 602, 432)
    assert (frame.left, frame.top, frame.right, frame.bottom) == expected
    clean = find_frame(render(world))
    assert clean is not None and (clean.top, clean.bottom) == ((77, 365) if kind == "vbar" else (77, 432))
    vertical = kind == "vbar"
    band = (mask.x0, mask.x1) if vertical else (mask.y0, mask.y1)
    assert mask_bands(fills, frame, vertical) == [band]
    assert len(ticks_left(px, frame)) == (7 if vertical else 4)  # 0, 2, ..., 12 or the four categories
    assert len(ticks_below(px, frame)) == (4 if vertical else 7)
    assert mask_bands(find_fills(render(world)), frame, vertical) == []


def _request(prompt: str, image: bytes | None, prompt_id: str = ANSWERABILITY_PROMPT_ID) -> Request:
    view = View(
        view_id="v",
        group_id="g",
        source="charts",
        state="original",
        image="i.png",
        image_sha256="0" * 64,
        question="q",
        obligation=Obligation(kind="abstain"),
    )
    return Request(
        request_id=view.view_id,
        prompt_id=prompt_id,
        prompt=prompt,
        image=image,
        image_mime=None if image is None else "image/png",
        params=GenerationParams(),
    )


def test_backend_spec_and_refusals() -> None:
    pytest.importorskip("rapidocr")
    with pytest.raises(VqauditError, match="unknown baseline"):
        load_backend("baseline:table-reader")
    backend = load_backend("baseline:chart-reader")
    assert backend.spec == "baseline:chart-reader"
    png = png_bytes(render(_world()))
    with pytest.raises(BackendCallError, match="answerability prompt only") as exc:
        asyncio.run(backend.complete(_request("Answer with a letter.", png, "upd-base")))
    assert exc.value.fatal
    lookup = answerability_prompt("What is the value of 1950 for Jan, in %?")
    with pytest.raises(BackendCallError, match="needs the chart image") as exc:
        asyncio.run(backend.complete(_request(lookup, None)))
    assert exc.value.fatal
    with pytest.raises(BackendCallError, match="lookup questions only") as exc:
        asyncio.run(backend.complete(_request(answerability_prompt("Is there a red cube?"), png)))
    assert not exc.value.fatal
    with pytest.raises(BackendCallError, match="does not decode") as exc:
        asyncio.run(backend.complete(_request(lookup, b"\x89PNG not really")))
    assert not exc.value.fatal


def test_backend_reads_a_rendered_chart_exactly() -> None:
    pytest.importorskip("rapidocr")
    backend = load_backend("baseline:chart-reader")
    world = _world()
    png = png_bytes(render(world))
    asked = {("1950", "Feb"): "5.5", ("1975", "Mar"): "9.5", ("1975", "Apr"): "12"}  # the world's own cells
    for (series, cat), gold in asked.items():
        reply = json.loads(
            asyncio.run(
                backend.complete(_request(answerability_prompt(f"What is the value of {series} for {cat}, in %?"), png))
            )
        )
        assert reply["answerable"] is True and reply["answer"] == gold, reply
    masked = png_bytes(apply_mask(render(world), category_mask(world, 1, "slot")))
    reply = json.loads(
        asyncio.run(
            backend.complete(_request(answerability_prompt("What is the value of 1950 for Feb, in %?"), masked))
        )
    )
    assert reply == {"answerable": False, "answer": None, "reason": "the mark of 1950 at Feb is covered by a mask"}
    reply = json.loads(
        asyncio.run(backend.complete(_request(answerability_prompt("What is the value of 1950 for Dec, in %?"), png)))
    )
    assert reply["answerable"] is False and "not among" in reply["reason"]


def test_real_chartqa_image_is_read_without_crashing() -> None:
    pytest.importorskip("rapidocr")
    backend = load_backend("baseline:chart-reader")
    prompt = answerability_prompt("What is the value of Deaths from cancer for Colombia?")
    reply = json.loads(asyncio.run(backend.complete(_request(prompt, FIXTURE.read_bytes()))))
    # the contract of seed 000, appendix A: a boolean, an answer or null, a nonempty reason
    assert set(reply) == {"answerable", "answer", "reason"} and isinstance(reply["answerable"], bool)
    assert reply["reason"].strip()
    assert reply["answer"] is None or parse_number(str(reply["answer"])) is not None


def test_run_refuses_a_non_chart_benchmark_before_asking(tmp_path: Path) -> None:
    """The chart reader answers chart views only (its backend row: ``sources=("charts",)``): a scenes benchmark is
    refused by ``run`` with one line before anything is loaded or written (new-user trial: it used to fail every
    view and stop early with "Is the server up?")."""
    from vqaudit.errors import VqauditError
    from vqaudit.run import run_benchmark
    from vqaudit.suites.scenes.build import build_scenes

    bench = tmp_path / "scenes"
    build_scenes(bench, n_groups=1, seed=0)
    with pytest.raises(VqauditError) as info:
        run_benchmark(bench, "baseline:chart-reader", tmp_path / "run", progress=False)
    assert str(info.value) == (
        f"model spec 'baseline:chart-reader' answers only charts views; {bench} holds scenes views"
    )
    assert not (tmp_path / "run").exists()
