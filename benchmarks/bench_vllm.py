"""Replies per second of the vllm: backend on the tiny random-weight LLaVA (a GPU machine with vllm installed).

vLLM's vision-language path does not run on CPU, so this is not run in CI. It builds the tiny model
(tests/fixtures/tiny_vlm.py) and a chart benchmark in a temporary folder, starts ``vllm:MODEL`` once, and asks
every view with ``--concurrency`` calls in flight (the backend hands them to ``LLM.chat`` in batches), then one
at a time, and prints replies/s for both and whether the replies agree. It then runs the whole run stage
(``run_benchmark``, with the response cache) on the same benchmark and prints its replies/s.

Usage: ``.venv/bin/python benchmarks/bench_vllm.py [--groups 40] [--concurrency 64] [--max-new-tokens 64]``
(needs ``pip install 'vqaudit[vllm]'``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

from _timing import Timing, ratio, timed

from vqaudit.backends import GenerationParams, ModelOptions, Request, load_backend
from vqaudit.run import image_mime, run_benchmark
from vqaudit.store import load_benchmark
from vqaudit.suites.charts.build import build_charts
from vqaudit.suites.registry import prompt_for

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]


def model_options(args: dict[str, str] | None = None) -> ModelOptions:
    """The ModelOptions of ``--model-arg`` pairs ``args``."""
    return ModelOptions(args=tuple((args or {}).items()))


def tiny_vlm():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("tiny_vlm", ROOT / "tests" / "fixtures" / "tiny_vlm.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["tiny_vlm"] = module
    spec.loader.exec_module(module)
    return module


def requests_for(bench: Path, max_new_tokens: int) -> list[Request]:
    params = GenerationParams(max_tokens=max_new_tokens)  # what --model-arg max_new_tokens=N makes a run send
    out = []
    for view in load_benchmark(bench).views:
        prompt_id, prompt = prompt_for(view)
        data = (bench / view.image).read_bytes()
        out.append(
            Request(
                request_id=view.view_id,
                prompt_id=prompt_id,
                prompt=prompt,
                image=data,
                image_mime=image_mime(data, bench / view.image),
                params=params,
            )
        )
    return out


async def ask(backend: object, requests: list[Request], concurrency: int) -> tuple[list[str], Timing]:
    pending = iter(enumerate(requests))
    replies = [""] * len(requests)

    async def worker() -> None:
        for i, request in pending:
            replies[i] = await backend.complete(request)  # type: ignore[attr-defined]

    # CPU: this process (vLLM's engine threads) and its engine worker processes, if any
    with timed(f"concurrency {concurrency}", len(requests), "reply") as took:
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return replies, took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=40, help="chart groups (5 views each)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--gpu-memory-utilization", default="0.3")
    args = parser.parse_args()
    if importlib.util.find_spec("vllm") is None:
        sys.exit("vllm is not installed: pip install 'vqaudit[vllm]' on a machine with a GPU")
    model_args = {
        "max_new_tokens": str(args.max_new_tokens),
        "gpu_memory_utilization": args.gpu_memory_utilization,
        "max_model_len": "1024",
        "seed": "0",
        "batch_size": str(args.concurrency),
    }

    with tempfile.TemporaryDirectory() as tmp:
        model = tiny_vlm().build_tiny_llava(Path(tmp) / "model", seed=0)
        bench = Path(tmp) / "bench"
        build_charts(bench, args.groups, 0, workers=2)
        requests = requests_for(bench, args.max_new_tokens)
        spec = f"vllm:{model}"
        backend = load_backend(spec, model_options(model_args))

        async def both(engine: object) -> tuple[tuple[list[str], float], tuple[list[str], float]]:
            try:
                return await ask(engine, requests, args.concurrency), await ask(engine, requests, 1)
            finally:
                await engine.aclose()  # type: ignore[attr-defined]

        (batched, t_batched), (single, t_single) = asyncio.run(both(backend))
        sizes = backend.batch_sizes  # type: ignore[attr-defined]
        n_same = sum(a == b for a, b in zip(batched, single, strict=True))
        print(f"tiny LLaVA via vLLM, {len(requests)} chart views, max_new_tokens {args.max_new_tokens}")
        print(t_batched.line(f"{len(requests) / t_batched.wall:.1f} replies/s; largest LLM.chat batch {max(sizes)}"))
        print(t_single.line(f"{len(requests) / t_single.wall:.1f} replies/s"))
        print(ratio(t_batched, t_single))
        print(f"replies equal batched vs one at a time: {n_same} of {len(requests)}")
        del backend
        gc.collect()

        with timed("run stage (engine start included)", unit="reply") as took:
            summary = run_benchmark(
                bench,
                spec,
                Path(tmp) / "run",
                concurrency=args.concurrency,
                progress=False,
                options=model_options(model_args),
            )
            took.count = summary.n_asked
        print(took.line(f"{summary.n_asked / took.wall:.1f} replies/s, {summary.n_errors} errors"))


if __name__ == "__main__":
    main()
