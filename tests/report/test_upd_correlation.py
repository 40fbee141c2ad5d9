"""Standard versus UPD / Dual accuracy across models (seed 001 §7, Fig. 7): coefficients, Markdown, HTML scatter.

Three designed replay runs on four AAD items (settings original and base; every reply read by the strict
matcher). Each run answers the standard question of a set of items right in every rotation (both settings) and
abstains on the UPD question of another set:

    run    standard right   UPD right    Original Standard   UPD    Dual
    m1     {1, 2}           {1}          0.50                0.25   0.25
    m2     {1, 2, 3}        {1, 2, 4}    0.75                0.75   0.50
    m3     {1, 2, 3, 4}     {1, 2}       1.00                0.50   0.50

By hand, x = (0.5, 0.75, 1): UPD deviations (-0.25, 0.25, 0), so r = 0.0625 / sqrt(0.125 * 0.125) = 0.5, and the
ranks (1, 3, 2) give Spearman rho 0.5; Dual deviations (-1/6, 1/12, 1/12) give r = 0.0625 / sqrt(0.125 * 0.041667)
= sqrt(3)/2 = 0.866, and the tied ranks (1, 2.5, 2.5) give rho = 1.5 / sqrt(2 * 1.5) = 0.866.
"""

from __future__ import annotations

import base64
import json
import shutil
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from report.conftest import CHROMIUM, CHROMIUM_ARGS
from upd.helpers import row, write_tsv
from vqaudit.metrics.upd import pearson, spearman, standard_correlation
from vqaudit.prompts.upd import LETTERS
from vqaudit.report.html import write_html_report
from vqaudit.report.upd import write_upd_report
from vqaudit.run import run_benchmark
from vqaudit.schema import UPDViewMeta
from vqaudit.score import score_run
from vqaudit.store import load_benchmark
from vqaudit.suites.upd.build import build_upd

DESIGN = {"m1": ({1, 2}, {1}), "m2": ({1, 2, 3}, {1, 2, 4}), "m3": ({1, 2, 3, 4}, {1, 2})}
ROOT3_2 = 3**0.5 / 2


def _cfg(std: float, upd: float | None, dual: float | None) -> dict[str, Any]:
    return {"standard": std, "upd": upd, "dual": dual}


def test_coefficients_by_hand() -> None:
    # x (0.5, 0.6, 0.7), y (0.1, 0.2, 0.9): dx (-0.1, 0, 0.1), dy (-0.3, -0.2, 0.5): r = 0.08 / sqrt(0.02 * 0.38)
    assert pearson([0.5, 0.6, 0.7], [0.1, 0.2, 0.9]) == pytest.approx(0.08 / (0.02 * 0.38) ** 0.5)
    assert spearman([0.5, 0.6, 0.7], [0.1, 0.2, 0.9]) == pytest.approx(1.0)  # the same order: rho = 1
    assert pearson([0.5, 0.6, 0.7], [0.3, 0.3, 0.3]) is None  # no spread in y: undefined
    assert spearman([0.5, 0.75, 1.0], [0.25, 0.5, 0.5]) == pytest.approx(ROOT3_2)


def test_standard_correlation_rows() -> None:
    runs = [
        (f"m{i}", {"configs": {"aad/base": _cfg(s, u, d), "aad/option": _cfg(s, u, d)}})
        for i, (s, u, d) in enumerate([(0.5, 0.1, 0.1), (0.6, 0.2, 0.2), (0.7, 0.9, 0.6)])
    ]
    rows = standard_correlation(runs)
    assert [(r["setting"], r["x_from"], r["n"]) for r in rows] == [("base", "standard", 3), ("option", "standard", 3)]
    assert rows[0]["pearson_upd"] == pytest.approx(0.08 / (0.02 * 0.38) ** 0.5)
    assert rows[0]["spearman_upd"] == pytest.approx(1.0)
    assert standard_correlation(runs[:2]) == []  # fewer than 3 runs: nothing shown
    # with an Original Standard configuration in every run, x comes from it (the paper's Fig. 7)
    for (_, m), x in zip(runs, (0.9, 0.8, 0.7), strict=True):
        m["configs"]["aad/original"] = _cfg(x, None, None)
    base = standard_correlation(runs)[0]
    assert base["x_from"] == "original" and [p["x"] for p in base["points"]] == [0.9, 0.8, 0.7]
    assert base["spearman_upd"] == pytest.approx(-1.0)


