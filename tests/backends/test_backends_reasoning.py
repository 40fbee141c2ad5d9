"""Reasoning models behind the openai: backend, against a real local aiohttp server replying as vLLM does with a
reasoning parser (tests/fixtures/reasoning_server.py); generation keys as model args; usage in run.json; replay
lines with reasoning; old response caches.

Where the expected values come from: the reply bodies are the servers' documented shapes (vLLM docs, "Reasoning
Outputs": ``reasoning_content`` beside ``content``; ``reasoning`` in newer vLLM and OpenRouter; OpenAI API
reference: ``usage.completion_tokens_details.reasoning_tokens``, ``max_completion_tokens``, ``reasoning_effort``;
vLLM/SGLang ``chat_template_kwargs``); the token sums are added up by hand in the comments.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from fixture_modules import FIXTURES, load_fixture_module
from vqaudit.backends import (
    BackendCallError,
    Completion,
    GenerationParams,
    ModelOptions,
    Request,
    ResponseCache,
    cache_key,
    check_backend,
    load_backend,
    loaded_generation,
)
from vqaudit.errors import VqauditError
from vqaudit.merge import merge_runs
from vqaudit.parsing import parse_answerability
from vqaudit.run import load_responses, run_benchmark
from vqaudit.store import RunFolder, load_benchmark


def _server_module() -> ModuleType:
    return load_fixture_module("reasoning_server", FIXTURES / "reasoning_server.py")


@pytest.fixture
def serve() -> Iterator[Callable[..., Any]]:
    """Start ReasoningServer(reply) servers for the test; all are stopped at its end."""
    started: list[Any] = []

    def start(reply: Callable[[dict[str, Any]], Any] | None = None) -> Any:
        server = _server_module().ReasoningServer(reply).__enter__()
        started.append(server)
        return server

    yield start
    for server in started:
        server.__exit__(None, None, None)


def _options(**args: str) -> ModelOptions:
    """Fast retries (a retry would show as a second hit), the given --model-arg pairs."""
    return ModelOptions(args=tuple(args.items()), max_retries=3, backoff_base_s=0.0, backoff_max_s=0.0, timeout_s=10.0)


CONTENT = '{"answerable": true, "answer": "0", "reason": "Ünïcödé 😀 \u202eRTL\u202c \t tab"}\n'
"""A content string that must come back byte for byte (non-ASCII, an emoji, bidi controls, a tab, a newline)."""


def _replies(bench: Path) -> dict[str, dict[str, Any]]:
    """The body the server sends per image SHA-256, for the 6 views of make_bench(2, 3) in order."""
    chat_reply = _server_module().chat_reply
    views = load_benchmark(bench).views
    bodies = [
        # vLLM/SGLang reasoning parser: reasoning_content beside the content; OpenAI's usage details
        chat_reply(
            CONTENT,
            reasoning_content="Let me look at bar 0.\nIt reads 0.",
            usage={
                "prompt_tokens": 100,
                "completion_tokens": 40,
                "total_tokens": 140,
                "completion_tokens_details": {"reasoning_tokens": 30},
            },
        ),
        # newer vLLM / OpenRouter: "reasoning"; the reasoning count at the top of usage
        chat_reply(
            '{"answerable": false, "answer": null, "reason": "no bar"}',
            reasoning="No bar here.",
            usage={"prompt_tokens": 90, "completion_tokens": 20, "reasoning_tokens": 12},
        ),
        # cut by max_tokens while thinking: content null beside reasoning, finish_reason length
        chat_reply(
            None,
            reasoning_content="Hmm, the bar could be",
            finish_reason="length",
            usage={
                "prompt_tokens": 80,
                "completion_tokens": 4096,
                "completion_tokens_details": {"reasoning_tokens": 4096},
            },
        ),
        # cut by length with no reasoning sent; hostile usage: none of it is a count
        chat_reply(
            None,
            finish_reason="length",
            usage={
                "prompt_tokens": -5,
                "completion_tokens": 10**30,
                "reasoning_tokens": "7",
                "completion_tokens_details": {"reasoning_tokens": 1.5},
                "total_tokens": True,
            },
        ),
        # a plain reply: no usage at all
        chat_reply('{"answerable": false, "answer": null, "reason": "plain"}'),
        # content as text parts; usage without a reasoning count
        chat_reply(
            [{"type": "text", "text": '{"answerable": false, '}, {"type": "text", "text": '"answer": null}'}],
            reasoning_content="parts",
            usage={
                "prompt_tokens": 70,
                "completion_tokens": 10,
                "completion_tokens_details": {"reasoning_tokens": None},
            },
        ),
    ]
    return {v.image_sha256: body for v, body in zip(views, bodies, strict=True)}


def test_reasoning_replies_are_stored_once_each_with_their_fields(
    make_bench: Callable[..., Path], serve: Any, tmp_path: Path
) -> None:
    bench = make_bench(2, 3)
    by_image = _replies(bench)
    key_of = _server_module().request_key
    server = serve(lambda body: by_image[key_of(body)])
    out = tmp_path / "run"
    summary = run_benchmark(bench, f"openai:m@{server.url}", out, concurrency=4, progress=False, options=_options())
    assert (summary.n_views, summary.n_asked, summary.n_errors) == (6, 6, 0)
    # one hit per view: the two content-null replies were stored, not retried as malformed bodies
    assert sorted(server.hits.values()) == [1] * 6 and set(server.hits) == set(by_image)

    views = load_benchmark(bench).views
    got = load_responses(out)
    rows = [
        (got[v.view_id].text, got[v.view_id].reasoning, got[v.view_id].finish_reason, got[v.view_id].usage)
        for v in views
    ]
    assert rows == [
        (
            CONTENT,
            "Let me look at bar 0.\nIt reads 0.",
            "stop",
            {"prompt_tokens": 100, "completion_tokens": 40, "reasoning_tokens": 30},
        ),
        (
            '{"answerable": false, "answer": null, "reason": "no bar"}',
            "No bar here.",
            "stop",
            {"prompt_tokens": 90, "completion_tokens": 20, "reasoning_tokens": 12},
        ),
        (
            None,
            "Hmm, the bar could be",
            "length",
            {"prompt_tokens": 80, "completion_tokens": 4096, "reasoning_tokens": 4096},
        ),
        ("", None, "length", None),  # no content and no reasoning: an empty reply (the runner's rule)
        ('{"answerable": false, "answer": null, "reason": "plain"}', None, "stop", None),
        ('{"answerable": false, "answer": null}', "parts", "stop", {"prompt_tokens": 70, "completion_tokens": 10}),
    ]
    # byte-exact in the file itself, and the reasoning in its own column
    with sqlite3.connect(out / "responses.sqlite") as conn:
        stored = dict(conn.execute("SELECT view_id, CAST(text AS BLOB) FROM responses").fetchall())
    assert stored[views[0].view_id] == CONTENT.encode()

    # run.json: prompt 100+90+80+70 = 340; completion 40+20+4096+10 = 4166; reasoning 30+12+4096 = 4138; 4 replies
    expected = {"prompt_tokens": 340, "completion_tokens": 4166, "reasoning_tokens": 4138, "replies": 4}
    assert json.loads((out / "run.json").read_text())["usage"] == expected
    assert summary.usage is not None and summary.usage.model_dump() == expected

    # a resumed run asks nothing and keeps the sums; a merge of the run sums the same rows
    again = run_benchmark(bench, f"openai:m@{server.url}", out, progress=False, options=_options())
    assert (again.n_asked, again.n_cached) == (0, 6)
    assert json.loads((out / "run.json").read_text())["usage"] == expected
    merged = merge_runs([out], tmp_path / "merged")
    assert merged.usage is not None and merged.usage.model_dump() == expected
    assert json.loads((tmp_path / "merged" / "run.json").read_text())["usage"] == expected


def test_a_run_without_usage_writes_no_usage(make_bench: Callable[..., Path], serve: Any, tmp_path: Path) -> None:
    server = serve()  # plain replies, no usage: run.json is what it was before usage existed
    summary = run_benchmark(
        make_bench(1, 2), f"openai:m@{server.url}", tmp_path / "run", progress=False, options=_options()
    )
    assert summary.usage is None
    assert "usage" not in json.loads((tmp_path / "run" / "run.json").read_text())
    assert RunFolder(tmp_path / "run").read_info().usage is None


def _ask(spec: str, options: ModelOptions, request: Request) -> str | Completion:
    backend = load_backend(spec, options)

    async def go() -> str | Completion:
        try:
            return await backend.complete(request)
        finally:
            await backend.aclose()

    return asyncio.run(go())


def _text_request(params: GenerationParams) -> Request:
    return Request("r", "p", "Is it?", None, None, params)


def test_null_content_without_reasoning_or_length_stays_malformed(serve: Any) -> None:
    chat_reply = _server_module().chat_reply
    server = serve(lambda body: chat_reply(None, finish_reason="stop"))
    with pytest.raises(BackendCallError, match="content is null, with no reasoning and finish_reason 'stop'"):
        _ask(f"openai:m@{server.url}", _options(), _text_request(GenerationParams()))
    assert sum(server.hits.values()) == 4  # the first attempt and max_retries=3 retries


@pytest.mark.parametrize(
    "body",
    [
        b'{"choices": [{"message": {"content": "ok", "reasoning_content": 5}, "finish_reason": ["x"]}], "usage": 3}',
        b'{"choices": [{"message": {"content": "ok", "reasoning": {"a": 1}}, "finish_reason": null}], '
        b'"usage": {"prompt_tokens": 1' + b"0" * 5000 + b', "completion_tokens": 1e400}}',
        b'{"choices": [{"message": {"content": "ok"}, "finish_reason": "' + b"x" * 65 + b'"}], '
        b'"usage": {"completion_tokens_details": "no", "prompt_tokens": 9007199254740992}}',
        # a lone surrogate as the finish reason (SQLite could not store it as text) and a non-printable one
        b'{"choices": [{"message": {"content": "ok", "reasoning_content": ""}, "finish_reason": "\\ud800"}]}',
        b'{"choices": [{"message": {"content": "ok"}, "finish_reason": "stop\\n"}], "usage": {}}',
    ],
)
def test_hostile_fields_beside_the_content_are_ignored(serve: Any, body: bytes) -> None:
    """Wrong types, a 5,001-digit number, 1e400, a count over 2**53 - 1, a 65-character finish reason, a lone
    surrogate or a newline in it, an empty reasoning: the content is still the reply, everything else unreadable
    is left out (not a crash, not a retry)."""
    server = serve(lambda _body: body)
    reply = _ask(f"openai:m@{server.url}", _options(), _text_request(GenerationParams()))
    assert reply == Completion("ok", None, None, None)
    assert sum(server.hits.values()) == 1


def test_generation_keys_reach_the_server_as_given(make_bench: Callable[..., Path], serve: Any, tmp_path: Path) -> None:
    bench = make_bench(1, 2)
    server = serve()
    spec = f"openai:m@{server.url}"
    base = {"model", "messages", "temperature"}

    run_benchmark(bench, spec, tmp_path / "plain", progress=False, options=_options())
    assert [{k: b[k] for k in b if k not in base} for b in server.bodies] == [{"max_tokens": 512}] * 2
    server.bodies.clear()

    run_benchmark(bench, spec, tmp_path / "long", progress=False, options=_options(max_tokens="4096"))
    assert [{k: b[k] for k in b if k not in base} for b in server.bodies] == [{"max_tokens": 4096}] * 2
    server.bodies.clear()

    run_benchmark(
        bench,
        spec,
        tmp_path / "think",
        progress=False,
        options=_options(max_completion_tokens="4096", reasoning_effort="high", enable_thinking="false"),
    )
    assert [{k: b[k] for k in b if k not in base} for b in server.bodies] == [
        {"max_completion_tokens": 4096, "reasoning_effort": "high", "chat_template_kwargs": {"enable_thinking": False}}
    ] * 2
    assert json.loads((tmp_path / "think" / "run.json").read_text())["params"] == {
        "temperature": 0.0,
        "max_tokens": 4096,
        "token_field": "max_completion_tokens",
        "reasoning_effort": "high",
        "enable_thinking": False,
    }

    # each setting is another cache key for every view; the plain run's keys are the keys of before
    keys = {
        name: ResponseCache(tmp_path / name / "responses.sqlite").view_keys() for name in ("plain", "long", "think")
    }
    for view_id in keys["plain"]:
        assert len({keys[name][view_id] for name in keys}) == 3


def test_cache_key_without_settings_is_the_old_key() -> None:
    """The key of a call without generation keys is the SHA-256 of the canonical JSON it always hashed (the
    material written out by hand below), and each setting changes it."""
    material = {
        "image_sha256": "ab" * 32,
        "model": "m",
        "params": {"max_tokens": 512, "temperature": 0.0},
        "prompt": "prompt",
        "prompt_id": "p",
    }
    old = hashlib.sha256(json.dumps(material, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert cache_key("m", "p", "prompt", "ab" * 32, ModelOptions().generation(GenerationParams())) == old
    assert ModelOptions(args=(("device", "cpu"),)).generation(GenerationParams()) == GenerationParams()
    variants = [
        {"max_tokens": "4096"},
        {"max_completion_tokens": "512"},
        {"reasoning_effort": "low"},
        {"enable_thinking": "true"},
        {"enable_thinking": "false"},
    ]
    keys = {
        cache_key("m", "p", "prompt", "ab" * 32, ModelOptions(args=tuple(a.items())).generation(GenerationParams()))
        for a in variants
    }
    assert len(keys) == 5 and old not in keys
    # max_new_tokens is max_tokens spelt as transformers does: the same parameters, the same key
    same = [ModelOptions(args=((k, "64"),)).generation(GenerationParams()) for k in ("max_tokens", "max_new_tokens")]
    assert same[0] == same[1] == GenerationParams(max_tokens=64)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"max_tokens": "0"}, "--judge-arg max_tokens='0': expected an integer from 1 to 1048576"),
        ({"max_tokens": "1048577"}, "--judge-arg max_tokens='1048577': expected an integer from 1 to 1048576"),
        ({"max_new_tokens": "1e3"}, "--judge-arg max_new_tokens='1e3': expected an integer from 1 to 1048576"),
        ({"max_completion_tokens": "٣"}, "--judge-arg max_completion_tokens='٣': expected an integer"),
        ({"reasoning_effort": ""}, "--judge-arg reasoning_effort='': expected a word such as low, medium or high"),
        ({"reasoning_effort": "high; rm"}, "--judge-arg reasoning_effort='high; rm': expected a word"),
        ({"enable_thinking": "maybe"}, "--judge-arg enable_thinking='maybe': expected true or false"),
        (
            {"max_tokens": "8", "max_completion_tokens": "8"},
            "--judge-arg max_tokens and max_completion_tokens: two spellings of the one token budget; give one",
        ),
    ],
)
def test_bad_generation_values_are_one_line(args: dict[str, str], message: str) -> None:
    options = ModelOptions(args=tuple(args.items()), args_option="--judge-arg")
    with pytest.raises(VqauditError) as info:
        options.generation(GenerationParams())
    assert str(info.value).startswith(message) and "\n" not in str(info.value)
    with pytest.raises(VqauditError, match="expected|two spellings"):
        load_backend("openai:m@http://127.0.0.1:9/v1", options)  # refused at load too, before any call


@pytest.mark.parametrize(
    ("spec", "key", "takes"),
    [
        ("reference:gold", "max_tokens", "none (no setting changes its replies)"),
        ("replay:FILE", "enable_thinking", "none (no setting changes its replies)"),
        (
            "openai:m@http://127.0.0.1:9/v1",
            "max_new_tokens",
            "max_tokens, max_completion_tokens, reasoning_effort, enable_thinking",
        ),
    ],
)
def test_kinds_refuse_generation_keys_they_do_not_take(spec: str, key: str, takes: str, tmp_path: Path) -> None:
    spec = spec.replace("FILE", str(tmp_path / "r.jsonl"))
    (tmp_path / "r.jsonl").write_text('{"view_id": "v", "text": "x"}\n')
    options = ModelOptions(args=((key, "true" if key == "enable_thinking" else "64"),))
    kind = spec.partition(":")[0]
    expected = (
        f"model spec {spec!r}: --model-arg {key}: the {kind!r} backend takes no such generation setting; "
        f"it takes {takes}"
    )
    for call in (load_backend, check_backend):
        with pytest.raises(VqauditError) as info:
            call(spec, options)
        assert str(info.value) == expected


def test_the_module_never_sees_generation_keys(serve: Any) -> None:
    """openai's own reader refuses every --model-arg; generation keys pass because load_backend strips them, and
    a misspelt one is still refused by the module."""
    server = serve()
    load_backend(f"openai:m@{server.url}", _options(max_tokens="64", enable_thinking="true"))
    with pytest.raises(VqauditError, match="unknown --model-arg max_token; this backend takes none"):
        load_backend(f"openai:m@{server.url}", _options(max_token="64"))


def test_judge_args_reach_the_judge_server(serve: Any, tmp_path: Path) -> None:
    """--judge-arg max_tokens=1024 reaches the short-answer judge's calls (default max_tokens 8)."""
    from vqaudit.shortanswer.judge import JUDGE_PARAMS, run_judge
    from vqaudit.shortanswer.records import AuditRow

    server = serve()
    rows = [AuditRow(qid="q1", question="What?", prediction="two", answers=("2",), benchmark="textvqa")]
    spec = f"openai:m@{server.url}"
    plain = load_backend(spec, _options())
    assert loaded_generation(plain, JUDGE_PARAMS) == JUDGE_PARAMS
    assert run_judge(rows, spec, tmp_path / "a.sqlite", backend=plain) == {"q1": True}
    judge = load_backend(
        spec, ModelOptions(args=(("max_tokens", "1024"), ("enable_thinking", "false")), args_option="--judge-arg")
    )
    assert run_judge(rows, spec, tmp_path / "b.sqlite", backend=judge) == {"q1": True}
    assert [(b["max_tokens"], b.get("chat_template_kwargs")) for b in server.bodies] == [
        (8, None),
        (1024, {"enable_thinking": False}),
    ]


