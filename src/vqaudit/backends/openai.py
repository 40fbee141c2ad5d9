"""Backend for any OpenAI-compatible chat-completions server (vLLM, SGLang, Ollama, hosted APIs), one or several.

One call is ``POST {URL}/chat/completions`` with one user message holding the image (a base64 data URL) and the
prompt text, at the request's temperature and max_tokens. A text-only request (``image`` None, e.g. a judge) is
one user message whose content is the plain prompt string, with no image part: text-only servers (a text LLM
under vLLM) answer HTTP 400 to an ``image_url`` part. Retried with exponential backoff and jitter: HTTP 408,
409, 425, 429 and 5xx, timeouts, connection errors and malformed 2xx bodies (not JSON, or no
``choices[0].message.content`` string). Other 4xx fail at once; 401, 403 and 404 are *fatal* (every call would
fail the same way). The API key is read once from an environment variable, sent only in the Authorization
header, and masked in every error message before it is cut (the key and every 8-character run of it, see
``vqaudit.backends.redact``).

Several endpoints of one model (``openai:MODEL@URL1,URL2,...``, issue 12): least-loaded dispatch, one cache key
(the spec as written), and an endpoint that keeps failing is taken out of rotation with its error recorded (see
:class:`OpenAIBackend`).

Hostile servers (issue 18): at most ``concurrency`` attempts are in flight, but a request waiting out its backoff
holds no slot; each attempt has a wall-clock limit that adapts to how long replies take, and each request a
deadline over all its attempts (``vqaudit.backends.deadlines``); a body over :data:`MAX_BODY_BYTES` is not read
further (a 2xx one fails the call at once, it would come back the same).

The HTTP client is aiohttp (issue 12 part 4): against an instant local server httpx spent ~9x the CPU per request
of a minimal aiohttp client (its pool and anyio layers), which left the harness flat at ~400 requests/s whatever
the concurrency; ``benchmarks/bench_openai.py`` measures both in one run.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import random
import re
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import aiohttp

from vqaudit.backends.base import BackendCallError, ModelOptions, Request
from vqaudit.backends.deadlines import AttemptLimits, AttemptTimeout, within
from vqaudit.backends.redact import mask_secret
from vqaudit.textsafe import decode_lenient, encode_utf8, escape_surrogates, join_pairs

RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
FATAL_STATUS = frozenset({401, 403, 404})
_SNIPPET_CHARS = 300
_MASK_SCAN_BYTES = 65_536
"""How much of an error body is decoded and masked before its first 300 characters are kept."""
MAX_BODY_BYTES = 8 * 2**20
"""Largest body read: a reply of 512 tokens is under 100 KB even as JSON escapes; the rest is never read."""
DEAD_AFTER = 3
"""Failed attempts in a row (connection error, timeout) after which an endpoint leaves the rotation, if another
endpoint is still in it."""


class _MalformedBody(Exception):
    """A 2xx reply whose body is not a chat completion with a text message."""


def _extract_text(body: bytes) -> str:
    """Return ``choices[0].message.content`` of a chat-completions body (string, or joined text parts).

    The body is decoded with :func:`vqaudit.textsafe.decode_lenient`: a raw lone surrogate (``ED A0 80``) or
    other bytes that are not UTF-8 are kept (as lone surrogates), not refused.
    """
    try:
        data = json.loads(decode_lenient(body))
    except (ValueError, RecursionError):
        raise _MalformedBody("body is not JSON") from None
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise _MalformedBody("no choices[0].message.content") from None
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content and all(isinstance(p, dict) and p.get("type") == "text" for p in content):
        texts = [p.get("text") for p in content]
        if all(isinstance(t, str) for t in texts):
            return join_pairs("".join(t for t in texts if isinstance(t, str)))  # parts may split a pair
    raise _MalformedBody(f"choices[0].message.content is {type(content).__name__}, not text")


def _retry_after_s(headers: Mapping[str, str]) -> float | None:
    value = headers.get("retry-after")
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff
    return None if seconds is None or seconds != seconds else max(0.0, seconds)  # NaN: our own backoff


class _Reply:
    """Status, headers and (at most MAX_BODY_BYTES of the) body of one attempt; ``truncated`` if there was more."""

    __slots__ = ("status", "headers", "body", "truncated")

    def __init__(self, status: int, headers: Mapping[str, str], body: bytes, truncated: bool) -> None:
        self.status, self.headers, self.body, self.truncated = status, headers, body, truncated


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


class OpenAIBackend:
    """Calls one or more OpenAI-compatible ``/chat/completions`` endpoints of one model (aiohttp sessions).

    Several endpoints (``openai:MODEL@URL1,URL2``): each attempt goes to the endpoint in rotation with the fewest
    attempts in flight (ties: in turn), so a slower server gets fewer. An endpoint whose attempts fail
    :data:`DEAD_AFTER` times in a row by connection error, timeout or HTTP 401/403/404 while another endpoint is
    still in rotation is taken out of rotation; its last error is kept in :attr:`endpoints_out` (recorded in
    ``run.json``), and the attempt counts as a failed attempt of its request (retried, on another endpoint). The
    last endpoint in rotation is never taken out: with it the single-endpoint rules apply (401/403/404 fatal,
    retries, the run's early stop). All endpoints share one cache key (the spec as written), one concurrency
    bound and one adaptive attempt limit.

    The sessions are created on the first call (inside the running event loop) and closed by ``aclose``.
    """

    def __init__(
        self,
        *,
        spec: str,
        model: str,
        base_url: str | Sequence[str],
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 8,
        max_retries: int = 5,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 60.0,
        timeout_s: float = 120.0,
        seed: int = 0,
        attempt_floor_s: float = 2.0,
        request_deadline_s: float = 900.0,
    ) -> None:
        """Configure the backend (no I/O happens here).

        Args:
            spec: the model spec string, recorded with responses.
            model: model name sent in the request body.
            base_url: server URL up to and including the API prefix, e.g. ``http://127.0.0.1:8000/v1``, or several
                (one per endpoint, in the order written).
            api_key_env: environment variable holding the API key; unset or empty sends no Authorization header.
            concurrency: maximum attempts in flight over all endpoints; also each endpoint's connection limit.
            max_retries: retries after the first attempt (0 = a single attempt).
            backoff_base_s: first backoff wait in seconds; doubles per retry, times a jitter factor in [0.5, 1).
            backoff_max_s: cap of one wait in seconds (also caps a server's Retry-After).
            timeout_s: connect and socket-read timeout of one attempt in seconds (per socket operation).
            seed: seed of the jitter generator.
            attempt_floor_s: the shortest adaptive attempt limit in seconds (``vqaudit.backends.deadlines``).
            request_deadline_s: wall-clock seconds within which all attempts of one request and the waits
                between them end; the request then fails (recorded, asked again by ``--retry-errors``).
        """
        self.spec = spec
        self.model = model
        urls = [base_url] if isinstance(base_url, str) else list(base_url)
        self.endpoints = [Endpoint(url) for url in urls]
        self.url = self.endpoints[0].url
        self.api_key_env = api_key_env
        self.concurrency = concurrency
        self.max_retries = max_retries
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.timeout_s = timeout_s
        self.request_deadline_s = request_deadline_s
        self._limits_s = AttemptLimits(attempt_floor_s)
        self._slots: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None
        self._api_key = os.environ.get(api_key_env) or None
        self._rng = random.Random(seed)
        self._turn = 0

    def __repr__(self) -> str:
        return f"OpenAIBackend(spec={self.spec!r}, api_key_env={self.api_key_env!r})"

    @property
    def identity(self) -> str:
        """The spec (model name and URLs as written): what the cache keys replies by."""
        return self.spec

    @property
    def endpoints_out(self) -> dict[str, str]:
        """The endpoints taken out of rotation: base URL -> the error that took it out (key masked)."""
        return {e.base_url: e.error for e in self.endpoints if e.error is not None}

    def _session(self, endpoint: Endpoint) -> aiohttp.ClientSession:
        """The endpoint's session, created on first use (inside the event loop)."""
        if endpoint.session is None or endpoint.session.closed:
            headers = {"Content-Type": "application/json"}
            if self._api_key is not None:
                headers["Authorization"] = f"Bearer {self._api_key}"
            timeout = aiohttp.ClientTimeout(total=None, connect=None, sock_connect=self.timeout_s,
                                            sock_read=self.timeout_s)
            # limit: the slot semaphore bounds attempts over all endpoints; one endpoint may carry them all
            connector = aiohttp.TCPConnector(limit=max(self.concurrency, 1), limit_per_host=0)
            endpoint.session = aiohttp.ClientSession(headers=headers, timeout=timeout, connector=connector,
                                                     trust_env=False, raise_for_status=False)
            endpoint.proxy = env_proxy(endpoint.url)
        return endpoint.session

    def _pick(self, avoid: Endpoint | None = None) -> Endpoint:
        """The endpoint in rotation with the fewest attempts in flight (ties: the next in turn).

        ``avoid`` (the endpoint a request's last attempt failed on) is taken only when no other is in rotation.
        """
        endpoints = self.endpoints
        n = len(endpoints)
        if n == 1:
            return endpoints[0]
        self._turn = (self._turn + 1) % n
        best: Endpoint | None = None
        for i in range(n):
            candidate = endpoints[(self._turn + i) % n]
            if candidate.error is None and candidate is not avoid and (
                    best is None or candidate.in_flight < best.in_flight):
                best = candidate
        if best is None:
            return avoid if avoid is not None and avoid.error is None else endpoints[0]
        return best

    def _in_rotation(self) -> int:
        return sum(1 for e in self.endpoints if e.error is None)

    def _failed(self, endpoint: Endpoint, error: str) -> bool:
        """Count a connection-type failure of ``endpoint``; True if it was taken out of rotation by it."""
        endpoint.failures += 1
        if endpoint.failures >= DEAD_AFTER and endpoint.error is None and self._in_rotation() > 1:
            endpoint.error = f"taken out of rotation after {endpoint.failures} failures in a row: {error}"
            return True
        return False

    def _scrub(self, message: str) -> str:
        return mask_secret(message, self._api_key)

    def _slot(self) -> asyncio.Semaphore:
        """The semaphore of attempts in flight (``concurrency`` slots), one per event loop.

        In a new event loop (the backend used again after ``asyncio.run`` returned) the sessions of the old loop
        are dropped too: an aiohttp session works only in the loop it was made in.
        """
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots[0] is not loop:
            if self._slots is not None:
                for endpoint in self.endpoints:
                    endpoint.session = None
            self._slots = (loop, asyncio.Semaphore(max(self.concurrency, 1)))
        return self._slots[1]

    def body(self, request: Request) -> dict[str, Any]:
        """Return the JSON body of the chat-completions call for ``request``.

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
            "model": self.model,
            "messages": [{"role": "user", "content": content}],
            "temperature": request.params.temperature,
            "max_tokens": request.params.max_tokens,
        }

    def _wait_s(self, attempt: int, retry_after: float | None) -> float:
        wait = min(self.backoff_max_s, self.backoff_base_s * 2.0**attempt) * (0.5 + 0.5 * self._rng.random())
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.backoff_max_s))
        return wait

    async def _post(self, endpoint: Endpoint, content: bytes) -> _Reply:
        endpoint.in_flight += 1
        try:
            # no redirects (as before): a 3xx is a non-retryable error, and the key never follows one elsewhere
            async with self._session(endpoint).post(endpoint.url, data=content, allow_redirects=False,
                                                    proxy=endpoint.proxy) as response:
                stream = response.content
                body = b""
                while True:
                    chunk = await stream.readany()
                    if not chunk:
                        return _Reply(response.status, response.headers, body, False)
                    body += chunk
                    if len(body) > MAX_BODY_BYTES:  # closes the connection: the rest is never read
                        return _Reply(response.status, response.headers, body[:MAX_BODY_BYTES], True)
        finally:
            endpoint.in_flight -= 1

    def _attempt_limit_s(self, attempt: int, left_s: float) -> float:
        """Seconds attempt ``attempt`` may run in all: the adaptive limit, within the request's deadline."""
        return min(self._limits_s.limit_s(attempt), left_s)

    def _error_snippet(self, body: bytes) -> str:
        """The first 300 characters of an error body, masked first (the key and any 8-character run of it)."""
        text = body[:_MASK_SCAN_BYTES].decode("utf-8", "replace")
        return self._scrub(text)[:_SNIPPET_CHARS].strip()

    async def complete(self, request: Request) -> str:
        """Ask one request; retry transient failures (on the least-loaded endpoint in rotation each time).

        Returns:
            ``choices[0].message.content`` exactly as returned.

        Raises:
            BackendCallError: after ``max_retries`` retries of transient failures, or at once on a non-retryable
                4xx (``fatal`` for 401, 403, 404 from the last endpoint in rotation). The message never contains
                the API key.
        """
        content = encode_utf8(json.dumps(self.body(request), ensure_ascii=False))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.request_deadline_s
        last = ""
        failed_on: Endpoint | None = None
        for attempt in range(self.max_retries + 1):
            retry_after: float | None = None
            async with self._slot():  # an attempt holds a slot; the backoff wait below does not
                endpoint = failed_on = self._pick(failed_on)
                started = loop.time()
                down: str | None = None
                try:
                    reply = await within(self._post(endpoint, content),
                                         partial(self._attempt_limit_s, attempt, deadline - started))
                except AttemptTimeout as exc:
                    last = down = str(exc)
                except TimeoutError:  # aiohttp's socket connect/read timeouts
                    last = down = f"timeout after {self.timeout_s:g} s"
                except aiohttp.ClientError as exc:
                    last = down = self._scrub(f"connection error: {type(exc).__name__}: {exc}")
                else:
                    status = reply.status
                    if 200 <= status < 300:
                        if reply.truncated:
                            raise BackendCallError(f"response body over {MAX_BODY_BYTES} bytes (HTTP {status}); a "
                                                   "reply of at most 512 tokens is far smaller")
                        try:
                            text = _extract_text(reply.body)
                        except _MalformedBody as exc:
                            last = f"malformed response body (HTTP {status}): {exc}"
                        else:
                            self._limits_s.record(loop.time() - started)
                            endpoint.failures = 0
                            return text
                    else:
                        last = f"HTTP {status} from {endpoint.url}: {self._error_snippet(reply.body)}"
                        if status == 401 and self._api_key is None:
                            last += f" (no API key sent: environment variable {self.api_key_env} is unset)"
                        if status in FATAL_STATUS and (endpoint.error is not None or self._in_rotation() > 1):
                            # this server is misconfigured, not the model: out at once (if an attempt in flight
                            # at the same time has not taken it out already), and the request retried elsewhere
                            if endpoint.error is None:
                                endpoint.error = f"taken out of rotation: {self._scrub(last)}"
                        elif status not in RETRYABLE_STATUS and status < 500:
                            raise BackendCallError(self._scrub(last), fatal=status in FATAL_STATUS)
                        retry_after = _retry_after_s(reply.headers)
                if down is not None:
                    self._failed(endpoint, last)
            if attempt < self.max_retries:
                left = deadline - loop.time()
                if left <= 0:
                    raise BackendCallError(self._scrub(f"no reply within the request deadline of "
                                                       f"{self.request_deadline_s:g} s ({attempt + 1} attempts; "
                                                       f"last: {last})"))
                await asyncio.sleep(min(self._wait_s(attempt, retry_after), left))
        raise BackendCallError(self._scrub(f"failed after {self.max_retries + 1} attempts: {last}"))

    async def aclose(self) -> None:
        """Close the sessions (and their connections)."""
        self._slots = None
        for endpoint in self.endpoints:
            session, endpoint.session = endpoint.session, None
            if session is not None:
                await session.close()


_SPEC = re.compile(r"^(?P<model>.+)@(?P<urls>https?://[^,\s]+(?:,https?://[^,\s]+)*)$")


def load(spec: str, target: str, options: ModelOptions) -> OpenAIBackend:
    """Build ``openai:MODEL@URL`` or ``openai:MODEL@URL1,URL2,...`` (the backend table's loader).

    Reads ``api_key_env``, ``concurrency``, ``max_retries``, ``backoff_base_s``, ``backoff_max_s``,
    ``timeout_s``, ``attempt_floor_s`` and ``request_deadline_s`` from ``options``; it takes no ``--model-arg``.

    Raises:
        VqauditError: the target is not ``MODEL@URL[,URL...]`` with http(s) URLs (the message lists the valid
            forms), a URL is listed twice, or a ``--model-arg`` was given.
    """
    from vqaudit.backends.registry import bad_spec

    match = _SPEC.match(target)
    if match is None:
        raise bad_spec(spec, "expected openai:MODEL@URL (or MODEL@URL1,URL2,...) with http:// or https:// URLs")
    urls = match["urls"].split(",")
    twice = sorted({url for url in urls if urls.count(url) > 1})
    if twice:
        raise bad_spec(spec, f"endpoint {twice[0]} is listed twice")
    options.refuse_unknown_args(spec, ())
    return OpenAIBackend(spec=spec, model=match["model"], base_url=urls, api_key_env=options.api_key_env,
                         concurrency=options.concurrency, max_retries=options.max_retries,
                         backoff_base_s=options.backoff_base_s, backoff_max_s=options.backoff_max_s,
                         timeout_s=options.timeout_s, attempt_floor_s=options.attempt_floor_s,
                         request_deadline_s=options.request_deadline_s)