@pytest.fixture(scope="module")
def designed(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], Path]:
    root = tmp_path_factory.mktemp("upd-corr")
    tsv = write_tsv(
        root / "four.tsv",
        [
            row(
                i,
                f"Which colour is shape {i}?",
                ["red", "green", "blue", "grey"],
                "ABCD"[i - 1],
                "attribute_recognition",
            )
            for i in range(1, 5)
        ],
    )
    bench = root / "bench"
    build_upd(bench, tsv=tsv, variant="aad", setting="original,base", seed=0)
    views = load_benchmark(bench).views
    runs = []
    for name, (std_right, upd_right) in DESIGN.items():
        lines = []
        for v in views:
            item = UPDViewMeta.of(v).item_index
            if v.obligation.kind == "answer":
                gold = v.obligation.gold[0]
                text = gold if item in std_right else LETTERS[(LETTERS.index(gold) + 1) % 4]
            else:
                text = "None of the above" if item in upd_right else "A"
            lines.append(json.dumps({"view_id": v.view_id, "text": text}) + "\n")
        replies = root / f"{name}.jsonl"
        replies.write_text("".join(lines), encoding="utf-8")
        run_benchmark(bench, f"replay:{replies}", root / name, progress=False)
        score_run(root / name, n_draws=10)
        runs.append(root / name)
    report = root / "report"
    write_html_report(runs, report, n_draws=10)
    return runs, report


def test_markdown_table(designed: tuple[list[Path], Path], tmp_path: Path) -> None:
    runs, _ = designed
    text = write_upd_report(runs, tmp_path).read_text(encoding="utf-8")
    assert "## Standard versus UPD and Dual accuracy across models (seed 001 Fig. 7)" in text
    assert "| AAD | Base | Original Standard | 3 | 0.500 | 0.500 | 0.866 | 0.866 |" in text
    two = write_upd_report(runs[:2], tmp_path / "two").read_text(encoding="utf-8")
    assert "Fig. 7" not in two  # shown only for at least 3 UPD runs


@pytest.fixture(scope="module")
def browser(designed: tuple[list[Path], Path]) -> Iterator[Any]:
    """Headless system chromium through Playwright, opened after the runs are made (asyncio.run refuses to start
    inside Playwright's loop)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install 'vqaudit[report]'")
    executable = shutil.which("chromium") or (str(CHROMIUM) if CHROMIUM.exists() else None)
    if executable is None:
        pytest.skip("no system chromium (apt-get install -y chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield b
        b.close()


def test_html_scatter_in_chromium(browser: Any, designed: tuple[list[Path], Path], tmp_path: Path) -> None:
    _, report = designed
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto((report / "index.html").as_uri())
    cells = page.locator("#upd-correlation-table tr[data-config='aad/base'] td")
    assert [cells.nth(i).inner_text() for i in range(8)] == [
        "AAD",
        "base",
        "Original Standard",
        "3",
        "0.500",
        "0.500",
        "0.866",
        "0.866",
    ]
    img = page.locator("img.upd-scatter[data-variant='AAD']")
    assert img.evaluate("i => i.complete && i.naturalWidth > 300 && i.naturalHeight > 300")
    img.scroll_into_view_if_needed()
    img.screenshot(path=str(tmp_path / "scatter.png"))
    src = img.get_attribute("src")
    assert src is not None and src.startswith("data:image/svg+xml")
    head, _, payload = src.partition(",")
    svg = base64.b64decode(payload) if head.endswith(";base64") else urllib.parse.unquote(payload).encode()
    (tmp_path / "scatter.svg").write_bytes(svg)
    page.goto((tmp_path / "scatter.svg").as_uri())  # the plot itself, rendered by chromium: one marker per run
    for key, expected in (("upd", (0.25, 0.75, 0.5)), ("dual", (0.25, 0.5, 0.5))):
        marks = page.eval_on_selector_all(
            f"#points-aad-base-{key} use",
            "us => us.map(u => { const b = u.getBoundingClientRect(); "
            "return [b.x + b.width / 2, b.y + b.height / 2]; })",
        )
        assert len(marks) == 3
        xs, ys = [m[0] for m in marks], [m[1] for m in marks]
        assert xs[0] < xs[1] < xs[2]  # Standard 50 < 75 < 100 percent, left to right
        # screen y grows downwards: the higher accuracy is drawn higher; equal accuracies at one height
        for a in range(3):
            for b in range(3):
                if expected[a] > expected[b]:
                    assert ys[a] < ys[b]
                elif expected[a] == expected[b]:
                    assert ys[a] == pytest.approx(ys[b], abs=0.5)
        # equal spacing in x: 25 points apart on a linear axis
        assert xs[1] - xs[0] == pytest.approx(xs[2] - xs[1], rel=0.01)
    assert problems == []
    page.close()
