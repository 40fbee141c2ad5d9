"""Throughput of the openai backend against local fake servers that answer instantly, next to plain aiohttp.

Each fake server (tests/fixtures/fake_openai_server.py) runs in its own process, so it shares neither the
client's event loop nor its interpreter lock. Figures:

1. client only, at each ``--concurrencies`` level: ``OpenAIBackend.complete`` over N requests, and a minimal
   aiohttp client sending the same payloads (base64 PNG in a JSON body, reply parsed as JSON), alternately in one
   process, ``--repeat`` times each; the best requests per wall-clock second and per client CPU-second of each
   are printed with the ratio vqaudit / aiohttp. On a loaded machine CPU time is the judge (target >= 0.8x at
   concurrency 64);
2. the full run stage (``run_benchmark``: benchmark load and hashing, prompts, cache keys, image reads, the
   batched SQLite cache, run.json) on an N-view benchmark, against one instant server;
3. the full run stage over 1, 2 and 4 endpoints (``openai:MODEL@URL1,URL2,...``) of servers that each model a
   busy GPU server: at most ``--capacity`` requests at once, each taking ``--service-ms`` (so one server
   serves ``capacity / service`` requests/s), and over 1, 2, 4 instant servers.

Usage: ``.venv/bin/python benchmarks/bench_openai.py [--requests 4000] [--concurrencies 1,8,64,256]``.
Needs aiohttp (a core dependency).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import importlib.util
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import aiohttp
from _timing import Timing, judge, load_line, timed
from PIL import Image

from vqaudit.backends import GenerationParams, ModelOptions, Request, load_backend
from vqaudit.files import sha256_bytes, write_json, write_jsonl
from vqaudit.run import run_benchmark
from vqaudit.schema import Group, Obligation, View

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "fixtures" / "fake_openai_server.py"
TARGET_RATIO = 0.8


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


def serve(capacity: int, service_s: float) -> None:
    """Run one fake server in this process (``--serve``); print ``PORT n``; serve until killed."""
    spec = importlib.util.spec_from_file_location("fake_openai_server", SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    class Busy(module.FakeOpenAIServer):  # type: ignore[misc, name-defined]
        """At most ``capacity`` requests at once, each taking ``service_s`` (a GPU server's batch)."""

        async def _act(self, action: str, text: str, auth: str | None) -> Any:
            async with gate:
                await asyncio.sleep(service_s)
                return await super()._act(action, text, auth)

    async def run() -> None:
        nonlocal gate
        gate = asyncio.Semaphore(capacity)
        server = Busy() if capacity else module.FakeOpenAIServer()
        listening = await server.serve(0)
        print(f"PORT {server.port}", flush=True)
        async with listening:
            await listening.serve_forever()

    gate: asyncio.Semaphore
    asyncio.run(run())


def start_server(capacity: int = 0, service_s: float = 0.0) -> tuple[subprocess.Popen[str], str]:
    """Start a fake server process (instant when ``capacity`` is 0); return it and its base URL."""
    cmd = [sys.executable, __file__, "--serve", "--capacity", str(capacity), "--service-ms", str(service_s * 1e3)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        proc.kill()
        raise RuntimeError(f"fake server did not start: {line!r}")
    return proc, f"http://127.0.0.1:{int(line.split()[1])}/v1"


async def _timed(label: str, n: int, concurrency: int, one: Any) -> Timing:
    """Run ``one(i)`` for i < n with ``concurrency`` workers; its timing (``cpu_self``: this client process;
    children: the fake servers, which run in their own processes)."""
    await asyncio.gather(*(one(i) for i in range(concurrency)))  # warm the connections
    pending = iter(range(n))

    async def worker() -> None:
        for i in pending:
            await one(i)

    with timed(f"{label}, concurrency {concurrency}", n, "request") as took:
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return took


async def vqaudit_client(url: str, n: int, concurrency: int) -> Timing:
    backend = load_backend(f"openai:bench@{url}", ModelOptions(concurrency=concurrency, max_retries=0))
    image = png(1)
    requests = [
        Request("v", "answerability-json-v1", f"prompt {i}", image, "image/png", GenerationParams()) for i in range(n)
    ]
    try:
        return await _timed("vqaudit OpenAIBackend", n, concurrency, lambda i: backend.complete(requests[i]))
    finally:
        await backend.aclose()


async def aiohttp_client(url: str, n: int, concurrency: int) -> Timing:
    """The baseline: one session, the same body built per request, the reply parsed; nothing else."""
    image = png(1)
    endpoint = url + "/chat/completions"
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:

        async def one(i: int) -> str:
            data_url = "data:image/png;base64," + base64.b64encode(image).decode("ascii")
            body = {
                "model": "bench",
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "image_url", "image_url": {"url": data_url}},
                            {"type": "text", "text": f"prompt {i}"},
                        ],
                    }
                ],
                "temperature": 0.0,
                "max_tokens": 512,
            }
            async with session.post(
                endpoint, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
            ) as response:
                text: str = json.loads(await response.read())["choices"][0]["message"]["content"]
                return text

        return await _timed("plain aiohttp (baseline)", n, concurrency, one)


