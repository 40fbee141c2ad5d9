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
  deadline (``OpenAIBackend(request_deadline_s=...)``); the request then fails with a recorded error, which
  ``vqaudit run --retry-errors`` asks again.

Both are wall-clock bounds on the whole attempt (connect to the last body byte), unlike the per-read socket
timeout (``timeout_s``), which a server sending one byte a minute never trips.
"""

from __future__ import annotations

import asyncio
import math
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
        self._durations: deque[float] = deque(maxlen=WINDOW)
        self._base: float | None = None

    def record(self, seconds: float) -> None:
        """Record the duration of one successful attempt, in seconds."""
        self._durations.append(seconds)
        self._base = None

    def base_s(self) -> float:
        """The limit of a first attempt, in seconds: infinite until :data:`MIN_SAMPLES` successes."""
        if len(self._durations) < MIN_SAMPLES:
            return math.inf
        if self._base is None:
            ordered = sorted(self._durations)
            p90 = ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)]
            self._base = max(self.floor_s, FACTOR * p90)
        return self._base

    def limit_s(self, attempt: int) -> float:
        """The limit of attempt ``attempt`` (0-based) of a request, in seconds: the base doubled per retry."""
        return self.base_s() * 2.0 ** min(attempt, 60)


async def within(awaitable: Coroutine[Any, Any, T], limit_s: Callable[[], float]) -> T:
    """Await ``awaitable`` in this task; cancel it and raise once it has run longer than ``limit_s()`` seconds.

    ``limit_s`` is re-read every :data:`POLL_S` seconds (it may shrink as samples arrive, or as a request
    deadline nears). The watch is one timer on the event loop that cancels the current task (the way
    ``asyncio.timeout`` does), not a second task: a new task and ``asyncio.wait`` per attempt cost a fifth of the
    client's CPU against an instant server (``benchmarks/bench_openai.py``). Cancelling the caller cancels the
    awaitable too.

    Raises:
        AttemptTimeout: the limit passed; the awaitable was cancelled (and has finished).
    """
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    started = loop.time()
    if task is None or limit_s() <= 0:
        awaitable.close()
        raise AttemptTimeout(limit_s())
    fired: list[float] = []
    handle: asyncio.TimerHandle | None = None

    def check() -> None:
        nonlocal handle
        limit = limit_s()
        now = loop.time()
        remaining = started + limit - now
        if remaining <= 0:
            fired.append(limit)
            task.cancel()
        else:
            handle = loop.call_at(now + min(remaining, POLL_S), check)

    check()
    try:
        return await awaitable
    except asyncio.CancelledError:
        if fired and task.uncancel() == 0:
            raise AttemptTimeout(fired[0]) from None
        raise
    finally:
        if handle is not None:
            handle.cancel()
