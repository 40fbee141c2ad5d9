from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from vqaudit.backends import (
    Backend,
    BackendCallError,
    Completion,
    GenerationParams,
    ModelOptions,
    Request,
    ResponseCache,
    load_backend,
)
from vqaudit.backends.cache import cache_key
from vqaudit.backends.openai import OpenAIBackend
from vqaudit.backends.runner import TEXT_ONLY
from vqaudit.run import image_mime
from vqaudit.schema import View
from vqaudit.shortanswer.judge import JUDGE_PARAMS, JUDGE_PROMPT_ID, judge_prompt, run_judge
from vqaudit.shortanswer.records import AuditRow
from vqaudit.store import load_benchmark

SECRET = "sk-test-SECRET-4f1c9a"
KEY_ENV = "VQAUDIT_TEST_API_KEY"


@pytest.fixture
def view_and_image(make_bench: Callable[..., Path]) -> tuple[View, bytes]:
    bench = load_benchmark(make_bench(1, 1))
    view = bench.views[0]
    return view, bench.image_path(view).read_bytes()


def _backend(server: Any, max_retries: int = 3, **options: Any) -> Backend:
    settings: dict[str, Any] = {"timeout_s": 0.3, **options}
    return load_backend(
        f"openai:test-model@{server.url}",
        ModelOptions(api_key_env=KEY_ENV, max_retries=max_retries, backoff_base_s=0.001, **settings),
    )


def _request(view_and_image: tuple[View, bytes]) -> Request:
    view, image = view_and_image
    return Request(view.view_id, "answerability-json-v1", "Is it?", image, "image/png", GenerationParams())


def _complete(backend: Backend, request: Request) -> str | None:
    """The reply's content (the openai backend returns a Completion: content, reasoning, finish reason, usage)."""

    async def go() -> str | None:
        try:
            reply = await backend.complete(request)
            return reply.text if isinstance(reply, Completion) else reply
        finally:
            await backend.aclose()

    return asyncio.run(go())


