"""UPD scoring: matcher first, stub judge only for undecided replies, circular evaluation and Dual accuracy.

Seed 001, §4 "Evaluation Metrics" and appendix 0.C.1.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from upd.helpers import respond, row, write_tsv
from vqaudit.backends.base import Request
from vqaudit.backends.reference import reference_reply
from vqaudit.metrics.upd import upd_metrics
from vqaudit.schema import View
from vqaudit.scoring.upd import score_upd_views
from vqaudit.store import JUDGE_FILE, load_benchmark
from vqaudit.suites.upd.build import build_upd


class StubJudge:
    """A judge backend that records which views it was asked about and answers a fixed letter per view."""

    def __init__(self, answers: dict[str, str]) -> None:
        self.spec = "stub:judge"
        self.answers = answers
        self.asked: list[str] = []
        self.temperatures: list[float] = []
        self.images: list[bytes | None] = []

    async def complete(self, request: Request) -> str:
        self.asked.append(request.request_id)
        self.temperatures.append(request.params.temperature)
        self.images.append(request.image)
        return self.answers[request.request_id]

    async def aclose(self) -> None:
        return None


def _one_item(tmp_path: Path, variant: str = "aad", setting: str = "base") -> list[View]:
    """The views of item 1 (4 options, answer B); item 2 only lends its image or options (IASD/IVQD)."""
    rows = [
        row(1, "What colour is the car?", ["red", "blue", "green", "pink"], "B", "attribute_recognition"),
        row(2, "Who is the person?", ["Jackie Chan", "Steve Jobs"], "A", "celebrity_recognition"),
    ]
    out = tmp_path / f"bench-{variant}-{setting}"
    build_upd(out, tsv=write_tsv(tmp_path / "one.tsv", rows), variant=variant, setting=setting, seed=0)
    return [v for v in load_benchmark(out).views if v.meta["item_index"] == 1]


def test_circular_evaluation_fails_an_item_when_one_rotation_fails(tmp_path: Path) -> None:
    # Hand-made item: 4 options -> 4 standard and 3 AAD rotations (0.C.1). Rotation 2 of the standard question is
    # answered wrongly, every other view is right: Standard 0, UPD 1, Dual 0 (hand-computed).
    views = _one_item(tmp_path)
    std = [v for v in views if v.state == "standard"]
    assert [v.obligation.gold[0] for v in std] == ["B", "A", "D", "C"]  # "blue" at index 1, rotated left

    def reply(v: View) -> str:
        if v.state == "standard":
            return "A" if v.meta["rotation"] == 2 else v.obligation.gold[0]
        return "None of the above"

    outcomes = score_upd_views(views, respond(views, reply), run_dir=tmp_path, judge=None)
    m = upd_metrics(outcomes, views, n_draws=0, seed=0)["configs"]["aad/base"]
    assert (m["standard"], m["upd"], m["dual"], m["n_items"]) == (0.0, 1.0, 0.0, 1)
    good = score_upd_views(
        views,
        respond(views, lambda v: v.obligation.gold[0] if v.state == "standard" else "blue"),
        run_dir=tmp_path,
        judge=None,
    )
    m = upd_metrics(good, views, n_draws=0, seed=0)["configs"]["aad/base"]
    # "blue" is the removed correct option's text: a right UPD reply (0.C.1).
    assert (m["standard"], m["upd"], m["dual"]) == (1.0, 1.0, 1.0)


def test_always_abstain_scores_upd_100_and_standard_0(small_views: list[View], tmp_path: Path) -> None:
    # The reference always-abstain policy (JSON answerable:false replies) -> UPD 100%, Standard 0% (seed 001 §4).
    responses = respond(small_views, lambda v: reference_reply("always-abstain", v.obligation))
    outcomes = score_upd_views(small_views, responses, run_dir=tmp_path, judge=None)
    metrics = upd_metrics(outcomes, small_views, n_draws=200, seed=0)
    for config in metrics["configs"].values():
        assert config["standard"] == 0.0
        assert config["upd"] in (None, 1.0) and config["dual"] in (None, 0.0)
    assert {o.decided_by for o in outcomes} == {"matcher:json-abstain"}


def test_gold_policy_scores_100_everywhere(small_views: list[View], tmp_path: Path) -> None:
    # reference:gold answers the gold letter in JSON and abstains on UPD views: a check of the scoring path.
    responses = respond(small_views, lambda v: reference_reply("gold", v.obligation))
    outcomes = score_upd_views(small_views, responses, run_dir=tmp_path, judge=None)
    for config in upd_metrics(outcomes, small_views, n_draws=0, seed=0)["configs"].values():
        assert config["standard"] == 1.0 and config["upd"] in (None, 1.0)


def test_dual_never_exceeds_standard_or_upd(small_views: list[View], tmp_path: Path) -> None:
    # Dual counts items right in both questions (seed 001, §4), so Dual <= min(Standard, UPD) on every run;
    # checked on 5 random-reply runs, overall and per ability, and on the bootstrap interval ends.
    for seed in range(5):
        rng = np.random.default_rng(seed)
        p_right = rng.uniform(0.6, 1.0)

        def reply(v: View, rng: np.random.Generator = rng, p: float = p_right) -> str:
            right = rng.random() < p
            if v.obligation.kind == "abstain":
                return "None of the above" if right else "A"
            return v.obligation.gold[0] if right else "I cannot answer"

        outcomes = score_upd_views(small_views, respond(small_views, reply), run_dir=tmp_path, judge=None)
        metrics = upd_metrics(outcomes, small_views, n_draws=100, seed=seed)
        assert metrics["dual_le_min"]
        for config in metrics["configs"].values():
            for cell in [config, *config["per_ability"].values()]:
                if cell["dual"] is not None:
                    assert cell["dual"] <= min(cell["standard"], cell["upd"])


def test_stub_judge_is_asked_only_where_the_matcher_cannot_decide(tmp_path: Path) -> None:
    views = _one_item(tmp_path, setting="option")
    undecided = {v.view_id for v in views if v.meta["rotation"] == 0}

    def reply(v: View) -> str:
        if v.view_id in undecided:
            return "A man is riding a horse." if v.state == "standard" else "Sorry, I do not see that."
        return v.obligation.gold[0] if v.state == "standard" else json.dumps({"answerable": False})

    # Judge letters (prompts.upd.judge_options): standard view options A-E (E = None of the above), then
    # F = abstention option, G = none. UPD view: A-D, E = removed correct option, F = abstention, G = none.
    judge = StubJudge({vid: ("G" if vid.endswith("std-r0") else "F") for vid in undecided})
    outcomes = score_upd_views(views, respond(views, reply), run_dir=tmp_path, judge="stub:judge", judge_backend=judge)
    assert sorted(judge.asked) == sorted(undecided) and set(judge.temperatures) == {0.0}
    assert set(judge.images) == {None}  # seed 001 appendix 0.C: the judge gets text only, never the image
    by_id = {o.view_id: o for o in outcomes}
    for view in views:
        expected = "judge:stub:judge" if view.view_id in undecided else "matcher:"
        assert str(by_id[view.view_id].decided_by).startswith(expected)
    upd_r0 = next(o for o in outcomes if o.view_id in undecided and o.state == "aad")
    std_r0 = next(o for o in outcomes if o.view_id in undecided and o.state == "standard")
    assert upd_r0.task_correct and not std_r0.task_correct and std_r0.decision == "invalid"
    # Verdicts are cached in run_dir/judge.sqlite: scoring again asks nothing.
    again = StubJudge({})
    score_upd_views(views, respond(views, reply), run_dir=tmp_path, judge="stub:judge", judge_backend=again)
    assert again.asked == [] and (tmp_path / JUDGE_FILE).is_file()


def test_without_a_judge_undecided_replies_fail_and_are_counted(tmp_path: Path) -> None:
    views = _one_item(tmp_path, variant="ivqd")
    outcomes = score_upd_views(views, respond(views, lambda v: "It depends."), run_dir=tmp_path, judge=None)
    assert all(o.decided_by == "undecided" and not o.task_correct for o in outcomes)
    m = upd_metrics(outcomes, views, n_draws=0, seed=0)["configs"]["ivqd/base"]
    assert m["undecided"] == {"standard_views": 4, "upd_views": 4, "no_reply": 0}


@pytest.mark.parametrize(
    ("setting", "reply", "right"),
    [
        ("option", "D", True),  # the extra option's letter (3 AAD options + "None of the above")
        ("option", "D. None of the above", True),
        ("instruction", "F. None of the above", True),  # the instruction's answer (seed 001, §4)
        ("instruction", "F", True),
        ("base", "I cannot answer.", True),
        ("base", "None of the above.", True),
        ("base", "A", False),
        ("base", "F", False),  # F means nothing in the base setting: undecided
    ],
)
def test_upd_abstentions_by_setting(tmp_path: Path, setting: str, reply: str, right: bool) -> None:
    views = [v for v in _one_item(tmp_path, setting=setting) if v.state == "aad"]
    outcomes = score_upd_views(views, respond(views, lambda v: reply), run_dir=tmp_path, judge=None)
    assert all(o.task_correct is right for o in outcomes)


def test_any_backend_spec_can_judge_here_a_replay_file(tmp_path: Path) -> None:
    # The judge is loaded with backends.load_backend: a replay file of verdicts stands in for a judge model.
    views = _one_item(tmp_path)
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text(
        "".join(json.dumps({"view_id": v.view_id, "text": "E"}) + "\n" for v in views if v.state == "aad"),
        encoding="utf-8",
    )
    replies = respond(views, lambda v: v.obligation.gold[0] if v.state == "standard" else "Hard to say.")
    outcomes = score_upd_views(views, replies, run_dir=tmp_path / "run", judge=f"replay:{verdicts}")
    upd = [o for o in outcomes if o.state == "aad"]
    # UPD judge letters: A-C options, D = removed correct option ("blue"), E = abstention, F = none.
    assert upd and all(o.task_correct and o.decided_by == f"judge:replay:{verdicts}" for o in upd)
