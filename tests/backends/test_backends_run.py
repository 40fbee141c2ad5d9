from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from vqaudit import __version__
from vqaudit.backends import ModelOptions
from vqaudit.errors import VqauditError
from vqaudit.files import read_jsonl, sha256_file, write_jsonl
from vqaudit.prompts import ANSWERABILITY_PROMPT_ID
from vqaudit.run import RunSummary, load_responses, run_benchmark
from vqaudit.schema import View
from vqaudit.store import load_benchmark

SECRET = "sk-test-SECRET-77e2b0"
KEY_ENV = "VQAUDIT_TEST_API_KEY"
Rows = Callable[[Path], list[tuple[str, str | None, str | None]]]


def _options(**extra: Any) -> ModelOptions:
    settings: dict[str, Any] = {"api_key_env": KEY_ENV, "max_retries": 3, "backoff_base_s": 0.001, "timeout_s": 0.3}
    return ModelOptions(**{**settings, **extra})


def test_gold_run_then_resume_asks_nothing(make_bench: Callable[..., Path], tmp_path: Path, read_rows: Rows) -> None:
    bench = make_bench()
    out = tmp_path / "run"
    summary = run_benchmark(bench, "reference:gold", out, progress=False)
    assert summary == RunSummary(n_views=9, n_cached=0, n_asked=9, n_errors=0, out_dir=out)
    responses = load_responses(out)
    views = load_benchmark(bench).views
    assert set(responses) == {v.view_id for v in views}
    for view in views:
        reply = json.loads(responses[view.view_id].text or "")
        assert reply["answer"] == (view.obligation.gold[0] if view.obligation.kind == "answer" else None)
        assert responses[view.view_id].model == "reference:gold"
        assert responses[view.view_id].prompt_id == ANSWERABILITY_PROMPT_ID

    info = json.loads((out / "run.json").read_text())
    assert info["model"] == "reference:gold"
    assert info["benchmark"] == str(bench.resolve())
    assert info["benchmark_manifest_sha256"] == sha256_file(bench / "manifest.json")
    assert info["prompt_ids"] == [ANSWERABILITY_PROMPT_ID]
    assert info["params"] == {"temperature": 0.0, "max_tokens": 512}
    assert info["vqaudit_version"] == __version__
    assert info["started"] <= info["finished"]

    again = run_benchmark(bench, "reference:gold", out, progress=False)
    assert again == RunSummary(n_views=9, n_cached=9, n_asked=0, n_errors=0, out_dir=out)
    assert len(read_rows(out)) == 9


