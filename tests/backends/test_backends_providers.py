"""The ``anthropic:`` and ``gemini:`` providers of the HTTP template, against local aiohttp servers.

Each server below is written from the API's public reference and asserts the request shape on its side:

- Anthropic Messages API (API reference "Messages", guide "Extended thinking"): ``POST /v1/messages``,
  ``x-api-key`` and ``anthropic-version: 2023-06-01`` headers, ``max_tokens`` required, an image as
  ``{"type": "image", "source": {"type": "base64", "media_type": ..., "data": ...}}``, extended thinking as
  ``thinking: {"type": "enabled", "budget_tokens": N}`` (at least 1,024, below ``max_tokens``); the reply's
  ``content`` blocks (``thinking``, ``text``), ``stop_reason`` (``end_turn``, ``max_tokens``) and ``usage``
  (``input_tokens``, ``output_tokens``).
- Gemini API (reference "Generating content", guide "Gemini thinking"): ``POST /v1beta/models/MODEL:generateContent``,
  ``x-goog-api-key``, ``contents[].parts[]`` with ``inline_data {mime_type, data}`` and ``text``,
  ``generationConfig.maxOutputTokens``/``temperature``/``thinkingConfig {thinkingBudget, includeThoughts}``; the
  reply's ``candidates[0].content.parts`` (``thought: true`` parts), ``finishReason`` (``STOP``, ``MAX_TOKENS``)
  and ``usageMetadata`` (``promptTokenCount``, ``candidatesTokenCount``, ``thoughtsTokenCount``).

Retries and failures are the template's (429/5xx retried, 401 fatal), checked here once per provider.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from fixture_modules import FIXTURES, load_fixture_module
from vqaudit.backends import BackendCallError, Completion, GenerationParams, ModelOptions, Request, load_backend
from vqaudit.backends.redact import MIN_RUN
from vqaudit.errors import VqauditError
from vqaudit.run import load_responses, run_benchmark

KEY = "sk-ant-Q7x9TzLmN2vB4cR8wY1kH6jD3fG5sA0e"  # 40 characters, like a real key
IMAGE = bytes(range(256))  # every byte value: the base64 round trip is checked whole
FAST = ModelOptions(max_retries=2, backoff_base_s=0.001, timeout_s=5.0)


def _module() -> ModuleType:
    return load_fixture_module("provider_server", FIXTURES / "provider_server.py")


@pytest.fixture
def serve() -> Iterator[Callable[..., Any]]:
    servers: list[Any] = []

    def start(answer: Callable[[Any], tuple[Any, ...]], base: str = "/v1") -> Any:
        server = _module().ProviderServer(answer, base).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def _ask(spec: str, request: Request, options: ModelOptions = FAST) -> str | Completion:
    backend = load_backend(spec, options)

    async def go() -> str | Completion:
        try:
            return await backend.complete(request)
        finally:
            await backend.aclose()

    return asyncio.run(go())


def _image_request(params: GenerationParams | None = None) -> Request:
    return Request("v1", "p", "How tall is the bar?", IMAGE, "image/png", params or GenerationParams())


def _text_request(params: GenerationParams | None = None) -> Request:
    return Request("j1", "judge", "Is 4 the same as four?", None, None, params or GenerationParams())


# -- Anthropic Messages API -------------------------------------------------------------------------------------


def _message(
    blocks: list[dict[str, Any]], stop: str = "end_turn", usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A Messages API reply object (API reference, "Messages": the Message object)."""
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage if usage is not None else {"input_tokens": 100, "output_tokens": 7},
    }


def test_anthropic_request_shape_headers_and_image_block(
    serve: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server = serve(lambda seen: (200, _message([{"type": "text", "text": "yes"}])))
    reply = _ask(f"anthropic:claude-test@{server.url}", _image_request())
    assert reply == Completion("yes", None, "end_turn", {"prompt_tokens": 100, "completion_tokens": 7})
    (seen,) = server.seen
    assert seen.path == "/v1/messages"
    assert seen.headers["x-api-key"] == KEY and seen.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in seen.headers  # the key goes only in x-api-key
    body = seen.body
    assert (body["model"], body["max_tokens"], body["temperature"]) == ("claude-test", 512, 0.0)
    assert "thinking" not in body
    (message,) = body["messages"]
    image, text = message["content"]
    assert message["role"] == "user"
    assert image["type"] == "image" and image["source"]["type"] == "base64"
    assert image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]) == IMAGE
    assert text == {"type": "text", "text": "How tall is the bar?"}


