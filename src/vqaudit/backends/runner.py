"""The one cached request runner, through which every stage that calls a model asks.

The run stage, the UPD judge, the short-answer judge audit and the prompt perturbations all use
:func:`ask_cached`.

A :class:`Job` is a cache key plus a way to build its :class:`~vqaudit.backends.base.Request` (the image is
read only just before the call, so memory stays bounded). Jobs whose key is already cached are not asked; jobs
that share a key are asked once (identical inputs, as a temperature-0 model answers them alike), except that the
key of a ``by_id`` backend (``replay:``) includes the request id, so it never merges two ids. Every reply is
stored in the cache before anyone parses it: committed in batches at most
:data:`FLUSH_S` seconds after it arrives (:class:`StoreBatch`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from vqaudit.backends.base import Backend, BackendCallError, Completion, GenerationParams, Request
from vqaudit.backends.cache import ResponseCache, cache_key
from vqaudit.backends.registry import BACKENDS
from vqaudit.errors import VqauditError
from vqaudit.schema import Response

T = TypeVar("T")

WORKERS_PER_SLOT = 4
"""Calls in progress per concurrency slot. A backend bounds its own attempts in flight (an HTTP
backend: ``concurrency``); the extra workers are what lets a call waiting out a retry backoff leave its slot to
another call instead of holding it. Until a call has succeeded, at most ``give_up`` calls are started, so an
unreachable model still gets exactly the first ``give_up`` calls."""


async def call_once(
    backend: Backend, request: Request, *, model: str, response_id: str, key: str, fatal_label: str
) -> Response:
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
    reply: Completion = Completion(None)
    error: str | None = None
    try:
        got = await backend.complete(request)
        reply = got if isinstance(got, Completion) else Completion(got)
    except BackendCallError as exc:
        if exc.fatal:
            raise VqauditError(f"{fatal_label}: {exc}") from None
        error = str(exc) or type(exc).__name__
    text = reply.text
    if error is None and text is None and reply.reasoning is None:
        text = ""  # a Completion with neither content nor reasoning: an empty reply (scored invalid), not an error
    return Response(
        view_id=response_id,
        model=model,
        prompt_id=request.prompt_id,
        params=request.params.as_dict(),
        text=text,
        error=error,
        latency_s=time.perf_counter() - started,
        cache_key=key,
        reasoning=reply.reasoning,
        finish_reason=reply.finish_reason,
        usage=reply.usage,
    )


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


async def ask_all(
    items: Sequence[T],
    ask: Callable[[T], Awaitable[Response]],
    on_response: Callable[[T, Response], None],
    *,
    concurrency: int,
    give_up: int,
    unreachable: Callable[[int, Response], VqauditError],
) -> int:
    """Ask every item with ``concurrency`` slots; hand each response over as it arrives.

    Worker tasks (``WORKERS_PER_SLOT * concurrency``) pull items from one shared iterator, so memory stays
    bounded however many items there are; the backend bounds its attempts in flight (an HTTP backend at
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


TEXT_ONLY = "text-only"
"""Stands where the image SHA-256 goes in the cache key of a call without an image (a judge)."""

EARLY_STOP_CALLS = 8
"""Judges and perturbations stop when this many calls (or all calls asked, if fewer) have all failed."""


@dataclass(frozen=True)
class Job:
    """One call to make through :func:`ask_cached`.

    Attributes:
        key: the cache key its reply is stored under (see :func:`request_key`).
        request_id: the id recorded on the reply (``Response.view_id``).
        build: returns the Request; called only when the job is asked (it may read the image file).
    """

    key: str
    request_id: str
    build: Callable[[], Request]


def by_id_image_key(image_sha256: str, request_id: str) -> str:
    """What stands for the image in the cache key of a reply given by id (``replay:``, imported predictions).

    ``IMAGE_SHA256#REQUEST_ID``: two ids with identical inputs keep two keys, so neither reply replaces the other.
    """
    return f"{image_sha256}#{request_id}"


def request_key(
    backend: Backend, prompt_id: str, prompt: str, image_sha256: str | None, params: GenerationParams, request_id: str
) -> str:
    """The cache key of one call: :func:`~vqaudit.backends.cache.cache_key` of the backend's identity.

    Args:
        backend: the backend asked (its ``identity`` is keyed; a ``by_id`` backend also keys ``request_id``).
        prompt_id: prompt template id.
        prompt: the full prompt text.
        image_sha256: SHA-256 (hex) of the image bytes, or None for a text-only call (keyed as
            :data:`TEXT_ONLY`).
        params: generation parameters.
        request_id: the request's id.

    Returns:
        64 lowercase hex characters. For backends that are not ``by_id`` the key does not depend on
        ``request_id``, so identical inputs share one key (and one call).
    """
    image = image_sha256 if image_sha256 is not None else TEXT_ONLY
    row = BACKENDS.get(backend.spec.partition(":")[0])  # a backend built outside the table (tests): not by id
    if row is not None and row.by_id:
        image = by_id_image_key(image, request_id)
    identity = getattr(backend, "identity", None) or backend.spec  # backends built outside the table: the spec
    return cache_key(identity, prompt_id, prompt, image, params)


FLUSH_S = 0.2
"""Replies received are committed together at most this many seconds after the first of them arrived."""
FLUSH_ROWS = 256
"""... or as soon as this many are waiting."""


class StoreBatch:
    """Replies waiting to be committed to the cache together (one transaction), in arrival order.

    One commit per reply was a tenth of the run stage's CPU at 2,000 replies/s (``benchmarks/bench_openai.py``).
    A reply is committed at most :data:`FLUSH_S` seconds after it arrived (a timer on the running event loop),
    or when :data:`FLUSH_ROWS` are waiting, and always by :meth:`flush` when the asking ends, however it ends.
    Nothing reads a reply before the asking ends (scoring, judging and perturbation read the cache afterwards),
    so every reply is still stored before anything parses it; a process killed outright loses at most the
    replies of the last :data:`FLUSH_S` seconds, which the next run asks again. Use from the event loop's thread.
    """

    def __init__(self, cache: ResponseCache, *, replace_error: bool) -> None:
        """Start an empty batch writing to ``cache`` (``replace_error`` as in ``ResponseCache.put``)."""
        self.cache = cache
        self.replace_error = replace_error
        self._rows: list[Response] = []
        self._timer: asyncio.TimerHandle | None = None
        self._failed: BaseException | None = None

    def add(self, response: Response) -> None:
        """Queue one reply; commit the queue when it is full (in this call) or :data:`FLUSH_S` from now.

        Raises:
            sqlite3.Error: an earlier timed commit failed (the replies stay queued).
        """
        if self._failed is not None:
            raise self._failed
        self._rows.append(response)
        if len(self._rows) >= FLUSH_ROWS:
            self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(FLUSH_S, self._timed_flush)

    def _timed_flush(self) -> None:
        self._timer = None
        try:
            self.flush()
        except Exception as exc:  # a callback's exception would be lost in the loop's handler: raise it later
            self._failed = exc

    def flush(self) -> None:
        """Commit every queued reply in one transaction now (a no-op when none is queued).

        Raises:
            sqlite3.Error: the commit failed; the replies stay queued.
        """
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._rows:
            self.cache.put_many(self._rows, replace_error=self.replace_error)
            self._rows = []
        self._failed = None


async def ask_cached(
    backend: Backend,
    jobs: Sequence[Job],
    cache: ResponseCache,
    *,
    concurrency: int,
    reask_errors: bool,
    give_up: Callable[[int], int],
    unreachable: Callable[[int, Response], VqauditError],
    fatal_label: str,
    on_done: Callable[[], None] | None = None,
) -> int:
    """Ask every job whose reply is not cached yet; store each reply in ``cache`` (batched, :class:`StoreBatch`).

    Args:
        backend: the backend to ask (not closed here).
        jobs: the calls; several jobs may share a key (asked once).
        cache: where replies are stored and looked up.
        concurrency: maximum calls in flight (at least 1 is used).
        reask_errors: ask again the keys whose cached response records an error (the row is replaced by the new
            response); otherwise a recorded error counts as done.
        give_up: maps the number of calls to ask to the number of all-failed calls that stop the pool (more than
            that number: never stop).
        unreachable: builds the error of the early stop from the calls done and the last response.
        fatal_label: what a fatal backend error's message starts with (e.g. ``"judge SPEC"``).
        on_done: called after each stored reply (progress bars).

    Returns:
        The number of calls made.

    Raises:
        VqauditError: a fatal backend error (401/403/404) or the early stop; replies received before stay cached
            and calls in flight are cancelled.
    """
    stored = cache.keys()
    redo = cache.error_keys() if reask_errors else set()
    todo: dict[str, Job] = {}
    for job in jobs:
        if job.key not in todo and (job.key not in stored or job.key in redo):
            todo[job.key] = job

    async def ask(job: Job) -> Response:
        return await call_once(
            backend, job.build(), model=backend.spec, response_id=job.request_id, key=job.key, fatal_label=fatal_label
        )

    batch = StoreBatch(cache, replace_error=reask_errors)

    def store(_job: Job, response: Response) -> None:
        batch.add(response)
        if on_done is not None:
            on_done()

    pending = list(todo.values())
    try:
        return await ask_all(
            pending, ask, store, concurrency=concurrency, give_up=give_up(len(pending)), unreachable=unreachable
        )
    finally:
        batch.flush()  # also on a fatal error, the early stop or cancellation: nothing received is lost
