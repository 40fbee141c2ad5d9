"""Make the example HTML report of docs/report.md and its screenshots (docs/report.png, docs/report_samples.png).

A 60-group chart benchmark (seed 0) is asked by two replay "models" whose replies are drawn at random (seeded): one
that answers the gold value 80% of the time and rarely accepts masked views, one that guesses more. Both are
scored, reported (Markdown + HTML) and the two pages are screenshotted in headless chromium.

Run: ``.venv/bin/python docs/report_example.py OUT_DIR`` (needs ``vqaudit[report]`` and ``apt-get install chromium``).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
from pathlib import Path

from vqaudit.report import write_report
from vqaudit.report.html import write_html_report
from vqaudit.run import run_benchmark
from vqaudit.score import score_run
from vqaudit.store import load_benchmark
from vqaudit.suites.charts.build import build_charts

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
MODELS = {"careful": (0.80, 0.15, 0.02), "guesser": (0.70, 0.55, 0.05)}  # P(gold answer), P(accept negative), P(junk)


def replies(bench: Path, p_gold: float, p_accept: float, p_junk: float, seed: int) -> list[dict[str, object]]:
    rng = random.Random(seed)
    rows = []
    for v in load_benchmark(bench, check_images=False).views:
        roll = rng.random()
        if roll < p_junk:
            text = "The chart seems to show <b>roughly</b> 40 or so."
        elif v.obligation.kind == "answer":
            if roll < p_gold:
                answer = v.obligation.gold[0]
            elif roll < 0.95:
                answer = str(float(v.obligation.gold[0]) + rng.choice((-5, -2.5, 2.5, 5)))
            else:
                answer = None
            text = json.dumps({"answerable": answer is not None, "answer": answer,
                               "reason": "read off the axis" if answer else "the mark is hard to read"})
        elif rng.random() < p_accept:
            text = json.dumps({"answerable": True, "answer": str(rng.randint(1, 20) * 5),
                               "reason": "the neighbouring values suggest it"})
        else:
            text = json.dumps({"answerable": False, "answer": None, "reason": "the queried mark is not visible"})
        rows.append({"view_id": v.view_id, "text": text})
    return rows


def main() -> None:
    from playwright.sync_api import sync_playwright

    out = Path(sys.argv[1]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.chdir(out)  # short, relative replay specs in the tables
    bench = out / "bench"
    if not (bench / "manifest.json").is_file():
        build_charts(bench, 60, 0, workers=2)
    runs = []
    for seed, (name, params) in enumerate(MODELS.items()):
        file = Path(f"{name}.jsonl")
        file.write_text("".join(json.dumps(r) + "\n" for r in replies(bench, *params, seed)), encoding="utf-8")
        run = out / "runs" / name
        run_benchmark(bench, f"replay:{file}", run, progress=False)
        score_run(run)
        runs.append(run)
    write_report(runs, out / "report")
    index = write_html_report(runs, out / "report")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        page.goto(index.as_uri())
        page.screenshot(path=str(out / "report.png"), full_page=True)
        page.goto((out / "report" / "samples.html").as_uri())
        page.wait_for_selector("body[data-ready='1']")
        page.select_option("#f-run", "1")
        page.select_option("#f-outcome", "fail")
        page.wait_for_timeout(300)
        page.wait_for_selector("body[data-ready='1']")
        page.screenshot(path=str(out / "report_samples.png"))
        browser.close()
    print(index)


if __name__ == "__main__":
    main()
