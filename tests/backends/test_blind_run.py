"""`vqaudit run --blind`: every view asked with its prompt alone (seed 001 App. 0.B.1, the text-only pass).

Checked against a real local OpenAI-compatible server (tests/fixtures/fake_openai_server.py): the requests carry
no image part, run.json records the blind pass, and the cache keys of a blind run are the text-only keys, never
those of the sighted run of the same model and benchmark.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vqaudit.backends import GenerationParams, ModelOptions, load_backend
from vqaudit.backends.cache import ResponseCache
from vqaudit.backends.runner import TEXT_ONLY, request_key
from vqaudit.errors import VqauditError
from vqaudit.run import run_benchmark
from vqaudit.store import RunFolder, load_benchmark
from vqaudit.suites.registry import prompt_for

KEY_ENV = "VQAUDIT_TEST_BLIND_KEY"


def _options() -> ModelOptions:
    return ModelOptions(api_key_env=KEY_ENV, max_retries=1, backoff_base_s=0.001, timeout_s=5.0)


def _keys(run_dir: Path) -> set[str]:
    with ResponseCache(RunFolder(run_dir).responses) as cache:
        return set(cache.view_keys().values())


def test_blind_run_sends_no_image_and_keys_apart_from_the_sighted_run(
    fake_server: Any, make_bench: Callable[..., Path], tmp_path: Path
) -> None:
    bench_dir = make_bench(n_groups=2, views_per_group=2)
    spec = f"openai:test-model@{fake_server.url}"
    blind = run_benchmark(bench_dir, spec, tmp_path / "blind", options=_options(), blind=True, progress=False)
    assert blind.n_views == 4 and blind.n_errors == 0
    # every request is one user message whose content is the prompt string: no image part at all
    assert len(fake_server.bodies) == 2  # two groups, one question each: identical text-only prompts share a call
    for body in fake_server.bodies:
        (message,) = body["messages"]
        assert isinstance(message["content"], str)
        assert "image_url" not in json.dumps(body)
    assert json.loads(RunFolder(tmp_path / "blind").info.read_text())["blind"] is True
    # the blind keys are exactly the text-only keys of the views' prompts (runner.TEXT_ONLY in place of the image)
    bench = load_benchmark(bench_dir)
    backend = load_backend(spec, _options())
    expected = {request_key(backend, *prompt_for(v), None, GenerationParams(), v.view_id) for v in bench.views}
    assert _keys(tmp_path / "blind") == expected
    assert TEXT_ONLY == "text-only"

    fake_server.bodies.clear()
    sighted = run_benchmark(bench_dir, spec, tmp_path / "sighted", options=_options(), progress=False)
    assert sighted.n_asked == 4  # one call per distinct image: nothing reused from the blind run
    assert all(not isinstance(b["messages"][0]["content"], str) for b in fake_server.bodies)
    assert _keys(tmp_path / "sighted").isdisjoint(_keys(tmp_path / "blind"))
    assert "blind" not in json.loads(RunFolder(tmp_path / "sighted").info.read_text())  # absent when False


def test_blind_and_sighted_runs_never_share_a_folder(make_bench: Callable[..., Path], tmp_path: Path) -> None:
    bench_dir = make_bench(n_groups=1, views_per_group=2)
    run_benchmark(bench_dir, "reference:always-abstain", tmp_path / "run", progress=False)
    with pytest.raises(VqauditError, match="already holds a run with images, not a blind run"):
        run_benchmark(bench_dir, "reference:always-abstain", tmp_path / "run", blind=True, progress=False)
    run_benchmark(bench_dir, "reference:always-abstain", tmp_path / "blind", blind=True, progress=False)
    with pytest.raises(VqauditError, match="already holds a blind run"):
        run_benchmark(bench_dir, "reference:always-abstain", tmp_path / "blind", progress=False)


def test_replay_answers_a_blind_run_by_id(make_bench: Callable[..., Path], tmp_path: Path) -> None:
    # replay: answers by view id whatever the request carries; its blind keys are text-only#VIEW_ID
    bench_dir = make_bench(n_groups=1, views_per_group=2)
    replies = tmp_path / "replies.jsonl"
    replies.write_text("".join(json.dumps({"view_id": f"g0-v{k}", "text": f"reply {k}"}) + "\n" for k in range(2)))
    summary = run_benchmark(bench_dir, f"replay:{replies}", tmp_path / "blind", blind=True, progress=False)
    assert summary.n_asked == 2 and summary.n_errors == 0
    with ResponseCache(RunFolder(tmp_path / "blind").responses) as cache:
        assert sorted((r.view_id, r.text) for r in cache.responses()) == [("g0-v0", "reply 0"), ("g0-v1", "reply 1")]