def test_success_sends_key_and_returns_text(
    fake_server: Any, server_module: ModuleType, view_and_image: tuple[View, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    view, _ = view_and_image
    text = _complete(_backend(fake_server), _request(view_and_image))
    assert text == server_module.reply_text(view.image_sha256)
    assert fake_server.snapshot() == {view.image_sha256: 1}
    assert fake_server.auth_headers == [f"Bearer {SECRET}"]
    assert fake_server.models == {"test-model"}


def test_no_key_no_authorization_header(
    fake_server: Any, view_and_image: tuple[View, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    _complete(_backend(fake_server), _request(view_and_image))
    assert fake_server.auth_headers == [None]


def test_request_body(view_and_image: tuple[View, bytes]) -> None:
    backend = load_backend("openai:m@http://127.0.0.1:9/v1")
    assert isinstance(backend, OpenAIBackend)
    body = backend.body(_request(view_and_image))
    image_part, text_part = body["messages"][0]["content"]
    prefix = "data:image/png;base64,"
    assert image_part["type"] == "image_url" and image_part["image_url"]["url"].startswith(prefix)
    assert base64.b64decode(image_part["image_url"]["url"][len(prefix) :]) == view_and_image[1]
    assert text_part == {"type": "text", "text": "Is it?"}
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("m", 0.0, 512)
    assert body["messages"][0]["role"] == "user" and len(body["messages"]) == 1


def test_image_mime_sniffing(view_and_image: tuple[View, bytes]) -> None:
    assert image_mime(view_and_image[1], Path("x.bin")) == "image/png"
    assert image_mime(b"\xff\xd8\xff\xe0rest", Path("x.png")) == "image/jpeg"
    assert image_mime(b"RIFF\0\0\0\0WEBPVP8 ", Path("x")) == "image/webp"
    assert image_mime(b"????", Path("x.jpg")) == "image/jpeg"


def test_every_transient_fault_is_retried(fake_server: Any, view_and_image: tuple[View, bytes]) -> None:
    view, _ = view_and_image
    schedule = ["500", "429", "timeout", "malformed-json", "malformed-shape", "drop", "503"]
    fake_server.faults = {view.image_sha256: schedule}
    text = _complete(_backend(fake_server, max_retries=len(schedule)), _request(view_and_image))
    assert json.loads(text)["answer"] == view.image_sha256[:8]
    assert fake_server.snapshot() == {view.image_sha256: len(schedule) + 1}


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        ("500", "HTTP 500"),
        ("429", "HTTP 429"),
        ("timeout", "timeout after 0.3 s"),
        ("malformed-json", "body is not JSON"),
        ("malformed-shape", "no choices[0].message.content"),
        ("drop", "connection error"),
    ],
)
def test_gives_up_after_max_retries(
    fake_server: Any, view_and_image: tuple[View, bytes], fault: str, expected: str
) -> None:
    view, _ = view_and_image
    fake_server.faults = {view.image_sha256: [fault] * 10}
    with pytest.raises(BackendCallError) as info:
        _complete(_backend(fake_server, max_retries=2), _request(view_and_image))
    assert str(info.value).startswith("failed after 3 attempts: ")
    assert expected in str(info.value)
    assert not info.value.fatal
    assert fake_server.snapshot() == {view.image_sha256: 3}


def test_non_retryable_4xx_fails_at_once(
    fake_server: Any, view_and_image: tuple[View, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    view, _ = view_and_image
    fake_server.faults = {view.image_sha256: ["400"]}
    with pytest.raises(BackendCallError) as info:
        _complete(_backend(fake_server), _request(view_and_image))
    assert fake_server.snapshot() == {view.image_sha256: 1}
    assert not info.value.fatal
    # the server echoes the Authorization header in its error body; the key is scrubbed
    assert "HTTP 400" in str(info.value) and "Bearer ***" in str(info.value)
    assert SECRET not in str(info.value)


def test_401_is_fatal(fake_server: Any, view_and_image: tuple[View, bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    view, _ = view_and_image
    fake_server.faults = {view.image_sha256: ["401"]}
    with pytest.raises(BackendCallError) as info:
        _complete(_backend(fake_server), _request(view_and_image))
    assert info.value.fatal
    assert f"environment variable {KEY_ENV} is unset" in str(info.value)
    assert fake_server.snapshot() == {view.image_sha256: 1}


def test_backoff_doubles_with_jitter_and_honours_retry_after() -> None:
    backend = OpenAIBackend(spec="s", model="m", base_url="http://x/v1", backoff_base_s=1.0, backoff_max_s=10.0)
    for attempt, (low, high) in enumerate([(0.5, 1.0), (1.0, 2.0), (2.0, 4.0), (4.0, 8.0), (5.0, 10.0)]):
        assert low <= backend._wait_s(attempt, None) < high
    assert backend._wait_s(0, 7.0) == 7.0
    assert backend._wait_s(0, 99.0) == 10.0  # Retry-After is capped by backoff_max_s


def test_repr_hides_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    backend = load_backend("openai:m@http://127.0.0.1:9/v1", ModelOptions(api_key_env=KEY_ENV))
    assert SECRET not in repr(backend)


@pytest.mark.parametrize("concurrency", [1, 8, 20, 64])
def test_connections_are_bounded_by_concurrency(
    fake_server: Any, make_bench: Callable[..., Path], concurrency: int
) -> None:
    # No timing margin: the server holds the first requests until `concurrency` of them are in flight together
    # (at most 10 s), so the peak is exactly the bound on any load; the client's 30 s timeout never fires, so
    # every request reaches the server once (no retry). A client that opened fewer connections would leave the
    # peak below the bound (after the 10 s hold), one that opened more would push it above.
    fake_server.hold_until(concurrency, max_s=10.0)
    fake_server.delay_s = 0.05  # keeps later requests overlapping too
    n_requests = 2 * concurrency + 3
    bench = load_benchmark(make_bench(1, 1))
    image = bench.image_path(bench.views[0]).read_bytes()
    backend = _backend(fake_server, timeout_s=30.0, concurrency=concurrency)
    assert isinstance(backend, OpenAIBackend)
    requests = [
        Request(bench.views[0].view_id, "p", f"q{i}", image, "image/png", GenerationParams()) for i in range(n_requests)
    ]

    async def go() -> None:
        try:
            await asyncio.gather(*(backend.complete(r) for r in requests))  # more calls than connections
            assert [e.in_flight for e in backend.endpoints] == [0]  # every attempt was counted out again
        finally:
            await backend.aclose()

    asyncio.run(go())
    assert fake_server.snapshot() == {bench.views[0].image_sha256: n_requests}
    # at most `concurrency` requests reach the server at once, and the pools use all of them
    assert fake_server.peak_in_flight == concurrency


def test_text_only_request_body_is_the_plain_prompt(view_and_image: tuple[View, bytes]) -> None:
    # A judge request (image None) is one user message whose content is the prompt string: no image part.
    backend = load_backend("openai:m@http://127.0.0.1:9/v1")
    assert isinstance(backend, OpenAIBackend)
    body = backend.body(
        Request(view_and_image[0].view_id, "judge", "Is 4 the same as four?", None, None, GenerationParams())
    )
    assert body["messages"] == [{"role": "user", "content": "Is 4 the same as four?"}]
    assert "image_url" not in json.dumps(body)
    with pytest.raises(ValueError, match="both be set or both be None"):
        Request(view_and_image[0].view_id, "p", "q", view_and_image[1], None, GenerationParams())


def test_view_request_reaching_the_server_carries_the_image(
    fake_server: Any, view_and_image: tuple[View, bytes]
) -> None:
    _complete(_backend(fake_server), _request(view_and_image))
    (body,) = fake_server.bodies
    (message,) = body["messages"]
    image_part, text_part = message["content"]
    assert image_part["type"] == "image_url"
    assert base64.b64decode(image_part["image_url"]["url"].split(",", 1)[1]) == view_and_image[1]
    assert text_part == {"type": "text", "text": "Is it?"}


def test_judge_request_reaching_the_server_is_text_only(fake_server: Any, tmp_path: Path) -> None:
    # Seed 002 §3.3: the judge sees question, references and output as text, never the image. A text-only server
    # (a text LLM under vLLM) answers HTTP 400 to an image_url part, so the request must not carry one.
    rows = [
        AuditRow("1", "What is the name?", "SEPTRA Suspension", ("SEPTRA",), "docvqa"),
        AuditRow("2", "How many?", "four", ("4",), "docvqa"),
    ]
    spec = f"openai:judge-llm@{fake_server.url}"
    judge = _backend(fake_server)
    verdicts = run_judge(rows, spec, tmp_path / "judge.sqlite", backend=judge)
    assert verdicts == {"1": True, "2": True}  # the fake server's text reply is "yes"
    assert len(fake_server.bodies) == 2
    for body in fake_server.bodies:
        assert "image_url" not in json.dumps(body)
    sent = sorted(body["messages"][0]["content"] for body in fake_server.bodies)
    assert sent == sorted(judge_prompt(r) for r in rows)  # exactly the judge prompt, as a plain string
    assert all(len(body["messages"]) == 1 and body["messages"][0]["role"] == "user" for body in fake_server.bodies)
    # The cache key has the "text-only" marker where the image hash goes.
    with ResponseCache(tmp_path / "judge.sqlite") as cache:
        cached = cache.get(cache_key(judge.spec, JUDGE_PROMPT_ID, judge_prompt(rows[0]), TEXT_ONLY, JUDGE_PARAMS))
    assert cached is not None and cached.text == "yes"
