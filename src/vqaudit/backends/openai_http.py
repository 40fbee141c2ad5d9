"""One attempt against one OpenAI-compatible chat-completions server: the body, the POST, the reply (issue 12).

:mod:`vqaudit.backends.openai` decides where each attempt goes, when it is retried and what fails the call; this
module holds what one attempt does on the wire: the JSON body (:func:`chat_body`), one server's state
(:class:`Endpoint`, with its proxy from the environment, :func:`env_proxy`), its aiohttp session
(:func:`open_session`), reading at most :data:`MAX_BODY_BYTES` of the reply (:func:`read_capped`), the reply's
text (:func:`extract_text`), its ``Retry-After`` (:func:`retry_after_s`) and a masked error snippet
(:func:`error_snippet`).
"""

from __future__ import annotations

import base64
import json
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

import aiohttp

from vqaudit.backends.base import Request
from vqaudit.backends.redact import mask_secret
from vqaudit.textsafe import decode_lenient, escape_surrogates, join_pairs

RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
FATAL_STATUS = frozenset({401, 403, 404})
_SNIPPET_CHARS = 300
_MASK_SCAN_BYTES = 65_536
"""How much of an error body is decoded and masked before its first 300 characters are kept."""
MAX_BODY_BYTES = 8 * 2**20
"""Largest body read: a reply of 512 tokens is under 100 KB even as JSON escapes; the rest is never read."""


class MalformedBody(Exception):
    """A 2xx reply whose body is not a chat completion with a text message."""


def chat_body(model: str, request: Request) -> dict[str, Any]:
    """Return the JSON body of the chat-completions call of ``model`` for ``request``.

    With an image: one user message whose content is an ``image_url`` part (base64 data URL) and a ``text``
    part. Text-only (``request.image`` None): one user message whose content is the prompt string.
    """
    prompt = escape_surrogates(request.prompt)  # a judge prompt quoting a reply: show a lone surrogate escaped
    content: str | list[dict[str, Any]] = prompt
    if request.image is not None:
        data_url = f"data:{request.image_mime};base64," + base64.b64encode(request.image).decode("ascii")
        content = [
            {"type": "image_url", "image_url": {"url": data_url}},
            {"type": "text", "text": prompt},
        ]
    return {
        "model": model,
        "messages": [{"role": "user", "content": content}],
        "temperature": request.params.temperature,
        "max_tokens": request.params.max_tokens,
    }


def extract_text(body: bytes) -> str:
    """Return ``choices[0].message.content`` of a chat-completions body (string, or joined text parts).

    The body is decoded with :func:`vqaudit.textsafe.decode_lenient`: a raw lone surrogate (``ED A0 80``) or
    other bytes that are not UTF-8 are kept (as lone surrogates), not refused.

    Raises:
        MalformedBody: the body is not JSON, or has no text at ``choices[0].message.content``.
    """
    try:
        data = json.loads(decode_lenient(body))
    except (ValueError, RecursionError):
        raise MalformedBody("body is not JSON") from None
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise MalformedBody("no choices[0].message.content") from None
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content and all(isinstance(p, dict) and p.get("type") == "text" for p in content):
        texts = [p.get("text") for p in content]
        if all(isinstance(t, str) for t in texts):
            return join_pairs("".join(t for t in texts if isinstance(t, str)))  # parts may split a pair
    raise MalformedBody(f"choices[0].message.content is {type(content).__name__}, not text")


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
