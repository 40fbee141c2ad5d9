"""Figures of importing the published data, measured on the repository's own real files.

1. MMBench circular copies: the 20 bundled MMBench samples plus their 58 rotated copies (index + k * 10**6, as
   the published dev TSV stores them) load as 20 items, and the AAD build gives 18 groups (the unmerged file
   gave 70); then a dev-sized file (4,329 rows: 1,110 items cycled over the 20 samples, images by index) is
   loaded and timed.
2. The multiple-choice audit of LLaVA-1.5-13B's MMBench-dev sheet (4,377 rows): circular accuracy (published
   67.7) and the time of ``vqaudit audit ... --benchmark mmbench``.
3. The 16 real ChartQA test tables of ``tests/fixtures/charts``: tables usable, skipped by reason, groups
   built, ``verify`` result and build time.

Run: ``.venv/bin/python benchmarks/bench_import.py``.
"""

from __future__ import annotations

import csv
import io
import sys
import tempfile
from pathlib import Path

from _timing import timed

ROOT = Path(__file__).resolve().parents[1]


def _circular(rows: list[dict[str, str]], n_items: int) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for i in range(n_items):
        rec = dict(rows[i % len(rows)])
        base = int(rec["index"])
        index = base if i < len(rows) else 10_000 + i
        options = [rec[c] for c in "ABCD" if rec.get(c)]
        answer = "ABCD".index(rec["answer"])
        for k in range(len(options)):
            copy = dict(rec)
            shown = options[k:] + options[:k]
            for j, letter in enumerate("ABCD"):
                copy[letter] = shown[j] if j < len(options) else ""
            copy["answer"] = "ABCD"[(answer - k) % len(options)]
            copy["index"] = str(index + k * 10**6)
            copy["image"] = rec["image"] if (k == 0 and i < len(rows)) else str(base)
            out.append(copy)
    return out


def _write(path: Path, header: list[str], rows: list[dict[str, str]]) -> Path:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, delimiter="\t", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


def main() -> int:
    from vqaudit.shortanswer.multichoice import run_mc_audit
    from vqaudit.suites.charts.chartqa import read_chartqa
    from vqaudit.suites.charts.imported import build_imported_charts
    from vqaudit.suites.upd.build import build_upd, bundled_path
    from vqaudit.suites.upd.tsv import load_mc
    from vqaudit.verify import verify_benchmark

    samples = bundled_path("mmbench_samples_en.tsv")
    reader = csv.DictReader(io.StringIO(samples.read_text(encoding="utf-8"), newline=""), delimiter="\t")
    header, rows = list(reader.fieldnames or []), list(reader)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        small = _write(work / "circular.tsv", header, _circular(rows, 20))
        loaded = load_mc(small)
        manifest = build_upd(work / "aad", tsv=small, variant="aad", setting="base", seed=0)
        print(
            f"1. MMBench samples + copies: {loaded.n_rows} rows -> {len(loaded.items)} items "
            f"({loaded.merged_rows} copies merged); AAD groups {manifest['counts']['aad/base']}"
        )
        big = _write(work / "dev.tsv", header, _circular(rows, 1110))
        with timed("   load_mc, dev-sized file", unit="row") as took:
            loaded = load_mc(big)
            took.count = loaded.n_rows
        print(took.line(f"{len(loaded.items)} items"))

        sheet = ROOT / "tests" / "fixtures" / "upd" / "llava15_13b_mmbench_dev.xlsx"
        with timed("   run_mc_audit (vqaudit audit --benchmark mmbench)", unit="row") as took:
            summary, _ = run_mc_audit(sheet, "mmbench")
            took.count = int(summary["choice"]["rows"])
        circ = summary["circular"]
        print(
            f"2. LLaVA-1.5-13B MMBench dev: {summary['choice']['rows']} rows, {circ['groups']} questions, "
            f"circular {100 * circ['accuracy']:.2f} (published 67.7)"
        )
        print(took.line())

        tables = ROOT / "tests" / "fixtures" / "charts" / "chartqa_tables"
        with timed("   read_chartqa + build_imported_charts", unit="group") as took:
            result = read_chartqa(tables)
            manifest = build_imported_charts(work / "chartqa", "chartqa", result, [tables], seed=0, max_groups=100)
            took.count = int(manifest["n_groups"])
        faults = verify_benchmark(work / "chartqa", workers=1)
        print(
            f"3. ChartQA tables: {result.n_read} read, {manifest['n_groups']} groups built, "
            f"verify faults {len(faults)}; skipped {manifest['skipped']}"
        )
        print(took.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
