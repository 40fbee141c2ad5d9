"""Time `build_charts` for N groups (default 1,000) and verify every certificate of the result.

Usage: python benchmarks/bench_build.py [--groups 1000] [--workers 2] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from vqaudit.suites.charts.build import build_charts
from vqaudit.verify import verify_benchmark


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--programs", choices=("lookup", "all"), default="lookup")
    parser.add_argument("--determined", action="store_true")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp()) / "bench"
    t0 = time.perf_counter()
    manifest = build_charts(out, args.groups, args.seed, workers=args.workers, programs=args.programs,
                            determined=args.determined)
    build_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    faults = verify_benchmark(out, workers=args.workers)
    verify_s = time.perf_counter() - t0
    kinds: dict[str, int] = {}
    rejected = 0

    for cert_path in (out / "certificates").glob("*.json"):
        cert = json.loads(cert_path.read_text())
        kinds[cert["mask"]["name"]] = kinds.get(cert["mask"]["name"], 0) + 1
        rejected += len(cert.get("rejected_masks", []))
    print(
        f"built {args.groups} groups ({manifest['n_views']} views) with {args.workers} workers in {build_s:.1f} s "
        f"({args.groups / build_s:.1f} groups/s)"
    )
    print(f"certified masks by kind: {kinds}; leaking masks rejected by the pixel check: {rejected}")
    print(f"verified {sum(kinds.values())} certificates with {args.workers} workers in {verify_s:.1f} s; "
          f"faults: {len(faults)}")
    if args.out is None:
        shutil.rmtree(out.parent)


if __name__ == "__main__":
    main()
