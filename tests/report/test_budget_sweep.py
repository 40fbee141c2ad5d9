"""``vqaudit eval --budgets``: one model at several token budgets, against a real local HTTP server on 127.0.0.1.

The server (the fake OpenAI-compatible server of tests/fixtures, its replies chosen here) answers every view of a
4-group chart benchmark (seed 0: views original, S, C supported; M, I negative) by the ``max_tokens`` it receives:

- 1024: a finished ``<think>...</think>`` followed by the gold contract object: every view right;
- 256: the same, except the M views of the last two groups (``charts-00002``, ``charts-00003``), cut inside
  ``<think>`` with ``finish_reason: "length"`` (the budget ran out while thinking): invalid;
- 64: every reply cut by the budget: the original views as a server with a reasoning parser sends it
  (``content: null``, the thinking in ``reasoning_content``, vLLM/SGLang/DeepSeek), the others cut inside
  ``<think>``: every view invalid.

Every reply reports ``usage``: 100 prompt tokens; a cut reply used its whole budget, all of it reasoning; a
finished one 40 completion tokens, 30 of them reasoning. So ``run.json`` ``usage`` of each budget (20 replies):
64: 2,000 / 20 x 64 = 1,280 / 1,280; 256: 2,000 / 18 x 40 + 2 x 256 = 1,232 / 18 x 30 + 2 x 256 = 1,052;
1024: 2,000 / 800 / 600.

Hand computation (seed 000 §4; invalid is never correct, and a negative view not abstained on counts in EU):

======  ======================  =================  ===================  ======  ======
budget  supported_rejection     EU                 EM                   Ebal    Jk, Bk
======  ======================  =================  ===================  ======  ======
64      12/12 = 1               8/8 = 1            4/4 = 1              1       0, 0
256     0/12 = 0                2/8 = 0.25         2/4 = 0.5            0.125   0.5, 0.5
1024    0                       0                  0                    0       1, 1
======  ======================  =================  ===================  ======  ======

Intervals: at 64 and 1024 every group is alike, so every draw gives the point (degenerate intervals, and the paired
difference of 64 to 1024 is exactly +1 for the failure rates and -1 for Jk and Bk). At 256 a draw's Jk is
(draws of the two right groups) / 4 and its EU (draws of the two failing groups) / 8: both binomial(4, 1/2) counts,
whose extremes 0 and 4 each have probability 1/16 = 6.25% > 2.5%, so the 95% percentile intervals are the full
ranges: Jk [0, 1], EU [0, 0.5], EM [0, 1], Ebal [0, 0.25], and ΔJk [-1, 0], ΔEU [0, 0.5] against 1024.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fixture_modules import fake_openai_server
from report.conftest import CHROMIUM, CHROMIUM_ARGS
from vqaudit.store import load_benchmark
from vqaudit.suites.charts.build import build_charts

pytestmark = pytest.mark.slow  # builds a benchmark, runs eval three times over HTTP, drives a browser

BUDGETS = (64, 256, 1024)
CUT_AT_256 = {"charts-00002", "charts-00003"}  # groups whose M view runs out of tokens at budget 256


def _gold(view: Any) -> str:
    if view.obligation.kind == "answer":
        return json.dumps({"answerable": True, "answer": view.obligation.gold[0], "reason": "read off the chart"})
    return json.dumps({"answerable": False, "answer": None, "reason": "the value is hidden"})


class BudgetServer(fake_openai_server().FakeOpenAIServer):  # type: ignore[misc]
    """The fake server, replying by the request's ``max_tokens`` as the module docstring says."""

    def __init__(self, views: dict[str, Any]) -> None:
        super().__init__()
        self.views = views  # image sha256 -> view

    async def _route(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, bytes] | None:
        if method != "POST" or not path.endswith("/chat/completions"):
            return 404, b'{"error": "not found"}'
        request: dict[str, Any] = json.loads(body)
        url = request["messages"][0]["content"][0]["image_url"]["url"]
        view = self.views[hashlib.sha256(base64.b64decode(url.split(",", 1)[1])).hexdigest()]
        with self._lock:
            self.bodies.append(request)
        budget = request["max_tokens"]
        cut = budget < 256 or (budget < 1024 and view.state == "M" and view.group_id in CUT_AT_256)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": (
                "<think>The chart shows a masked region, so I should"
                if cut
                else f"<think>Reading the chart carefully.</think>{_gold(view)}"
            ),
        }
        if cut and view.state == "original":
            message = {"role": "assistant", "content": None, "reasoning_content": "The chart shows, so I should"}
        choice = {"index": 0, "message": message, "finish_reason": "length" if cut else "stop"}
        usage = {
            "prompt_tokens": 100,
            "completion_tokens": budget if cut else 40,
            "completion_tokens_details": {"reasoning_tokens": budget if cut else 30},
        }
        return 200, json.dumps(
            {"id": "x", "model": "fake", "created": 0, "object": "chat.completion", "choices": [choice], "usage": usage}
        ).encode()


