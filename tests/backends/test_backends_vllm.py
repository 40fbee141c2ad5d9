"""The vllm: backend. Its engine runs only where vllm imports (a GPU machine); elsewhere those tests are skipped
with the reason, and what does not need vllm (options, conversation format, the missing-extra line) runs.
"""

from __future__ import annotations

import asyncio
import base64
import gc
import importlib.util
import sys
from pathlib import Path

import pytest

from vqaudit.backends import GenerationParams, ModelOptions, Request, load_backend
from vqaudit.backends.options import ModelArgs
from vqaudit.backends.vllm import VLLMOptions, conversation
from vqaudit.errors import VqauditError
from vqaudit.run import RunSummary, image_mime, load_responses, run_benchmark
from vqaudit.schema import Obligation, View
from vqaudit.store import load_benchmark
from vqaudit.suites.registry import prompt_for

HAS_VLLM = importlib.util.find_spec("vllm") is not None
NO_VLLM = "vllm is not importable here (it needs the [vllm] extra and a GPU: vLLM's VLM path does not run on CPU)"


def model_options(args: dict[str, str] | None = None) -> ModelOptions:
    """The ModelOptions of ``--model-arg`` pairs ``args``."""
    return ModelOptions(args=tuple((args or {}).items()))


def _view() -> View:
    return View(
        view_id="v",
        group_id="g",
        source="charts",
        state="original",
        image="i.png",
        image_sha256="0" * 64,
        question="q",
        obligation=Obligation(kind="abstain"),
    )


def test_options_become_engine_arguments() -> None:
    args = {
        "tensor_parallel_size": "2",
        "dtype": "bfloat16",
        "gpu_memory_utilization": "0.5",
        "seed": "0",
        "max_model_len": "4096",
        "enforce_eager": "true",
        "revision": "abc",
        "batch_size": "16",
    }
    options = VLLMOptions.from_args(ModelArgs("vllm:m", args, ()))
    assert options.engine == {
        "tensor_parallel_size": 2,
        "dtype": "bfloat16",
        "gpu_memory_utilization": 0.5,
        "seed": 0,
        "max_model_len": 4096,
        "enforce_eager": True,
        "revision": "abc",
        "trust_remote_code": False,
        "limit_mm_per_prompt": {"image": 1},
    }
    assert options.batch_size == 16
    for bad, message in [
        ({"tensor_parallel_size": "0"}, "tensor_parallel_size='0'"),
        ({"gpu_memory_utilization": "1.5"}, "gpu_memory_utilization='1.5'"),
        ({"dtype": "int4"}, "dtype='int4'"),
        ({"device": "cpu"}, "unknown --model-arg device"),
    ]:
        with pytest.raises(VqauditError, match=message):
            VLLMOptions.from_args(ModelArgs("vllm:m", bad, ()))


def test_conversation_carries_the_image_as_a_data_url() -> None:
    request = Request(
        request_id=_view().view_id,
        prompt_id="p",
        prompt="What is shown?",
        image=b"\x89PNGxyz",
        image_mime="image/png",
        params=GenerationParams(),
    )
    url = "data:image/png;base64," + base64.b64encode(b"\x89PNGxyz").decode()
    assert conversation(request) == [
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": {"url": url}}, {"type": "text", "text": "What is shown?"}],
        }
    ]
    text_only = Request(
        request_id=_view().view_id,
        prompt_id="p",
        prompt="Judge this.",
        image=None,
        image_mime=None,
        params=GenerationParams(),
    )
    assert conversation(text_only) == [{"role": "user", "content": [{"type": "text", "text": "Judge this."}]}]


@pytest.mark.skipif(HAS_VLLM, reason="vllm is installed here: the missing-extra message cannot be observed")
def test_missing_extra_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(VqauditError) as info:
        load_backend(f"vllm:{tmp_path}")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("the vllm: backend needs the [vllm] extra (vllm cannot be imported")
    assert message.endswith("pip install 'vqaudit[vllm]'")


def test_missing_extra_hides_nothing_behind_an_import(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "vllm", None)  # what `import vllm` meets when absent, even where it exists
    with pytest.raises(VqauditError, match=r"needs the \[vllm\] extra .*pip install 'vqaudit\[vllm\]'$"):
        load_backend(f"vllm:{tmp_path}", model_options({"tensor_parallel_size": "1"}))


@pytest.mark.slow
@pytest.mark.skipif(not HAS_VLLM, reason=NO_VLLM)
def test_vllm_runs_the_tiny_llava(tiny_llava: Path, tiny_chart_bench: Path, tmp_path: Path) -> None:
    spec = f"vllm:{tiny_llava}"
    args = {
        "max_new_tokens": "24",
        "gpu_memory_utilization": "0.2",
        "max_model_len": "1024",
        "seed": "0",
        "enforce_eager": "true",
    }
    summary = run_benchmark(
        tiny_chart_bench, spec, tmp_path / "run", concurrency=32, progress=False, options=model_options(args)
    )
    assert summary == RunSummary(n_views=20, n_cached=0, n_asked=summary.n_asked, n_errors=0, out_dir=tmp_path / "run")
    replies = {k: r.text for k, r in load_responses(tmp_path / "run").items()}
    assert len(replies) == 20 and all(replies.values())
    gc.collect()  # free the run's engine before starting another

    # temperature 0: a second engine gives the same replies, batched and one at a time
    views = load_benchmark(tiny_chart_bench).views
    requests = []
    for view in views:
        prompt_id, prompt = prompt_for(view)
        data = (tiny_chart_bench / view.image).read_bytes()
        requests.append(
            Request(
                request_id=view.view_id,
                prompt_id=prompt_id,
                prompt=prompt,
                image=data,
                image_mime=image_mime(data, Path(view.image)),
                params=GenerationParams(max_tokens=24),
            )
        )  # the run's --model-arg max_new_tokens
    backend = load_backend(spec, model_options(args))

    async def ask() -> tuple[list[str], list[str]]:
        try:
            batched = list(await asyncio.gather(*(backend.complete(r) for r in requests)))
            single = [await backend.complete(r) for r in requests]
            return batched, single
        finally:
            await backend.aclose()

    batched, single = asyncio.run(ask())
    assert max(backend.batch_sizes) > 1  # type: ignore[attr-defined]
    assert batched == single == [replies[v.view_id] for v in views]
