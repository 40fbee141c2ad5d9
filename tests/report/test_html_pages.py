"""The HTML report's files without a browser: escaping, data files, image links, rules, errors, CLI wiring."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from report.conftest import HOSTILE_ANSWER, HOSTILE_REASON, Crafted
from report.test_html_tables import outcome
from shortanswer.helpers import run_cli
from vqaudit.errors import VqauditError
from vqaudit.report import html_samples
from vqaudit.report.html import write_html_report
from vqaudit.report.html_runs import run_labels
from vqaudit.report.html_samples import (
    FLAG_ANSWER,
    FLAG_DECISION,
    FLAG_ERROR,
    FLAG_FAIL,
    FLAG_INVALID,
    image_url,
    view_flags,
)
from vqaudit.schema import Obligation, View


@pytest.mark.slow
def test_pages_escape_every_string_and_hold_no_inline_script(crafted: Crafted) -> None:
    index = (crafted.report / "index.html").read_text(encoding="utf-8")
    samples = (crafted.report / "samples.html").read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=alert(1)&gt;" in index  # the replay file name inside the model spec
    assert "<img src=x" not in index
    for page in (index, samples):
        assert "Content-Security-Policy" in page and "script-src 'self'" in page
        # every <script> has a src: nothing inline to run
        assert page.count("<script") == page.count("<script src=")


@pytest.mark.slow
def test_data_files_are_json_literals_without_markup(crafted: Crafted) -> None:
    files = sorted((crafted.report / "samples").glob("*.js"))
    assert [f.name for f in files] == ["index.js", "page-00000.js"]  # 48 rows fit one page of 100
    for f in files:
        text = f.read_text(encoding="utf-8")
        assert not any(c in text for c in "<>&") and text.isascii()
    page = (crafted.report / "samples" / "page-00000.js").read_text(encoding="utf-8")
    prefix = "vqauditPage(0,"
    assert page.startswith(prefix) and page.endswith(");\n")
    rows = json.loads(page[len(prefix) : -3])
    assert len(rows) == 2 * crafted.n_groups
    hostile = next(
        v
        for r in rows
        if r["group"] == crafted.groups["HOSTILE"] and r["run"] == 1
        for v in r["views"]
        if v["state"] == "original"
    )
    # the reply round-trips exactly, parsed beside it
    assert json.loads(hostile["raw"]) == {"answerable": True, "answer": HOSTILE_ANSWER, "reason": HOSTILE_REASON}
    assert (hostile["decision"], hostile["answer"], hostile["reason"]) == ("answer", HOSTILE_ANSWER, HOSTILE_REASON)
    assert hostile["flags"] == FLAG_FAIL | FLAG_ANSWER and not hostile["passed"]
    assert hostile["rule"] == "answered; the answer matches no gold answer (exact rational equality)"


@pytest.mark.slow
def test_pages_split_by_page_size(crafted: Crafted, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(html_samples, "PAGE_GROUPS", 10)
    write_html_report([crafted.gold_run, crafted.replay_run], tmp_path / "r", n_draws=0)
    names = sorted(p.name for p in (tmp_path / "r" / "samples").glob("page-*.js"))
    assert names == [f"page-{i:05d}.js" for i in range(5)]  # 48 rows, 10 per page
    index = (tmp_path / "r" / "samples" / "index.js").read_text()
    meta = json.loads(index[len("vqauditIndex(") : -3])
    assert [row[1] for row in meta["rows"]] == [i // 10 for i in range(48)]
    assert meta["states"] == ["original", "S", "C", "M", "I"]


def test_image_links_stay_relative_and_plain(tmp_path: Path) -> None:
    out, bench = tmp_path / "report", tmp_path / "bench"
    assert image_url(out, bench, "images/a b.png") == "../bench/images/a%20b.png"
    for bad in (
        "../x.png",
        "/etc/passwd",
        "javascript:alert(1)",
        "images/a#b.png",
        'images/"x.png',
        "",
        "images/a.png\n",
        "images/../../x.png",
        "a\\b.png",
    ):
        assert image_url(out, bench, bad) is None, bad


def test_flags_and_rules_per_failure_kind() -> None:
    assert view_flags(outcome("g", "C", "answer", True)) == 0
    assert view_flags(outcome("g", "C", "answer", False)) == FLAG_FAIL | FLAG_ANSWER
    assert view_flags(outcome("g", "C", "abstain")) == FLAG_FAIL | FLAG_DECISION
    assert view_flags(outcome("g", "M", "answer")) == FLAG_FAIL | FLAG_DECISION
    assert view_flags(outcome("g", "M", "invalid")) == FLAG_FAIL | FLAG_INVALID
    assert view_flags(outcome("g", "M", "invalid", error="timeout")) == FLAG_FAIL | FLAG_ERROR


@pytest.mark.slow
def test_unscored_or_malformed_runs_are_user_errors(crafted: Crafted, tmp_path: Path) -> None:
    with pytest.raises(VqauditError, match="at least one"):
        write_html_report([], tmp_path / "r")
    run = tmp_path / "run"
    shutil.copytree(crafted.gold_run, run)
    (run / "outcomes.jsonl").unlink()
    with pytest.raises(VqauditError, match="no outcomes.jsonl"):
        write_html_report([run], tmp_path / "r")
    shutil.copy(crafted.gold_run / "outcomes.jsonl", run / "outcomes.jsonl")
    (run / "metrics.json").write_text(json.dumps({"charts": {"Jk": "high"}}))
    with pytest.raises(VqauditError, match=r"metrics.json: changed since `vqaudit score`"):  # the seal refuses it
        write_html_report([run], tmp_path / "r")
    (run / "scored.json").unlink()  # a run scored before the seal: the field itself is refused
    with pytest.raises(VqauditError, match=r"metrics.json: field 'charts.Jk': expected a number"):
        write_html_report([run], tmp_path / "r")


@pytest.mark.slow
def test_report_command_writes_the_html_beside_the_markdown(
    crafted: Crafted, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rep"
    assert run_cli(monkeypatch, "report", str(crafted.gold_run), str(crafted.replay_run), "--out", str(out)) == 0
    assert f"HTML report: {out / 'index.html'}" in capsys.readouterr().out
    for name in (
        "report.md",
        "index.html",
        "samples.html",
        "assets/browser.js",
        "assets/report.css",
        "samples/index.js",
    ):
        assert (out / name).is_file(), name
    assert 'href="report.md"' in (out / "index.html").read_text()


def test_run_labels_are_short_and_distinct() -> None:
    assert run_labels([Path("/x/a/runs/gold"), Path("/x/b/runs/gold"), Path("/x/other")]) == [
        "a/runs/gold",
        "b/runs/gold",
        "other",
    ]
    assert run_labels([Path("/x/gold"), Path("/x/gold")]) == ["gold (1)", "gold (2)"]


def _view(state: str, kind: str, meta: dict[str, object]) -> View:
    gold = {"gold": ("5",), "answer_type": "number"} if kind == "answer" else {}
    return View(
        view_id=f"g-{state}",
        group_id="g",
        source="charts",
        state=state,
        image="images/x.png",
        image_sha256="0" * 64,
        question="q",
        obligation=Obligation(kind=kind, **gold),
        meta=meta,
    )


def test_certificates_witness_proof_and_broken_files(tmp_path: Path) -> None:
    (tmp_path / "certificates").mkdir()
    witness = {
        "format": "vqaudit-chart-witness/1",
        "answer_a": "45",
        "answer_b": "0",
        "hidden_cells": [["s", "c2"]],
        "mask": {"name": "slot", "rect_px": [1, 2, 3, 4]},
        "world_a": {"series": ["s"], "categories": ["c1", "c2"], "values": [["1", "45"]]},
        "world_b": {"series": ["s"], "categories": ["c1", "c2"], "values": [["1", "0"]]},
        "answerability": {"status": "ambiguous", "method": "z3"},
    }
    proof = {
        "format": "vqaudit-chart-determined/1",
        "answer": "7",
        "mask": {"name": "slot", "rect_px": [5, 6, 7, 8]},
        "world": {},
        "answerability": {"status": "determined", "method": "enumeration"},
    }
    (tmp_path / "certificates" / "m.json").write_text(json.dumps(witness))
    (tmp_path / "certificates" / "d.json").write_text(json.dumps(proof))
    (tmp_path / "certificates" / "bad.json").write_text("{not json")
    m = html_samples._certificate(tmp_path, _view("M", "abstain", {"certificate": "certificates/m.json"}))
    # the hidden cell (s, c2) holds 45 in world A and 0 in world B
    assert m is not None and m["cells"] == [["s", "c2", "45", "0"]] and m["answers"] == ["45", "0"]
    assert m["rect"] == [1, 2, 3, 4] and m["certifier"] == "ambiguous z3"
    d = html_samples._certificate(tmp_path, _view("D", "answer", {"certificate": "certificates/d.json"}))
    assert d == {
        "kind": "determined",
        "file": "certificates/d.json",
        "format": "vqaudit-chart-determined/1",
        "answers": ["7"],
        "rect": [5, 6, 7, 8],
        "mask": "slot",
        "certifier": "determined enumeration",
    }
    bad = html_samples._certificate(tmp_path, _view("M", "abstain", {"certificate": "certificates/bad.json"}))
    assert bad is not None and "unreadable" in bad["problem"]
    # a certificate path outside the benchmark is never read
    assert html_samples._certificate(tmp_path, _view("M", "abstain", {"certificate": "../m.json"})) is None