@dataclass(frozen=True)
class Swept:
    """The eval output folder, what eval printed, and the bodies the server received."""

    out: Path
    stdout: str
    bodies: list[dict[str, Any]]


def _vqaudit(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "400"}
    return subprocess.run(
        [sys.executable, "-m", "vqaudit", *args], capture_output=True, text=True, timeout=600, env=env
    )


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Swept]:
    root = tmp_path_factory.mktemp("sweep")
    bench = root / "bench"
    build_charts(bench, 4, 0, workers=1)
    views = {v.image_sha256: v for v in load_benchmark(bench, check_images=False).views}
    assert len(views) == 20  # every view has its own image, so each is one request
    server = BudgetServer(views).start()
    try:
        done = _vqaudit(
            "eval",
            "charts",
            "--bench",
            str(bench),
            "--out",
            str(root / "out"),
            "--model",
            f"openai:fake@{server.url}",
            "--budgets",
            "1024,64,256",
            "--draws",
            "2000",
            "--max-retries",
            "0",
        )
        assert done.returncode == 0, done.stderr
        yield Swept(root / "out", done.stdout, list(server.bodies))
    finally:
        server.stop()


def test_each_budget_is_one_run_sent_its_max_tokens(swept: Swept) -> None:
    sent = sorted(b["max_tokens"] for b in swept.bodies)
    assert sent == [64] * 20 + [256] * 20 + [1024] * 20
    for budget in BUDGETS:
        info = json.loads((swept.out / f"budget-{budget}" / "run.json").read_text())
        assert info["params"]["max_tokens"] == budget
    cut = [json.loads(line) for line in (swept.out / "budget-64" / "outcomes.jsonl").read_text().splitlines()]
    served = [o for o in cut if o["state"] == "original"]  # content null, thinking in reasoning_content
    assert len(served) == 4 and all(o["invalid_reason"] == "reasoning not finished" for o in served)
    assert {o["reasoning_chars"] for o in served} == {len("The chart shows, so I should")}


def test_sweep_json_has_the_hand_computed_metrics(swept: Swept) -> None:
    data = json.loads((swept.out / "sweep.json").read_text())
    assert data["format"] == "vqaudit-sweep/1" and set(data["sources"]) == {"charts"}
    sweep = data["sources"]["charts"]
    assert sweep["reference"] == 1024 and sweep["n_groups"] == 4 and sweep["n_draws"] == 2000
    points = {p["budget"]: p for p in sweep["points"]}
    assert [p["budget"] for p in sweep["points"]] == [64, 256, 1024]  # increasing, whatever order was given
    expected = {
        64: {"Ebal": 1.0, "EU": 1.0, "EM": 1.0, "Jk": 0.0, "Bk": 0.0},
        256: {"Ebal": 0.125, "EU": 0.25, "EM": 0.5, "Jk": 0.5, "Bk": 0.5},
        1024: {"Ebal": 0.0, "EU": 0.0, "EM": 0.0, "Jk": 1.0, "Bk": 1.0},
    }
    for budget, values in expected.items():
        assert points[budget]["metrics"] == values
    assert (points[64]["n_unfinished"], points[256]["n_unfinished"], points[1024]["n_unfinished"]) == (20, 2, 0)
    assert [points[b]["n_reasoning"] for b in BUDGETS] == [20, 20, 20]
    # degenerate intervals where every group is alike; the full binomial ranges at 256 (module docstring)
    assert points[64]["ci"]["Jk"] == [0.0, 0.0] and points[1024]["ci"]["Ebal"] == [0.0, 0.0]
    assert points[256]["ci"] == {
        "Ebal": [0.0, 0.25],
        "EU": [0.0, 0.5],
        "EM": [0.0, 1.0],
        "Jk": [0.0, 1.0],
        "Bk": [0.0, 1.0],
    }
    assert points[64]["diff"] == {
        "Ebal": [1.0, 1.0, 1.0],
        "EU": [1.0, 1.0, 1.0],
        "EM": [1.0, 1.0, 1.0],
        "Jk": [-1.0, -1.0, -1.0],
        "Bk": [-1.0, -1.0, -1.0],
    }
    assert points[256]["diff"]["Jk"] == [-0.5, -1.0, 0.0] and points[256]["diff"]["EU"] == [0.25, 0.0, 0.5]
    assert points[1024]["diff"]["Jk"] == [0.0, 0.0, 0.0]


