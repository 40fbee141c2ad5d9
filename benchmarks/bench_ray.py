"""Local vs Ray on this machine: chart build time (same core count, so Ray's overhead is what is measured) and run
throughput against a local OpenAI-compatible server; checks that the outputs are identical.

1. build: ``build charts --groups N`` with the local executor (``--workers W``) and on a local Ray instance with
   W CPUs; the two folders must be byte-identical (every file). Ray's start-up is timed on its own.
2. run: ``run`` of an N-view benchmark against the fake server (tests/fixtures/fake_openai_server.py, in its own
   process, ``--delay-s`` per reply to stand in for a model) locally and through Ray replicas; the two caches
   must hold the same replies.

Usage: ``.venv/bin/python benchmarks/bench_ray.py [--part build|run|all] [--groups 200] [--workers 2]
[--views 2000] [--concurrency 32] [--delay-s 0.0] [--replicas 2]``.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_openai import SERVER, write_bench  # noqa: E402

from vqaudit.executors import LocalExecutor, RayExecutor, start_ray, using  # noqa: E402
from vqaudit.run import run_benchmark  # noqa: E402
from vqaudit.suites.charts.build import build_charts  # noqa: E402


def start_server(delay_s: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, str(SERVER), "--delay-s", str(delay_s)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        proc.kill()
        raise RuntimeError(f"fake server did not start: {line!r}")
    return proc, f"http://127.0.0.1:{int(line.split()[1])}/v1"


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def replies(run_dir: Path) -> dict[str, str | None]:
    conn = sqlite3.connect(run_dir / "responses.sqlite")
    try:
        return dict(conn.execute("SELECT key, view_id || char(0) || coalesce(text, error) FROM responses").fetchall())
    finally:
        conn.close()


def bench_build(tmp: Path, groups: int, workers: int) -> None:
    tmp.mkdir(parents=True)
    started = time.perf_counter()
    with using(LocalExecutor()):
        build_charts(tmp / "local", groups, 0, workers=workers)
    local_s = time.perf_counter() - started
    started, cpu = time.perf_counter(), time.process_time()
    with using(RayExecutor()):
        build_charts(tmp / "ray", groups, 0, workers=workers)
    ray_s, driver_s = time.perf_counter() - started, time.process_time() - cpu
    same = tree(tmp / "local") == tree(tmp / "ray")
    print(f"build {groups} groups: local ({workers} processes) {local_s:.1f} s ({groups / local_s:.2f} groups/s); "
          f"ray ({workers} CPUs) {ray_s:.1f} s ({groups / ray_s:.2f} groups/s); ray/local {ray_s / local_s:.2f}; "
          f"byte-identical: {same}; driver CPU with ray {driver_s / groups * 1000:.0f} ms/group (writes, hashes, "
          "Ray client)")


def bench_run(tmp: Path, views: int, concurrency: int, delay_s: float, replicas: int) -> None:
    bench = write_bench(tmp / "bench", views)
    proc, url = start_server(delay_s)
    spec = f"openai:bench@{url}"
    try:
        started = time.perf_counter()
        local = run_benchmark(bench, spec, tmp / "run-local", concurrency=concurrency, progress=False)
        local_s = time.perf_counter() - started
        started = time.perf_counter()
        ray = run_benchmark(bench, spec, tmp / "run-ray", concurrency=concurrency, progress=False,
                            executor=RayExecutor(), replicas=replicas)
        ray_s = time.perf_counter() - started
    finally:
        proc.kill()
        proc.wait()
    assert local.n_errors == ray.n_errors == 0, (local, ray)
    same = replies(tmp / "run-local") == replies(tmp / "run-ray")
    print(f"run {views} views (server delay {delay_s * 1000:.0f} ms, concurrency {concurrency}): local "
          f"{views / local_s:.0f} views/s ({local_s:.1f} s); ray ({replicas} replicas, incl. their start) "
          f"{views / ray_s:.0f} views/s ({ray_s:.1f} s); same cache: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("build", "run", "all"), default="all")
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--views", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--delay-s", type=float, default=0.0)
    parser.add_argument("--replicas", type=int, default=2)
    args = parser.parse_args()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    started = time.perf_counter()
    start_ray(RayExecutor(num_cpus=args.workers))
    print(f"ray start-up (local instance, {args.workers} CPUs): {time.perf_counter() - started:.1f} s")
    with tempfile.TemporaryDirectory() as tmp:
        if args.part in ("build", "all"):
            bench_build(Path(tmp) / "build", args.groups, args.workers)
        if args.part in ("run", "all"):
            bench_run(Path(tmp) / "run", args.views, args.concurrency, args.delay_s, args.replicas)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