# -- replay: lines with reasoning, finish_reason, usage -----------------------------------------------------------


def test_replay_lines_carry_reasoning_finish_reason_and_usage(make_bench: Callable[..., Path], tmp_path: Path) -> None:
    bench = make_bench(1, 3)
    views = load_benchmark(bench).views
    lines = [
        {
            "view_id": views[0].view_id,
            "text": "A",
            "reasoning": "think",
            "finish_reason": "stop",
            "usage": {"prompt_tokens": 5, "completion_tokens": 7, "reasoning_tokens": 3, "total_tokens": 12},
        },
        {"view_id": views[1].view_id, "text": None, "reasoning": "cut while", "finish_reason": "length"},
        {"view_id": views[2].view_id, "text": "C", "reasoning": None, "finish_reason": None, "usage": None},
    ]
    path = tmp_path / "replies.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    summary = run_benchmark(bench, f"replay:{path}", tmp_path / "run", progress=False)
    assert summary.n_errors == 0
    got = load_responses(tmp_path / "run")
    assert [
        (got[v.view_id].text, got[v.view_id].reasoning, got[v.view_id].finish_reason, got[v.view_id].usage)
        for v in views
    ] == [
        ("A", "think", "stop", {"prompt_tokens": 5, "completion_tokens": 7, "reasoning_tokens": 3}),
        (None, "cut while", "length", None),
        ("C", None, None, None),
    ]
    expected = {"prompt_tokens": 5, "completion_tokens": 7, "reasoning_tokens": 3, "replies": 1}
    assert json.loads((tmp_path / "run" / "run.json").read_text())["usage"] == expected


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"view_id": "v", "text": "a", "reasoning": 3}, "row 2, field 'reasoning': expected a string or null"),
        ({"view_id": "v", "text": "a", "finish_reason": ["stop"]}, "row 2, field 'finish_reason': expected a string"),
        ({"view_id": "v", "text": "a", "finish_reason": "\ud800"}, "row 2, field 'finish_reason': expected a string"),
        ({"view_id": "v", "text": "a", "usage": [1]}, "row 2, field 'usage': expected an object of token counts"),
        (
            {"view_id": "v", "text": "a", "usage": {"prompt_tokens": -1}},
            "row 2, field 'usage.prompt_tokens': expected an integer from 0 to 9007199254740991",
        ),
        (
            {"view_id": "v", "text": "a", "usage": {"completion_tokens": 2.0}},
            "row 2, field 'usage.completion_tokens': expected an integer",
        ),
        (
            {"view_id": "v", "text": "a", "usage": {"reasoning_tokens": True}},
            "row 2, field 'usage.reasoning_tokens': expected an integer",
        ),
    ],
)
def test_replay_bad_fields_name_file_row_and_field(line: dict[str, Any], message: str, tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"view_id": "u", "text": "ok"}) + "\n" + json.dumps(line) + "\n")
    with pytest.raises(VqauditError) as info:
        load_backend(f"replay:{path}")
    assert str(info.value).startswith(f"{path}: {message}")