def test_markdown_report_and_stdout_show_the_sweep(swept: Swept) -> None:
    report = (swept.out / "report" / "report.md").read_text()
    assert "## Token-budget sweep" in report and "### charts: Δ against max_tokens = 1024" in report
    row_64 = (
        "| 64 | budget-64 | 20 of 20 | 100.0 [100.0, 100.0] | +100.0 [+100.0, +100.0] | 100.0 [100.0, 100.0] | "
        "+100.0 [+100.0, +100.0] | 100.0 [100.0, 100.0] | +100.0 [+100.0, +100.0] | 0.0 [0.0, 0.0] | "
        "-100.0 [-100.0, -100.0] | 0.0 [0.0, 0.0] | -100.0 [-100.0, -100.0] |"
    )
    row_256 = (
        "| 256 | budget-256 | 2 of 20 | 12.5 [0.0, 25.0] | +12.5 [+0.0, +25.0] | 25.0 [0.0, 50.0] | "
        "+25.0 [+0.0, +50.0] | 50.0 [0.0, 100.0] | +50.0 [+0.0, +100.0] | 50.0 [0.0, 100.0] | "
        "-50.0 [-100.0, +0.0] | 50.0 [0.0, 100.0] | -50.0 [-100.0, +0.0] |"
    )
    assert row_64 in report.splitlines() and row_256 in report.splitlines()
    assert row_256 in swept.stdout and f"sweep: {swept.out / 'sweep.json'}" in swept.stdout
    # the runs held reasoning, so the reasoning section is there too: at 64 no reply finished; token usage
    assert "| budget-64 | charts | 20 | 20 | 0 of 20 (0.0%) |" in report
    for row in (
        "| budget-64 | 20 | 2,000 | 1,280 | 1,280 |",
        "| budget-256 | 20 | 2,000 | 1,232 | 1,052 |",
        "| budget-1024 | 20 | 2,000 | 800 | 600 |",
    ):
        assert row in report.splitlines()


def test_budgets_refusals(tmp_path: Path) -> None:
    cases = [
        (
            [
                "--model",
                "openai:a@http://127.0.0.1:9/v1",
                "--model",
                "openai:b@http://127.0.0.1:9/v1",
                "--budgets",
                "64,128",
            ],
            "give exactly one --model",
        ),
        (["--model", "openai:a@http://127.0.0.1:9/v1", "--budgets", "64,64"], "two or more distinct budgets"),
        (["--model", "openai:a@http://127.0.0.1:9/v1", "--budgets", "64,x"], "comma-separated token budgets"),
        (
            ["--model", "openai:a@http://127.0.0.1:9/v1", "--budgets", "64,128", "--model-arg", "max_tokens=5"],
            "drop --model-arg max_tokens",
        ),
        (["--model", "replay:nothing.jsonl", "--budgets", "64,128"], "takes no such generation setting"),
    ]
    for args, message in cases:
        done = _vqaudit("eval", "charts", "--out", str(tmp_path / "o"), *args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert message in done.stderr, (args, done.stderr)
        assert not (tmp_path / "o").exists()  # refused before anything was built


@pytest.fixture(scope="module")
def browser(swept: Swept) -> Iterator[Any]:
    """Headless Debian chromium through Playwright (skipped where either is missing), after the sweep ran."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install 'vqaudit[report]'")
    executable = shutil.which("chromium") or (str(CHROMIUM) if CHROMIUM.exists() else None)
    if executable is None:
        pytest.skip("no system chromium (apt-get install -y chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield b
        b.close()


def test_sweep_plot_renders_in_chromium(browser: Any, swept: Swept, tmp_path: Path) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.goto((swept.out / "report" / "index.html").as_uri())
    plot = page.locator("img.sweep-plot")
    assert plot.count() == 1
    plot.scroll_into_view_if_needed()
    box = plot.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 100
    assert plot.evaluate("img => img.complete && img.naturalWidth > 0 && img.naturalHeight > 0")
    cells = page.locator(".sweep-table tr[data-budget='256'] td")
    assert cells.nth(2).inner_text() == "2 of 20"
    assert page.locator(".sweep-table tr[data-budget='256'] td[data-metric='Jk']").inner_text() == "50.0\n[0.0, 100.0]"
    shot = tmp_path / "sweep.png"
    page.locator("img.sweep-plot").screenshot(path=str(shot))
    assert shot.stat().st_size > 5_000
    assert problems == []
    page.close()
