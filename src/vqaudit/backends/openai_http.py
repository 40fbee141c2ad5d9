"""One attempt against one OpenAI-compatible chat-completions server: the body, the POST, the reply (issue 12).

:mod:`vqaudit.backends.openai` decides where each attempt goes, when it is retried and what fails the call; this
module holds what one attempt does on the wire: the JSON body (:func:`chat_body`), one server's state
(:class:`Endpoint`, with its proxy from the environment, :func:`env_proxy`), its aiohttp session
(:func:`open_session`), reading at most :data:`MAX_BODY_BYTES` of the reply (:func:`read_capped`), the reply's
content, reasoning, finish reason and token usage (:func:`extract_completion`), its ``Retry-After``
(:func:`retry_after_s`) and a masked error snippet (:func:`error_snippet`).
"""

from __future__ import annotations

import base64
import json
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

import aiohttp

from vqaudit.backends.base import Completion, Request, finish_reason_of
from vqaudit.backends.redact import mask_secret
from vqaudit.textsafe import decode_lenient, escape_surrogates, join_pairs

RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
FATAL_STATUS = frozenset({401, 403, 404})
_SNIPPET_CHARS = 300
_MASK_SCAN_BYTES = 65_536
"""How much of an error body is decoded and masked before its first 300 characters are kept."""
MAX_BODY_BYTES = 8 * 2**20
"""Largest body read: a token is at most about 64 bytes even as JSON ``\\u`` escapes, so 8 MiB holds over 100,000
tokens of content and reasoning together (a 4,096-token thinking reply is under 300 KB); the rest is never read."""
MAX_USAGE_TOKENS = 2**53 - 1
"""Largest token count kept from a reply's ``usage`` (the largest integer a JSON reader of any language holds
exactly); a larger or non-integer count is ignored."""
_MAX_INT_DIGITS = 20
"""Integers in a body longer than this are read as not-a-count (a hostile 5,000-digit number would otherwise make
Python's ``int`` refuse the whole body: the integer string conversion length limit)."""


class MalformedBody(Exception):
    """A 2xx reply whose body is not a chat completion with a text message (or a reasoning model's cut reply)."""


def chat_body(model: str, request: Request) -> dict[str, Any]:
    """Return the JSON body of the chat-completions call of ``model`` for ``request``.

    With an image: one user message whose content is an ``image_url`` part (base64 data URL) and a ``text``
    part. Text-only (``request.image`` None): one user message whose content is the prompt string.

    The generation parameters: ``temperature``; the token budget under ``params.token_field`` (``max_tokens``,
    or ``max_completion_tokens``, which OpenAI's reasoning models take instead: OpenAI API reference, Chat
    Completions, ``max_completion_tokens``); ``reasoning_effort`` when set (same reference); ``enable_thinking``
    when set as ``chat_template_kwargs: {"enable_thinking": ...}``, the extra parameter vLLM's and SGLang's
    OpenAI-compatible servers pass to the model's chat template (vLLM docs, "OpenAI-Compatible Server", extra
    parameters; Qwen3's template reads ``enable_thinking``). Without these settings the body is what it always
    was: ``model``, ``messages``, ``temperature``, ``max_tokens``.
    """
    prompt = escape_surrogates(request.prompt)  # a judge prompt quoting a reply: show a lone surrogate escaped
    content: str | list[dict[str, Any]] = prompt
    if request.image is not None:
        data_url = f"data:{request.image_mime};base64," + base64.b64encode(request.image).decode("ascii")
        content = [
            {"type": "image_url", "image_url": {"url": data_url}},
            {"type": "text", "text": prompt},
        ]
    params = request.params
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "user", "content": content}],
        "temperature": params.temperature,
        params.token_field: params.max_tokens,
    }
    if params.reasoning_effort is not None:
        body["reasoning_effort"] = params.reasoning_effort
    if params.enable_thinking is not None:
        body["chat_template_kwargs"] = {"enable_thinking": params.enable_thinking}
    return body


