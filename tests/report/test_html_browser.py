"""The HTML report in a real browser (headless Debian chromium through Playwright), on the crafted run of conftest.

Checks that the tables show the values of metrics.json, that the state filter shows only the chosen state, that
replies holding ``<script>`` and ``<img onerror>`` are shown as text and run nothing, and saves screenshots under
the test's tmp dir.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from report.conftest import HOSTILE_ANSWER, HOSTILE_REASON, INVALID_REPLY, Crafted

pytestmark = pytest.mark.slow  # builds and scores two runs, then drives a browser

expect = pytest.importorskip("playwright.sync_api", reason="pip install 'vqaudit[report]'").expect

METRICS = ("Jk", "Bk", "decision_accuracy", "supported_rejection", "EU", "EM", "EI", "Ebal", "invalid_rate")


def _open(browser: Any, url: str) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    page.goto(url)
    return page, problems


def _samples(browser: Any, crafted: Crafted) -> tuple[Any, list[str]]:
    page, problems = _open(browser, (crafted.report / "samples.html").as_uri())
    page.wait_for_selector("body[data-ready='1']")
    return page, problems


def _wait(page: Any) -> None:
    page.wait_for_selector("body[data-ready='1']")


def test_overview_shows_metrics_json(browser: Any, crafted: Crafted, tmp_path: Path) -> None:
    page, problems = _open(browser, (crafted.report / "index.html").as_uri())
    for run in (crafted.gold_run, crafted.replay_run):
        metrics = json.loads((run / "metrics.json").read_text())["charts"]
        for key in METRICS:
            cell = page.locator(f"#overview-table tr[data-run='{run.name}'] td[data-metric='{key}'] .point")
            expected = "n/a" if metrics[key] is None else f"{100 * metrics[key]:.1f}"
            assert cell.inner_text() == expected, (run.name, key)
        lo, hi = metrics["ci"]["Jk"]
        ci = page.locator(f"#overview-table tr[data-run='{run.name}'] td[data-metric='Jk'] .ci").inner_text()
        assert ci == f"[{100 * lo:.1f}, {100 * hi:.1f}]"
    # conftest's hand count: Bk = 21/24, Jk = 19/24 for the crafted run, and 2 groups right in every decision
    # with a wrong answer
    row = f"#overview-table tr[data-run='{crafted.replay_run.name}']"
    assert page.locator(f"{row} td[data-metric='Bk'] .point").inner_text() == f"{100 * 21 / 24:.1f}"
    assert page.locator(f"{row} td[data-metric='Jk'] .point").inner_text() == f"{100 * 19 / 24:.1f}"
    assert page.locator(f".gap-table tr[data-run='{crafted.replay_run.name}'] td.gap").inner_text() == "2"
    # Table 3, state M of the crafted run: 24 views, one accepted (ACCEPTS), 23 rejected
    m_row = page.locator(f".state-table[data-run='{crafted.replay_run.name}'] tr[data-state='M'] td")
    assert [m_row.nth(i).inner_text() for i in range(2, 6)] == ["24", "1", "23", "0"]
    page.screenshot(path=str(tmp_path / "index.png"), full_page=True)
    assert (tmp_path / "index.png").stat().st_size > 10_000
    assert problems == []
    page.close()


def test_state_filter_shows_only_that_state(browser: Any, crafted: Crafted, tmp_path: Path) -> None:
    page, problems = _samples(browser, crafted)
    assert page.inner_text("#count") == f"{2 * crafted.n_groups} of {2 * crafted.n_groups} rows match"
    page.select_option("#f-state", "M")
    _wait(page)
    states = page.locator(".view").evaluate_all("els => els.map(e => e.dataset.state)")
    assert states and set(states) == {"M"}
    assert len(states) == 25  # first page: 25 of the 48 (run, group) rows, one M view each
    page.select_option("#f-outcome", "fail")
    _wait(page)
    # only the crafted run's ACCEPTS group fails its M view
    assert page.locator(".group").evaluate_all("els => els.map(e => e.dataset.group)") == [crafted.groups["ACCEPTS"]]
    assert page.locator(".view").evaluate_all("els => els.map(e => e.dataset.state)") == ["M"]
    page.select_option("#f-state", "")
    page.select_option("#f-kind", "error")
    _wait(page)
    assert page.locator(".group").evaluate_all("els => els.map(e => e.dataset.group)") == [crafted.groups["NOREPLY"]]
    page.screenshot(path=str(tmp_path / "samples-error.png"), full_page=True)
    assert problems == []
    page.close()


def test_hostile_replies_are_text_and_run_nothing(browser: Any, crafted: Crafted, tmp_path: Path) -> None:
    page, problems = _samples(browser, crafted)
    title = page.title()
    for name in ("HOSTILE", "INVALID"):
        page.fill("#search", crafted.groups[name])
        expect(page.locator(".group").first).to_have_attribute("data-group", crafted.groups[name])
        expect(page.locator("#count")).to_have_text(f"2 of {2 * crafted.n_groups} rows match")  # one per run
        _wait(page)
        groups = page.locator(".group").evaluate_all("els => els.map(e => e.dataset.group)")
        assert groups == [crafted.groups[name]] * 2
        texts = page.locator(".view pre.raw").all_inner_texts()
        if name == "HOSTILE":
            assert {"answerable": True, "answer": HOSTILE_ANSWER, "reason": HOSTILE_REASON} in [
                json.loads(t) for t in texts
            ]
            answers = page.locator(".view .kv").all_inner_texts()
            assert f"answer: {HOSTILE_ANSWER}" in answers and f"reason: {HOSTILE_REASON}" in answers
        else:
            assert INVALID_REPLY in texts
        page.screenshot(path=str(tmp_path / f"samples-{name.lower()}.png"), full_page=True)
    # nothing ran: no handler fired, no script executed, no element was made from the replies
    assert page.evaluate("document.body.dataset.pwned") is None
    assert page.evaluate("window.__pwned") is None
    assert page.title() == title
    assert page.locator(".view pre script, .view pre img, .view .kv img, .view .kv script").count() == 0
    assert page.locator("img[src='x']").count() == 0
    assert problems == []
    page.close()


def test_model_spec_with_markup_is_text(browser: Any, crafted: Crafted) -> None:
    page, problems = _open(browser, (crafted.report / "index.html").as_uri())
    models = page.locator("#runs-table td:nth-child(2)").all_inner_texts()
    assert any("<img src=x onerror=alert(1)>" in m for m in models)
    assert page.locator("img[src='x']").count() == 0
    assert problems == []
    page.close()


def test_masked_view_draws_certificate(browser: Any, crafted: Crafted) -> None:
    page, problems = _samples(browser, crafted)
    page.select_option("#f-state", "M")
    _wait(page)
    card = page.locator(f".group[data-group='{crafted.groups['HOSTILE']}'] .view").first
    card.locator(".maskbox").wait_for()
    view_id = card.get_attribute("data-view-id")
    views = [json.loads(line) for line in (crafted.bench / "views.jsonl").read_text().splitlines()]
    view = next(v for v in views if v["view_id"] == view_id)
    cert = json.loads((crafted.bench / view["meta"]["certificate"]).read_text())
    x0, y0, x1, y1 = cert["mask"]["rect_px"]
    # the drawn box covers the mask rectangle in the displayed image's scale (within one pixel)
    img = card.locator(".thumb img").bounding_box()
    box = card.locator(".maskbox").bounding_box()
    natural = card.locator(".thumb img").evaluate("e => [e.naturalWidth, e.naturalHeight]")
    sx, sy = img["width"] / natural[0], img["height"] / natural[1]
    assert abs(box["x"] - (img["x"] + x0 * sx)) <= 1 and abs(box["width"] - (x1 - x0) * sx) <= 1
    assert abs(box["y"] - (img["y"] + y0 * sy)) <= 1 and abs(box["height"] - (y1 - y0) * sy) <= 1
    text = card.locator(".cert").inner_text()
    assert f"{cert['answer_a']} / {cert['answer_b']}" in text
    assert problems == []
    page.close()


@pytest.mark.parametrize("name", ["index.html", "samples.html"])
def test_pages_load_nothing_from_the_network(browser: Any, crafted: Crafted, name: str) -> None:
    page = browser.new_page()
    urls: list[str] = []
    page.on("request", lambda r: urls.append(r.url))
    page.goto((crafted.report / name).as_uri())
    page.wait_for_load_state("load")
    assert urls and all(u.startswith(("file://", "data:")) for u in urls)
    page.close()