def full_run(label: str, urls: list[str], n: int, concurrency: int) -> Timing:
    """The timing of ``run_benchmark`` on an n-view benchmark over ``urls`` (``cpu_self``: this client process).

    The benchmark is written before the clock starts; loading and hashing it is timed (it is part of a run).
    """
    with tempfile.TemporaryDirectory() as tmp:
        bench = write_bench(Path(tmp) / "bench", n)
        spec = f"openai:bench@{','.join(urls)}"
        with timed(label, n, "request") as took:
            summary = run_benchmark(bench, spec, Path(tmp) / "run", concurrency=concurrency, progress=False)
        assert summary.n_asked == n and summary.n_errors == 0, summary
        return took


def _rates(t: Timing) -> str:
    return f"{t.count / t.wall:.0f} requests/s, {t.count / max(t.cpu_self, 1e-9):.0f} per client CPU-second"


def client_table(url: str, n: int, levels: list[int], repeat: int) -> bool:
    """Each level: the best of ``repeat`` alternating measurements of each client; True if the target holds."""
    ok = True
    for level in levels:
        best: dict[str, Timing] = {}
        for _ in range(repeat):  # alternate, so both meet the same load
            for name, client in (("vq", vqaudit_client), ("ah", aiohttp_client)):
                took = asyncio.run(client(url, n, level))
                if name not in best or took.cpu_self < best[name].cpu_self:
                    best[name] = took
        vq, ah = best["vq"], best["ah"]
        print(vq.line(_rates(vq)))
        print(ah.line(_rates(ah)))
        per_cpu = ah.cpu_self / max(vq.cpu_self, 1e-9)  # vqaudit's requests per client CPU-s / aiohttp's
        print(
            f"  concurrency {level}: vqaudit / aiohttp requests per client CPU-second {per_cpu:.2f}x "
            f"(per wall second {ah.wall / vq.wall:.2f}x)"
        )
        if level == 64:
            ok = judge(
                "vqaudit / aiohttp requests per client CPU-second at concurrency 64",
                per_cpu,
                TARGET_RATIO,
                higher=True,
                unit="x",
            )
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--concurrencies", default="1,8,64,256")
    parser.add_argument("--repeat", type=int, default=3, help="client measurements per level; the best is kept")
    parser.add_argument("--run-concurrency", type=int, default=64)
    parser.add_argument("--capacity", type=int, default=8, help="busy servers: requests served at once")
    parser.add_argument("--service-ms", type=float, default=20.0, help="busy servers: ms per request")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.capacity, args.service_ms / 1e3)
        return
    procs: list[subprocess.Popen[str]] = []
    try:
        print(f"before: {load_line()}")
        proc, url = start_server()
        procs.append(proc)
        print(
            f"\n1. client only, {args.requests} requests per measurement, best of {args.repeat} (children: the "
            "fake server's process):"
        )
        ok = client_table(url, args.requests, [int(c) for c in args.concurrencies.split(",")], args.repeat)
        print(f"\n2. full run stage, concurrency {args.run_concurrency}, one instant server:")
        took = full_run("run_benchmark, 1 instant server", [url], args.requests, args.run_concurrency)
        print(took.line(_rates(took)))
        instant = [url]
        for _ in range(3):
            proc, more = start_server()
            procs.append(proc)
            instant.append(more)
        busy = []
        for _ in range(4):
            proc, more = start_server(args.capacity, args.service_ms / 1e3)
            procs.append(proc)
            busy.append(more)
        one_busy = args.capacity / (args.service_ms / 1e3)
        print(
            f"\n3. full run stage over several endpoints, concurrency {args.run_concurrency} (children: all "
            "8 servers' processes):"
        )
        for k in (1, 2, 4):
            n_busy = min(args.requests, int(one_busy * k * 3))  # about 3 s of the servers' capacity
            took = full_run(f"run_benchmark, {k} busy server(s)", busy[:k], n_busy, args.run_concurrency)
            print(took.line(_rates(took) + f"; their limit {k * one_busy:.0f}/s"))
            took = full_run(f"run_benchmark, {k} instant server(s)", instant[:k], args.requests, args.run_concurrency)
            print(took.line(_rates(took)))
        print(f"after: {load_line()}")
        if not ok:
            sys.exit(1)
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    main()
