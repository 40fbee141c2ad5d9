"""One attempt on the wire for the HTTP template: the endpoints, their aiohttp sessions, a capped body read.

An :class:`Endpoint` is one server of a model (its URL, session, attempts in flight, failures in a row); its
session is opened by :func:`open_session` with the proxy the environment names (:func:`env_proxy`); a reply is read
up to :data:`MAX_BODY_BYTES` (:func:`read_capped`) and a server's ``Retry-After`` read by :func:`retry_after_s`.
The retries, the rotation of endpoints and the deadlines are the template's (:mod:`vqaudit.backends.http_base`).
"""

from __future__ import annotations

import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence

import aiohttp

MAX_BODY_BYTES = 8 * 2**20
"""Largest body read: a token is at most about 64 bytes even as JSON ``\\u`` escapes, so 8 MiB holds over 100,000
tokens of content and reasoning together (a 4,096-token thinking reply is under 300 KB); the rest is never read."""


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """The seconds (at least 0) a ``Retry-After`` header asks for, or None (absent, an HTTP date, NaN)."""
    value = headers.get("retry-after")
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff
    return None if seconds is None or seconds != seconds else max(0.0, seconds)  # NaN: our own backoff


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
        url: ``base_url`` + the provider's path (e.g. ``/chat/completions``).
        in_flight: attempts sent to it and not finished (the least-loaded dispatch compares these).
        failures: connection failures, timeouts and 401/403/404 replies in a row (a success resets it).
        error: why it was taken out of rotation (None while it is in rotation).
    """

    __slots__ = ("base_url", "url", "in_flight", "failures", "error", "session", "proxy")

    def __init__(self, base_url: str, path: str) -> None:
        self.base_url = base_url
        self.url = base_url.rstrip("/") + path
        self.in_flight = 0
        self.failures = 0
        self.error: str | None = None
        self.session: aiohttp.ClientSession | None = None
        self.proxy: str | None = None


def open_session(headers: Mapping[str, str], concurrency: int, timeout_s: float) -> aiohttp.ClientSession:
    """A new aiohttp session (call it inside the running event loop) for one endpoint.

    Args:
        headers: sent with every request (the provider's authentication headers), beside
            ``Content-Type: application/json``.
        concurrency: the connection limit (the caller's slot semaphore bounds attempts over all endpoints; one
            endpoint may carry them all).
        timeout_s: socket connect and socket read timeout in seconds (per socket operation; no total limit).
    """
    timeout = aiohttp.ClientTimeout(total=None, connect=None, sock_connect=timeout_s, sock_read=timeout_s)
    connector = aiohttp.TCPConnector(limit=max(concurrency, 1), limit_per_host=0)
    return aiohttp.ClientSession(
        headers={"Content-Type": "application/json", **headers},
        timeout=timeout,
        connector=connector,
        trust_env=False,
        raise_for_status=False,
    )


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


def least_loaded(endpoints: Sequence[Endpoint], first: int, avoid: Endpoint | None) -> Endpoint:
    """The endpoint in rotation with the fewest attempts in flight, ties going to the first in turn from ``first``.

    Args:
        endpoints: the model's endpoints (at least one).
        first: the index the turn starts at (the template advances it by one per attempt).
        avoid: the endpoint a request's last attempt failed on, taken only when no other is in rotation.

    Returns:
        That endpoint; ``avoid`` when it is the only one in rotation; ``endpoints[0]`` when none is.
    """
    n = len(endpoints)
    best: Endpoint | None = None
    for i in range(n):
        candidate = endpoints[(first + i) % n]
        if (
            candidate.error is None
            and candidate is not avoid
            and (best is None or candidate.in_flight < best.in_flight)
        ):
            best = candidate
    if best is None:
        return avoid if avoid is not None and avoid.error is None else endpoints[0]
    return best
