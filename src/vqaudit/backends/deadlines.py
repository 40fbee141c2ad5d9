"""Deadlines of backend calls: a hung attempt is cut once it runs far longer than the server's replies take.

With 3% of requests hanging, a run used to wait the full 120 s timeout for each hung call (90% of the views were
done after 7.7 s; the run took 259 s). Two rules bound that, without cutting a slow but healthy server:

- **adaptive attempt limit** (:class:`AttemptLimits`): once :data:`MIN_SAMPLES` attempts have succeeded, attempt
  ``k`` (0-based) of a request may take at most ``max(floor_s, FACTOR * p90) * 2**k`` seconds in all, where
  ``p90`` is the 90th percentile of the last :data:`WINDOW` successful attempts' durations. A hung attempt is
  cut and retried; a reply that is merely slow gets twice as long on each retry. Before there are enough samples
  there is no such limit (the socket timeout and the request deadline still apply); the limit of an attempt in
  progress is re-read every :data:`POLL_S` seconds, so a call that hung first is cut as soon as the others show
  what a reply takes. A slow server (p90 of 20 s) is never cut before 160 s.
- **request deadline**: all attempts of one request and the waits between them end within the request's
  deadline (``HttpBackend(request_deadline_s=...)``); the request then fails with a recorded error, which
  ``vqaudit run --retry-errors`` asks again.

Both are wall-clock bounds on the whole attempt (connect to the last body byte), unlike the per-read socket
timeout (``timeout_s``), which a server sending one byte a minute never trips.
"""

from __future__ import annotations

import asyncio
import bisect
import math
import weakref
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

MIN_SAMPLES = 16
"""Successful attempts needed before the limit adapts (fewer: the limit is ``timeout_s``)."""
WINDOW = 200
"""How many of the latest successful attempts the percentile is taken over."""
FACTOR = 8.0
"""The base limit is this many times the 90th-percentile duration of a successful attempt."""
POLL_S = 0.25
"""How often the limit of an attempt in progress is re-read, in seconds."""


class AttemptTimeout(Exception):
    """An attempt ran past its limit and was cancelled; ``limit_s`` is the limit it ran past, in seconds."""

    def __init__(self, limit_s: float) -> None:
        super().__init__(f"timeout after {limit_s:.3g} s")
        self.limit_s = limit_s


class AttemptLimits:
    """The adaptive attempt limit of one backend (see the module docstring); use from one event loop."""

    def __init__(self, floor_s: float) -> None:
        """Set the floor.

        Args:
            floor_s: the shortest base limit, in seconds, however fast the replies come.
        """
        self.floor_s = floor_s
        self._durations: deque[float] = deque()
        self._ordered: list[float] = []  # the same durations, sorted: the percentile is one index
        self._base: float | None = None

    def record(self, seconds: float) -> None:
        """Record the duration of one successful attempt, in seconds."""
        if len(self._durations) == WINDOW:
            oldest = self._durations.popleft()
            del self._ordered[bisect.bisect_left(self._ordered, oldest)]
        self._durations.append(seconds)
        bisect.insort(self._ordered, seconds)
        self._base = None

    def base_s(self) -> float:
        """The limit of a first attempt, in seconds: infinite until :data:`MIN_SAMPLES` successes."""
        if len(self._durations) < MIN_SAMPLES:
            return math.inf
        if self._base is None:
            ordered = self._ordered
            p90 = ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)]
            self._base = max(self.floor_s, FACTOR * p90)
        return self._base

    def limit_s(self, attempt: int) -> float:
        """The limit of attempt ``attempt`` (0-based) of a request, in seconds: the base doubled per retry."""
        return self.base_s() * 2.0 ** min(attempt, 60)


class _Attempt:
    """One attempt under watch: its task, start, limit function, and the precise timer of its last stretch."""

    __slots__ = ("task", "started", "limit_s", "fired", "handle")

    def __init__(self, task: asyncio.Task[Any], started: float, limit_s: Callable[[], float]) -> None:
        self.task, self.started, self.limit_s = task, started, limit_s
        self.fired: float | None = None
        self.handle: asyncio.TimerHandle | None = None

    def check(self, loop: asyncio.AbstractEventLoop) -> None:
        """Cut the attempt if its limit has passed; within the last :data:`POLL_S`, set a timer for the moment."""
        if self.fired is not None:
            return
        limit = self.limit_s()
        now = loop.time()
        remaining = self.started + limit - now
        if remaining <= 0:
            self.fired = limit
            self.task.cancel()
        elif remaining < POLL_S:
            if self.handle is not None:
                self.handle.cancel()
            self.handle = loop.call_at(now + remaining, self.check, loop)


class _Watch:
    """The attempts in progress on one event loop, re-checked together every :data:`POLL_S` by one timer.

    One timer per attempt (or a task and ``asyncio.wait`` per attempt, as before) cost a quarter of the client's
    CPU against an instant server (``benchmarks/bench_openai.py``); an attempt now costs a dict entry, and gets
    its own timer only in the last :data:`POLL_S` seconds before its limit, so it is cut on time.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.attempts: dict[int, _Attempt] = {}
        self.ticking = False

    def add(self, attempt: _Attempt) -> None:
        self.attempts[id(attempt)] = attempt
        if not self.ticking:
            self.ticking = True
            self.loop.call_later(POLL_S, self._tick)

    def remove(self, attempt: _Attempt) -> None:
        self.attempts.pop(id(attempt), None)
        if attempt.handle is not None:
            attempt.handle.cancel()

    def _tick(self) -> None:
        for attempt in list(self.attempts.values()):
            attempt.check(self.loop)
        if self.attempts:
            self.loop.call_later(POLL_S, self._tick)
        else:
            self.ticking = False


_WATCHES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Watch] = weakref.WeakKeyDictionary()


async def within(awaitable: Coroutine[Any, Any, T], limit_s: Callable[[], float]) -> T:
    """Await ``awaitable`` in this task; cancel it and raise once it has run longer than ``limit_s()`` seconds.

    ``limit_s`` is re-read every :data:`POLL_S` seconds (it may shrink as samples arrive, or as a request
    deadline nears), and the attempt is cut at the moment its limit passes (see :class:`_Watch`), the way
    ``asyncio.timeout`` cancels the current task. Cancelling the caller cancels the awaitable too.

    Raises:
        AttemptTimeout: the limit passed; the awaitable was cancelled (and has finished).
    """
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    if task is None or limit_s() <= 0:
        awaitable.close()
        raise AttemptTimeout(limit_s())
    watch = _WATCHES.get(loop)
    if watch is None:
        watch = _WATCHES[loop] = _Watch(loop)
    attempt = _Attempt(task, loop.time(), limit_s)
    attempt.check(loop)
    watch.add(attempt)
    try:
        return await awaitable
    except asyncio.CancelledError:
        if attempt.fired is not None and task.uncancel() == 0:
            raise AttemptTimeout(attempt.fired) from None
        raise
    finally:
        watch.remove(attempt)
