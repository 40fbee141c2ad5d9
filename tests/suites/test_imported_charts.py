"""Chart groups from PlotQA annotations and ChartQA tables (docs/charts_import.md).

The PlotQA files are hand-made here in the layout of NiteshMethani/PlotQA ``PlotQA_Dataset.md`` (see
``tests/fixtures/charts/CREDITS.md``); the expected counts are worked out by hand in the comments. The ChartQA
tables are the real test tables (GPL-3.0, test fixtures only).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from vqaudit.cli import app
from vqaudit.errors import VqauditError
from vqaudit.files import read_json
from vqaudit.suites.charts.chartqa import chartqa_table, read_chartqa
from vqaudit.suites.charts.plotqa import read_plotqa

CHARTQA = Path(__file__).resolve().parents[1] / "fixtures" / "charts" / "chartqa_tables"


def _axis(label: str, ticks: list[Any]) -> dict[str, Any]:
    return {
        "label": {"text": label, "bbox": {"x": 0, "y": 0, "w": 1, "h": 1}},
        "major_labels": {"values": ticks, "bboxes": [{"x": 0, "y": 0, "w": 1, "h": 1}] * len(ticks)},
        "major_ticks": {"values": list(range(2 * len(ticks)))},
    }


def _plot(
    index: int,
    kind: str,
    models: list[dict[str, Any]],
    value_ticks: list[Any],
    title: str,
    cat_label: str = "Country",
    value_label: str = "Forest area (%)",
) -> dict[str, Any]:
    value_axis, cat_axis = _axis(value_label, value_ticks), _axis(cat_label, [])
    x_axis, y_axis = (value_axis, cat_axis) if kind == "hbar_categorical" else (cat_axis, value_axis)
    return {
        "models": [{"color": "#1f77b4", "bboxes": [], **m} for m in models],
        "type": kind,
        "image_index": index,
        "general_figure_info": {
            "title": {"text": title},
            "x_axis": x_axis,
            "y_axis": y_axis,
            "legend": {},
            "plot_info": {},
            "figure_info": {},
        },
    }


def plotqa_files(tmp_path: Path) -> tuple[Path, Path]:
    ticks10 = ["0", "2", "4", "6", "8", "10"]
    countries = ["Albania", "Brazil", "Chad", "Denmark"]
    plots = [
        # 0: usable; QA 2 asks Brazil's value (7.5: one printed decimal, so the grid is 1/10, inside 0..10).
        _plot(
            0,
            "vbar_categorical",
            [{"name": "Forest", "label": "Forest", "x": countries, "y": [2.5, 7.5, 4.0, 9.0]}],
            ticks10,
            "Forest area",
        ),
        # 1: usable; two series over years, QA 4 asks Women in 2002 (the answer 30 is also Men in 2001, so the
        # question must name the series).
        _plot(
            1,
            "dot_line",
            [
                {"name": "Men", "label": "Men", "x": [2000, 2001, 2002, 2003], "y": [20, 30, 25, 40]},
                {"name": "Women", "label": "Women", "x": [2000, 2001, 2002, 2003], "y": [10, 15, 30, 35]},
            ],
            ["0", "10", "20", "30", "40", "50"],
            "Employment",
            cat_label="Year",
            value_label="Rate",
        ),
        # 2: usable; horizontal bars hold their values in x and their ticks on the x axis.
        _plot(
            2,
            "hbar_categorical",
            [{"name": "Exports", "label": "Exports", "y": countries, "x": [100, 250, 175, 50]}],
            ["0", "100", "200", "300"],
            "Exports",
        ),
        # 3: skipped: 8 decimals need a grid of 10**-8 on 0..10, 10**9 points (more than 10,000).
        _plot(
            3, "line", [{"name": "Pi", "label": "Pi", "x": countries, "y": [3.14159265, 1.0, 2.0, 3.0]}], ticks10, "Pi"
        ),
        # 4: skipped: 12 lies outside the declared axis 0..10.
        _plot(4, "vbar_categorical", [{"name": "A", "label": "A", "x": countries, "y": [1, 12, 3, 4]}], ticks10, "Out"),
        # 5: skipped: ticks 0, 2, 5 are not evenly spaced.
        _plot(
            5,
            "vbar_categorical",
            [{"name": "A", "label": "A", "x": countries, "y": [1, 2, 3, 4]}],
            ["0", "2", "5"],
            "Uneven",
        ),
        # 6: skipped: its only QA pair's answer (99) is no cell.
        _plot(
            6,
            "vbar_categorical",
            [{"name": "A", "label": "A", "x": countries, "y": [1, 2, 3, 4]}],
            ticks10,
            "No lookup",
        ),
        # 7: skipped: a pie chart is no supported type.
        {
            **_plot(
                7, "vbar_categorical", [{"name": "A", "label": "A", "x": countries, "y": [1, 2, 3, 4]}], ticks10, "Pie"
            ),
            "type": "pie",
        },
    ]
    qa = {
        "qa_pairs": [
            {
                "image_index": 0,
                "question_string": "Which country has the highest forest area?",
                "answer": "Denmark",
                "template": "min_max",
                "type": "vbar_categorical",
            },
            {
                "image_index": 0,
                "question_string": "What is the forest area in Brazil?",
                "answer": 7.5,
                "template": "data_retrieval",
                "type": "vbar_categorical",
            },
            {
                "image_index": 1,
                "question_string": "What is the rate in 2001?",
                "answer": 30,
                "template": "x",
                "type": "dot_line",
            },
            {
                "image_index": 1,
                "question_string": "What is the rate of Women in 2002?",
                "answer": 30,
                "template": "data_retrieval",
                "type": "dot_line",
            },
            {
                "image_index": 2,
                "question_string": "What are the exports of Chad?",
                "answer": 175,
                "template": "data_retrieval",
                "type": "hbar_categorical",
            },
            {
                "image_index": 3,
                "question_string": "What is Pi in Albania?",
                "answer": 3.14159265,
                "template": "x",
                "type": "line",
            },
            {
                "image_index": 6,
                "question_string": "What is A in Chad?",
                "answer": 99,
                "template": "x",
                "type": "vbar_categorical",
            },
        ]
    }
    annotations, qa_path = tmp_path / "annotations.json", tmp_path / "qa_pairs.json"
    annotations.write_text(json.dumps(plots), encoding="utf-8")
    qa_path.write_text(json.dumps(qa), encoding="utf-8")
    return annotations, qa_path


def test_plotqa_plots_become_declared_tables_or_are_skipped_and_counted(tmp_path: Path) -> None:
    result = read_plotqa(*plotqa_files(tmp_path))
    assert [p.query for p in result.plots] == [("Forest", "Brazil"), ("Women", "2002"), ("Exports", "Chad")]
    assert result.skipped == {
        "the grid needs more than 10000 points": 1,
        "a value lies outside the declared axis": 1,
        "the value axis' tick labels are not evenly spaced": 1,
        "no QA pair asks a lookup of one cell": 1,
        "unsupported plot type 'pie'": 1,
    }
    forest = result.plots[0].table
    # Axis from the plot's own ticks; grid from the printed precision (one decimal: 2.5, 7.5).
    assert (forest.axis_lo, forest.axis_hi, forest.tick_step, forest.grid_step) == (0, 10, 2, Fraction(1, 10))
    assert result.plots[1].table.grid_step == 1 and result.plots[2].kind == "hbar"
    assert result.plots[1].qa is not None
    assert result.plots[1].qa["question_string"] == "What is the rate of Women in 2002?"


@pytest.mark.slow
def test_plotqa_end_to_end_build_verify_run_score_and_checker(tmp_path: Path) -> None:
    annotations, qa = plotqa_files(tmp_path)
    bench = tmp_path / "bench"
    runner = CliRunner()
    res = runner.invoke(
        app,
        [
            "build",
            "charts",
            "--from",
            "plotqa",
            "--annotations",
            str(annotations),
            "--qa",
            str(qa),
            "--out",
            str(bench),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "8 plotqa plots read, 3 groups built" in res.output
    manifest = read_json(bench / "manifest.json")
    assert manifest["from"] == "plotqa" and manifest["n_groups"] == 3 and sum(manifest["skipped"].values()) == 5
    assert len(list((bench / "tables").glob("*.json"))) == 3
    views = [json.loads(line) for line in (bench / "views.jsonl").read_text().splitlines()]
    first = [v for v in views if v["group_id"] == "charts-plotqa-00000"]
    assert [v["state"] for v in first] == ["original", "S", "C", "M", "I"]
    assert first[0]["obligation"]["gold"] == ["7.5"] and first[0]["meta"]["qa"]["answer"] == 7.5
    ver = runner.invoke(app, ["verify", str(bench), "--workers", "1"])
    assert ver.exit_code == 0, ver.output
    assert "verified 15 chart views, 3 chart certificates" in ver.output
    scores = {}
    for policy in ("gold", "always-answer", "always-abstain"):
        run = tmp_path / f"run-{policy}"
        ran = runner.invoke(app, ["run", str(bench), "--model", f"reference:{policy}", "--out", str(run)])
        assert ran.exit_code == 0, ran.output
        assert runner.invoke(app, ["score", str(run)]).exit_code == 0
        scores[policy] = read_json(run / "metrics.json")["charts"]
    # Seed 000 §4 (docs/papers.md): gold answers every supported view and abstains on M and I; the two fixed
    # policies get Bk = Jk = 0 and Ebal = 50%.
    assert (scores["gold"]["Jk"], scores["gold"]["Bk"]) == (1.0, 1.0)
    for policy in ("always-answer", "always-abstain"):
        assert (scores[policy]["Jk"], scores[policy]["Bk"], scores[policy]["Ebal"]) == (0.0, 0.0, 0.5)
    checker = runner.invoke(app, ["audit-checker", str(bench), "--workers", "1"])
    assert checker.exit_code == 0, checker.output


@pytest.mark.slow
def test_a_tampered_declared_table_fails_verify(tmp_path: Path) -> None:
    annotations, qa = plotqa_files(tmp_path)
    bench = tmp_path / "bench"
    assert (
        CliRunner()
        .invoke(
            app,
            [
                "build",
                "charts",
                "--from",
                "plotqa",
                "--annotations",
                str(annotations),
                "--qa",
                str(qa),
                "--out",
                str(bench),
                "--groups",
                "1",
            ],
        )
        .exit_code
        == 0
    )
    (table,) = (bench / "tables").glob("*.json")
    data = json.loads(table.read_text())
    data["axis_hi"] = "20"  # a widened axis: world_a's domain is no longer the declared one
    table.write_text(json.dumps(data))
    res = CliRunner().invoke(app, ["verify", str(bench), "--workers", "1"])
    assert res.exit_code == 1 and "FAIL" in res.output


def test_malformed_plotqa_input_names_file_row_and_field(tmp_path: Path) -> None:
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps([{"type": "line", "general_figure_info": {}}]))
    with pytest.raises(VqauditError, match=r"annotations.json: row 1, field 'models': missing"):
        read_plotqa(path)
    path.write_text(json.dumps([_plot(0, "line", [{"name": "A", "x": [1, 2], "y": [1]}], ["0", "1"], "t")]))
    with pytest.raises(VqauditError, match=r"row 1, field 'models\[0\].y'"):
        read_plotqa(path)
    qa = tmp_path / "qa.json"
    qa.write_text(json.dumps([{"image_index": 0, "answer": 1}]))
    with pytest.raises(VqauditError, match=r"qa.json: row 1, field 'question_string': missing"):
        read_plotqa(path, qa)


def test_real_chartqa_tables() -> None:
    result = read_chartqa(CHARTQA)
    assert result.n_read == 16 and len(result.plots) + sum(result.skipped.values()) == 16
    # 08524901006324.csv: one row (England) over five year columns -> transposed, one series, values 1768..2744
    # (integers: grid 1), axis 0..5000 (the first of 1, 2, 2.5, 5 x 10^k at or above 2744), ticks 1000.
    england = chartqa_table(CHARTQA / "08524901006324.csv")
    assert not isinstance(england, str)
    assert england.series == ("England",) and england.categories == ("2010", "2011", "2012", "2013", "2014")
    assert (england.axis_lo, england.axis_hi, england.tick_step, england.grid_step) == (0, 5000, 1000, 1)
    # two_col_176.csv: market shares printed with one decimal and "%": grid 1/10, largest 19.3 -> axis 0..20.
    shares = chartqa_table(CHARTQA / "two_col_176.csv")
    assert not isinstance(shares, str)
    assert (shares.unit, shares.axis_hi, shares.grid_step) == ("%", 20, Fraction(1, 10))
    # OECD_SAVING_RATE_BEL_MEX_000102.csv (Belgium, Mexico over 12 years) prints 14 decimals (3.28883591217645):
    # 10**14 grid steps per unit, not a finite grid here.
    assert chartqa_table(CHARTQA / "OECD_SAVING_RATE_BEL_MEX_000102.csv") == "the grid needs more than 10000 points"
    # 1366.csv has three series columns (More, About the same, Less); 10476815004500.csv three countries over
    # years: the renderer draws at most two series.
    assert chartqa_table(CHARTQA / "1366.csv") == chartqa_table(CHARTQA / "10476815004500.csv") == "more than 2 series"
