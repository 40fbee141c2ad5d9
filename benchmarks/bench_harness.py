"""Time ``vqaudit export`` to each harness and ``import-predictions`` of each harness's log, at 5,000 groups.

The benchmark is synthetic (tests/harness/helpers.py: charts-source groups of 3 views with 4x4 PNG images, so
the time is the exporter's and importer's own work, not image encoding); replies are written in each
harness's output format by the same helpers the tests use. Reported: wall and CPU seconds per export and
per import (CPU of this process and any children), and views per CPU second. Run by hand:
``.venv/bin/python benchmarks/bench_harness.py [--groups N]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _timing import timed  # noqa: E402

from harness import helpers  # noqa: E402
from vqaudit.harness import export_benchmark, import_predictions  # noqa: E402
from vqaudit.store import load_benchmark  # noqa: E402

LOGS = {
    "vlmevalkit": ("pred.xlsx", helpers.write_vlmevalkit_xlsx),
    "lmms-eval": ("samples.jsonl", helpers.write_lmms_flat),
    "inspect": ("log.json", helpers.write_inspect_json),
}


def step(label: str, n_views: int, work: object) -> None:
    with timed(label, n_views, "view") as took:
        work()  # type: ignore[operator]
    print(took.line(f"{n_views / took.cpu:,.0f} views per CPU second"))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, default=5000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        bench = helpers.write_tiny_benchmark(tmp / "bench", n_groups=args.groups)
        views = load_benchmark(bench).views
        replies = {v.view_id: f'{{"answerable": false, "answer": null, "reason": "{v.view_id}"}}' for v in views}
        print(f"{len(views):,} views ({args.groups:,} groups)")
        for harness, (file_name, write) in LOGS.items():
            step(f"export {harness}", len(views), lambda h=harness: export_benchmark(bench, h, tmp / f"ex-{h}"))
            pred = write(tmp / f"ex-{harness}", replies, tmp / f"{harness}-{file_name}")
            step(
                f"import {harness} ({file_name})",
                len(views),
                lambda h=harness, p=pred: import_predictions(p, bench, h, tmp / f"run-{h}"),
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
