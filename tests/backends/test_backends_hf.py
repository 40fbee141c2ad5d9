"""The hf: backend on tiny random-weight VLMs (tests/fixtures/tiny_vlm.py: LLaVA, and Idefics3 as a second
architecture), built offline once per session.

What the replies should be is computed here independently of vqaudit: the processor's chat template and
``model.generate`` called directly with transformers (greedy). The model is random, so its replies are word
salad that never parses as the answerability JSON: every view is invalid, which is what the score must say.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from vqaudit.backends import BackendCallError, GenerationParams, ModelOptions, Request, load_backend
from vqaudit.errors import VqauditError
from vqaudit.parsing.answerability import parse_answerability
from vqaudit.run import RunSummary, image_mime, load_responses, run_benchmark
from vqaudit.schema import View
from vqaudit.score import score_run
from vqaudit.store import load_benchmark
from vqaudit.suites.registry import prompt_for

pytestmark = pytest.mark.slow

Rows = Callable[[Path], list[tuple[str, str | None, str | None]]]
TOKENS = 24  # max_new_tokens for the tests: the random model rarely emits </s>, and 512 steps take longer
ARGS = {"max_new_tokens": str(TOKENS)}  # a generation key: every request's params.max_tokens (not the identity)
PARAMS = GenerationParams(max_tokens=TOKENS)  # what the run sends with ARGS


def model_options(args: dict[str, str] | None = None) -> ModelOptions:
    """The ModelOptions of ``--model-arg`` pairs ``args``."""
    return ModelOptions(args=tuple((args or {}).items()))


def _request(view: View, bench: Path, params: GenerationParams | None = None) -> Request:
    """The request the run stage builds for a view (prompt, image bytes and MIME type, parameters)."""
    prompt_id, prompt = prompt_for(view)
    data = (bench / view.image).read_bytes()
    return Request(
        request_id=view.view_id,
        prompt_id=prompt_id,
        prompt=prompt,
        image=data,
        image_mime=image_mime(data, bench / view.image),
        params=params or PARAMS,
    )


def _direct_replies(model_dir: Path, requests: list[Request], max_new_tokens: int) -> list[str]:
    """Greedy replies computed with transformers alone, one request at a time (no padding, no vqaudit)."""
    import io

    import torch
    from PIL import Image
    from transformers import AutoModelForImageTextToText, AutoProcessor

    processor = AutoProcessor.from_pretrained(model_dir)
    model = AutoModelForImageTextToText.from_pretrained(model_dir, dtype=torch.float32).eval()
    replies = []
    for request in requests:
        content: list[dict[str, str]] = [{"type": "image"}] if request.image is not None else []
        content.append({"type": "text", "text": request.prompt})
        text = processor.apply_chat_template(
            [{"role": "user", "content": content}], add_generation_prompt=True, tokenize=False
        )
        images = [Image.open(io.BytesIO(request.image)).convert("RGB")] if request.image is not None else None
        inputs = processor(text=[text], images=images, return_tensors="pt")
        with torch.inference_mode():
            out = model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False)
        replies.append(processor.batch_decode(out[:, inputs["input_ids"].shape[1] :], skip_special_tokens=True)[0])
    return replies


async def _ask(backend: Any, requests: list[Request]) -> list[str | BaseException]:
    try:
        return list(await asyncio.gather(*(backend.complete(r) for r in requests), return_exceptions=True))
    finally:
        await backend.aclose()


def test_full_run_then_score(tiny_llava: Path, tiny_chart_bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    spec = f"hf:{tiny_llava}"
    summary = run_benchmark(tiny_chart_bench, spec, out, concurrency=8, progress=False, options=model_options(ARGS))
    views = load_benchmark(tiny_chart_bench).views
    distinct = {(prompt_for(v)[1], v.image_sha256) for v in views}  # views with identical inputs share a call
    assert summary == RunSummary(n_views=20, n_cached=0, n_asked=len(distinct), n_errors=0, out_dir=out)
    info = json.loads((out / "run.json").read_text())
    assert info["model"] == spec
    assert info["model_identity"].startswith(f"{spec}@sha256:")
    assert info["model_identity"].endswith(";dtype=float32")
    assert info["params"] == {"temperature": 0.0, "max_tokens": TOKENS}  # --model-arg max_new_tokens=24

    responses = load_responses(out)
    assert set(responses) == {v.view_id for v in views}
    # the replies are what transformers itself generates for the same chat-template text and image
    sample = [v for v in views if v.state in ("original", "M")][:3]
    expected = _direct_replies(tiny_llava, [_request(v, tiny_chart_bench) for v in sample], TOKENS)
    assert [responses[v.view_id].text for v in sample] == expected
    assert len({r.text for r in responses.values()}) > 1, "the model ignores its input"

    metrics = score_run(out)
    outcomes = [json.loads(line) for line in (out / "outcomes.jsonl").read_text().splitlines()]
    assert len(outcomes) == 20
    for outcome in outcomes:  # the same parse path as every backend: the raw reply, parsed by the contract
        assert outcome["raw"] == responses[outcome["view_id"]].text
        assert outcome["decision"] == parse_answerability(outcome["raw"]).decision == "invalid"
    # all 20 views invalid: invalid rate 1, no view's decision correct, no group solved (Jk = 0)
    assert metrics["charts"]["invalid_rate"] == 1.0
    assert metrics["charts"]["decision_accuracy"] == 0.0
    assert metrics["charts"]["Jk"] == 0.0


@pytest.mark.parametrize("arch", ["tiny_llava", "tiny_idefics3"])
def test_batched_replies_equal_unbatched_and_are_deterministic(
    arch: str, tiny_chart_bench: Path, request: pytest.FixtureRequest
) -> None:
    model = request.getfixturevalue(arch)
    views = load_benchmark(tiny_chart_bench).views[:7]
    requests = [_request(v, tiny_chart_bench) for v in views]
    # prompts of very different lengths in one batch (left padding), and a text-only one
    requests.append(
        Request(
            request_id=views[0].view_id, prompt_id="t", prompt="How many?", image=None, image_mime=None, params=PARAMS
        )
    )
    requests.insert(
        2,
        Request(
            request_id=views[2].view_id,
            prompt_id="short",
            prompt="bar?",
            image=requests[2].image,
            image_mime="image/png",
            params=PARAMS,
        ),
    )
    spec = f"hf:{model}"

    unbatched_backend = load_backend(spec, model_options({**ARGS, "batch_size": "1"}))
    unbatched = asyncio.run(_ask(unbatched_backend, requests))
    batched_backend = load_backend(spec, model_options({**ARGS, "batch_size": "8"}))
    batched = asyncio.run(_ask(batched_backend, requests))
    again = asyncio.run(_ask(load_backend(spec, model_options({**ARGS, "batch_size": "8"})), requests))

    assert unbatched_backend.batch_sizes == [1] * 9  # type: ignore[attr-defined]
    # 8 image requests in one batch; the text-only request is its own group
    assert sorted(batched_backend.batch_sizes) == [1, 8]  # type: ignore[attr-defined]
    assert all(isinstance(r, str) and r for r in batched)
    assert batched == unbatched == again
    assert batched == _direct_replies(model, requests, TOKENS)


@pytest.mark.parametrize("arch", ["tiny_llava", "tiny_idefics3"])
def test_batched_run_equals_unbatched_run(
    arch: str, tiny_chart_bench: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    spec = f"hf:{request.getfixturevalue(arch)}"
    one = run_benchmark(
        tiny_chart_bench,
        spec,
        tmp_path / "b1",
        concurrency=1,
        progress=False,
        options=model_options({**ARGS, "batch_size": "1"}),
    )
    many = run_benchmark(
        tiny_chart_bench,
        spec,
        tmp_path / "b8",
        concurrency=8,
        progress=False,
        options=model_options({**ARGS, "batch_size": "8"}),
    )
    assert one.n_errors == many.n_errors == 0
    texts_one = {k: r.text for k, r in load_responses(tmp_path / "b1").items()}
    texts_many = {k: r.text for k, r in load_responses(tmp_path / "b8").items()}
    assert texts_one == texts_many


def test_bad_image_fails_only_its_request(tiny_llava: Path, tiny_chart_bench: Path) -> None:
    views = load_benchmark(tiny_chart_bench).views[:3]
    good = [_request(v, tiny_chart_bench) for v in views]
    bad = Request(
        request_id=views[0].view_id,
        prompt_id="p",
        prompt=good[0].prompt,
        image=b"\x89PNG\r\n\x1a\nnot really",
        image_mime="image/png",
        params=PARAMS,
    )
    backend = load_backend(f"hf:{tiny_llava}", model_options(ARGS))
    results = asyncio.run(_ask(backend, [good[0], bad, *good[1:]]))
    assert isinstance(results[1], BackendCallError) and "image cannot be decoded" in str(results[1])
    assert not results[1].fatal
    assert [results[0], *results[2:]] == _direct_replies(tiny_llava, good, TOKENS)


def test_cache_identity_follows_the_weights(tiny_vlm: ModuleType, tiny_chart_bench: Path, tmp_path: Path) -> None:
    tiny = tiny_vlm
    model = tiny.build_tiny_llava(tmp_path / "model", seed=0)
    spec = f"hf:{model}"
    out = tmp_path / "run"
    first = run_benchmark(tiny_chart_bench, spec, out, progress=False, options=model_options(ARGS))
    again = run_benchmark(tiny_chart_bench, spec, out, progress=False, options=model_options(ARGS))
    assert (first.n_asked, again.n_cached, again.n_asked) == (first.n_asked, 20, 0)
    identity = json.loads((out / "run.json").read_text())["model_identity"]

    # retrained weights saved into the same folder: same spec, new identity, nothing reused
    shutil.rmtree(model)
    tiny.build_tiny_llava(model, seed=1)
    retrained = run_benchmark(tiny_chart_bench, spec, out, progress=False, options=model_options(ARGS))
    assert (retrained.n_cached, retrained.n_asked) == (0, first.n_asked)
    assert json.loads((out / "run.json").read_text())["model_identity"] != identity
    # another max_new_tokens is another cache key too (through the request's parameters)
    longer = run_benchmark(
        tiny_chart_bench, spec, out, progress=False, options=model_options({"max_new_tokens": str(TOKENS + 1)})
    )
    assert longer.n_cached == 0


def test_killed_run_resumes(tiny_llava: Path, tiny_chart_bench: Path, tmp_path: Path, read_rows: Rows) -> None:
    spec = f"hf:{tiny_llava}"
    out = tmp_path / "run"
    args = {"max_new_tokens": "96", "batch_size": "2"}
    options = model_options(args)
    code = (
        "import sys, json; from pathlib import Path; from vqaudit.run import run_benchmark; "
        "from vqaudit.backends import ModelOptions; "
        "run_benchmark(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), concurrency=2, progress=False, "
        "options=ModelOptions(args=tuple(json.loads(sys.argv[4]).items())))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(tiny_chart_bench), spec, str(out), json.dumps(args)], env=os.environ.copy()
    )
    try:
        deadline = time.monotonic() + 120
        while len(read_rows(out)) < 4:
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.01)
        proc.kill()  # SIGKILL: no cleanup runs in the child
        assert proc.wait(10) == -9
    finally:
        if proc.poll() is None:
            proc.kill()
    recorded = {view_id for view_id, _, _ in read_rows(out)}
    assert 4 <= len(recorded) < 20
    before = {k: r.text for k, r in load_responses(out).items()}

    summary = run_benchmark(tiny_chart_bench, spec, out, concurrency=2, progress=False, options=options)
    assert summary.n_cached >= len(recorded) and summary.n_cached + summary.n_asked <= 20
    rows = read_rows(out)
    assert len(rows) == len({view_id for view_id, _, _ in rows}), "a reply was stored twice"
    resumed = {k: r.text for k, r in load_responses(out).items()}
    assert len(resumed) == 20
    assert all(resumed[k] == text for k, text in before.items())  # kept, not asked again
    # the killed process and this one generate the same replies as an uninterrupted run
    fresh = run_benchmark(tiny_chart_bench, spec, tmp_path / "fresh", concurrency=2, progress=False, options=options)
    assert fresh.n_errors == 0
    assert {k: r.text for k, r in load_responses(tmp_path / "fresh").items()} == resumed


def _llama_only_folder(root: Path) -> Path:
    """A saved text-only LlamaForCausalLM: a real model, but not an image-text-to-text one."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=32,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
    )
    LlamaForCausalLM(config).save_pretrained(root)
    return root


