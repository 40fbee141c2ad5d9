"""The sample browser shows a reply's reasoning collapsed: the server's reasoning field and in-text spans alike.

A 2-group chart benchmark and a designed replay (every view answered with its gold label) where four views carry
reasoning, split as ``vqaudit score`` splits them (parsing/reasoning.py rules 1 and 4; the ``<think>`` span is
Qwen3 / DeepSeek-R1's documented format, ``reasoning`` beside ``text`` is vLLM's ``reasoning_content``):

- group 0, original: the server sent ``reasoning`` apart from the content -> shown, from the server's field;
- group 0, S: the content opens with ``<think>look at S</think>`` -> shown, from think tags;
- group 0, C: both -> the server's part first, then the span, joined by a newline (rule 4);
- group 1, M: no content, only the server's reasoning, cut by the budget -> shown, "never finished".

Every other view holds no reasoning and its record has no reasoning fields.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from report.conftest import CHROMIUM, CHROMIUM_ARGS
from vqaudit.report.html import write_html_report
from vqaudit.run import run_benchmark
from vqaudit.score import score_run
from vqaudit.store import load_benchmark
from vqaudit.suites.charts.build import build_charts

SERVER = "The bar for 2019 is the tallest; I read 12 off the axis."
SPAN = "look at S"


def _gold(view: Any) -> str:
    if view.obligation.kind == "answer":
        return json.dumps({"answerable": True, "answer": view.obligation.gold[0], "reason": "read off the chart"})
    return json.dumps({"answerable": False, "answer": None, "reason": "the value is hidden"})


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("reasoning-samples")
    bench = root / "bench"
    build_charts(bench, 2, 7, workers=1)
    b = load_benchmark(bench, check_images=False)
    g0, g1 = (g.group_id for g in b.groups)
    ids = {(v.group_id, v.state): v.view_id for v in b.views}
    rows = []
    for v in b.views:
        row: dict[str, Any] = {"view_id": v.view_id, "text": _gold(v)}
        if (v.group_id, v.state) == (g0, "original"):
            row.update(reasoning=SERVER, finish_reason="stop")
        elif (v.group_id, v.state) == (g0, "S"):
            row["text"] = f"<think>{SPAN}</think>" + _gold(v)
        elif (v.group_id, v.state) == (g0, "C"):
            row.update(text=f"<think>{SPAN}</think>" + _gold(v), reasoning=SERVER)
        elif (v.group_id, v.state) == (g1, "M"):
            row.update(text=None, reasoning="still weighing the M view", finish_reason="length")
        rows.append(row)
    replay = root / "replay.jsonl"
    replay.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run = root / "run"
    run_benchmark(bench, f"replay:{replay}", run, progress=False)
    score_run(run, n_draws=20)
    out = root / "report"
    write_html_report([run], out, n_draws=0)
    names = {
        "server": ids[(g0, "original")],
        "span": ids[(g0, "S")],
        "both": ids[(g0, "C")],
        "cut": ids[(g1, "M")],
    }
    return out, names


def _records(out: Path) -> dict[str, dict[str, Any]]:
    page = (out / "samples" / "page-00000.js").read_text(encoding="utf-8")
    prefix = "vqauditPage(0,"
    return {v["id"]: v for row in json.loads(page[len(prefix) : -3]) for v in row["views"]}


def test_records_carry_the_split_reasoning(report: tuple[Path, dict[str, str]]) -> None:
    out, names = report
    records = _records(out)
    server, span, both, cut = (records[names[k]] for k in ("server", "span", "both", "cut"))
    assert (server["reasoning"], server["reasoning_chars"]) == (SERVER, len(SERVER))
    assert server["reasoning_from"] == "the server's reasoning field" and server["finished"]
    assert (span["reasoning"], span["reasoning_chars"], span["reasoning_from"]) == (SPAN, 9, "think tags in the reply")
    # rule 4: the server's reasoning first, then the span of the content, joined by a newline
    assert both["reasoning"] == f"{SERVER}\n{SPAN}" and both["reasoning_chars"] == len(SERVER) + 1 + len(SPAN)
    assert both["reasoning_from"] == "the server's reasoning field and think tags in the reply"
    assert (cut["reasoning"], cut["finished"], cut["raw"]) == ("still weighing the M view", False, None)
    assert cut["decision"] == "invalid"  # scored "reasoning not finished"
    plain = [v for v in records.values() if v["id"] not in names.values()]
    assert len(plain) == 10 - 4 and not any("reasoning" in v for v in plain)
    # the raw reply is still the content exactly as received
    assert span["raw"].startswith(f"<think>{SPAN}</think>")


@pytest.mark.slow
def test_browser_shows_the_reasoning_collapsed(report: tuple[Path, dict[str, str]]) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install 'vqaudit[report]'")
    executable = shutil.which("chromium") or (str(CHROMIUM) if CHROMIUM.exists() else None)
    if executable is None:
        pytest.skip("no system chromium (apt-get install -y chromium)")
    out, names = report
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto((out / "samples.html").as_uri())
        page.wait_for_selector("body[data-ready='1']")
        card = page.locator(f".view[data-view-id='{names['server']}'] details.reasoning")
        assert card.count() == 1
        assert card.evaluate("d => d.open") is False  # collapsed until clicked
        summary = card.locator("summary").inner_text()
        assert summary == f"reasoning ({len(SERVER)} characters, the server's reasoning field)"
        card.locator("summary").click()
        assert card.locator("pre").inner_text() == SERVER
        cut = page.locator(f".view[data-view-id='{names['cut']}'] details.reasoning summary").inner_text()
        assert cut.endswith("; never finished)")
        assert page.locator("details.reasoning").count() == 4
        browser.close()