def test_anthropic_text_only_request_is_a_string_content(serve: Callable[..., Any]) -> None:
    server = serve(lambda seen: (200, _message([{"type": "text", "text": "no"}])))
    assert _ask(f"anthropic:claude-test@{server.url}", _text_request()) == Completion(
        "no", None, "end_turn", {"prompt_tokens": 100, "completion_tokens": 7}
    )
    (seen,) = server.seen
    assert seen.body["messages"] == [{"role": "user", "content": "Is 4 the same as four?"}]
    assert "x-api-key" not in seen.headers  # ANTHROPIC_API_KEY unset: no key sent
    assert seen.headers["anthropic-version"] == "2023-06-01"


def test_anthropic_extended_thinking_blocks_are_the_reasoning(serve: Callable[..., Any]) -> None:
    blocks = [
        {"type": "thinking", "thinking": "The bar reaches 40.", "signature": "EqQBCgIYAh"},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
        {"type": "text", "text": '{"answerable": true, "answer": "40"}'},
    ]
    server = serve(
        lambda seen: (
            200,
            _message(blocks, usage={"input_tokens": 1500, "output_tokens": 900, "cache_read_input_tokens": 20}),
        )
    )
    options = ModelOptions(max_retries=0, args=(("max_tokens", "4096"), ("thinking_budget", "2048")))
    reply = _ask(f"anthropic:claude-test@{server.url}", _image_request(options.generation(GenerationParams())), options)
    assert reply == Completion(
        '{"answerable": true, "answer": "40"}',
        "The bar reaches 40.",
        "end_turn",
        {"prompt_tokens": 1520, "completion_tokens": 900},
    )
    body = server.seen[0].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048} and body["max_tokens"] == 4096
    assert "temperature" not in body  # extended thinking is not compatible with a temperature change


def test_anthropic_max_tokens_stop_while_thinking_is_one_cut_reply(serve: Callable[..., Any]) -> None:
    server = serve(
        lambda seen: (
            200,
            _message(
                [{"type": "thinking", "thinking": "Let me look at", "signature": "x"}],
                stop="max_tokens",
                usage={"input_tokens": 10, "output_tokens": 2048},
            ),
        )
    )
    params = GenerationParams(max_tokens=2048, thinking_budget=1024)
    reply = _ask(f"anthropic:claude-test@{server.url}", _image_request(params))
    assert reply == Completion(None, "Let me look at", "length", {"prompt_tokens": 10, "completion_tokens": 2048})
    assert len(server.seen) == 1  # one reply, not a malformed body retried


def test_anthropic_thinking_budget_limits(serve: Callable[..., Any]) -> None:
    server = serve(lambda seen: (200, _message([{"type": "text", "text": "x"}])))
    # the API's minimum budget is 1,024: refused at load, before any call
    with pytest.raises(VqauditError, match=r"thinking_budget=500: expected 0 \(no thinking\) or at least 1024"):
        load_backend(f"anthropic:m@{server.url}", ModelOptions(args=(("thinking_budget", "500"),)))
    # not below max_tokens (given, or the stage's default of 512): refused at load too
    for args in ((("thinking_budget", "2048"),), (("thinking_budget", "2048"), ("max_tokens", "2048"))):
        with pytest.raises(VqauditError, match=r"thinking_budget=2048 must be below the token budget \(max_tokens="):
            load_backend(f"anthropic:m@{server.url}", ModelOptions(args=args))
    # a request whose own budget is smaller (built elsewhere): every call would be HTTP 400, so the first is fatal
    # and nothing is sent
    with pytest.raises(
        BackendCallError, match="thinking_budget=2048 must be below the token budget max_tokens=512"
    ) as exc:
        _ask(f"anthropic:m@{server.url}", _image_request(GenerationParams(thinking_budget=2048)))
    assert exc.value.fatal and server.seen == []
    # 0: thinking switched off explicitly, temperature sent
    _ask(f"anthropic:m@{server.url}", _image_request(GenerationParams(thinking_budget=0)))
    assert server.seen[0].body["thinking"] == {"type": "disabled"} and server.seen[0].body["temperature"] == 0.0


