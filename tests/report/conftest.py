"""A small scored chart run with crafted replies, its HTML report, and a headless system chromium.

The replay run answers every view of the session's 24-group chart benchmark with the gold label (the answerability
contract of seed 000 appendix A), except in five groups, crafted so every count of the report is known by hand:

- ``HOSTILE``: the original view replies with valid JSON whose answer is an ``<img onerror>`` tag and whose reason
  is a ``<script>``: answered, wrong answer (decision right, task failed);
- ``WRONG``: the C view answers ``"-1"`` (decision right, answer wrong), so this group and ``HOSTILE`` are the two
  groups with every decision right and a wrong answer (``Bk - Jk = 2`` groups);
- ``ACCEPTS``: the M view answers a number (false acceptance: decision wrong);
- ``INVALID``: the S view replies ``<script>...</script>`` with no JSON object (invalid);
- ``NOREPLY``: the I view's replay text is null (a backend error, scored invalid).

So, of 24 groups, Bk = 21/24 (ACCEPTS, INVALID, NOREPLY fail a decision) and Jk = 19/24.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from vqaudit.report.html import write_html_report
from vqaudit.run import run_benchmark
from vqaudit.score import score_run
from vqaudit.store import load_benchmark

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
HOSTILE_ANSWER = '<img src=x onerror="document.body.dataset.pwned=1">'
HOSTILE_REASON = "<script>document.title='pwned';window.__pwned=1</script>"
INVALID_REPLY = "<script>window.__pwned=2</script> I refuse <b>bold</b>"
# A model spec is shown in the tables and the run selector: a file name with markup in it must stay text too.
REPLAY_NAME = "replies <img src=x onerror=alert(1)>.jsonl"


@dataclass(frozen=True)
class Crafted:
    """The crafted run: the benchmark, the two run folders, the report folder and the special group ids."""

    bench: Path
    gold_run: Path
    replay_run: Path
    report: Path
    groups: dict[str, str]
    n_groups: int


def _gold_text(view: Any) -> str:
    if view.obligation.kind == "answer":
        return json.dumps({"answerable": True, "answer": view.obligation.gold[0], "reason": "read off the chart"})
    return json.dumps({"answerable": False, "answer": None, "reason": "the value is hidden"})


def _replies(bench: Path) -> tuple[list[dict[str, Any]], dict[str, str]]:
    b = load_benchmark(bench, check_images=False)
    group_ids = [g.group_id for g in b.groups]
    special = dict(zip(("HOSTILE", "WRONG", "ACCEPTS", "INVALID", "NOREPLY"), group_ids[:5], strict=True))
    crafted = {
        (special["HOSTILE"], "original"): json.dumps(
            {"answerable": True, "answer": HOSTILE_ANSWER, "reason": HOSTILE_REASON}
        ),
        (special["WRONG"], "C"): json.dumps({"answerable": True, "answer": "-1", "reason": "the bar"}),
        (special["ACCEPTS"], "M"): json.dumps({"answerable": True, "answer": "12", "reason": "a guess"}),
        (special["INVALID"], "S"): INVALID_REPLY,
        (special["NOREPLY"], "I"): None,
    }
    rows = [{"view_id": v.view_id, "text": crafted.get((v.group_id, v.state), _gold_text(v))} for v in b.views]
    return rows, special


@pytest.fixture(scope="session")
def crafted(chart_bench: Path, tmp_path_factory: pytest.TempPathFactory) -> Crafted:
    """The gold and crafted replay runs on the 24-group chart benchmark, scored, with their HTML report."""
    root = tmp_path_factory.mktemp("html-report")
    rows, special = _replies(chart_bench)
    replay = root / REPLAY_NAME
    replay.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    gold_run, replay_run = root / "runs" / "gold", root / "runs" / "crafted"
    run_benchmark(chart_bench, "reference:gold", gold_run, progress=False)
    summary = run_benchmark(chart_bench, f"replay:{replay}", replay_run, progress=False)
    assert summary.n_errors == 1  # the null reply of NOREPLY
    for run in (gold_run, replay_run):
        score_run(run)
    report = root / "report"
    write_html_report([gold_run, replay_run], report, n_draws=1000)
    n_groups = len(load_benchmark(chart_bench, check_images=False).groups)
    return Crafted(chart_bench, gold_run, replay_run, report, special, n_groups)


@pytest.fixture(scope="module")
def browser(crafted: Crafted) -> Iterator[Any]:
    """A headless Debian chromium driven by Playwright (skipped where either is missing; CI installs both).

    Playwright's sync API keeps an event loop running in this thread while it is open, and ``asyncio.run`` (the
    run stage) refuses to start inside one: so the crafted runs are made first and the browser lives one module.
    """
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install 'vqaudit[report]'")
    executable = shutil.which("chromium") or (str(CHROMIUM) if CHROMIUM.exists() else None)
    if executable is None:
        pytest.skip("no system chromium (apt-get install -y chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield b
        b.close()
