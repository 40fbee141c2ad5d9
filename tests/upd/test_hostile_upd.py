"""A UPD reply over the 512-token budget is neither matched nor sent to a judge (``too long``)."""

from __future__ import annotations

from pathlib import Path

from upd.helpers import respond, row, write_tsv
from vqaudit.backends.base import Request
from vqaudit.parsing.answerability import MAX_REPLY_CHARS
from vqaudit.scoring.upd import score_upd_views
from vqaudit.store import load_benchmark
from vqaudit.suites.upd.build import build_upd


class RecordingJudge:
    """A judge backend that records what it is asked and always answers "A"."""

    spec = "stub:judge"

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def complete(self, request: Request) -> str:
        self.asked.append(request.view.view_id)
        return "A"

    async def aclose(self) -> None:
        return None


def test_too_long_reply_is_undecided_without_asking_the_judge(tmp_path: Path) -> None:
    rows = [row(1, "What colour is the car?", ["red", "blue", "green", "pink"], "B", "attribute_recognition")]
    out = tmp_path / "bench"
    build_upd(out, tsv=write_tsv(tmp_path / "one.tsv", rows), variant="aad", setting="base", seed=0)
    views = load_benchmark(out).views
    long_b = "B" + " because" * (MAX_REPLY_CHARS // 8)  # over the cap; shorter, it would go to the judge
    judge = RecordingJudge()
    outcomes = score_upd_views(
        views, respond(views, lambda v: long_b), run_dir=tmp_path, judge="stub:judge", judge_backend=judge
    )
    assert judge.asked == []
    assert all(o.invalid_reason == "too long" and o.decided_by == "undecided" for o in outcomes)
    assert not any(o.task_correct for o in outcomes)
    short = score_upd_views(views, respond(views, lambda v: "B"), run_dir=tmp_path, judge=None)
    assert {o.decided_by for o in short} == {"matcher:letter"}