# -- Gemini generateContent --------------------------------------------------------------------------------------


def _generated(
    parts: list[dict[str, Any]], finish: str = "STOP", usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A GenerateContentResponse (Gemini API reference, "Generating content")."""
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}],
        "usageMetadata": usage
        if usage is not None
        else {"promptTokenCount": 30, "candidatesTokenCount": 4, "totalTokenCount": 34},
        "modelVersion": "gemini-test",
    }


def test_gemini_request_shape_header_and_inline_data(
    serve: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    server = serve(lambda seen: (200, _generated([{"text": "yes"}])), base="/v1beta")
    reply = _ask(f"gemini:gemini-2.5-flash@{server.url}", _image_request())
    assert reply == Completion("yes", None, "STOP", {"prompt_tokens": 30, "completion_tokens": 4})
    (seen,) = server.seen
    assert seen.path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert seen.headers["x-goog-api-key"] == KEY and "authorization" not in seen.headers
    (content,) = seen.body["contents"]
    image, text = content["parts"]
    assert content["role"] == "user"
    assert image["inline_data"]["mime_type"] == "image/png"
    assert base64.b64decode(image["inline_data"]["data"]) == IMAGE
    assert text == {"text": "How tall is the bar?"}
    assert seen.body["generationConfig"] == {"temperature": 0.0, "maxOutputTokens": 512}  # no thinkingConfig


def test_gemini_thought_parts_are_the_reasoning(serve: Callable[..., Any]) -> None:
    parts = [{"text": "**Reading the axis** The bar is at 40.", "thought": True}, {"text": "40"}]
    server = serve(
        lambda seen: (
            200,
            _generated(parts, usage={"promptTokenCount": 300, "candidatesTokenCount": 2, "thoughtsTokenCount": 120}),
        ),
        base="/v1beta",
    )
    options = ModelOptions(args=(("max_tokens", "2048"), ("thinking_budget", "1024")))
    reply = _ask(f"gemini:g@{server.url}", _text_request(options.generation(GenerationParams())), options)
    # completion_tokens counts every generated token, thoughts included (2 + 120), as OpenAI's does
    assert reply == Completion(
        "40",
        "**Reading the axis** The bar is at 40.",
        "STOP",
        {"prompt_tokens": 300, "completion_tokens": 122, "reasoning_tokens": 120},
    )
    body = server.seen[0].body
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Is 4 the same as four?"}]}]
    assert body["generationConfig"] == {
        "temperature": 0.0,
        "maxOutputTokens": 2048,
        "thinkingConfig": {"thinkingBudget": 1024, "includeThoughts": True},
    }


def test_gemini_max_tokens_while_thinking_is_one_cut_reply(serve: Callable[..., Any]) -> None:
    server = serve(
        lambda seen: (200, _generated([{"text": "Looking at the", "thought": True}], finish="MAX_TOKENS")),
        base="/v1beta",
    )
    reply = _ask(f"gemini:g@{server.url}", _image_request(GenerationParams(thinking_budget=1024)))
    assert isinstance(reply, Completion)
    assert (reply.text, reply.reasoning, reply.finish_reason) == (None, "Looking at the", "length")
    assert len(server.seen) == 1


def test_gemini_key_from_either_variable(serve: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> None:
    server = serve(lambda seen: (200, _generated([{"text": "ok"}])), base="/v1beta")
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "google-key")
    _ask(f"gemini:g@{server.url}", _text_request())
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-key")  # both set: GEMINI_API_KEY, the row's first, wins
    _ask(f"gemini:g@{server.url}", _text_request())
    assert [s.headers["x-goog-api-key"] for s in server.seen] == ["google-key", "gemini-key"]


def test_gemini_blocked_prompt_is_retried_then_named(serve: Callable[..., Any]) -> None:
    server = serve(lambda seen: (200, {"promptFeedback": {"blockReason": "SAFETY"}}), base="/v1beta")
    with pytest.raises(
        BackendCallError,
        match=r"failed after 3 attempts: .*no candidates\[0\] \(prompt blocked: "
        r"SAFETY\)",
    ):
        _ask(f"gemini:g@{server.url}", _text_request())
    assert len(server.seen) == 3


# -- the template's retries and failures, per provider -----------------------------------------------------------

OK_REPLY = {"anthropic": _message([{"type": "text", "text": "fine"}]), "gemini": _generated([{"text": "fine"}])}
BASE = {"anthropic": "/v1", "gemini": "/v1beta"}


@pytest.mark.parametrize("kind", ["anthropic", "gemini"])
@pytest.mark.parametrize("status", [429, 500, 503, 529])
def test_transient_statuses_are_retried(serve: Callable[..., Any], kind: str, status: int) -> None:
    statuses = iter([status, status])
    server = serve(
        lambda seen: (
            next(statuses, 200),
            OK_REPLY[kind] if len(server.seen) > 2 else {"error": {"type": "overloaded_error", "message": "busy"}},
        ),
        base=BASE[kind],
    )
    reply = _ask(f"{kind}:m@{server.url}", _text_request())
    assert isinstance(reply, Completion) and reply.text == "fine"
    assert len(server.seen) == 3  # two refusals, then the reply


ERROR_401 = {  # each API's error object (Anthropic: "Errors"; Google APIs: the error model's code/message/status)
    "anthropic": {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}},
    "gemini": {"error": {"code": 401, "message": "API key not valid.", "status": "UNAUTHENTICATED"}},
}
SHOWN_401 = {"anthropic": "authentication_error: invalid x-api-key", "gemini": "UNAUTHENTICATED: API key not valid."}


@pytest.mark.parametrize(
    ("kind", "variables"),
    [("anthropic", "variable ANTHROPIC_API_KEY is"), ("gemini", "variables GEMINI_API_KEY and GOOGLE_API_KEY are")],
)
def test_401_is_fatal_and_names_the_unset_variables(
    serve: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, kind: str, variables: str
) -> None:
    for name in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    server = serve(lambda seen: (401, ERROR_401[kind]), base=BASE[kind])
    with pytest.raises(BackendCallError) as exc:
        _ask(f"{kind}:m@{server.url}", _text_request())
    path = "/v1/messages" if kind == "anthropic" else "/v1beta/models/m:generateContent"
    assert str(exc.value) == (
        f"HTTP 401 from http://127.0.0.1:{server.port}{path}: {SHOWN_401[kind]} "
        f"(no API key sent: environment {variables} unset)"
    )
    assert exc.value.fatal and len(server.seen) == 1


def test_an_error_body_of_another_shape_is_shown_raw_and_masked(
    serve: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server = serve(lambda seen: (400, f"<html>bad request for {seen.headers['x-api-key']}</html>".encode()))
    with pytest.raises(BackendCallError) as exc:
        _ask(f"anthropic:m@{server.url}", _text_request())
    assert str(exc.value) == f"HTTP 400 from {server.url}/messages: <html>bad request for ***</html>"
    assert not exc.value.fatal and len(server.seen) == 1  # a 400 is not retried


def test_api_key_env_option_replaces_the_row_variable(
    serve: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_CLAUDE_KEY", "mine")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "not-this-one")
    server = serve(lambda seen: (200, _message([{"type": "text", "text": "ok"}])))
    _ask(f"anthropic:m@{server.url}", _text_request(), ModelOptions(api_key_env="MY_CLAUDE_KEY"))
    assert server.seen[0].headers["x-api-key"] == "mine"


# -- the key is masked in every 2xx reply, at the point it is read --------------------------------------------


def _leaked(data: bytes | str) -> list[str]:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return [KEY[i : i + MIN_RUN] for i in range(len(KEY) - MIN_RUN + 1) if KEY[i : i + MIN_RUN] in text]


def _echo(kind: str, seen: Any) -> dict[str, Any]:
    """A 2xx reply whose content, reasoning and finish reason echo the key the request carried."""
    key = (
        seen.headers.get("authorization", "").removeprefix("Bearer ")
        or seen.headers.get("x-api-key")
        or seen.headers.get("x-goog-api-key", "")
    )
    text = f'{{"answerable": true, "answer": "{key[:20]}", "reason": "your key is {key}"}}'
    thinking = f"the header said {key[12:30]}"
    if kind == "openai":
        return {
            "choices": [
                {
                    "message": {"role": "assistant", "content": text, "reasoning_content": thinking},
                    "finish_reason": key[:30],
                }
            ]
        }
    if kind == "anthropic":
        return {
            **_message([{"type": "thinking", "thinking": thinking, "signature": "s"}, {"type": "text", "text": text}]),
            "stop_reason": key[:30],
        }
    return _generated([{"text": thinking, "thought": True}, {"text": text}], finish=key[:30])


@pytest.mark.parametrize("kind", ["openai", "anthropic", "gemini"])
def test_a_key_echoed_in_a_2xx_reply_is_masked_before_it_is_stored(
    serve: Callable[..., Any],
    make_bench: Callable[..., Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
) -> None:
    monkeypatch.setenv("VQAUDIT_TEST_API_KEY", KEY)
    server = serve(lambda seen: (200, _echo(kind, seen)), base="/v1beta" if kind == "gemini" else "/v1")
    bench = make_bench(1, 2)
    out = tmp_path / "run"
    summary = run_benchmark(
        bench,
        f"{kind}:m@{server.url}",
        out,
        progress=False,
        options=ModelOptions(api_key_env="VQAUDIT_TEST_API_KEY", max_retries=0),
    )
    assert summary.n_errors == 0 and len(server.seen) == 2
    assert all(KEY in str(s.headers) for s in server.seen)  # the key was really sent
    for response in load_responses(out).values():
        assert response.text == '{"answerable": true, "answer": "***", "reason": "your key is ***"}'
        assert response.reasoning == "the header said ***"
        assert response.finish_reason == "***"
    for path in out.rglob("*"):
        if path.is_file():
            assert _leaked(path.read_bytes()) == [], path


# -- the thinking budget setting and the key variable through the CLI --------------------------------------------


def test_thinking_budget_is_a_generation_key_of_the_budget_kinds_only() -> None:
    assert GenerationParams().as_dict() == {"temperature": 0.0, "max_tokens": 512}  # old cache keys unchanged
    assert GenerationParams(thinking_budget=0).as_dict() == {
        "temperature": 0.0,
        "max_tokens": 512,
        "thinking_budget": 0,
    }
    options = ModelOptions(args=(("thinking_budget", "2048"),))
    assert options.generation(GenerationParams()).thinking_budget == 2048
    with pytest.raises(VqauditError) as info:
        load_backend("openai:m@http://127.0.0.1:9/v1", options)
    assert str(info.value) == (
        "model spec 'openai:m@http://127.0.0.1:9/v1': --model-arg thinking_budget: the "
        "'openai' backend takes no such generation setting; it takes max_tokens, "
        "max_completion_tokens, reasoning_effort, enable_thinking"
    )
    for bad in ("-1", "1.5", "9" * 5000, "1048577"):
        with pytest.raises(VqauditError) as info:
            ModelOptions(args=(("thinking_budget", bad),)).generation(GenerationParams())
        assert str(info.value) == f"--model-arg thinking_budget={bad!r}: expected an integer from 0 to 1048576"


def test_cli_reads_the_backends_own_key_variable(
    serve: Callable[..., Any],
    make_bench: Callable[..., Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from shortanswer.helpers import run_cli

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "not-for-anthropic")
    server = serve(lambda seen: (200, _message([{"type": "text", "text": '{"answerable": false}'}])))
    bench = make_bench(1, 1)
    assert (
        run_cli(monkeypatch, "run", str(bench), "--model", f"anthropic:m@{server.url}", "--out", str(tmp_path / "run"))
        == 0
    )
    assert [s.headers["x-api-key"] for s in server.seen] == [KEY]
    # an explicitly named variable that is unset is a mistake: one line, exit 2
    monkeypatch.delenv("UNSET_KEY_VAR", raising=False)
    assert (
        run_cli(
            monkeypatch,
            "run",
            str(bench),
            "--model",
            f"anthropic:m@{server.url}",
            "--out",
            str(tmp_path / "run2"),
            "--api-key-env",
            "UNSET_KEY_VAR",
        )
        == 2
    )
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "error: --api-key-env UNSET_KEY_VAR: that environment variable is not set"
    )
