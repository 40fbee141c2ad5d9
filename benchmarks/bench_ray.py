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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import load_line, ratio, timed  # noqa: E402
from bench_openai import SERVER, write_bench  # noqa: E402

from vqaudit.executors import LocalExecutor, RayExecutor, using  # noqa: E402
from vqaudit.ray_session import start_ray  # noqa: E402
from vqaudit.run import run_benchmark  # noqa: E402
from vqaudit.suites.charts.build import build_charts  # noqa: E402


def start_server(delay_s: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, str(SERVER), "--delay-s", str(delay_s)], stdout=subprocess.PIPE, text=True)
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
    with timed(f"build {groups} groups, local ({workers} processes)", groups, "group") as local, using(LocalExecutor()):
        build_charts(tmp / "local", groups, 0, workers=workers)
    print(local.line())
    # children: the whole local Ray instance (raylet, GCS, workers), idle overhead included
    with timed(f"build {groups} groups, ray ({workers} CPUs)", groups, "group") as ray, using(RayExecutor()):
        build_charts(tmp / "ray", groups, 0, workers=workers)
    print(ray.line(f"driver CPU {ray.per(ray.cpu_self) * 1000:.0f} ms/group (writes, hashes, Ray client)"))
    print(ratio(ray, local))
    same = tree(tmp / "local") == tree(tmp / "ray")
    print(f"byte-identical: {same}")


def bench_run(tmp: Path, views: int, concurrency: int, delay_s: float, replicas: int) -> None:
    bench = write_bench(tmp / "bench", views)
    proc, url = start_server(delay_s)
    spec = f"openai:bench@{url}"
    try:
        # children include the fake server's process
        with timed(
            f"run {views} views, local (server delay {delay_s * 1000:.0f} ms, concurrency {concurrency})", views, "view"
        ) as local_t:
            local = run_benchmark(bench, spec, tmp / "run-local", concurrency=concurrency, progress=False)
        print(local_t.line())
        with timed(f"run {views} views, ray ({replicas} replicas, incl. their start)", views, "view") as ray_t:
            ray = run_benchmark(
                bench,
                spec,
                tmp / "run-ray",
                concurrency=concurrency,
                progress=False,
                executor=RayExecutor(),
                replicas=replicas,
            )
        print(ray_t.line())
        print(ratio(ray_t, local_t))
    finally:
        proc.kill()
        proc.wait()
    assert local.n_errors == ray.n_errors == 0, (local, ray)
    same = replies(tmp / "run-local") == replies(tmp / "run-ray")
    print(f"same cache: {same}")


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
    print(f"before: {load_line()}")
    with timed(f"ray start-up (local instance, {args.workers} CPUs)") as took:
        start_ray(RayExecutor(num_cpus=args.workers))
    print(took.line())
    with tempfile.TemporaryDirectory() as tmp:
        if args.part in ("build", "all"):
            bench_build(Path(tmp) / "build", args.groups, args.workers)
        if args.part in ("run", "all"):
            bench_run(Path(tmp) / "run", args.views, args.concurrency, args.delay_s, args.replicas)
    print(f"after: {load_line()}")


if __name__ == "__main__":
    main()
