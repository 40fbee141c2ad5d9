"""The grouped-metric tables (per chart kind and per state) in the Markdown and HTML reports of a tiny chart run.

The crafted run (report/conftest.py) fails five groups of the 24-group chart benchmark, one view each: HOSTILE
(original: wrong answer), WRONG (C: wrong answer), ACCEPTS (M: answered), INVALID (S: invalid), NOREPLY (I: no
reply). By seed 000 §4, a group counts for Jk when every view meets its obligation and for Bk when every decision
is right, so per state the failing view's state loses one group of 24 in Jk, and in Bk too unless only its answer
was wrong; per chart kind, a kind loses the special groups it holds (all five in Jk, the last three in Bk).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from report.conftest import Crafted
from vqaudit.report.compare import write_report
from vqaudit.schema import ChartGroupMeta
from vqaudit.store import load_benchmark

TASK_FAILS = ("HOSTILE", "WRONG", "ACCEPTS", "INVALID", "NOREPLY")
DECISION_FAILS = ("ACCEPTS", "INVALID", "NOREPLY")
ONE_OF_24 = f"{100 * 23 / 24:.1f}"  # 95.8


def _kinds(crafted: Crafted) -> dict[str, str]:
    return {g.group_id: ChartGroupMeta.of(g).kind for g in load_benchmark(crafted.bench, check_images=False).groups}


def _expected_by_kind(crafted: Crafted) -> dict[str, tuple[int, str, str]]:
    kinds = _kinds(crafted)
    n = Counter(kinds.values())
    task = Counter(kinds[crafted.groups[name]] for name in TASK_FAILS)
    decision = Counter(kinds[crafted.groups[name]] for name in DECISION_FAILS)
    return {k: (n[k], f"{100 * (n[k] - task[k]) / n[k]:.1f}", f"{100 * (n[k] - decision[k]) / n[k]:.1f}") for k in n}


def _markdown_rows(text: str, heading: str) -> dict[str, list[str]]:
    block = text.split(heading + "\n", 1)[1].lstrip("\n").split("\n\n", 1)[0]
    rows = {}
    for line in block.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


def test_markdown_report_has_the_grouped_tables(crafted: Crafted, tmp_path: Path) -> None:
    text = write_report([crafted.gold_run, crafted.replay_run], tmp_path).read_text(encoding="utf-8")
    assert "## Grouped metrics (per chart kind, scene template and state)" in text
    # the existing sections come first and the plot stays last
    assert text.index("## Failure accounting") < text.index("## Grouped metrics") < text.index("![Jk and Bk")
    states = _markdown_rows(text, "### crafted: charts per state")
    assert list(states) == ["original", "S", "C", "M", "I"]  # the papers' state order
    cell = re.compile(r"^(\d+\.\d) \[(\d+\.\d), (\d+\.\d)\]$")  # point [95% interval]
    for state, (groups, views, jk, bk) in states.items():
        assert (groups, views) == ("24", "24")
        jk_point = cell.match(jk)
        bk_point = cell.match(bk)
        assert jk_point and bk_point, (state, jk, bk)
        assert jk_point.group(1) == ONE_OF_24  # each state holds exactly one task failure
        # only original (HOSTILE) and C (WRONG) fail on the answer alone: every decision there is right
        assert bk_point.group(1) == ("100.0" if state in ("original", "C") else ONE_OF_24)
        assert float(jk_point.group(2)) <= float(jk_point.group(1)) <= float(jk_point.group(3))
    kinds = _markdown_rows(text, "### crafted: charts per chart kind")
    expected = _expected_by_kind(crafted)
    assert set(kinds) == set(expected)
    for kind, (n, jk, bk) in expected.items():
        groups, views, jk_cell, bk_cell, ebal_cell = kinds[kind]
        assert (int(groups), int(views)) == (n, 5 * n)
        assert (jk_cell.split()[0], bk_cell.split()[0]) == (jk, bk), kind
        assert ebal_cell.split()[0] != "n/a"  # a chart kind holds supported and negative views
    gold = _markdown_rows(text, "### gold: charts per chart kind")
    assert all(row[2:] == ["100.0 [100.0, 100.0]", "100.0 [100.0, 100.0]", "0.0 [0.0, 0.0]"] for row in gold.values())


def test_html_report_has_the_grouped_tables(crafted: Crafted) -> None:
    index = (crafted.report / "index.html").read_text(encoding="utf-8")
    assert "<h3>Grouped metrics (per chart kind, scene template and state)</h3>" in index
    for run in ("gold", "crafted"):
        for by in ("chart kind", "state"):
            assert f'data-run="{run}" data-by="{by}"' in index
    table = index.split('data-run="crafted" data-by="state"', 1)[1].split("</table>", 1)[0]
    row = table.split('<tr data-stratum="M">', 1)[1].split("</tr>", 1)[0]
    assert f'<td data-metric="Jk">{ONE_OF_24}<span class="ci">[' in row
    assert f'<td data-metric="Bk">{ONE_OF_24}<span class="ci">[' in row
    table = index.split('data-run="crafted" data-by="chart kind"', 1)[1].split("</table>", 1)[0]
    for kind, (n, jk, _) in _expected_by_kind(crafted).items():
        row = table.split(f'<tr data-stratum="{kind}">', 1)[1].split("</tr>", 1)[0]
        assert f"<td>{n}</td><td>{5 * n}</td>" in row
        assert f'<td data-metric="Jk">{jk}<span class="ci">[' in row