def test_openai_run_under_faults_records_one_response_per_view(
    make_bench: Callable[..., Path],
    tmp_path: Path,
    fake_server: Any,
    server_module: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    read_rows: Rows,
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    bench = make_bench(3, 3)
    views = load_benchmark(bench).views
    sha = {v.view_id: v.image_sha256 for v in views}
    schedule = {
        "g0-v0": ["500", "500"],  # transient: 3 hits
        "g0-v1": ["429"],  # 2 hits
        "g0-v2": ["timeout"],  # 2 hits
        "g1-v0": ["malformed-json", "drop"],  # 3 hits
        "g1-v1": ["400"],  # not retryable: 1 hit, error recorded
        "g1-v2": ["503"] * 10,  # exhausts 1 + 3 retries: 4 hits, error recorded
    }
    fake_server.faults = {sha[v]: s for v, s in schedule.items()}
    out = tmp_path / "run"
    spec = f"openai:test-model@{fake_server.url}"
    summary = run_benchmark(bench, spec, out, concurrency=4, progress=False, options=_options())
    assert summary == RunSummary(n_views=9, n_cached=0, n_asked=9, n_errors=2, out_dir=out)

    expected_hits = {"g0-v0": 3, "g0-v1": 2, "g0-v2": 2, "g1-v0": 3, "g1-v1": 1, "g1-v2": 4}
    assert fake_server.snapshot() == {sha[v.view_id]: expected_hits.get(v.view_id, 1) for v in views}

    rows = read_rows(out)
    assert Counter(view_id for view_id, _, _ in rows) == {v.view_id: 1 for v in views}
    responses = load_responses(out)
    for view in views:
        response = responses[view.view_id]
        if view.view_id in ("g1-v1", "g1-v2"):
            assert response.text is None and response.error
        else:
            assert response.error is None
            assert response.text == server_module.reply_text(view.image_sha256)
    assert "HTTP 400" in (responses["g1-v1"].error or "")
    assert "failed after 4 attempts: HTTP 503" in (responses["g1-v2"].error or "")

    # the server echoed "Bearer <key>" in its 400 body: the key is in no file of the run folder
    files = [p for p in out.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"run.json", "responses.sqlite"}
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path

    # a rerun keeps recorded errors ...
    fake_server.reset()
    again = run_benchmark(bench, spec, out, concurrency=4, progress=False, options=_options())
    assert again == RunSummary(n_views=9, n_cached=9, n_asked=0, n_errors=2, out_dir=out)
    assert fake_server.snapshot() == {}
    # ... and an explicit retry asks exactly the errored views once, replacing their rows
    retried = run_benchmark(bench, spec, out, concurrency=4, retry_errors=True, progress=False, options=_options())
    assert retried == RunSummary(n_views=9, n_cached=7, n_asked=2, n_errors=0, out_dir=out)
    assert fake_server.snapshot() == {sha["g1-v1"]: 1, sha["g1-v2"]: 1}
    rows = read_rows(out)
    assert Counter(view_id for view_id, _, _ in rows) == {v.view_id: 1 for v in views}
    assert all(text is not None and error is None for _, text, error in rows)


def test_fatal_error_stops_the_run(
    make_bench: Callable[..., Path], tmp_path: Path, fake_server: Any, read_rows: Rows
) -> None:
    bench = make_bench()
    fake_server.faults = {v.image_sha256: ["401"] for v in load_benchmark(bench).views}
    with pytest.raises(VqauditError, match="HTTP 401"):
        run_benchmark(bench, f"openai:m@{fake_server.url}", tmp_path / "run", progress=False, options=_options())
    assert read_rows(tmp_path / "run") == []


def test_run_folder_holds_one_model_on_one_benchmark(make_bench: Callable[..., Path], tmp_path: Path) -> None:
    bench, other = make_bench(), make_bench(2, 2)
    out = tmp_path / "run"
    run_benchmark(bench, "reference:gold", out, progress=False)
    with pytest.raises(VqauditError, match="already holds a run of model 'reference:gold'"):
        run_benchmark(bench, "reference:always-abstain", out, progress=False)
    with pytest.raises(VqauditError, match="already holds a run on another benchmark"):
        run_benchmark(other, "reference:gold", out, progress=False)


def test_views_with_identical_inputs_share_one_call(
    make_bench: Callable[..., Path], tmp_path: Path, fake_server: Any, read_rows: Rows
) -> None:
    bench = make_bench(2, 2)
    views = read_jsonl(bench / "views.jsonl", View)
    first = views[0]
    # g1-v1 shows the same image with the same question as g0-v0
    views[3] = views[3].model_copy(
        update={"image": first.image, "image_sha256": first.image_sha256, "question": first.question}
    )
    write_jsonl(bench / "views.jsonl", views)
    out = tmp_path / "run"
    summary = run_benchmark(bench, f"openai:m@{fake_server.url}", out, progress=False, options=_options())
    assert summary == RunSummary(n_views=4, n_cached=0, n_asked=3, n_errors=0, out_dir=out)
    assert sum(fake_server.snapshot().values()) == 3
    assert len(read_rows(out)) == 3
    responses = load_responses(out)
    assert set(responses) == {"g0-v0", "g0-v1", "g1-v0", "g1-v1"}
    assert responses["g1-v1"].text == responses["g0-v0"].text
    assert responses["g1-v1"].view_id == "g1-v1"


def test_replay_run_records_missing_views_as_errors(make_bench: Callable[..., Path], tmp_path: Path) -> None:
    bench = make_bench()
    views = load_benchmark(bench).views
    replay = tmp_path / "replay.jsonl"
    replay.write_text("".join(json.dumps({"view_id": v.view_id, "text": f"t-{v.view_id}"}) + "\n" for v in views[1:]))
    out = tmp_path / "run"
    summary = run_benchmark(bench, f"replay:{replay}", out, progress=False)
    assert summary == RunSummary(n_views=9, n_cached=0, n_asked=9, n_errors=1, out_dir=out)
    responses = load_responses(out)
    assert responses[views[0].view_id].error == f"replay file has no reply for view {views[0].view_id!r}"
    assert all(responses[v.view_id].text == f"t-{v.view_id}" for v in views[1:])


def test_an_edited_replay_file_is_asked_again(make_bench: Callable[..., Path], tmp_path: Path) -> None:
    # New-user trial: the cache key held only the spec, so rerunning into the folder after editing the file
    # reused every old reply. The identity now holds the SHA-256 of the file's bytes (computed here by hashlib).
    bench = make_bench(2, 2)
    views = load_benchmark(bench).views
    replay = tmp_path / "replay.jsonl"
    replay.write_text("".join(json.dumps({"view_id": v.view_id, "text": "old"}) + "\n" for v in views))
    out = tmp_path / "run"
    spec = f"replay:{replay}"
    assert run_benchmark(bench, spec, out, progress=False).n_asked == 4
    old_sha = sha256_file(replay)
    assert json.loads((out / "run.json").read_text())["model_identity"] == f"{spec}@sha256:{old_sha}"
    assert run_benchmark(bench, spec, out, progress=False).n_cached == 4  # same bytes: resumed, nothing asked

    replay.write_text("".join(json.dumps({"view_id": v.view_id, "text": "new"}) + "\n" for v in views))
    again = run_benchmark(bench, spec, out, progress=False)
    assert (again.n_asked, again.n_cached) == (4, 0)
    assert {r.text for r in load_responses(out).values()} == {"new"}
    info = json.loads((out / "run.json").read_text())
    assert info["model"] == spec  # the spec is unchanged; the identity names the new bytes
    assert info["model_identity"] == f"{spec}@sha256:{hashlib.sha256(replay.read_bytes()).hexdigest()}"
    assert info["model_identity"] != f"{spec}@sha256:{old_sha}"


def test_load_responses_without_a_run(tmp_path: Path) -> None:
    with pytest.raises(VqauditError, match="responses.sqlite: file not found"):
        load_responses(tmp_path)


def test_bad_concurrency(make_bench: Callable[..., Path], tmp_path: Path) -> None:
    with pytest.raises(VqauditError, match="concurrency must be at least 1"):
        run_benchmark(make_bench(), "reference:gold", tmp_path / "run", concurrency=0, progress=False)


def test_progress_bar_smoke(make_bench: Callable[..., Path], tmp_path: Path) -> None:
    summary = run_benchmark(make_bench(), "reference:always-answer", tmp_path / "run", progress=True)
    assert summary.n_asked == 9
