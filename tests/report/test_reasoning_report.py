"""The report's Reasoning section on a designed replay of a thinking model, every number computed by hand.

Benchmark: 4 chart groups (seed 0), views original, S, C (supported) and M, I (negative). Every reply but one
thinks in ``<think>...</think>`` (reasoning of exactly the lengths below, no surrounding spaces) before the gold
contract object, except where said:

- ``charts-00000``: every view thinks 100 characters.
- ``charts-00001``: every view thinks 200 characters; the S view drafts an abstention (final: answer), the M view
  drafts an answer (final: abstain), the I view drafts an abstention (final: abstain).
- ``charts-00002``: every view thinks 300 characters; the M view drafts an abstention, then answers "12" (a false
  acceptance: decision wrong).
- ``charts-00003``: original and S think 400, C thinks 500; the M view opens ``<think>``, drafts an abstention and
  never closes it within 600 characters (the budget ran out: invalid, "reasoning not finished"); the I view
  replies with the gold object and no reasoning.

By hand:

- replies holding reasoning: 19 of 20 (all but charts-00003 I); finished: 18 of 19 = 94.7% (the cut M view is
  not);
- lengths of the 19 (the cut reply's 600 characters count): 100 x5, 200 x5, 300 x5, 400, 400, 500, 600; median =
  the 10th = 200; p90 at rank 0.9 * 18 = 16.2 (numpy's linear interpolation): 400 + 0.2 * (500 - 400) = 420;
- drafts in finished replies: 4 (charts-00001 S, M, I; charts-00002 M); overruled: 3 (all but charts-00001 I),
  75.0%. The cut M view's draft is not counted: a cut reply made no decision to overrule it with;
- group means (a view without reasoning counts 0): 100, 200, 300, (400 + 400 + 500 + 600 + 0) / 5 = 380; quartile
  boundaries (linear): 175, 250, 320, so each quartile holds one group in that order;
- per quartile (one group, so every bootstrap draw is that group and every interval is the point): Q1 and Q2 are
  right everywhere (Jk = Bk = 100, Ebal = EU = EM = 0); Q3 (the false acceptance) and Q4 (the cut M view, invalid)
  fail M: Jk = Bk = 0, EU = 1/2 negative views = 50, EM = 1/1 = 100, supported_rejection = 0, Ebal = 25.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vqaudit.files import read_json, write_json
from vqaudit.metrics.reasoning import reasoning_summary
from vqaudit.parsing.reasoning import NOT_FINISHED
from vqaudit.report.compare import write_report
from vqaudit.report.html import write_html_report
from vqaudit.run import run_benchmark
from vqaudit.score import load_outcomes, score_run
from vqaudit.store import load_benchmark
from vqaudit.suites.charts.build import build_charts

pytestmark = pytest.mark.slow  # builds a benchmark, runs and scores two runs

ANSWER_DRAFT = json.dumps({"answerable": True, "answer": "12", "reason": "a draft"})
ABSTAIN_DRAFT = json.dumps({"answerable": False, "answer": None, "reason": "a draft"})
USAGE = {"prompt_tokens": 12000, "completion_tokens": 3456, "reasoning_tokens": 2345, "replies": 20}


def _gold(view: Any) -> str:
    if view.obligation.kind == "answer":
        return json.dumps({"answerable": True, "answer": view.obligation.gold[0], "reason": "read off the chart"})
    return json.dumps({"answerable": False, "answer": None, "reason": "the value is hidden"})


def _thought(n: int, draft: str | None = None) -> str:
    """Reasoning of exactly ``n`` characters, holding ``draft`` first when given."""
    head = draft or ""
    assert len(head) < n
    return head + "x" * (n - len(head))


def _reply(view: Any) -> str:
    group, state = view.group_id, view.state
    if group == "charts-00003":
        if state == "I":
            return _gold(view)
        if state == "M":
            return "<think>" + _thought(600, ABSTAIN_DRAFT)  # never closed
        return f"<think>{_thought(500 if state == 'C' else 400)}</think>{_gold(view)}"
    length = {"charts-00000": 100, "charts-00001": 200, "charts-00002": 300}[group]
    drafts = {
        ("charts-00001", "S"): ABSTAIN_DRAFT,
        ("charts-00001", "M"): ANSWER_DRAFT,
        ("charts-00001", "I"): ABSTAIN_DRAFT,
        ("charts-00002", "M"): ABSTAIN_DRAFT,
    }
    final = (
        json.dumps({"answerable": True, "answer": "12", "reason": "a guess"})
        if (group, state) == ("charts-00002", "M")
        else _gold(view)
    )
    return f"<think>{_thought(length, drafts.get((group, state)))}</think>{final}"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the thinking replay run, a reference:gold run without reasoning), both scored, on one benchmark."""
    root = tmp_path_factory.mktemp("reasoning")
    bench = root / "bench"
    build_charts(bench, 4, 0, workers=1)
    views = load_benchmark(bench, check_images=False).views
    assert [v.group_id for v in views][::5] == ["charts-00000", "charts-00001", "charts-00002", "charts-00003"]
    replay = root / "thinking.jsonl"
    replay.write_text("".join(json.dumps({"view_id": v.view_id, "text": _reply(v)}) + "\n" for v in views))
    thinking, gold = root / "thinking", root / "gold"
    run_benchmark(bench, f"replay:{replay}", thinking, progress=False)
    run_benchmark(bench, "reference:gold", gold, progress=False)
    info = read_json(thinking / "run.json")
    write_json(thinking / "run.json", {**info, "usage": USAGE})  # as a backend reporting token usage writes it
    for run in (thinking, gold):
        score_run(run, n_draws=1000)  # after: score seals run.json
    return thinking, gold


