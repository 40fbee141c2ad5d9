"""The one HTTP backend template: every provider API (``openai:``, ``anthropic:``, ``gemini:``) is a set of hooks.

A provider module subclasses :class:`HttpBackend` and fills in the hooks of
:class:`~vqaudit.backends.http_hooks.HttpHooks` (the URL path, the headers, the JSON body, the reply readers,
optionally the error reader), reading bodies with :mod:`vqaudit.backends.http_replies`;
:func:`vqaudit.backends.http_spec.load_http` builds it from ``KIND:MODEL@URL[,URL...]`` and its backend table row
(the API-key variables, whether several endpoints are allowed). Everything else is this module's, the same for
every provider (one attempt on the wire, the endpoints and their sessions: :mod:`vqaudit.backends.http_transport`):

- **retries**: exponential backoff with jitter on HTTP 408, 409, 425, 429 and 5xx, timeouts, connection errors
  and malformed 2xx bodies (not JSON, or no content the provider's reader accepts); a server's ``Retry-After`` is
  honoured up to the backoff cap; other 4xx fail at once; 401, 403 and 404 are *fatal* (every call would fail the
  same way);
- **several endpoints of one model** (``KIND:MODEL@URL1,URL2,...``): least-loaded dispatch, one cache key (the
  spec as written), and an endpoint that keeps failing is taken out of rotation with its error recorded;
- **deadlines**: at most ``concurrency`` attempts are in flight, a request waiting out its backoff holds no slot;
  each attempt has a wall-clock limit that adapts to how long replies take, and each request a deadline over all
  its attempts (:mod:`vqaudit.backends.deadlines`); a body over :data:`MAX_BODY_BYTES` is not read further;
- **the API key**: read once from the row's environment variable(s) (or ``--api-key-env``), sent only in the
  provider's header, never follows a redirect, and masked (the key and every 8-character run of it,
  :mod:`vqaudit.backends.redact`) in every text that comes back: error bodies before they are cut, exception
  messages, and a 2xx reply's content, reasoning and finish reason as they are read, so a server echoing the key
  in its reply never gets it into ``responses.sqlite``, ``outcomes.jsonl`` or a report.

The HTTP client is aiohttp: against an instant local server httpx spent ~9x the CPU per request of a minimal
aiohttp client (its pool and anyio layers); ``benchmarks/bench_openai.py`` measures both in one run.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from collections.abc import Sequence
from functools import partial
from typing import ClassVar

import aiohttp

from vqaudit.backends.base import BackendCallError, Completion, Request, finish_reason_of
from vqaudit.backends.deadlines import AttemptLimits, AttemptTimeout, within
from vqaudit.backends.http_hooks import HttpHooks
from vqaudit.backends.http_replies import MalformedBody, error_snippet, read_json
from vqaudit.backends.http_transport import (
    MAX_BODY_BYTES,
    Endpoint,
    Reply,
    env_proxy,
    least_loaded,
    open_session,
    read_capped,
    retry_after_s,
)
from vqaudit.backends.redact import mask_secret
from vqaudit.textsafe import encode_utf8

__all__ = ["DEAD_AFTER", "FATAL_STATUS", "RETRYABLE_STATUS", "HttpBackend"]

RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
"""HTTP statuses retried besides 5xx: request timeout, conflict, too early, too many requests."""
FATAL_STATUS = frozenset({401, 403, 404})
"""HTTP statuses every call would get the same way (not authenticated, forbidden, no such model or path)."""
DEAD_AFTER = 3
"""Failed attempts in a row (connection error, timeout) after which an endpoint leaves the rotation, if another
endpoint is still in it."""


class HttpBackend(HttpHooks):
    """Calls one or more HTTP endpoints of one model: the machinery every provider shares (module docstring).

    Subclasses set :attr:`kind` (their backend table row, whose ``key_env`` names the API-key variables) and fill
    in the hooks :meth:`path`, :meth:`headers`, :meth:`body`, :meth:`read_content`, :meth:`read_reasoning`,
    :meth:`read_finish_reason` and :meth:`read_usage` (and may replace :meth:`read_error`); :meth:`complete` and
    :meth:`read_reply` are the template.

    Several endpoints (``KIND:MODEL@URL1,URL2``): each attempt goes to the endpoint in rotation with the fewest
    attempts in flight (ties: in turn), so a slower server gets fewer. An endpoint whose attempts fail
    :data:`DEAD_AFTER` times in a row by connection error, timeout or HTTP 401/403/404 while another endpoint is
    still in rotation is taken out of rotation; its last error is kept in :attr:`endpoints_out` (recorded in
    ``run.json``), and the attempt counts as a failed attempt of its request (retried, on another endpoint). The
    last endpoint in rotation is never taken out: with it the single-endpoint rules apply (401/403/404 fatal,
    retries, the run's early stop). All endpoints share one cache key (the spec as written), one concurrency
    bound and one adaptive attempt limit.

    The sessions are created on the first call (inside the running event loop) and closed by ``aclose``.
    """

    kind: ClassVar[str] = ""
    """The backend table row this class serves: its ``key_env`` is where the API key is read by default."""

    def __init__(
        self,
        *,
        spec: str,
        model: str,
        base_url: str | Sequence[str],
        api_key_env: str | Sequence[str] | None = None,
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
            model: the model name the API is asked for (in the body or the path).
            base_url: server URL up to and including the API prefix, e.g. ``http://127.0.0.1:8000/v1``, or several
                (one per endpoint, in the order written).
            api_key_env: environment variable(s) holding the API key, the first set one used; None for the
                ``key_env`` of the class's backend table row. All unset or empty: no key is sent.
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
        path = self.path()
        self.endpoints = [Endpoint(url, path) for url in urls]
        self.url = self.endpoints[0].url
        if api_key_env is None:
            self.api_key_env: tuple[str, ...] = _row_key_env(self.kind)
        else:
            self.api_key_env = (api_key_env,) if isinstance(api_key_env, str) else tuple(api_key_env)
        self.concurrency = concurrency
        self.max_retries = max_retries
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.timeout_s = timeout_s
        self.request_deadline_s = request_deadline_s
        self._limits_s = AttemptLimits(attempt_floor_s)
        self._slots: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None
        self._api_key = next((key for key in map(os.environ.get, self.api_key_env) if key), None)
        self._rng = random.Random(seed)
        self._turn = 0

    def __repr__(self) -> str:
        return f"{type(self).__name__}(spec={self.spec!r}, api_key_env={self.api_key_env!r})"

    # --- the template (the hooks a provider fills in: vqaudit.backends.http_hooks) --------------------------

    def read_reply(self, body: bytes) -> Completion:
        """Read a 2xx body with the provider's readers; mask the API key in every text of it.

        A null content is one reply, not a malformed body, when the server sent reasoning beside it or the finish
        reason is ``length`` (the token budget ran out while the model was thinking); the run stores it once and
        the score reads it as "reasoning not finished" (:mod:`vqaudit.parsing.reasoning`). A null content with
        neither stays malformed (retried, as a body a proxy cut). The content, the reasoning and the finish
        reason are masked (the key and every 8-character run of it) before anything stores them.

        Raises:
            MalformedBody: the body is not a JSON object, a reader refused it, or the content is null with
                neither reasoning nor a ``length`` finish.
        """
        data = read_json(body)
        if not isinstance(data, dict):
            raise MalformedBody("body is not a JSON object")
        content = self.read_content(data)
        reasoning = self.read_reasoning(data)
        raw_finish = self.read_finish_reason(data)
        finish_reason = finish_reason_of(self._scrub(raw_finish) if isinstance(raw_finish, str) else raw_finish)
        usage = self.read_usage(data)
        if content is None and reasoning is None and finish_reason != "length":
            raise MalformedBody(f"content is null, with no reasoning and finish_reason {finish_reason!r}")
        return Completion(
            None if content is None else self._scrub(content),
            None if reasoning is None else self._scrub(reasoning),
            finish_reason,
            usage,
        )

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
            endpoint.session = open_session(self.headers(self._api_key), self.concurrency, self.timeout_s)
            endpoint.proxy = env_proxy(endpoint.url)
        return endpoint.session

    def _pick(self, avoid: Endpoint | None = None) -> Endpoint:
        """The endpoint in rotation with the fewest attempts in flight, ties in turn (:func:`least_loaded`)."""
        if len(self.endpoints) == 1:
            return self.endpoints[0]
        self._turn = (self._turn + 1) % len(self.endpoints)
        return least_loaded(self.endpoints, self._turn, avoid)

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

    def _wait_s(self, attempt: int, retry_after: float | None) -> float:
        wait = min(self.backoff_max_s, self.backoff_base_s * 2.0**attempt) * (0.5 + 0.5 * self._rng.random())
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.backoff_max_s))
        return wait

    async def _post(self, endpoint: Endpoint, content: bytes) -> Reply:
        endpoint.in_flight += 1
        try:
            # no redirects: a 3xx is a non-retryable error, and the key never follows one elsewhere
            async with self._session(endpoint).post(
                endpoint.url, data=content, allow_redirects=False, proxy=endpoint.proxy
            ) as response:
                return await read_capped(response)
        finally:
            endpoint.in_flight -= 1

    def _attempt_limit_s(self, attempt: int, left_s: float) -> float:
        """Seconds attempt ``attempt`` may run in all: the adaptive limit, within the request's deadline."""
        return min(self._limits_s.limit_s(attempt), left_s)

    def _no_key_note(self) -> str:
        """Why a 401 may have come: no key was sent because its variable(s) are unset ("" when a key was sent)."""
        if self._api_key is not None or not self.api_key_env:
            return ""
        names = " and ".join(self.api_key_env)
        verb = "is" if len(self.api_key_env) == 1 else "are"
        noun = "variable" if len(self.api_key_env) == 1 else "variables"
        return f" (no API key sent: environment {noun} {names} {verb} unset)"

    async def complete(self, request: Request) -> Completion:
        """Ask one request; retry transient failures (on the least-loaded endpoint in rotation each time).

        Returns:
            The reply as the provider's readers read it (:meth:`read_reply`): the content exactly as returned
            (None for a reasoning model cut off while thinking), the reasoning, the finish reason and the token
            usage, the API key masked in each.

        Raises:
            BackendCallError: after ``max_retries`` retries of transient failures, or at once on a non-retryable
                4xx (``fatal`` for 401, 403, 404 from the last endpoint in rotation), or at once (``fatal``) when
                :meth:`body` refuses the request's parameters. The message never contains the API key.
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
                    reply = await within(
                        self._post(endpoint, content), partial(self._attempt_limit_s, attempt, deadline - started)
                    )
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
                            raise BackendCallError(
                                f"response body over {MAX_BODY_BYTES} bytes (HTTP {status}); "
                                "a reply of 100,000 tokens is smaller"
                            )
                        try:
                            completion = self.read_reply(reply.body)
                        except MalformedBody as exc:
                            last = self._scrub(f"malformed response body (HTTP {status}): {exc}")
                        else:
                            self._limits_s.record(loop.time() - started)
                            endpoint.failures = 0
                            return completion
                    else:
                        shown = error_snippet(self.read_error(reply.body), self._api_key)
                        last = f"HTTP {status} from {endpoint.url}: {shown}"
                        if status == 401:
                            last += self._no_key_note()
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
                    raise BackendCallError(
                        self._scrub(
                            f"no reply within the request deadline of "
                            f"{self.request_deadline_s:g} s ({attempt + 1} attempts; "
                            f"last: {last})"
                        )
                    )
                await asyncio.sleep(min(self._wait_s(attempt, retry_after), left))
        raise BackendCallError(self._scrub(f"failed after {self.max_retries + 1} attempts: {last}"))

    async def aclose(self) -> None:
        """Close the sessions (and their connections)."""
        self._slots = None
        for endpoint in self.endpoints:
            session, endpoint.session = endpoint.session, None
            if session is not None:
                await session.close()


def _row_key_env(kind: str) -> tuple[str, ...]:
    """The ``key_env`` of backend table row ``kind`` (() for a kind not in the table)."""
    from vqaudit.backends.registry import BACKENDS

    row = BACKENDS.get(kind)
    return row.key_env if row is not None else ()