def _fails_cleanly(bench: Path, spec: str, out: Path, match: str, model_args: dict[str, str] | None = None) -> str:
    with pytest.raises(VqauditError, match=match) as info:
        run_benchmark(bench, spec, out, progress=False, options=model_options(model_args or ARGS))
    message = str(info.value)
    assert "\n" not in message
    assert not out.exists(), "a run folder was written for a model that cannot be loaded"
    return message


def test_models_that_cannot_be_loaded_give_one_error_and_no_run(
    tiny_llava: Path, tiny_chart_bench: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    _fails_cleanly(tiny_chart_bench, f"hf:{tmp_path / 'nope'}", out, "does not exist")
    (tmp_path / "file").write_text("x")
    _fails_cleanly(tiny_chart_bench, f"hf:{tmp_path / 'file'}", out, "is not a folder")
    (tmp_path / "empty").mkdir()
    _fails_cleanly(tiny_chart_bench, f"hf:{tmp_path / 'empty'}", out, "config.json does not exist")
    llama = _llama_only_folder(tmp_path / "llama")
    message = _fails_cleanly(tiny_chart_bench, f"hf:{llama}", out, "cannot load the folder")
    assert "model_type 'llama'" in message
    broken = tmp_path / "no-weights"
    shutil.copytree(tiny_llava, broken)
    (broken / "model.safetensors").unlink()
    _fails_cleanly(tiny_chart_bench, f"hf:{broken}", out, "cannot load the folder")
    _fails_cleanly(tiny_chart_bench, f"hf:{tiny_llava}", out, "unknown --model-arg colour", {"colour": "red"})
    _fails_cleanly(tiny_chart_bench, f"hf:{tiny_llava}", out, "dtype='float8'", {"dtype": "float8"})
    _fails_cleanly(tiny_chart_bench, "hf:not a/repo id", out, "neither an existing folder nor a hub repo id")


def test_cli_bad_model_is_one_line_exit_2(
    tiny_chart_bench: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from shortanswer.helpers import run_cli

    out = tmp_path / "run"
    code = run_cli(
        monkeypatch,
        "run",
        str(tiny_chart_bench),
        "--model",
        f"hf:{tmp_path}",
        "--out",
        str(out),
        "--model-arg",
        "batch_size=0",
    )
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines() == [
        f"error: model spec 'hf:{tmp_path}': --model-arg batch_size='0': expected an integer from 1 to 1024"
    ]
    assert not out.exists()


def test_missing_extra_is_one_line(monkeypatch: pytest.MonkeyPatch, tiny_chart_bench: Path, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)  # what `import transformers` meets when absent
    message = _fails_cleanly(tiny_chart_bench, f"hf:{tmp_path}", tmp_path / "run", "needs the \\[hf\\] extra")
    assert message.endswith("pip install 'vqaudit[hf]'")


def test_check_refuses_what_load_refuses_without_reading_weights(
    tiny_llava: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``check_backend`` (what ``eval`` calls before building) gives load's messages but reads no weights.

    Counted by wrapping transformers' ``from_pretrained``: a check must not call it, a load calls it once; so an
    ``eval --model hf:...`` reads the weights once, in its run, instead of twice (once more for the check).
    """
    import transformers

    from vqaudit.backends import check_backend

    calls: list[str] = []
    real = transformers.AutoModelForImageTextToText.from_pretrained

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(str(args[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(transformers.AutoModelForImageTextToText, "from_pretrained", counting)
    check_backend(f"hf:{tiny_llava}", model_options(ARGS))
    assert calls == []
    for spec, args, match in (
        (f"hf:{tmp_path / 'nope'}", ARGS, "does not exist"),
        (f"hf:{tiny_llava}", {"colour": "red"}, "unknown --model-arg colour"),
        (f"hf:{tiny_llava}", {"dtype": "float8"}, "dtype='float8'"),
        ("hf:not a/repo id", ARGS, "neither an existing folder nor a hub repo id"),
    ):
        with pytest.raises(VqauditError, match=match):
            check_backend(spec, model_options(args))
    assert calls == []
    load_backend(f"hf:{tiny_llava}", model_options(ARGS))
    assert calls == [str(tiny_llava)]


def _with_thinking_switch(model: Path, out: Path) -> Path:
    """A copy of ``model`` whose chat template reads ``enable_thinking`` as Qwen3's does (an empty think block
    after the generation prompt when it is false), so the switch visibly changes the prompt."""
    shutil.copytree(model, out)
    template = out / "chat_template.jinja"
    template.write_text(
        template.read_text() + "{% if enable_thinking is defined and enable_thinking is false %}"
        " <think> </think>{% endif %}"
    )
    return out


def test_generation_keys_reach_generate_and_the_chat_template(
    tiny_llava: Path, tiny_chart_bench: Path, tmp_path: Path
) -> None:
    """``max_tokens=7`` (the other spelling of max_new_tokens) is what generate gets; ``enable_thinking`` is what
    the chat template gets, and a template without the switch is refused in one line, before any run folder."""
    views = load_benchmark(tiny_chart_bench).views
    out = tmp_path / "run"
    run_benchmark(
        tiny_chart_bench,
        f"hf:{tiny_llava}",
        out,
        concurrency=4,
        progress=False,
        options=model_options({"max_tokens": "7"}),
    )
    assert json.loads((out / "run.json").read_text())["params"] == {"temperature": 0.0, "max_tokens": 7}
    sample = views[:2]
    expected = _direct_replies(tiny_llava, [_request(v, tiny_chart_bench) for v in sample], 7)
    replies = load_responses(out)
    assert [replies[v.view_id].text for v in sample] == expected
    assert expected != _direct_replies(tiny_llava, [_request(v, tiny_chart_bench) for v in sample], TOKENS)

    message = _fails_cleanly(
        tiny_chart_bench,
        f"hf:{tiny_llava}",
        tmp_path / "refused",
        "has no thinking switch",
        {**ARGS, "enable_thinking": "false"},
    )
    assert message == (
        f"model spec 'hf:{tiny_llava}': enable_thinking=false: this model's chat template has no "
        "thinking switch (its source never mentions enable_thinking); drop the setting"
    )

    from vqaudit.backends.hf import HFBackend

    switched = _with_thinking_switch(tiny_llava, tmp_path / "switched")
    backend = load_backend(f"hf:{switched}", model_options({**ARGS, "enable_thinking": "false"}))
    assert isinstance(backend, HFBackend)
    try:
        request = _request(views[0], tiny_chart_bench)
        off = backend.render(Request(**{**request.__dict__, "params": GenerationParams(enable_thinking=False)}))
        on = backend.render(Request(**{**request.__dict__, "params": GenerationParams(enable_thinking=True)}))
        unset = backend.render(request)
    finally:
        asyncio.run(backend.aclose())
    assert off.endswith("ASSISTANT: <think> </think>") and on.endswith("ASSISTANT:") and unset == on
    think = run_benchmark(
        tiny_chart_bench,
        f"hf:{switched}",
        tmp_path / "think",
        concurrency=4,
        progress=False,
        options=model_options({**ARGS, "enable_thinking": "false"}),
    )
    assert think.n_errors == 0
    assert json.loads((tmp_path / "think" / "run.json").read_text())["params"] == {
        "temperature": 0.0,
        "max_tokens": TOKENS,
        "enable_thinking": False,
    }