def test_summary_numbers(runs: tuple[Path, Path]) -> None:
    thinking, gold = runs
    outcomes = load_outcomes(thinking)
    assert sum(o.invalid_reason == NOT_FINISHED for o in outcomes) == 1
    s = reasoning_summary(outcomes, n_draws=1000)["charts"]
    assert (s.n_views, s.n_reasoning, s.n_finished) == (20, 19, 18)
    assert s.finished_share == pytest.approx(18 / 19)
    assert s.median_chars == 200.0 and s.p90_chars == pytest.approx(420.0)
    assert (s.n_drafts, s.n_overruled, s.overruled_share) == (4, 3, 0.75)
    assert [(q.n_groups, q.lo_chars, q.hi_chars) for q in s.quartiles] == [
        (1, 100.0, 100.0),
        (1, 200.0, 200.0),
        (1, 300.0, 300.0),
        (1, 380.0, 380.0),
    ]
    right = {"Jk": 1.0, "Bk": 1.0, "Ebal": 0.0, "EU": 0.0, "EM": 0.0}
    wrong_m = {"Jk": 0.0, "Bk": 0.0, "Ebal": 0.25, "EU": 0.5, "EM": 1.0}
    assert [q.metrics for q in s.quartiles] == [right, right, wrong_m, wrong_m]
    assert s.quartiles[2].ci == {k: [v, v] for k, v in wrong_m.items()}  # one group: every draw is that group
    assert reasoning_summary(load_outcomes(gold)) == {}  # no reply of the gold run held reasoning


def test_markdown_reasoning_section(runs: tuple[Path, Path], tmp_path: Path) -> None:
    thinking, gold = runs
    lines = write_report([gold, thinking], tmp_path / "both").read_text().splitlines()
    assert "## Reasoning" in lines
    assert "| thinking | charts | 20 | 19 | 18 of 19 (94.7%) | 200 | 420 | 3 of 4 (75.0%) |" in lines
    assert not any(line.startswith("| gold | charts | 20 |") for line in lines)  # the gold run did not think
    assert "| thinking | 20 | 12,000 | 3,456 | 2,345 |" in lines
    q = [line for line in lines if line.startswith("| thinking | charts | Q")]
    assert q == [
        "| thinking | charts | Q1 | 100 | 1 | 100.0 [100.0, 100.0] | 100.0 [100.0, 100.0] | 0.0 [0.0, 0.0] | "
        "0.0 [0.0, 0.0] | 0.0 [0.0, 0.0] |",
        "| thinking | charts | Q2 | 200 | 1 | 100.0 [100.0, 100.0] | 100.0 [100.0, 100.0] | 0.0 [0.0, 0.0] | "
        "0.0 [0.0, 0.0] | 0.0 [0.0, 0.0] |",
        "| thinking | charts | Q3 | 300 | 1 | 0.0 [0.0, 0.0] | 0.0 [0.0, 0.0] | 25.0 [25.0, 25.0] | "
        "50.0 [50.0, 50.0] | 100.0 [100.0, 100.0] |",
        "| thinking | charts | Q4 | 380 | 1 | 0.0 [0.0, 0.0] | 0.0 [0.0, 0.0] | 25.0 [25.0, 25.0] | "
        "50.0 [50.0, 50.0] | 100.0 [100.0, 100.0] |",
    ]
    # two models, so no budget sweep; a report of the gold run alone has no reasoning section at all
    assert "## Token-budget sweep" not in lines
    alone = write_report([gold], tmp_path / "gold").read_text()
    assert "Reasoning" not in alone and "Token-budget" not in alone


