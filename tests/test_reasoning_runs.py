"""Reasoning models end to end: thinking never changes a score; unfinished thinking is invalid.

What must hold (docs/reasoning.md): a replay in which every final reply is preceded by a thinking span
holding a contradicting draft scores exactly like the replay without thinking (``metrics.json`` identical, byte
for byte); an unfinished span is invalid "reasoning not finished"; a UPD reply that thinks "the answer is B" and
then abstains is a right UPD answer (seed 001 §4 scores the model's answer, not its thinking).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from upd.helpers import respond, row, write_tsv
from vqaudit.cli.build import build_source
from vqaudit.metrics.upd import upd_metrics
from vqaudit.run import run_benchmark
from vqaudit.schema import View
from vqaudit.score import load_outcomes, score_run
from vqaudit.scoring.upd import score_upd_views
from vqaudit.store import load_benchmark
from vqaudit.suites.upd.build import build_upd


@pytest.fixture(scope="module")
def chart_bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reasoning") / "bench"
    build_source("charts", out, {"groups": 8, "seed": 0})
    return out


def _final(view: View) -> str:
    """An imperfect model: right on groups 0 and 1's supported views and on odd groups' negative views."""
    number = int(view.group_id.rsplit("-", 1)[1])
    if view.obligation.supported:
        answer = view.obligation.gold[0] if number in (0, 1) else "0"
        return json.dumps({"answerable": True, "answer": answer, "reason": "read off the chart"})
    if number % 2:
        return json.dumps({"answerable": False, "answer": None, "reason": "the evidence is gone"})
    return json.dumps({"answerable": True, "answer": "1", "reason": "a guess"})


def _contradicting_draft(final: str) -> str:
    """A draft object whose decision is the opposite of the final's."""
    if json.loads(final)["answerable"]:
        return json.dumps({"answerable": False, "answer": None, "reason": "draft: cannot see it"})
    return json.dumps({"answerable": True, "answer": "7", "reason": "draft: guess"})


# each view's thinking in one family's format, cycling (Qwen3 both tags, Qwen3 template-opened, Kimi-VL, Sky-T1)
def _think(k: int, final: str) -> str:
    draft = f"Draft: {_contradicting_draft(final)}. No, look again."
    return [
        f"<think>\n{draft}\n</think>\n\n{final}",
        f"{draft}\n</think>\n\n{final}",
        f"\u25c1think\u25b7{draft}\u25c1/think\u25b7{final}",
        f"<|begin_of_thought|>{draft}<|end_of_thought|><|begin_of_solution|>{final}<|end_of_solution|>",
    ][k % 4]


def _replay(path: Path, views: list[View], reply: Callable[[int, View], str]) -> str:
    path.write_text(
        "".join(json.dumps({"view_id": v.view_id, "text": reply(k, v)}) + "\n" for k, v in enumerate(views)),
        encoding="utf-8",
    )
    return f"replay:{path}"


def _run(bench: Path, spec: str, out: Path) -> dict[str, object]:
    run_benchmark(bench, spec, out, progress=False)
    return score_run(out, n_draws=200)


def test_thinking_with_contradicting_drafts_scores_exactly_like_no_thinking(chart_bench: Path, tmp_path: Path) -> None:
    views = load_benchmark(chart_bench).views
    plain = _run(chart_bench, _replay(tmp_path / "plain.jsonl", views, lambda k, v: _final(v)), tmp_path / "plain")
    thinking = _run(
        chart_bench, _replay(tmp_path / "think.jsonl", views, lambda k, v: _think(k, _final(v))), tmp_path / "think"
    )
    assert (tmp_path / "think" / "metrics.json").read_bytes() == (tmp_path / "plain" / "metrics.json").read_bytes()
    assert plain == thinking
    # by hand: only group 1 is complete (answers right, abstains on M and I): Jk 1/8; the four odd groups make
    # every decision right: Bk 4/8 (seed 000 §4). Read unsplit, thinking once moved this Jk to 0.000.
    entry = thinking["charts"]
    assert isinstance(entry, dict)
    assert (entry["Jk"], entry["Bk"]) == (0.125, 0.5)
    outcomes = load_outcomes(tmp_path / "think")
    assert all(o.reasoning_chars for o in outcomes)
    # every draft contradicts its final: every view's draft was overruled
    assert all(o.draft_decision is not None and o.draft_decision != o.decision for o in outcomes)
    plain_outcomes = {o.view_id: o for o in load_outcomes(tmp_path / "plain")}
    assert all(o.decision == plain_outcomes[o.view_id].decision for o in outcomes)
    assert all(plain_outcomes[o.view_id].reasoning_chars is None for o in outcomes)


