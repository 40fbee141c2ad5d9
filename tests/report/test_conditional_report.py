"""The appendix-B section of the Markdown and HTML reports on a 4-group chart benchmark and a designed replay.

Seed 000 §4, §5.2 and appendix B. The replay answers every view with its gold label except:

- group 0: the C view answers "-1" (decision right, wrong supported answer: a numerical mismatch);
- group 1: the original view answers "answerable" with a null answer (decision right, answer wrong, not a
  mismatch: nothing was submitted);
- group 2: the M view answers "12" (a false acceptance: decision wrong);
- group 3: the S view is not JSON (invalid: decision wrong, a rejected supported view).

By hand, over 4 groups of 5 views: Bk = 2/4 (groups 0 and 1), Jk = 0/4, so the conditional disagreement is
(Bk - Jk) / Bk = 2 of 2 = 100.0%. On the common states S and M, groups 2 (M) and 3 (S) fail and groups 0 and 1
are right on both: Bk = Jk = 2/4 = 50.0%. Of the 12 supported views, 9 are correct, 1 rejected (group 3's S),
1 mismatched (group 0's C) and 1 answered null (group 1's original). The gold run has Bk = Jk = 4/4: 0 of 4
decision-right groups hold a wrong answer, 0 mismatches among 12.

Paired differences, designed − gold (the base, the first run): common-state Bk 50.0 − 100.0 = −50.0 points, Jk
50.0 − 100.0 = −50.0, conditional disagreement 100.0 − 0.0 = +100.0. A second replay of the same replies
("again", scored with 100 draws and bootstrap seed 5) against "designed" gives exactly 0 with the interval
[0, 0] for all three.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from vqaudit.metrics.conditional import conditional_diagnostics
from vqaudit.metrics.conditional_paired import conditional_difference
from vqaudit.report.compare import write_report
from vqaudit.report.conditional import PAIRED_TITLE, PairedRun, paired_rows
from vqaudit.report.html import write_html_report
from vqaudit.run import run_benchmark
from vqaudit.score import load_outcomes, score_run
from vqaudit.store import load_benchmark
from vqaudit.suites.charts.build import build_charts

TITLE = "Common states and conditional disagreement (Cha et al., arXiv:2609.34480, §5.2, appendix B)"


def _gold(view: Any) -> dict[str, Any]:
    if view.obligation.kind == "answer":
        return {"answerable": True, "answer": view.obligation.gold[0], "reason": "read off the chart"}
    return {"answerable": False, "answer": None, "reason": "the value is hidden"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("conditional")
    bench = root / "bench"
    build_charts(bench, 4, 5, workers=1)
    b = load_benchmark(bench, check_images=False)
    ids = [g.group_id for g in b.groups]
    assert len(ids) == 4
    crafted: dict[tuple[str, str], str] = {
        (ids[0], "C"): json.dumps({"answerable": True, "answer": "-1", "reason": "the bar"}),
        (ids[1], "original"): json.dumps({"answerable": True, "answer": None, "reason": "it is there"}),
        (ids[2], "M"): json.dumps({"answerable": True, "answer": "12", "reason": "a guess"}),
        (ids[3], "S"): "I cannot tell.",
    }
    replay = root / "replay.jsonl"
    replay.write_text(
        "".join(
            json.dumps({"view_id": v.view_id, "text": crafted.get((v.group_id, v.state), json.dumps(_gold(v)))}) + "\n"
            for v in b.views
        ),
        encoding="utf-8",
    )
    gold, designed = root / "runs" / "gold", root / "runs" / "designed"
    run_benchmark(bench, "reference:gold", gold, progress=False)
    run_benchmark(bench, f"replay:{replay}", designed, progress=False)
    for run in (gold, designed):
        score_run(run, n_draws=200)
    return gold, designed


@pytest.fixture(scope="module")
def again(runs: tuple[Path, Path]) -> Path:
    """The designed replies replayed into a third run, scored with other bootstrap settings (100 draws, seed 5)."""
    root = runs[0].parent.parent
    run = root / "runs" / "again"
    run_benchmark(root / "bench", f"replay:{root / 'replay.jsonl'}", run, progress=False)
    score_run(run, n_draws=100, seed=5)
    return run


def _rows(text: str) -> dict[str, list[str]]:
    block = text.split(f"## {TITLE}\n", 1)[1].split("\n\n", 2)[1]
    rows = {}
    for line in block.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


def test_diagnostics_hold_the_hand_counts(runs: tuple[Path, Path]) -> None:
    d = json.loads((runs[1] / "diagnostics.json").read_text(encoding="utf-8"))["charts"]
    assert d["conditional_disagreement"]["value"] == 1.0
    assert (
        d["conditional_disagreement"]["wrong_answer_groups"],
        d["conditional_disagreement"]["decision_correct_groups"],
    ) == (2, 2)
    assert (d["common_state"]["Bk"], d["common_state"]["Jk"], d["common_state"]["n_views"]) == (0.5, 0.5, 8)
    assert d["supported_answers"] == {"supported": 12, "correct": 9, "rejected": 1, "mismatched": 1, "answered_null": 1}


def test_markdown_report_has_the_section(runs: tuple[Path, Path], tmp_path: Path) -> None:
    text = write_report(list(runs), tmp_path).read_text(encoding="utf-8")
    # a new section after the existing ones, the plot still last
    assert text.index("## Failure accounting") < text.index(f"## {TITLE}") < text.index("![Jk and Bk")
    assert "J5/B5 on charts, J4/B4 on scenes, J3/B3 on photos" in text
    rows = _rows(text)
    assert set(rows) == {"gold", "designed"}
    source, names, states, bk, jk, cd, wrong, mismatches, supported = rows["designed"]
    assert (source, names, states) == ("charts", "J5 / B5", "M, S")
    cell = re.compile(r"^(\d+\.\d) \[(\d+\.\d), (\d+\.\d)\]$")
    for value, point in ((bk, "50.0"), (jk, "50.0"), (cd, "100.0")):
        m = cell.match(value)
        assert m and m.group(1) == point, value
        assert float(m.group(2)) <= float(point) <= float(m.group(3))
    assert (wrong, mismatches, supported) == ("2 of 2", "1 among 12", "9 / 1 / 1")
    gold = rows["gold"]
    assert gold[3].startswith("100.0") and gold[5].startswith("0.0")
    assert gold[6:] == ["0 of 4", "0 among 12", "12 / 0 / 0"]
    # The designed run's common-state Bk and Jk are both 50.0 but its conditional disagreement is 100.0: it is
    # (Bk - Jk) / Bk over every state (Bk 2/4, Jk 0/4, module docstring), which the header and note must say, or a
    # reader computes (50 - 50) / 50 = 0 from the two columns beside it.
    header = text.split(f"## {TITLE}\n", 1)[1].split("\n\n", 2)[1].splitlines()[0]
    assert "| Bk (S, M) | Jk (S, M) | conditional disagreement (all states) |" in header
    assert "(Bk − Jk) / Bk over every state (the Bk and Jk of the first table" in text


def test_html_report_has_the_section(runs: tuple[Path, Path], tmp_path: Path) -> None:
    index = write_html_report(list(runs), tmp_path / "html", n_draws=100).read_text(encoding="utf-8")
    assert f'<h2 id="common-states">{TITLE}</h2>' in index
    section = index.split('<table id="conditional-table">', 1)[1].split("</table>", 1)[0]
    row = section.split('<tr data-run="designed" data-source="charts">', 1)[1].split("</tr>", 1)[0]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
    assert cells[:4] == ["designed", "charts", "J5 / B5", "M, S"]
    assert [c.split(" [")[0] for c in cells[4:7]] == ["50.0", "50.0", "100.0"]
    assert cells[7:] == ["2 of 2", "1 among 12", "9 / 1 / 1"]


def _paired_rows(text: str) -> dict[str, list[str]]:
    block = text.split(f"### {PAIRED_TITLE}\n", 1)[1].split("\n\n", 2)[1]
    rows = {}
    for line in block.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


SIGNED = re.compile(r"^([+-]\d+\.\d) \[([+-]\d+\.\d), ([+-]\d+\.\d)\]$")


def test_markdown_paired_differences_by_hand(runs: tuple[Path, Path], tmp_path: Path) -> None:
    gold, designed = runs
    text = write_report([gold, designed], tmp_path).read_text(encoding="utf-8")
    assert text.index(f"## {TITLE}") < text.index(f"### {PAIRED_TITLE}") < text.index("![Jk and Bk")
    rows = _paired_rows(text)
    assert set(rows) == {"designed"}
    base, source, draws, bk, jk, cd, note = rows["designed"]
    assert (base, source, draws, note) == ("gold", "charts", "200 draws, seed 0", "")  # gold's recorded settings
    # the interval is the one of the metrics function on the same draws (gold's: 200, seed 0)
    diff = conditional_difference(load_outcomes(gold), load_outcomes(designed), "charts", n_draws=200, seed=0)
    for cell, point, key in (
        (bk, "-50.0", "common_Bk"),
        (jk, "-50.0", "common_Jk"),
        (cd, "+100.0", "conditional_disagreement"),
    ):
        m = SIGNED.match(cell)
        assert m and m.group(1) == point, cell
        assert float(m.group(2)) <= float(point) <= float(m.group(3))
        ci = diff.deltas[key].ci
        assert ci is not None and (m.group(2), m.group(3)) == (f"{100 * ci[0]:+.1f}", f"{100 * ci[1]:+.1f}")


def test_identical_replies_pair_to_exact_zero_with_the_base_settings(
    runs: tuple[Path, Path], again: Path, tmp_path: Path
) -> None:
    designed = runs[1]
    rows = _paired_rows(write_report([designed, again], tmp_path / "a").read_text(encoding="utf-8"))
    assert rows["again"] == ["designed", "charts", "200 draws, seed 0", *["+0.0 [+0.0, +0.0]"] * 3, ""]
    # the other way round: the base is "again", whose recorded settings are 100 draws, seed 5
    rows = _paired_rows(write_report([again, designed], tmp_path / "b").read_text(encoding="utf-8"))
    assert rows["designed"][:3] == ["again", "charts", "100 draws, seed 5"]


def test_single_run_has_no_paired_subsection(runs: tuple[Path, Path], tmp_path: Path) -> None:
    text = write_report([runs[1]], tmp_path).read_text(encoding="utf-8")
    assert f"## {TITLE}" in text and PAIRED_TITLE not in text


def test_html_paired_differences(runs: tuple[Path, Path], tmp_path: Path) -> None:
    index = write_html_report(list(runs), tmp_path / "html", n_draws=100).read_text(encoding="utf-8")
    assert f'<h3 id="common-states-paired">{PAIRED_TITLE}</h3>' in index
    section = index.split('<table id="conditional-paired-table">', 1)[1].split("</table>", 1)[0]
    row = section.split('<tr data-run="designed" data-base="gold" data-source="charts">', 1)[1].split("</tr>", 1)[0]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)
    assert cells[:4] == ["designed", "gold", "charts", "200 draws, seed 0"]
    assert [c.split('<span class="ci">')[0] for c in cells[4:7]] == ["-50.0", "-50.0", "+100.0"]
    assert cells[7] == ""
    # a single run: no paired table
    single = write_html_report([runs[1]], tmp_path / "one", n_draws=100).read_text(encoding="utf-8")
    assert "conditional-paired-table" not in single


def test_runs_that_do_not_line_up_get_a_row_saying_why(runs: tuple[Path, Path]) -> None:
    gold, designed = runs
    outcomes = load_outcomes(designed)
    fewer = [o for o in outcomes if o.group_id != outcomes[0].group_id]  # one group left out
    diagnostics = {"charts": conditional_diagnostics(fewer, n_draws=0)}
    base = PairedRun("gold", gold, "bench", load_outcomes(gold), json.loads((gold / "diagnostics.json").read_text()))
    [row] = paired_rows([base, PairedRun("fewer", designed, "bench", fewer, diagnostics)])
    assert row.difference is None and row.problem is not None and "same groups" in row.problem
    assert row.cells()[4:7] == ["n/a", "n/a", "n/a"] and row.note() == row.problem
    # runs of another benchmark are not paired
    assert paired_rows([base, PairedRun("other", designed, "elsewhere", outcomes, diagnostics)]) == []
