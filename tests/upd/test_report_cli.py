"""UPD report (Table 1 layout, radar charts), the CLI functions, the tuning export and the end-to-end eval."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from shortanswer.helpers import run_cli
from upd.helpers import respond
from vqaudit.backends.reference import reference_reply
from vqaudit.cli.build import build_upd_cmd
from vqaudit.cli.upd import export_tuning_cmd
from vqaudit.files import write_json
from vqaudit.metrics.upd import upd_metrics
from vqaudit.report.upd import write_upd_report
from vqaudit.schema import View
from vqaudit.scoring.upd import score_upd_views
from vqaudit.store import RunFolder, RunInfo
from vqaudit.suites.upd.tuning import CANNOT_ANSWER, TUNING_FILE, export_tuning, split_counts


def _fake_run(root: Path, policy: str, views: list[View]) -> Path:
    run_dir = root / policy
    outcomes = score_upd_views(
        views, respond(views, lambda v: reference_reply(policy, v.obligation)), run_dir=run_dir, judge=None
    )
    RunFolder(run_dir).write_info(
        RunInfo(
            model=f"reference:{policy}",
            benchmark=str(root / "bench"),
            benchmark_manifest_sha256="0" * 64,
            sources=["upd"],
        )
    )
    write_json(run_dir / "metrics.json", {"upd": upd_metrics(outcomes, views, n_draws=100, seed=0)})
    return run_dir


def _metrics(run_dir: Path) -> dict[str, Any]:
    return dict(json.loads((run_dir / "metrics.json").read_text())["upd"])


@pytest.mark.slow
def test_report_has_table_1_layout_and_radar_charts(small_views: list[View], tmp_path: Path) -> None:
    runs = [_fake_run(tmp_path, p, small_views) for p in ("always-abstain", "gold")]
    write_json(
        runs[1] / "metrics.json",
        {
            "upd": {
                **_metrics(runs[1]),
                "configs": {k: v for k, v in _metrics(runs[1])["configs"].items() if k.startswith("aad/")},
            }
        },
    )  # fewer charts to draw
    path = write_upd_report(runs, tmp_path / "report")
    text = path.read_text(encoding="utf-8")
    # Seed 001 Table 1: per variant the rows Original Standard, Base, Option, Instruction; one column per model.
    assert "|  |  | always-abstain | gold |" in text
    for label in (
        "| AAD | Original Standard | 0.0 | 100.0 |",
        "|  | Base | 0.0 | 100.0 |",
        "|  | Instruction | 0.0 | 100.0 |",
        "| IVQD | Original Standard | 0.0 | n/a |",
    ):
        assert label in text
    charts = sorted((tmp_path / "report").glob("radar_*.png"))
    assert len(charts) == 9 + 3 and charts[0].read_bytes().startswith(b"\x89PNG")


def test_tuning_export_mixes_6_2_2_in_llava_format(tmp_path: Path) -> None:
    # Seed 001 §6.1 / appendix 0.A: standard:AAD:IVQD = 6:2:2, "I cannot answer." for base-setting UPD, 2-4 options.
    manifest = export_tuning(tmp_path / "t", tsv=None, n=50, seed=3)
    assert manifest["counts"] == {"standard": 30, "aad": 10, "ivqd": 10}
    records = json.loads((tmp_path / "t" / TUNING_FILE).read_text(encoding="utf-8"))
    assert len(records) == 50
    for rec in records:
        human, gpt = rec["conversations"]
        assert human["from"] == "human" and human["value"].startswith("<image>\n") and gpt["from"] == "gpt"
        assert (tmp_path / "t" / rec["image"]).is_file()
        lines = human["value"].splitlines()
        n_options = sum(1 for line in lines if line[:3] in {f"{c}. " for c in "ABCDE"})
        extra = any(
            line.endswith((". None of the above", ". The image and question are irrelevant.")) for line in lines
        )
        assert 2 <= n_options - extra <= 4
        if not rec["id"].startswith("upd-tune-standard") and not extra:
            assert gpt["value"] == CANNOT_ANSWER
        else:
            assert gpt["value"] in "ABCDE" and len(gpt["value"]) == 1
    again = export_tuning(tmp_path / "t2", tsv=None, n=50, seed=3)
    assert again["data_sha256"] == manifest["data_sha256"]
    # Largest remainder by hand: 7 * (0.6, 0.2, 0.2) = (4.2, 1.4, 1.4) -> (4, 1, 1) + 1 to the first 0.4 remainder.
    assert split_counts(7, (6, 2, 2)) == (4, 2, 1)


def test_cli_functions_register_as_typer_commands(tmp_path: Path) -> None:
    app = typer.Typer()
    app.command("build-upd")(build_upd_cmd)
    app.command("export-tuning")(export_tuning_cmd)
    runner = CliRunner()
    result = runner.invoke(
        app, ["build-upd", "--out", str(tmp_path / "b"), "--variant", "aad", "--setting", "base", "--max-items", "25"]
    )
    assert result.exit_code == 0, result.output
    # 25 rows = 20 MMBench samples + 5 easy-VQA items; preprocessing drops image_quality and spatial_relationship
    # (appendix 0.B.1, Table A); every other item has >= 3 distinct options, so AAD keeps 23.
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["counts"] == {"aad/base": 23}
    result = runner.invoke(app, ["export-tuning", "--out", str(tmp_path / "e"), "-n", "10", "--ratio", "1:1:0"])
    assert result.exit_code == 0, result.output


@pytest.mark.slow
def test_eval_upd_runs_end_to_end_on_the_bundled_data(tmp_path: Path) -> None:
    # The bundled real data runs end to end with reference policies (build, run, score, report);
    # always-abstain: Standard 0 / Dual 0; gold (oracle): 100 everywhere.
    assert (
        run_cli(
            pytest.MonkeyPatch(),
            "eval",
            "upd",
            "--out",
            str(tmp_path / "eval"),
            "--model",
            "reference:always-abstain",
            "--model",
            "reference:gold",
            "--max-items",
            "30",
            "--draws",
            "50",
        )
        == 0
    )
    text = (tmp_path / "eval" / "report" / "upd_report.md").read_text(encoding="utf-8")
    assert "| AAD | Original Standard | 0.0 | 100.0 |" in text and "|  | Option | 0.0 | 100.0 |" in text


def test_eval_upd_checks_the_judge_and_model_specs_before_building_or_running(tmp_path: Path) -> None:
    from vqaudit.errors import VqauditError

    for models, judge in ((["reference:gold"], "gpt-4"), (["reference:oracle"], None)):
        args = ["eval", "upd", "--out", str(tmp_path / "eval"), "--max-items", "30", "--draws", "50"]
        args += [x for m in models for x in ("--model", m)] + (["--judge", judge] if judge else [])
        with pytest.raises(VqauditError, match="Valid forms"):
            from vqaudit.cli import app

            app(args, standalone_mode=False)
        assert not (tmp_path / "eval").exists()  # nothing was built or run


def test_radar_axis_labels_are_readable_as_rendered_in_index_html() -> None:
    """New-user trial: labels were 7 pt at 80 dpi in a 600 px PNG shown 360 px wide, 4.7 px; at least 11 px now.

    Rendered px = pt * dpi / 72 * (CSS width / PNG width); checked in a headless chromium screenshot at
    1400 px (12 px labels). The PNG's width is read from its IHDR header, the CSS width from report.css.
    """
    import re
    import struct
    from importlib import resources

    from vqaudit.report.upd import RADAR_DPI, RADAR_LABEL_PT, radar_chart

    png = radar_chart(
        "t",
        {
            "ocr": {"ability_index": 1, "standard": 0.5, "upd": 0.25},
            "image_topic": {"ability_index": 2, "standard": 1.0, "upd": 0.0},
            "image_style": {"ability_index": 3, "standard": 0.0, "upd": 1.0},
        },
    )
    width = struct.unpack(">I", png[16:20])[0]
    css = resources.files("vqaudit.report").joinpath("templates/report.css").read_text(encoding="utf-8")
    shown = int(re.search(r"img\.radar \{ width: (\d+)px", css).group(1))  # type: ignore[union-attr]
    rendered = RADAR_LABEL_PT * RADAR_DPI / 72 * min(shown, 1400) / width
    assert width == 640 and rendered >= 11, rendered


def test_sample_browser_shows_a_views_hint_escaped(small_views: list[View], tmp_path: Path) -> None:
    """New-user trial: the browser left out the hint the model's prompt holds (prompts/upd.py puts it first).

    The hint is the bundled item's own text (UPDViewMeta.hint) for a view that has one, absent for one without;
    a hostile hint is written as a JSON string whose ``<`` is the escape ``\\u003c`` (browser.js shows it by
    textContent).
    """
    from vqaudit.prompts.upd import upd_prompt
    from vqaudit.report.html_samples import SampleRun, write_sample_pages
    from vqaudit.schema import UPDViewMeta

    with_hint = next(v for v in small_views if UPDViewMeta.of(v).hint.strip())
    without = next(v for v in small_views if not UPDViewMeta.of(v).hint.strip())
    hint = UPDViewMeta.of(with_hint).hint.strip()
    assert upd_prompt(with_hint)[1].startswith(hint)  # what the model was shown
    hostile = without.model_copy(
        update={
            "view_id": "x-hostile",
            "group_id": "x-hostile",
            "meta": {**without.meta, "hint": "<img src=x onerror=alert(1)>"},
        }
    )
    views = [with_hint, without, hostile]
    run = SampleRun(
        label="r",
        model="m",
        bench_dir=tmp_path,
        views=views,
        group_order=[(v.group_id, v.source, v.question) for v in views],
        outcomes={},
    )
    write_sample_pages([run], tmp_path / "rep")
    text = (tmp_path / "rep" / "samples" / "page-00000.js").read_text()
    rows = json.loads(text[text.index(",") + 1 : text.rindex(");")])
    records = {r["id"]: r for row in rows for r in row["views"]}
    assert records[with_hint.view_id]["hint"] == hint and records[without.view_id]["hint"] is None
    assert records["x-hostile"]["hint"] == "<img src=x onerror=alert(1)>" and "<img" not in text


def test_report_writes_upd_report_where_eval_does(tmp_path: Path) -> None:
    # `vqaudit eval upd` writes OUT/report/upd_report.md (test above); `vqaudit report RUN --out DIR` writes
    # DIR/upd_report.md, the same place (docs/upd.md "Report", docs/papers.md Table 1), beside report.md of
    # answerability runs reported with it and index.html, which links both.
    from vqaudit.run import run_benchmark
    from vqaudit.score import score_run
    from vqaudit.suites.charts.build import build_charts
    from vqaudit.suites.upd.build import build_upd

    build_upd(tmp_path / "upd-bench", tsv=None, variant="aad", setting="base", seed=0, max_items=6)
    build_charts(tmp_path / "chart-bench", 2, 3, workers=1)
    upd_run, chart_run = tmp_path / "upd-run", tmp_path / "chart-run"
    run_benchmark(tmp_path / "upd-bench", "reference:gold", upd_run, progress=False)
    run_benchmark(tmp_path / "chart-bench", "reference:gold", chart_run, progress=False)
    for run in (upd_run, chart_run):
        score_run(run, n_draws=50)
    monkeypatch = pytest.MonkeyPatch()
    assert run_cli(monkeypatch, "report", str(upd_run), "--out", str(tmp_path / "alone")) == 0
    assert (tmp_path / "alone" / "upd_report.md").is_file() and not (tmp_path / "alone" / "upd").exists()
    assert not (tmp_path / "alone" / "report.md").exists()
    assert '<a href="upd_report.md">' in (tmp_path / "alone" / "index.html").read_text(encoding="utf-8")
    assert run_cli(monkeypatch, "report", str(chart_run), str(upd_run), "--out", str(tmp_path / "both")) == 0
    both = tmp_path / "both"
    assert (both / "report.md").is_file() and (both / "upd_report.md").is_file() and not (both / "upd").exists()
    assert "# vqaudit MM-UPD report" in (both / "upd_report.md").read_text(encoding="utf-8")
    assert "# vqaudit answerability report" in (both / "report.md").read_text(encoding="utf-8")
    index = (both / "index.html").read_text(encoding="utf-8")
    assert '<a href="report.md">' in index and '<a href="upd_report.md">' in index