def test_html_reasoning_section(runs: tuple[Path, Path], tmp_path: Path) -> None:
    thinking, gold = runs
    page = write_html_report([gold, thinking], tmp_path / "html", n_draws=1000).read_text()
    assert '<table class="reasoning-table" data-source="charts">' in page
    table = page.split('<table class="reasoning-table" data-source="charts">', 1)[1].split("</table>", 1)[0]
    row = table.split('<tr data-run="thinking">', 1)[1].split("</tr>", 1)[0]
    for cell in (
        '<td data-field="finished">18 of 19 (94.7%)</td>',
        '<td data-field="median">200</td>',
        '<td data-field="p90">420</td>',
        '<td data-field="overruled">3 of 4 (75.0%)</td>',
        "<td>12,000</td>",
        "<td>2,345</td>",
    ):
        assert cell in row
    q3 = page.split('<tr data-run="thinking" data-quartile="Q3">', 1)[1].split("</tr>", 1)[0]
    assert '<td data-metric="EM">100.0<span class="ci">[100.0, 100.0]</span></td>' in q3
    assert '<tr data-run="gold" data-quartile' not in page
    alone = write_html_report([gold], tmp_path / "gold", n_draws=1000).read_text()
    assert "reasoning-table" not in alone and "sweep" not in alone


def test_upd_runs_get_shares_and_lengths(tmp_path: Path) -> None:
    # 26 MM-UPD views (4 bundled items, AAD, base setting); view i (in views.jsonl order) thinks 10 * (i + 1)
    # characters before answering "A"; the last one's thinking is cut (never closed). By hand: 26 with reasoning,
    # 25 of 26 finished (96.2%); lengths 10, 20, ..., 260: median at rank 12.5 = (130 + 140) / 2 = 135, p90 at
    # rank 0.9 * 25 = 22.5 = (230 + 240) / 2 = 235; no drafts (drafts are answerability objects); no quartiles.
    from vqaudit.report.upd import write_upd_report
    from vqaudit.suites.upd.build import build_upd

    bench = tmp_path / "bench"
    build_upd(bench, tsv=None, variant="aad", setting="base", seed=0, max_items=4)
    views = load_benchmark(bench, check_images=False).views
    assert len(views) == 26
    rows = [
        {"view_id": v.view_id, "text": "<think>" + "y" * (10 * (i + 1)) + ("</think>A" if i < 25 else "")}
        for i, v in enumerate(views)
    ]
    replay = tmp_path / "upd.jsonl"
    replay.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = tmp_path / "thinking"
    run_benchmark(bench, f"replay:{replay}", run, progress=False)
    score_run(run, n_draws=100)
    lines = write_upd_report([run], tmp_path / "rep").read_text().splitlines()
    # MM-UPD replies hold no answerability drafts: the drafts column is "–" (nothing to count), not a count of 0
    assert "| thinking | upd | 26 | 26 | 25 of 26 (96.2%) | 135 | 235 | – |" in lines
    assert "### By reasoning-length quartile" not in lines
    page = write_html_report([run], tmp_path / "html", n_draws=100).read_text()
    table = page.split('<table class="reasoning-table" data-source="upd">', 1)[1].split("</table>", 1)[0]
    assert '<td data-field="finished">25 of 26 (96.2%)</td><td data-field="median">135</td>' in table
    assert "quartile-table" not in page
