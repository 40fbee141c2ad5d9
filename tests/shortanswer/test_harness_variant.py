"""A harness's own number beside the default variant's, in the short-answer report.

Expected values:
- the hand-made VLMEvalKit ChartQA sheet below, worked out by hand from the relaxed-accuracy rules restated in
  ``src/vqaudit/scoring/official.py`` (pix2struct: |prediction - target| / |target| <= 5%; VLMEvalKit before
  677e30a5: the two swapped, so the change is taken relative to the prediction);
- the real VILA1.5-13B ChartQA sheet (``tests/fixtures/shortanswer/vila15_13b_chartqa_test.xlsx``): default
  ``pix2struct`` test_human 42.56, and VLMEvalKit's own ``_acc.csv`` beside it, 42.88 / 74.56
  (``vila15_13b_chartqa_test_acc.csv``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.shortanswer.helpers import FIXTURE_DIR, run_cli
from tests.upd.helpers import write_xlsx

from vqaudit.shortanswer.audit import run_audit

_HEADER = ["index", "question", "answer", "prediction", "split"]
_ROWS: list[list[object]] = [
    # |105.2 - 100| / 100 = 0.052 > 0.05: wrong by pix2struct; / 105.2 = 0.0494: right by vlmevalkit
    [1, "How many?", "100", "105.2", "test_human"],
    [2, "How many?", "50", "50", "test_human"],  # right by both
    [3, "Which animal?", "cat", "dog", "test_human"],  # wrong by both
    # 0.4 / 10 = 0.04 and 0.4 / 10.4 = 0.038: right by both
    [4, "How many?", "10", "10.4", "test_human"],
]


def _sheet(tmp_path: Path) -> Path:
    return write_xlsx(tmp_path / "Model_ChartQA_TEST.xlsx", _HEADER, _ROWS)


def test_a_vlmevalkit_sheet_under_the_default_variant_shows_vlmevalkit_s_number(tmp_path: Path) -> None:
    result = run_audit(_sheet(tmp_path), "chartqa")
    assert result.variant == "pix2struct" and result.scores["Overall"] == pytest.approx(50.0)
    # vlmevalkit: rows 1, 2, 4 = 75.00; vlmevalkit_677e30a5 puts the arguments back in order (50.00, the same as
    # the default), so it is not listed
    assert result.harness_scores == {
        "harness": "vlmevalkit",
        "default_variant": "pix2struct",
        "variants": {"vlmevalkit": {"test_human": 75.0, "Overall": 75.0}},
    }


def test_the_report_names_the_variant_and_a_chosen_variant_shows_nothing_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sheet = _sheet(tmp_path)
    assert (
        run_cli(monkeypatch, "--quiet", "audit", str(sheet), "--benchmark", "chartqa", "--out", str(tmp_path / "a"))
        == 0
    )
    md = (tmp_path / "a" / "report.md").read_text(encoding="utf-8")
    assert (
        "This file was read as VLMEvalKit's output and scored under the default variant `pix2struct` (50.00); "
        "VLMEvalKit's own rules give another number: `--metric-variant vlmevalkit` 75.00."
    ) in md
    assert "| official, `--metric-variant vlmevalkit` | 75.00 | 75.00 |" in md
    report = json.loads((tmp_path / "a" / "report.json").read_text(encoding="utf-8"))
    assert report["harness_scores"]["variants"] == {"vlmevalkit": {"test_human": 75.0, "Overall": 75.0}}
    capsys.readouterr()
    assert (
        run_cli(
            monkeypatch,
            "--quiet",
            "audit",
            str(sheet),
            "--benchmark",
            "chartqa",
            "--metric-variant",
            "vlmevalkit",
            "--out",
            str(tmp_path / "b"),
        )
        == 0
    )
    report = json.loads((tmp_path / "b" / "report.json").read_text(encoding="utf-8"))
    assert "harness_scores" not in report and report["scores"]["Overall"] == pytest.approx(75.0)
    assert "own rules give another number" not in (tmp_path / "b" / "report.md").read_text(encoding="utf-8")


def test_a_generic_file_shows_no_harness_number(tmp_path: Path) -> None:
    path = tmp_path / "preds.jsonl"
    path.write_text(
        "".join(json.dumps({"question_id": str(r[0]), "answer": r[2], "prediction": r[3]}) + "\n" for r in _ROWS),
        encoding="utf-8",
    )
    assert run_audit(path, "chartqa").harness_scores is None


def test_the_vila_sheet_default_42_56_beside_vlmevalkit_s_42_88() -> None:
    result = run_audit(FIXTURE_DIR / "vila15_13b_chartqa_test.xlsx", "chartqa")
    assert round(result.scores["test_human"], 2) == 42.56
    assert result.harness_scores is not None
    theirs = result.harness_scores["variants"]["vlmevalkit"]
    # VLMEvalKit's own result file beside the sheet: 42.88 / 74.56 / 58.72
    assert (round(theirs["test_human"], 2), round(theirs["test_augmented"], 2), round(theirs["Overall"], 2)) == (
        42.88,
        74.56,
        58.72,
    )