def test_replay_null_text_without_reasoning_is_still_a_recorded_error(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"view_id": "v", "text": None, "finish_reason": "stop"}) + "\n")
    with pytest.raises(BackendCallError, match="records no reply text for view 'v'"):
        _ask(f"replay:{path}", ModelOptions(), Request("v", "p", "q", None, None, GenerationParams()))


def test_replay_null_text_cut_by_the_budget_is_one_unfinished_reply(tmp_path: Path) -> None:
    # OpenAI's reasoning models: hidden reasoning used every token, content null, finish_reason "length"; the same
    # reply from a server is stored and scored "reasoning not finished", so the replay of it is too
    path = tmp_path / "r.jsonl"
    path.write_text(
        json.dumps(
            {
                "view_id": "v",
                "text": None,
                "finish_reason": "length",
                "usage": {"completion_tokens": 64, "completion_tokens_details": {"reasoning_tokens": 64}},
            }
        )
        + "\n"
    )
    reply = _ask(f"replay:{path}", ModelOptions(), Request("v", "p", "q", None, None, GenerationParams()))
    assert reply == Completion(None, None, "length", {"completion_tokens": 64, "reasoning_tokens": 64})
    # the runner stores a Completion with neither content nor reasoning as the empty reply: cut by the budget
    assert parse_answerability("", finish_reason="length").invalid_reason == "reasoning not finished"


