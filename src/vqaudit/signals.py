"""SIGTERM as an exception while a block runs, so cleanup code runs (issue 18).

A batch scheduler stops a job with SIGTERM; Python's default action ends the process at once, so ``finally``
blocks do not run and a benchmark build left its hidden ``.NAME.*.building`` folder behind (Ctrl-C, SIGINT,
already cleaned up). Inside :func:`sigterm_raises`, SIGTERM raises ``SystemExit(143)`` (128 + 15, the status
a shell reports for a process killed by SIGTERM) in the main thread instead.

The CLI handles SIGTERM like Ctrl-C for every command (:func:`sigterm_like_ctrl_c`: it raises
:class:`Terminated`, a ``SystemExit(143)``), and :func:`run_async` is ``asyncio.run`` with SIGTERM handled as
asyncio handles Ctrl-C: the main task is cancelled, so the model runs (``run``, ``eval``, ``perturb``, a judge)
store every reply received and release their folder lock before the process exits 143. A new-user trial found
``vqaudit run`` killed by SIGTERM at once (exit -15), losing the replies of its last ``FLUSH_S`` seconds.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")

SIGTERM_EXIT = 128 + signal.SIGTERM
"""The exit status of a process stopped by SIGTERM inside :func:`sigterm_raises` (143)."""


def _raise_exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(SIGTERM_EXIT)


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises ``SystemExit(143)`` in the main thread; the old handler is restored after.

    Outside the main thread (where Python cannot set handlers) the block runs unchanged.
    """
    with _sigterm_handler(_raise_exit):
        yield


@contextmanager
def _sigterm_handler(handler: Callable[[int, FrameType | None], None]) -> Iterator[None]:
    """``handler`` for SIGTERM within the block (main thread only; elsewhere unchanged), the old one restored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class Terminated(SystemExit):
    """SIGTERM stopped a command that handles it like Ctrl-C; exit status 143 (the CLI prints one line)."""

    def __init__(self) -> None:
        """A ``SystemExit(143)``."""
        super().__init__(SIGTERM_EXIT)


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated


@contextmanager
def sigterm_like_ctrl_c() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` in the main thread, as Ctrl-C raises KeyboardInterrupt.

    The old handler is restored after; outside the main thread the block runs unchanged. A nested
    :func:`sigterm_raises` or :func:`run_async` sets its own handler meanwhile.
    """
    with _sigterm_handler(_raise_terminated):
        yield


def run_async(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, with SIGTERM handled as ``asyncio.run`` handles Ctrl-C.

    The first SIGTERM cancels the main task, so its ``finally`` blocks run in the loop (the runner flushes the
    stored replies, the run folder's lock is released), then :class:`Terminated` is raised (exit status 143). A
    second SIGTERM before that raises :class:`Terminated` at once. Outside the main thread: plain ``asyncio.run``.

    Returns:
        What ``main`` returns.

    Raises:
        Terminated: SIGTERM arrived while ``main`` ran (unless ``main`` then raised another error, raised as is).
        BaseException: whatever ``main`` raises; ``KeyboardInterrupt`` on Ctrl-C, as ``asyncio.run``.
    """
    if threading.current_thread() is not threading.main_thread():
        return asyncio.run(main)
    task: asyncio.Task[T] | None = None
    terminated = False
    with asyncio.Runner() as runner:
        loop = runner.get_loop()

        async def tracked() -> T:
            nonlocal task
            task = asyncio.current_task()
            return await main

        def on_sigterm(signum: int, frame: FrameType | None) -> None:
            nonlocal terminated
            if terminated or task is None or task.done():
                raise Terminated
            terminated = True
            loop.call_soon_threadsafe(task.cancel)

        previous = signal.signal(signal.SIGTERM, on_sigterm)
        try:
            result = runner.run(tracked())
        except asyncio.CancelledError:
            if terminated:
                raise Terminated from None
            raise
        finally:
            signal.signal(signal.SIGTERM, previous)
    if terminated:  # ``main`` finished its work despite the cancellation: still stop as asked
        raise Terminated
    return result
