"""The UPD judge is shown the candidate's final answer and is read after its own thinking (``replay:`` judges).

The judge's letters for a standard view of the ``base`` setting with 4 options (``prompts.upd.judge_options``,
appendix 0.C.1 Fig. C): A-D the view's options, E the variant's abstention option, F "none of them".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shortanswer.helpers import ScriptedBackend
from upd.helpers import respond, row, write_tsv
from vqaudit.errors import VqauditError
from vqaudit.schema import View
from vqaudit.scoring.upd import parse_judge_reply, score_upd_views
from vqaudit.store import load_benchmark
from vqaudit.suites.upd.build import build_upd

UNDECIDED = "A man is riding a horse."  # no letter, no option text, no abstention: the matcher leaves it to a judge


@pytest.fixture
def views(tmp_path: Path) -> list[View]:
    rows = [
        row(1, "What colour is the car?", ["red", "blue", "green", "pink"], "B", "attribute_recognition"),
        row(2, "Which animal is it?", ["cat", "dog", "bird", "fish"], "C", "attribute_recognition"),
    ]
    build_upd(tmp_path / "bench", tsv=write_tsv(tmp_path / "items.tsv", rows), variant="aad", setting="base", seed=0)
    return [v for v in load_benchmark(tmp_path / "bench").views if v.state == "standard" and v.meta["rotation"] == 0]


def _replay(path: Path, views: list[View], text: str) -> str:
    path.write_text("".join(json.dumps({"view_id": v.view_id, "text": text}) + "\n" for v in views), encoding="utf-8")
    return f"replay:{path}"


def test_a_thinking_judge_is_read_after_its_thinking(tmp_path: Path, views: list[View]) -> None:
    spec = _replay(tmp_path / "judge.jsonl", views, "<think>The reply could mean option B... or F.</think>\n\nE")
    outcomes = score_upd_views(
        views, respond(views, lambda v: f"<think>Surely B.</think>{UNDECIDED}"), run_dir=tmp_path / "run", judge=spec
    )
    # E: the abstention option; the thinking's B and F are never read
    assert {(o.decision, o.decided_by) for o in outcomes} == {("abstain", f"judge:{spec}")}


def test_the_judge_is_shown_the_final_answer_not_the_thinking(tmp_path: Path, views: list[View]) -> None:
    judge = ScriptedBackend(lambda r: "F")
    score_upd_views(
        views,
        respond(views, lambda v: f"<think>Surely it is B.</think>{UNDECIDED}"),
        run_dir=tmp_path / "run",
        judge="scripted:test",
        judge_backend=judge,
    )
    assert len(judge.requests) == len(views) == 2
    assert all(UNDECIDED in r.prompt and "Surely" not in r.prompt for r in judge.requests)


def test_a_judge_that_never_finishes_thinking_stops_scoring_and_says_why(tmp_path: Path, views: list[View]) -> None:
    thinking = "<think>Let me look at each option in turn. Option A is " + "red " * 80
    spec = _replay(tmp_path / "judge.jsonl", views, thinking)
    with pytest.raises(VqauditError) as info:
        score_upd_views(views, respond(views, lambda v: UNDECIDED), run_dir=tmp_path / "run", judge=spec)
    message = str(info.value)
    assert (
        f"judge {spec}: no verdict could be read from any of its 2 replies: 2 of them reasoning never finished"
        in message
    )
    assert repr(thinking[:200]) + "..." in message and str(tmp_path / "run" / "judge.sqlite") in message


def test_an_unreadable_judge_shows_one_reply(tmp_path: Path, views: list[View]) -> None:
    spec = _replay(tmp_path / "judge.jsonl", views, "<think>F</think>I would rather not say.")
    with pytest.raises(
        VqauditError,
        match=r"none says yes or no, or names an option; one reply, as stored in .*"
        r"'<think>F</think>I would rather not say.'",
    ):
        score_upd_views(views, respond(views, lambda v: UNDECIDED), run_dir=tmp_path / "run", judge=spec)


def test_one_readable_verdict_is_enough(tmp_path: Path, views: list[View]) -> None:
    # the rule stops only a judge that gives no verdict at all; an unfinished reply among readable ones is undecided
    first = views[0].view_id
    judge = ScriptedBackend(lambda r: "E" if r.request_id == first else "<think>hmm")
    outcomes = score_upd_views(
        views, respond(views, lambda v: UNDECIDED), run_dir=tmp_path / "run", judge="scripted:test", judge_backend=judge
    )
    by_id = {o.view_id: o for o in outcomes}
    assert by_id[first].decision == "abstain"
    assert by_id[views[1].view_id].invalid_reason == "judge scripted:test reply: reasoning not finished"


@pytest.mark.parametrize(
    ("reply", "meaning"),
    [
        ("<think>A? The car is blue.</think>B", "option:B"),  # Qwen3
        ("The reply names no colour, so F.\n</think>\n\nE", "abstain"),  # template-opened span
        ("\u25c1think\u25b7C\u25c1/think\u25b7The answer is (F)", "none"),  # Kimi-VL
        ("<think>B</think><answer><|begin_of_box|>A<|end_of_box|></answer>", "option:A"),  # GLM-4.5V
        ("<think>B", "undecided"),  # never finished
    ],
)
def test_parse_judge_reply_reads_the_final_text(views: list[View], reply: str, meaning: str) -> None:
    assert parse_judge_reply(views[0], reply, "j").meaning == meaning


def test_parse_judge_reply_with_reasoning_sent_apart(views: list[View]) -> None:
    assert parse_judge_reply(views[0], "C", "j", server_reasoning="Maybe A.").meaning == "option:C"
    verdict = parse_judge_reply(views[0], None, "j", server_reasoning="Maybe A, or")
    assert (verdict.meaning, verdict.note) == ("undecided", "judge j reply: reasoning not finished")
