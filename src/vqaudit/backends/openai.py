"""Backend for any OpenAI-compatible chat-completions server (vLLM, SGLang, Ollama, hosted APIs), one or several.

One call is ``POST {URL}/chat/completions`` with one user message holding the image (a base64 data URL) and the
prompt text, at the request's generation parameters (temperature, the token budget as ``max_tokens`` or
``max_completion_tokens``, ``reasoning_effort``, ``chat_template_kwargs.enable_thinking``: the generation keys
of ``--model-arg``, :func:`vqaudit.backends.openai_http.chat_body`). A text-only request (``image`` None, e.g. a
judge) is one user message whose content is the plain prompt string, with no image part: text-only servers (a
text LLM under vLLM) answer HTTP 400 to an ``image_url`` part. The reply is a
:class:`~vqaudit.backends.base.Completion`: the content exactly as sent, the reasoning a reasoning parser sent
apart (``reasoning_content`` / ``reasoning``), the finish reason and the token usage
(:func:`~vqaudit.backends.openai_http.extract_completion`). Retried with exponential backoff and jitter: HTTP
408, 409, 425, 429 and 5xx, timeouts, connection errors and malformed 2xx bodies (not JSON, or no
``choices[0].message.content`` text, except a null content beside reasoning or with ``finish_reason: length``:
a reasoning model cut off while thinking, one reply). Other 4xx fail at once; 401, 403 and 404 are *fatal*
(every call would fail the same way). The API key is read once from an environment variable, sent only in the
Authorization header, and masked in every error message before it is cut (the key and every 8-character run of
it, see ``vqaudit.backends.redact``).

Several endpoints of one model (``openai:MODEL@URL1,URL2,...``, issue 12): least-loaded dispatch, one cache key
(the spec as written), and an endpoint that keeps failing is taken out of rotation with its error recorded (see
:class:`OpenAIBackend`).

Hostile servers (issue 18): at most ``concurrency`` attempts are in flight, but a request waiting out its backoff
holds no slot; each attempt has a wall-clock limit that adapts to how long replies take, and each request a
deadline over all its attempts (``vqaudit.backends.deadlines``); a body over
:data:`~vqaudit.backends.openai_http.MAX_BODY_BYTES` is not read further (a 2xx one fails the call at once, it
would come back the same). What one attempt does on the wire (the body, the session, the capped read, the reply's
text) is in :mod:`vqaudit.backends.openai_http`.

The HTTP client is aiohttp (issue 12 part 4): against an instant local server httpx spent ~9x the CPU per request
of a minimal aiohttp client (its pool and anyio layers), which left the harness flat at ~400 requests/s whatever
the concurrency; ``benchmarks/bench_openai.py`` measures both in one run.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
from collections.abc import Sequence
from functools import partial
from typing import Any

import aiohttp

from vqaudit.backends.base import BackendCallError, Completion, ModelOptions, Request
from vqaudit.backends.deadlines import AttemptLimits, AttemptTimeout, within
from vqaudit.backends.openai_http import (
    FATAL_STATUS,
    MAX_BODY_BYTES,
    RETRYABLE_STATUS,
    Endpoint,
    MalformedBody,
    Reply,
    chat_body,
    env_proxy,
    error_snippet,
    extract_completion,
    open_session,
    read_capped,
    retry_after_s,
)
from vqaudit.backends.redact import mask_secret
from vqaudit.textsafe import encode_utf8

__all__ = ["DEAD_AFTER", "OpenAIBackend", "load"]

DEAD_AFTER = 3
"""Failed attempts in a row (connection error, timeout) after which an endpoint leaves the rotation, if another
endpoint is still in it."""


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
            endpoint.session = open_session(self._api_key, self.concurrency, self.timeout_s)
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
        """The JSON body of the call for ``request``: :func:`vqaudit.backends.openai_http.chat_body` of the model."""
        return chat_body(self.model, request)

    def _wait_s(self, attempt: int, retry_after: float | None) -> float:
        wait = min(self.backoff_max_s, self.backoff_base_s * 2.0**attempt) * (0.5 + 0.5 * self._rng.random())
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.backoff_max_s))
        return wait

    async def _post(self, endpoint: Endpoint, content: bytes) -> Reply:
        endpoint.in_flight += 1
        try:
            # no redirects (as before): a 3xx is a non-retryable error, and the key never follows one elsewhere
            async with self._session(endpoint).post(endpoint.url, data=content, allow_redirects=False,
                                                    proxy=endpoint.proxy) as response:
                return await read_capped(response)
        finally:
            endpoint.in_flight -= 1

    def _attempt_limit_s(self, attempt: int, left_s: float) -> float:
        """Seconds attempt ``attempt`` may run in all: the adaptive limit, within the request's deadline."""
        return min(self._limits_s.limit_s(attempt), left_s)

    async def complete(self, request: Request) -> Completion:
        """Ask one request; retry transient failures (on the least-loaded endpoint in rotation each time).

        Returns:
            The reply (:func:`~vqaudit.backends.openai_http.extract_completion`): ``choices[0].message.content``
            exactly as returned (None for a reasoning model cut off while thinking), the reasoning, the finish
            reason and the token usage.

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
                            raise BackendCallError(f"response body over {MAX_BODY_BYTES} bytes (HTTP {status}); "
                                                   "a reply of 100,000 tokens is smaller")
                        try:
                            completion = extract_completion(reply.body)
                        except MalformedBody as exc:
                            last = f"malformed response body (HTTP {status}): {exc}"
                        else:
                            self._limits_s.record(loop.time() - started)
                            endpoint.failures = 0
                            return completion
                    else:
                        last = f"HTTP {status} from {endpoint.url}: {error_snippet(reply.body, self._api_key)}"
                        if status == 401 and self._api_key is None:
                            last += f" (no API key sent: environment variable {self.api_key_env} is unset)"
                        if status in FATAL_STATUS and (endpoint.error is not None or self._in_rotation() > 1):
                            # this server is misconfigured, not the model: out at once (if an attempt in flight
                            # at the same time has not taken it out already), and the request retried elsewhere
                            if endpoint.error is None:
                                endpoint.error = f"taken out of rotation: {self._scrub(last)}"
                        elif status not in RETRYABLE_STATUS and status < 500:
                            raise BackendCallError(self._scrub(last), fatal=status in FATAL_STATUS)
                        retry_after = retry_after_s(reply.headers)
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
    ``timeout_s``, ``attempt_floor_s`` and ``request_deadline_s`` from ``options``; it takes no ``--model-arg``
    of its own (the generation keys, ``max_tokens=N`` and the like, are taken by ``load_backend`` into every
    request's parameters before this sees the args).

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
