"""Making many backend calls: one timed call recorded as a Response, and a bounded pool that stops early.

Shared by the run stage (``vqaudit run``), the judges (UPD and the short-answer judge audit) and the prompt
perturbations, which differ only in what they ask, where they store the reply and what they say when the model
is unreachable.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from vqaudit.backends.base import Backend, BackendCallError, Request
from vqaudit.errors import VqauditError
from vqaudit.schema import Response

T = TypeVar("T")

WORKERS_PER_SLOT = 4
"""Calls in progress per concurrency slot (issue 18). A backend bounds its own attempts in flight (the ``openai``
backend: ``concurrency``); the extra workers are what lets a call waiting out a retry backoff leave its slot to
another call instead of holding it. Until a call has succeeded, at most ``give_up`` calls are started, so an
unreachable model still gets exactly the first ``give_up`` calls."""


async def call_once(backend: Backend, request: Request, *, model: str, response_id: str, key: str,
                    fatal_label: str) -> Response:
    """Ask one request and record the outcome: ``text`` on success, ``error`` after the backend's retries.

    Args:
        backend: the backend to ask.
        request: the call.
        model: the model spec recorded on the response.
        response_id: the ``view_id`` recorded on the response.
        key: the response's cache key.
        fatal_label: what a fatal error message starts with (e.g. ``"judge SPEC"``).

    Returns:
        The Response, with ``latency_s`` the wall-clock seconds of the call.

    Raises:
        VqauditError: a fatal backend error (401/403/404: every call would fail the same way).
    """
    started = time.perf_counter()
    text: str | None = None
    error: str | None = None
    try:
        text = await backend.complete(request)
    except BackendCallError as exc:
        if exc.fatal:
            raise VqauditError(f"{fatal_label}: {exc}") from None
        error = str(exc) or type(exc).__name__
    return Response(view_id=response_id, model=model, prompt_id=request.prompt_id,
                    params=request.params.as_dict(), text=text, error=error,
                    latency_s=time.perf_counter() - started, cache_key=key)


async def await_workers(workers: Sequence[asyncio.Task[Any]]) -> None:
    """Wait for worker tasks; re-raise the first exception any raised; always cancel and reap the others.

    A fatal backend error (or Ctrl-C) in one worker stops them all, and no task is left pending when this
    returns or raises.
    """
    if not workers:
        return
    try:
        done, _ = await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
        for finished in done:
            exc = None if finished.cancelled() else finished.exception()
            if exc is not None:
                raise exc
    finally:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)


async def ask_all(items: Sequence[T], ask: Callable[[T], Awaitable[Response]],
                  on_response: Callable[[T, Response], None], *, concurrency: int, give_up: int,
                  unreachable: Callable[[int, Response], VqauditError]) -> int:
    """Ask every item with ``concurrency`` slots; hand each response over as it arrives.

    Worker tasks (``WORKERS_PER_SLOT * concurrency``) pull items from one shared iterator, so memory stays
    bounded however many items there are; the backend bounds its attempts in flight (the ``openai`` backend at
    ``concurrency``), so calls waiting out a retry backoff do not hold the slots.
    When the first ``give_up`` responses all carry an error (none succeeded), the model is taken to be
    unreachable: ``unreachable(n_done, last_response)`` is raised and the remaining items are not asked.

    Args:
        items: what to ask, in order.
        ask: makes the call of one item (usually through :func:`call_once`).
        on_response: stores one response (called before the early-stop test, so nothing received is lost).
        concurrency: concurrency slots (at least 1 is used).
        give_up: how many all-failed calls stop the pool (more than ``len(items)``: never).
        unreachable: builds the error raised by the early stop.

    Returns:
        The number of calls completed.

    Raises:
        VqauditError: the early stop, or a fatal error raised by ``ask``; other workers are cancelled.
    """
    pending = iter(items)
    n_started = n_done = n_ok = 0
    succeeded = asyncio.Event()
    end = object()

    async def worker() -> None:
        nonlocal n_started, n_done, n_ok
        while True:
            while n_ok == 0 and n_started >= give_up:  # the early-stop window: its calls decide
                await succeeded.wait()
            item = next(pending, end)
            if item is end:
                return
            n_started += 1
            response = await ask(item)  # type: ignore[arg-type]
            on_response(item, response)  # type: ignore[arg-type]
            n_done += 1
            if response.error is None:
                n_ok += 1
                succeeded.set()
            if n_ok == 0 and n_done >= give_up:
                raise unreachable(n_done, response)

    n_workers = min(max(concurrency, 1) * WORKERS_PER_SLOT, len(items))
    await await_workers([asyncio.create_task(worker()) for _ in range(n_workers)])
    return n_done
