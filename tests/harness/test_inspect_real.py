"""One real round trip through inspect_ai (the ``[inspect]`` extra; skipped, saying why, when it is not installed).

``vqaudit export --to inspect`` -> ``inspect eval task.py --model openai-api/vq/fake`` against the fake
OpenAI-compatible server of tests/fixtures on 127.0.0.1 (it answers every image with ``reply_text(sha256)``)
-> ``vqaudit import-predictions`` of the ``.eval`` log and of its ``inspect log convert --to json`` copy ->
``vqaudit score``: the same metrics.json as ``replay:`` of the replies the server gives. Offline: every proxy
points at a closed local port (only 127.0.0.1 is reachable) and tiktoken's cache is an empty folder, so any
tokenizer download or other outbound call would fail the eval.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from fixture_modules import fake_openai_server
from vqaudit.harness import export_benchmark, import_predictions
from vqaudit.run import run_benchmark
from vqaudit.score import score_run
from vqaudit.store import load_benchmark

INSPECT = Path(sys.executable).parent / "inspect"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("inspect_ai") is None or importlib.util.find_spec("openai") is None,
        reason="inspect_ai not installed: pip install 'vqaudit[inspect]'",
    ),
]


def _server_module() -> ModuleType:
    return fake_openai_server()


@pytest.fixture
def server() -> Iterator[object]:
    running = _server_module().FakeOpenAIServer().start()
    try:
        yield running
    finally:
        running.stop()


def _offline_env(tmp: Path, base_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    (tmp / "tiktoken").mkdir()
    env.update(
        {
            "HTTP_PROXY": "http://127.0.0.1:9",
            "HTTPS_PROXY": "http://127.0.0.1:9",
            "ALL_PROXY": "http://127.0.0.1:9",
            "NO_PROXY": "127.0.0.1,localhost",
            "TIKTOKEN_CACHE_DIR": str(tmp / "tiktoken"),
            "HF_HUB_OFFLINE": "1",
            "VQ_BASE_URL": base_url,
            "VQ_API_KEY": "none",
            "INSPECT_DISPLAY": "plain",
        }
    )
    return env


def test_a_real_inspect_eval_imports_and_scores_as_replay(
    tmp_path: Path, server: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vqaudit.suites.charts.build import build_charts

    bench = tmp_path / "bench"
    build_charts(bench, 2, 5, workers=1)
    export_benchmark(bench, "inspect", tmp_path / "export")
    env = _offline_env(tmp_path, server.url)  # type: ignore[attr-defined]
    done = subprocess.run(
        [
            str(INSPECT),
            "eval",
            "task.py",
            "--model",
            "openai-api/vq/fake",
            "--log-dir",
            str(tmp_path / "logs"),
            "--display",
            "plain",
        ],
        env=env,
        cwd=tmp_path / "export",
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (log,) = (tmp_path / "logs").glob("*.eval")
    converted = subprocess.run(
        [str(INSPECT), "log", "convert", str(log), "--to", "json", "--output-dir", str(tmp_path / "json")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert converted.returncode == 0, converted.stderr[-3000:]
    (json_log,) = (tmp_path / "json").glob("*.json")

    # the .eval log read a few samples at a time (by id, in read_eval_log's order) gives read_eval_log's samples
    from inspect_ai.log import read_eval_log

    from vqaudit.harness import inspect_task

    monkeypatch.setattr(inspect_task, "_CHUNK", 3)
    whole = [
        (s.id, s.epoch, s.output.completion, s.error.message if s.error else None)
        for s in read_eval_log(str(log)).samples or []
    ]
    chunked = inspect_task._eval_samples(log)
    assert isinstance(chunked, inspect_task._ChunkedSamples)  # the log lists its samples: read by id
    streamed = [
        (s["id"], s["epoch"], s["output"]["completion"], s["error"]["message"] if s["error"] else None) for s in chunked
    ]
    assert streamed == whole and len(whole) == 10

    views = load_benchmark(bench).views
    reply_text = _server_module().reply_text
    replay = tmp_path / "replies.jsonl"
    replay.write_text(
        "".join(json.dumps({"view_id": v.view_id, "text": reply_text(v.image_sha256)}) + "\n" for v in views)
    )
    run_benchmark(bench, f"replay:{replay}", tmp_path / "replay-run", progress=False)
    expected = score_run(tmp_path / "replay-run", n_draws=200)
    for name, path in (("eval", log), ("json", json_log)):
        summary = import_predictions(path, bench, "inspect", tmp_path / f"run-{name}")
        assert (summary.n_replies, summary.n_errors, summary.missing) == (len(views), 0, ())
        assert score_run(tmp_path / f"run-{name}", n_draws=200) == expected
        metrics = (tmp_path / f"run-{name}" / "metrics.json").read_bytes()
        assert metrics == (tmp_path / "replay-run" / "metrics.json").read_bytes()
    bodies = server.bodies  # type: ignore[attr-defined]
    assert len(bodies) == len(views)  # one call per sample, the exported generation settings with each
    assert all(b["temperature"] == 0 and b.get("max_tokens", b.get("max_completion_tokens")) == 512 for b in bodies)