# -- response caches written before the reasoning columns ---------------------------------------------------------

_OLD_SCHEMA = """
CREATE TABLE responses (key TEXT PRIMARY KEY, view_id TEXT NOT NULL, model TEXT NOT NULL, prompt_id TEXT NOT NULL,
    params TEXT NOT NULL, text TEXT, error TEXT, latency_s REAL NOT NULL, created INTEGER NOT NULL,
    created_at TEXT NOT NULL);
CREATE INDEX responses_created ON responses (created);
CREATE TABLE view_keys (view_id TEXT PRIMARY KEY, key TEXT NOT NULL);
"""
"""The responses.sqlite schema before reasoning, finish_reason and usage (backends/cache.py before 422683e)."""


def _old_cache(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.executescript(_OLD_SCHEMA)
        conn.execute(
            "INSERT INTO responses VALUES ('k1', 'v1', 'm', 'p', '{\"max_tokens\": 512}', 'old reply', NULL, "
            "0.5, 1, '2026-01-01T00:00:00')"
        )
    conn.close()


def test_an_old_cache_reads_read_only_without_change(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    _old_cache(path)
    before = path.read_bytes()
    with ResponseCache(path, read_only=True) as cache:
        old = cache.get("k1")
    assert old is not None
    assert (old.text, old.reasoning, old.finish_reason, old.usage) == ("old reply", None, None, None)
    assert path.read_bytes() == before  # nothing migrated


def test_an_old_cache_opened_read_write_gains_the_columns(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    _old_cache(path)
    with ResponseCache(path) as cache:
        old = cache.get("k1")
        assert old is not None and (old.text, old.reasoning, old.usage) == ("old reply", None, None)
        cache.put(
            old.model_copy(
                update={
                    "cache_key": "k2",
                    "text": None,
                    "reasoning": "r",
                    "finish_reason": "length",
                    "usage": {"completion_tokens": 9},
                }
            )
        )
    with sqlite3.connect(path) as conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(responses)")]
    conn.close()
    assert columns[-3:] == ["reasoning", "finish_reason", "usage"]
    with ResponseCache(path, read_only=True) as cache:
        new = cache.get("k2")
    assert new is not None
    assert (new.text, new.reasoning, new.finish_reason, new.usage) == (None, "r", "length", {"completion_tokens": 9})


def test_cli_run_prints_the_token_sums_and_refuses_bad_keys_in_one_line(
    make_bench: Callable[..., Path],
    serve: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from shortanswer.helpers import run_cli

    bench = make_bench(2, 3)
    by_image = _replies(bench)
    key_of = _server_module().request_key
    server = serve(lambda body: by_image[key_of(body)])
    out = tmp_path / "run"
    code = run_cli(
        monkeypatch,
        "run",
        str(bench),
        "--model",
        f"openai:m@{server.url}",
        "--out",
        str(out),
        "--model-arg",
        "max_tokens=4096",
        "--max-retries",
        "0",
    )
    printed = capsys.readouterr().err  # the summary lines go to stderr (the console of vqaudit.cli.options)
    assert code == 0
    assert (
        "tokens reported by the server over 4 replies: 340 prompt, 4166 completion (of which 4138 reasoning); "
        "in run.json usage"
    ) in printed
    assert {b["max_tokens"] for b in server.bodies} == {4096}

    for args, line in (
        (
            ("--model", "reference:gold", "--model-arg", "max_tokens=64"),
            "error: model spec 'reference:gold': --model-arg max_tokens: the 'reference' backend takes no such "
            "generation setting; it takes none (no setting changes its replies)",
        ),
        (
            ("--model", f"openai:m@{server.url}", "--model-arg", "max_tokens=many"),
            "error: --model-arg max_tokens='many': expected an integer from 1 to 1048576",
        ),
    ):
        code = run_cli(monkeypatch, "run", str(bench), "--out", str(tmp_path / "refused"), *args)
        assert code == 2
        assert capsys.readouterr().err.strip().splitlines() == [line]
        assert not (tmp_path / "refused").exists()


def test_model_args_reach_the_perturbation_calls(serve: Any, tmp_path: Path) -> None:
    """vqaudit perturb's calls (default max_tokens 64, prompts/perturbations.py PARAMS) take --model-arg settings."""
    from vqaudit.shortanswer.perturb_ask import ask_perturbations
    from vqaudit.shortanswer.records import AuditRow

    server = serve()
    image = b"\x89PNG\r\n\x1a\n"  # sent as a data URL; the server only hashes it
    rows = [AuditRow(qid="q1", question="What is written?", prediction="a", answers=("a",), benchmark="textvqa")]
    spec = f"openai:m@{server.url}"
    for args, expected in (((), 64), ((("max_tokens", "2048"),), 2048)):
        server.bodies.clear()
        got = ask_perturbations(
            rows,
            lambda _row: (image, "image/png"),
            spec,
            tmp_path / f"{expected}.sqlite",
            variants=["A1", "B1"],
            options=_options(**dict(args)),
        )
        assert got.replies == {"A1": {"q1": "yes"}, "B1": {"q1": "yes"}}
        assert [b["max_tokens"] for b in server.bodies] == [expected, expected]


def test_a_count_no_reply_reported_is_none_not_zero() -> None:
    # Anthropic's API reports input and output tokens but no thinking tokens apart: the sum says "not reported"
    from vqaudit.schema import Response
    from vqaudit.store import sum_usage

    replies = [
        Response(
            view_id=f"v{k}", model="m", prompt_id="p", text="x", usage={"prompt_tokens": 10 + k, "completion_tokens": 5}
        )
        for k in range(3)
    ]
    usage = sum_usage(replies)
    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens, usage.reasoning_tokens, usage.replies) == (33, 15, None, 3)
