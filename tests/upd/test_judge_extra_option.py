"""The judge choosing the option setting's extra option ("None of the above") abstains, as the matcher reads it.

Seed 001 §3: in the option setting the extra option is listed among the view's own; choosing it is the model's
abstention, whoever reads the reply (the strict matcher or the judge, appendix 0.C.1).
"""

from __future__ import annotations

from pathlib import Path

from upd.helpers import respond, row, write_tsv
from vqaudit.backends.base import Request
from vqaudit.schema import UPDViewMeta, View
from vqaudit.scoring.upd import score_upd_views
from vqaudit.store import load_benchmark
from vqaudit.suites.upd.build import build_upd


class LetterJudge:
    """A judge that thinks, then answers the view's abstain letter (the extra option of the option setting)."""

    def __init__(self, letters: dict[str, str]) -> None:
        self.spec = "stub:judge"
        self.letters = letters

    async def complete(self, request: Request) -> str:
        return f"<think>the reply declines every option</think>{self.letters[request.request_id]}"

    async def aclose(self) -> None:
        return None


def test_the_judge_choosing_the_extra_option_abstains(tmp_path: Path) -> None:
    rows = [
        row(1, "What colour is the car?", ["red", "blue", "green", "pink"], "B", "attribute_recognition"),
        row(2, "Who is the person?", ["Jackie Chan", "Steve Jobs"], "A", "celebrity_recognition"),
    ]
    out = tmp_path / "bench"
    build_upd(out, tsv=write_tsv(tmp_path / "one.tsv", rows), variant="aad", setting="option", seed=0)
    views: list[View] = [v for v in load_benchmark(out).views if v.meta["item_index"] == 1]
    letters = {v.view_id: str(UPDViewMeta.of(v).abstain_letter) for v in views}
    assert all(letters.values())
    # replies no rule reads, so every view goes to the judge
    outcomes = score_upd_views(
        views,
        respond(views, lambda v: "Hmm, hard to say."),
        run_dir=tmp_path,
        judge="stub:judge",
        judge_backend=LetterJudge(letters),
    )
    assert {o.decision for o in outcomes} == {"abstain"}
    # an abstention is right on the UPD views and wrong on the standard ones (seed 001 §4)
    assert all(o.task_correct == (o.obligation == "abstain") for o in outcomes)
