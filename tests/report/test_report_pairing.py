"""Which runs `vqaudit report` pairs: runs of one benchmark build wherever its copy lies, never runs of two builds.

Paired differences need the same groups in both runs (seed 000 §4: the paired group bootstrap resamples the
groups once for both). The benchmark is told apart by the SHA-256 of its ``manifest.json`` recorded in
``run.json``, not by the folder's path: a run made against a copy of the benchmark (another machine, another
user's folder) pairs with a run made against the original, and a run of another build (seed 1) is named as not
paired instead of being left out without a word.

Values by hand: the gold run answers every view right (Jk = Bk = 1 on 3 groups); the other run gives a wrong
value on group 0's C view (task wrong, decision right), so ΔJk = 2/3 - 1 = -33.3 points and ΔBk = +0.0, with
identical draws for both runs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from vqaudit.report.compare import write_report
from vqaudit.report.conditional import PAIRED_TITLE
from vqaudit.report.html import write_html_report
from vqaudit.run import run_benchmark
from vqaudit.score import score_run
from vqaudit.store import load_benchmark
from vqaudit.suites.charts.build import build_charts


def _gold(view: Any) -> dict[str, Any]:
    if view.obligation.kind == "answer":
        return {"answerable": True, "answer": view.obligation.gold[0], "reason": "read off the chart"}
    return {"answerable": False, "answer": None, "reason": "the value is hidden"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(gold on the benchmark, one wrong value on a copy of it elsewhere, gold on another build)."""
    root = tmp_path_factory.mktemp("pairing")
    bench, other = root / "bench", root / "other"
    build_charts(bench, 3, 0, workers=1)
    build_charts(other, 3, 1, workers=1)
    copy = root / "elsewhere" / "bench"
    shutil.copytree(bench, copy)
    views = load_benchmark(copy, check_images=False).views
    replay = root / "replay.jsonl"
    lines = []
    for v in views:
        reply = _gold(v)
        if v.group_id == views[0].group_id and v.state == "C":
            reply = {"answerable": True, "answer": "-1", "reason": "misread"}
        lines.append(json.dumps({"view_id": v.view_id, "text": json.dumps(reply)}) + "\n")
    replay.write_text("".join(lines), encoding="utf-8")
    gold, moved, rebuilt = root / "runs" / "gold", root / "runs" / "moved", root / "runs" / "rebuilt"
    run_benchmark(bench, "reference:gold", gold, progress=False)
    run_benchmark(copy, f"replay:{replay}", moved, progress=False)
    run_benchmark(other, "reference:gold", rebuilt, progress=False)
    for run in (gold, moved, rebuilt):
        score_run(run, n_draws=100)
    return gold, moved, rebuilt


def test_a_run_on_a_copy_of_the_benchmark_is_paired_and_another_build_is_named(
    runs: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    gold, moved, rebuilt = runs
    text = write_report([gold, moved, rebuilt], tmp_path / "md").read_text(encoding="utf-8")
    paired = text.split("## Paired differences against `gold` (same bootstrap draws)", 1)[1].split("\n## ", 1)[0]
    assert "| moved | charts | 100 draws, seed 0 | -33.3 [" in paired
    assert "| +0.0 [+0.0, +0.0] |" in paired  # ΔBk: every decision of both runs right
    assert "rebuilt" not in paired.split("Not paired")[0]
    assert "Not paired with `gold` (another benchmark: its manifest.json differs): `rebuilt`." in paired
    section = text.split(f"### {PAIRED_TITLE}", 1)[1]
    assert "| moved | gold | charts |" in section
    assert "| rebuilt |" not in section


def test_only_other_builds_get_the_not_paired_line(runs: tuple[Path, Path, Path], tmp_path: Path) -> None:
    gold, _, rebuilt = runs
    text = write_report([gold, rebuilt], tmp_path / "md").read_text(encoding="utf-8")
    assert (
        "## Paired differences against `gold`\n\nNot paired with `gold` (another benchmark: its manifest.json "
        "differs): `rebuilt`." in text
    )
    assert "(same bootstrap draws)" not in text


def test_html_pairs_the_run_on_a_copy(runs: tuple[Path, Path, Path], tmp_path: Path) -> None:
    gold, moved, _ = runs
    index = write_html_report([gold, moved], tmp_path / "html", n_draws=100).read_text(encoding="utf-8")
    # the section is written only when a pair exists; before, the two folders' paths kept the runs apart
    assert f'<h3 id="common-states-paired">{PAIRED_TITLE}</h3>' in index
    assert '<tr data-run="moved" data-base="gold" data-source="charts">' in index
