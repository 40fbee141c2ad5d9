"""Throughput of the openai backend against a local fake server that answers instantly.

The fake server (tests/fixtures/fake_openai_server.py) runs in its own process so that it does not share the
client's event loop or interpreter lock. Two figures:

1. backend only: ``OpenAIBackend.complete`` over N requests, ``--concurrency`` in flight (no cache, no files);
2. full run stage: ``run_benchmark`` on an N-view benchmark (loading and hashing the benchmark, building prompts
   and cache keys, reading images, one SQLite commit per response, run.json).

Usage: ``.venv/bin/python benchmarks/bench_openai.py [--requests 5000] [--concurrency 64]``. Target: >= 500/s.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image

from vqaudit.backends import GenerationParams, ModelOptions, Request, load_backend
from vqaudit.run import run_benchmark
from vqaudit.schema import Group, Obligation, View
from vqaudit.store import sha256_bytes, write_json, write_jsonl

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "fixtures" / "fake_openai_server.py"
TARGET_PER_S = 500.0


def png(seed: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (seed & 0xFF, (seed >> 8) & 0xFF, (seed >> 16) & 0xFF)).save(buffer, format="PNG")
    return buffer.getvalue()


def write_bench(root: Path, n_views: int, per_group: int = 4) -> Path:
    (root / "images").mkdir(parents=True)
    views: list[View] = []
    groups: list[Group] = []
    for start in range(0, n_views, per_group):
        group_id = f"g{start // per_group}"
        question = f"What is the value of bar {group_id}?"
        ids = []
        for i in range(start, min(start + per_group, n_views)):
            data = png(i)
            (root / "images" / f"v{i}.png").write_bytes(data)
            views.append(
                View(
                    view_id=f"v{i}",
                    group_id=group_id,
                    source="charts",
                    state="original",
                    image=f"images/v{i}.png",
                    image_sha256=sha256_bytes(data),
                    question=question,
                    obligation=Obligation(kind="answer", gold=("1",), answer_type="number"),
                )
            )
            ids.append(f"v{i}")
        groups.append(Group(group_id=group_id, source="charts", question=question, view_ids=tuple(ids)))
    write_jsonl(root / "views.jsonl", views)
    write_jsonl(root / "groups.jsonl", groups)
    write_json(root / "manifest.json", {"name": "bench", "n_views": n_views})
    return root


def start_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, str(SERVER)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        proc.kill()
        raise RuntimeError(f"fake server did not start: {line!r}")
    return proc, f"http://127.0.0.1:{int(line.split()[1])}/v1"


async def backend_only(url: str, n: int, concurrency: int) -> tuple[float, float]:
    """Return (requests per wall-clock second, requests per CPU second of this process)."""
    backend = load_backend(f"openai:bench@{url}", ModelOptions(concurrency=concurrency, max_retries=0))
    view = View(
        view_id="v",
        group_id="g",
        source="charts",
        state="original",
        image="v.png",
        image_sha256="0" * 64,
        question="q?",
        obligation=Obligation(kind="abstain"),
    )
    image = png(1)
    requests = [
        Request(view.view_id, "answerability-json-v1", f"prompt {i}", image, "image/png", GenerationParams())
        for i in range(n)
    ]
    pending = iter(requests)

    async def worker() -> None:
        for request in pending:
            await backend.complete(request)

    try:
        await asyncio.gather(*(backend.complete(requests[i]) for i in range(concurrency)))  # warm the pool
        started, cpu_started = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return n / (time.perf_counter() - started), n / (time.process_time() - cpu_started)
    finally:
        await backend.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3, help="backend-only measurements; the best is judged")
    args = parser.parse_args()
    proc, url = start_server()
    try:
        print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        rates = []
        for _ in range(args.repeat):
            rate, cpu_rate = asyncio.run(backend_only(url, args.requests, args.concurrency))
            rates.append(rate)
            print(
                f"backend only:    {rate:8.0f} requests/s  ({args.requests} requests, concurrency {args.concurrency}; "
                f"{cpu_rate:.0f} requests per client CPU-second)"
            )
        rate = max(rates)
        with tempfile.TemporaryDirectory() as tmp:
            bench = write_bench(Path(tmp) / "bench", args.requests)
            started = time.perf_counter()
            summary = run_benchmark(
                bench, f"openai:bench@{url}", Path(tmp) / "run", concurrency=args.concurrency, progress=False
            )
            elapsed = time.perf_counter() - started
            assert summary.n_asked == args.requests and summary.n_errors == 0, summary
            print(f"full run stage:  {args.requests / elapsed:8.0f} requests/s  (incl. load, hashing, SQLite cache)")
            started = time.perf_counter()
            summary = run_benchmark(
                bench, f"openai:bench@{url}", Path(tmp) / "run", concurrency=args.concurrency, progress=False
            )
            assert summary.n_cached == args.requests and summary.n_asked == 0, summary
            print(f"resume, all cached: {time.perf_counter() - started:.2f} s for {args.requests} views")
        verdict = "meets" if rate >= TARGET_PER_S else "MISSES"
        print(f"target {TARGET_PER_S:.0f} requests/s: backend (best of {args.repeat}: {rate:.0f}/s) {verdict} it")
    finally:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    main()