def test_unfinished_thinking_is_invalid_reasoning_not_finished(chart_bench: Path, tmp_path: Path) -> None:
    views = load_benchmark(chart_bench).views
    spec = _replay(
        tmp_path / "cut.jsonl",
        views,
        lambda k, v: f"<think>Draft: {_final(v)} and I keep thinking" if k % 2 else _final(v),
    )
    metrics = _run(chart_bench, spec, tmp_path / "cut")
    outcomes = load_outcomes(tmp_path / "cut")
    cut = [o for k, o in enumerate(outcomes) if k % 2]
    assert cut and all(o.decision == "invalid" and o.invalid_reason == "reasoning not finished" for o in cut)
    assert all(o.decision != "invalid" for k, o in enumerate(outcomes) if not k % 2)
    entry = metrics["charts"]
    assert isinstance(entry, dict)
    assert entry["invalid_rate"] == pytest.approx(len(cut) / len(outcomes))
    diagnostics = json.loads((tmp_path / "cut" / "diagnostics.json").read_text())
    assert diagnostics["charts"]["invalid_reasons"] == {"reasoning not finished": len(cut)}


def test_think_then_abstain_is_a_right_upd_answer(tmp_path: Path) -> None:
    rows = [
        row(1, "What colour is the car?", ["red", "blue", "green", "pink"], "B", "attribute_recognition"),
        row(2, "Who is the person?", ["Jackie Chan", "Steve Jobs"], "A", "celebrity_recognition"),
    ]
    out = tmp_path / "bench"
    build_upd(out, tsv=write_tsv(tmp_path / "one.tsv", rows), variant="aad", setting="base", seed=0)
    views = [v for v in load_benchmark(out).views if v.meta["item_index"] == 1]

    def plain(v: View) -> str:
        return v.obligation.gold[0] if v.state == "standard" else "None of the above"

    def thinking(v: View) -> str:
        return f"<think>The car looks blue, so the answer is B. But is B there?</think>{plain(v)}"

    results = []
    for reply in (plain, thinking):
        outcomes = score_upd_views(views, respond(views, reply), run_dir=tmp_path, judge=None)
        m = upd_metrics(outcomes, views, n_draws=0, seed=0)["configs"]["aad/base"]
        results.append((m["standard"], m["upd"], m["dual"]))
    # hand reading: every standard view names its gold letter, every UPD view abstains -> 1.0 / 1.0 / 1.0
    assert results == [(1.0, 1.0, 1.0), (1.0, 1.0, 1.0)]
    unfinished = score_upd_views(
        views, respond(views, lambda v: "<think>the answer is B"), run_dir=tmp_path, judge=None
    )
    assert {(o.decision, o.invalid_reason) for o in unfinished} == {("invalid", "reasoning not finished")}


def test_replies_cut_inside_a_template_opened_span_are_unfinished(chart_bench: Path, tmp_path: Path) -> None:
    # Qwen3 behind a server without a reasoning parser: the template opened <think>, so a finished reply holds only
    # "</think>", and a reply the budget cut (finish_reason "length") holds no tag at all, only the draft. The
    # replay records the finish reason as the server sent it.
    views = load_benchmark(chart_bench).views

    def line(k: int, v: View) -> dict[str, object]:
        if v.state == "M":
            draft = _contradicting_draft(_final(v))
            return {
                "view_id": v.view_id,
                "text": f"The queried bar is covered. Draft: {draft}. Hmm, but maybe",
                "finish_reason": "length",
            }
        return {"view_id": v.view_id, "text": f"ok.</think>\n\n{_final(v)}", "finish_reason": "stop"}

    path = tmp_path / "cut.jsonl"
    path.write_text("".join(json.dumps(line(k, v)) + "\n" for k, v in enumerate(views)), encoding="utf-8")
    metrics = _run(chart_bench, f"replay:{path}", tmp_path / "cut")
    outcomes = load_outcomes(tmp_path / "cut")
    assert {(o.decision, o.invalid_reason) for o in outcomes if o.state == "M"} == {
        ("invalid", "reasoning not finished")
    }
    assert all(o.decision != "invalid" for o in outcomes if o.state != "M")
    entry = metrics["charts"]
    assert isinstance(entry, dict) and entry["invalid_rate"] == pytest.approx(8 / 40)  # the 8 M views of 40
    sealed = json.loads((tmp_path / "cut" / "scored.json").read_text())
    assert sealed["reasoning_format"] == "auto:think-open"  # what the replies were split by, sealed