def extract_completion(body: bytes) -> Completion:
    """Read a chat-completions body: ``choices[0]``'s content, reasoning and finish reason, and ``usage``.

    - content: ``choices[0].message.content`` exactly as sent: a string, or a list of ``text`` parts joined;
      None when it is null (or absent) and the reply is a reasoning model's cut one (below);
    - reasoning: ``message.reasoning_content`` (vLLM and SGLang reasoning parsers, DeepSeek's API) or else
      ``message.reasoning`` (newer vLLM, OpenRouter), when a nonempty string; otherwise None;
    - finish reason: ``choices[0].finish_reason`` when 1 to 64 printable ASCII characters (:func:`finish_reason_of`);
    - usage: ``usage.prompt_tokens``, ``usage.completion_tokens``, and ``reasoning_tokens`` from
      ``usage.completion_tokens_details.reasoning_tokens`` (OpenAI) or else ``usage.reasoning_tokens``; each kept
      only when an integer from 0 to :data:`MAX_USAGE_TOKENS` (a float, a string, a boolean, a negative or huge
      number is ignored); None when none is kept.

    A null content is one reply, not a malformed body, when the server sent reasoning beside it or
    ``finish_reason`` is ``length`` (the token budget ran out while the model was thinking); the run stores it
    once and the score reads it as "reasoning not finished" (:mod:`vqaudit.parsing.reasoning`). A null content
    with neither stays malformed (retried, as a body a proxy cut).

    The body is decoded with :func:`vqaudit.textsafe.decode_lenient`: a raw lone surrogate (``ED A0 80``) or
    other bytes that are not UTF-8 are kept (as lone surrogates), not refused.

    Raises:
        MalformedBody: the body is not JSON, has no ``choices[0].message`` object, or its content is neither
            text nor a null the rule above accepts.
    """
    try:
        data = json.loads(decode_lenient(body), parse_int=_parse_int)
    except (ValueError, RecursionError):
        raise MalformedBody("body is not JSON") from None
    try:
        choice = data["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise MalformedBody("no choices[0].message.content") from None
    if not isinstance(message, dict) or not isinstance(choice, dict):
        raise MalformedBody("choices[0].message is not an object")
    finish_reason = finish_reason_of(choice.get("finish_reason"))
    reasoning = _reasoning(message)
    usage = _usage(data.get("usage"))
    content = message.get("content")
    if content is None:
        if reasoning is None and finish_reason != "length":
            raise MalformedBody("choices[0].message.content is null, with no reasoning and finish_reason "
                                f"{finish_reason!r}")
        return Completion(None, reasoning, finish_reason, usage)
    return Completion(_content_text(content), reasoning, finish_reason, usage)


def _parse_int(text: str) -> int | float:
    """A JSON integer, or NaN (not a count) when longer than :data:`_MAX_INT_DIGITS` characters."""
    return int(text) if len(text) <= _MAX_INT_DIGITS else float("nan")


def _content_text(content: object) -> str:
    """The text of a message content: a string, or a nonempty list of ``text`` parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content and all(isinstance(p, dict) and p.get("type") == "text" for p in content):
        texts = [p.get("text") for p in content]
        if all(isinstance(t, str) for t in texts):
            return join_pairs("".join(t for t in texts if isinstance(t, str)))  # parts may split a pair
    raise MalformedBody(f"choices[0].message.content is {type(content).__name__}, not text")


def _reasoning(message: dict[str, Any]) -> str | None:
    """``reasoning_content`` or else ``reasoning``: the first that is a nonempty string, or None."""
    for field in ("reasoning_content", "reasoning"):
        value = message.get(field)
        if isinstance(value, str) and value:
            return value
    return None


def _count(value: object) -> int | None:
    """A token count: an int (not a bool) from 0 to MAX_USAGE_TOKENS, else None."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_USAGE_TOKENS:
        return value
    return None


def _usage(usage: object) -> dict[str, int] | None:
    """The valid token counts of a ``usage`` object (see :func:`extract_completion`), or None."""
    if not isinstance(usage, dict):
        return None
    details = usage.get("completion_tokens_details")
    reasoning = _count(details.get("reasoning_tokens")) if isinstance(details, dict) else None
    counts = {
        "prompt_tokens": _count(usage.get("prompt_tokens")),
        "completion_tokens": _count(usage.get("completion_tokens")),
        "reasoning_tokens": reasoning if reasoning is not None else _count(usage.get("reasoning_tokens")),
    }
    kept = {k: v for k, v in counts.items() if v is not None}
    return kept or None


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """The seconds (at least 0) a ``Retry-After`` header asks for, or None (absent, an HTTP date, NaN)."""
    value = headers.get("retry-after")
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff
    return None if seconds is None or seconds != seconds else max(0.0, seconds)  # NaN: our own backoff


def error_snippet(body: bytes, secret: str | None) -> str:
    """The first 300 characters of an error body, masked first (the key and any 8-character run of it)."""
    text = body[:_MASK_SCAN_BYTES].decode("utf-8", "replace")
    return mask_secret(text, secret)[:_SNIPPET_CHARS].strip()


class Reply:
    """Status, headers and (at most MAX_BODY_BYTES of the) body of one attempt; ``truncated`` if there was more."""

    __slots__ = ("status", "headers", "body", "truncated")

    def __init__(self, status: int, headers: Mapping[str, str], body: bytes, truncated: bool) -> None:
        self.status, self.headers, self.body, self.truncated = status, headers, body, truncated


async def read_capped(response: aiohttp.ClientResponse) -> Reply:
    """Read a response's body up to :data:`MAX_BODY_BYTES`; the rest is never read (the connection is closed)."""
    stream = response.content
    body = b""
    while True:
        chunk = await stream.readany()
        if not chunk:
            return Reply(response.status, response.headers, body, False)
        body += chunk
        if len(body) > MAX_BODY_BYTES:  # closes the connection: the rest is never read
            return Reply(response.status, response.headers, body[:MAX_BODY_BYTES], True)


class Endpoint:
    """One server of a model: its URL, its session, how many attempts it has in flight, and whether it is out.

    Attributes:
        base_url: the URL as written in the spec (up to the API prefix, e.g. ``http://127.0.0.1:8000/v1``).
        url: ``base_url`` + ``/chat/completions``.
        in_flight: attempts sent to it and not finished (the least-loaded dispatch compares these).
        failures: connection failures, timeouts and 401/403/404 replies in a row (a success resets it).
        error: why it was taken out of rotation (None while it is in rotation).
    """

    __slots__ = ("base_url", "url", "in_flight", "failures", "error", "session", "proxy")

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.in_flight = 0
        self.failures = 0
        self.error: str | None = None
        self.session: aiohttp.ClientSession | None = None
        self.proxy: str | None = None


def open_session(api_key: str | None, concurrency: int, timeout_s: float) -> aiohttp.ClientSession:
    """A new aiohttp session (call it inside the running event loop) for one endpoint.

    Args:
        api_key: sent as ``Authorization: Bearer`` (None: no such header).
        concurrency: the connection limit (the caller's slot semaphore bounds attempts over all endpoints; one
            endpoint may carry them all).
        timeout_s: socket connect and socket read timeout in seconds (per socket operation; no total limit).
    """
    headers = {"Content-Type": "application/json"}
    if api_key is not None:
        headers["Authorization"] = f"Bearer {api_key}"
    timeout = aiohttp.ClientTimeout(total=None, connect=None, sock_connect=timeout_s, sock_read=timeout_s)
    connector = aiohttp.TCPConnector(limit=max(concurrency, 1), limit_per_host=0)
    return aiohttp.ClientSession(headers=headers, timeout=timeout, connector=connector, trust_env=False,
                                 raise_for_status=False)


def env_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url``, or None (none named, or ``NO_PROXY`` exempts the host).

    ``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY`` (any case), as httpx, the client before, read them. Read once
    per endpoint: aiohttp's own ``trust_env`` looks proxies and ``~/.netrc`` up on every request.
    """
    parts = urllib.parse.urlsplit(url)
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]  # stdlib, not in typeshed
    if not proxy or bypass(parts.hostname or "", proxies):
        return None
    return proxy
