"""Reproduce LLaVA-1.5-13B's published MMBench-dev CircularEval score (67.7) from its real predictions.

Source of the expected value: the LLaVA model zoo reports 67.7 for LLaVA-1.5-13B on MMBench dev (see
``tests/fixtures/upd/CREDITS.md``). The file holds every circular copy (index + k * 10**6); a question passes
only if all its copies are right (MMBench CircularEval, seed 001 appendix 0.C.1).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from vqaudit.metrics.upd import upd_metrics
from vqaudit.schema import Obligation, Response, UPDViewMeta, View
from vqaudit.scoring.upd import score_upd_views

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "upd" / "llava15_13b_mmbench_dev.jsonl.gz"


def test_circular_evaluation_reproduces_the_published_67_7(tmp_path: Path) -> None:
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    assert len(rows) == 4377
    views: list[View] = []
    responses: dict[str, Response] = {}
    for rec in rows:
        options = tuple(rec[c] for c in "ABCD" if rec[c] is not None)
        view_id = f"mmbench-{rec['index']}"
        views.append(
            View(
                view_id=view_id,
                group_id=f"mmbench-{rec['index'] % 10**6}",
                source="upd",
                state="standard",
                image="none.png",
                image_sha256="0" * 64,
                question=rec["question"],
                options=options,
                obligation=Obligation(kind="answer", gold=(rec["answer"],), answer_type="choice"),
                meta=UPDViewMeta(
                    item_index=rec["index"] % 10**6,
                    ability="mmbench_dev",
                    ability_index=None,
                    l2_category="",
                    variant="aad",
                    setting="original",
                    kind="standard",
                    rotation=rec["index"] // 10**6,
                    n_rotations=len(options),
                ).model_dump(),
            )
        )
        responses[view_id] = Response(
            view_id=view_id, model="llava-v1.5-13b", prompt_id="llava-mmbench", text=str(rec["prediction"])
        )
    outcomes = score_upd_views(views, responses, run_dir=tmp_path, judge=None)
    assert all(o.decided_by == "matcher:letter" for o in outcomes)  # every prediction is a bare letter
    metrics = upd_metrics(outcomes, views, n_draws=0, seed=0)["configs"]["aad/original"]
    assert metrics["n_items"] == 1176
    assert round(100 * metrics["standard"], 1) == 67.7
    assert round(100 * metrics["standard"], 2) == 67.69  # 796 / 1176
