"""Replies per second of the hf: backend on the tiny random-weight LLaVA, unbatched vs batched.

Builds the tiny model (tests/fixtures/tiny_vlm.py) and a small chart benchmark in a temporary folder, loads
``hf:MODEL`` once per batch size and asks every view with ``--concurrency`` = batch size calls in flight (as
the run stage does), so the backend's batcher forms batches of up to that size. Model loading is not timed.
Wall-clock replies/s depend on what else runs on the machine; CPU seconds per reply (all threads of this
process) depend less on it; each batch size is compared with the unbatched run (its baseline) on both.
Also compares every batch size's replies with the unbatched ones: padding changes floating-point reduction
order, so on a random model (flat logits, near-ties) a reply can diverge after many identical tokens; the count
and the shortest common prefix (in words) are printed.

Usage: ``.venv/bin/python benchmarks/bench_hf.py [--groups 8] [--max-new-tokens 64] [--batch-sizes 1,4,8,16]``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

from _timing import Timing, ratio, timed

from vqaudit.backends import GenerationParams, ModelOptions, Request, load_backend
from vqaudit.run import image_mime
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


async def ask_all(backend: object, requests: list[Request], concurrency: int) -> tuple[list[str], Timing]:
    pending = iter(enumerate(requests))
    replies: list[str] = [""] * len(requests)

    async def worker() -> None:
        for i, request in pending:
            replies[i] = await backend.complete(request)  # type: ignore[attr-defined]

    with timed(f"batch_size {concurrency:3d}", len(requests), "reply") as took:
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    await backend.aclose()  # type: ignore[attr-defined]
    return replies, took


def compare(replies: list[str], reference: list[str]) -> str:
    differ = [(a.split(), b.split()) for a, b in zip(replies, reference, strict=True) if a != b]
    if not differ:
        return f"all {len(replies)} identical"
    prefix = min(
        next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))) for a, b in differ
    )
    return f"{len(differ)} of {len(replies)} differ, after at least {prefix} identical words"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=8, help="chart groups (5 views each)")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--batch-sizes", default="1,4,8,16")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    import torch

    with tempfile.TemporaryDirectory() as tmp:
        model = tiny_vlm().build_tiny_llava(Path(tmp) / "model", seed=0)
        bench = Path(tmp) / "bench"
        build_charts(bench, args.groups, 0, workers=1)
        requests = requests_for(bench, args.max_new_tokens)
        print(
            f"tiny LLaVA (CLIP 2x16 + Llama 2x32), {len(requests)} chart views, max_new_tokens "
            f"{args.max_new_tokens}, device {args.device}, torch {torch.__version__} with "
            f"{torch.get_num_threads()} threads"
        )
        reference: list[str] | None = None
        unbatched: Timing | None = None
        for size in (int(s) for s in args.batch_sizes.split(",")):
            backend = load_backend(
                f"hf:{model}",
                model_options(
                    {"batch_size": str(size), "device": args.device, "max_new_tokens": str(args.max_new_tokens)}
                ),
            )
            replies, took = asyncio.run(ask_all(backend, requests, size))
            unbatched = unbatched or took
            sizes = backend.batch_sizes  # type: ignore[attr-defined]
            if reference is None:
                reference = replies
            same = compare(replies, reference)
            print(
                took.line(
                    f"{len(requests) / took.cpu:.1f} replies per CPU second, {len(sizes)} batches, mean "
                    f"{sum(sizes) / len(sizes):.1f}; vs unbatched: {same}"
                )
            )
            if took is not unbatched:
                print("  " + ratio(took, unbatched))


if __name__ == "__main__":
    main()
