"""SIGTERM as an exception while a block runs, so cleanup code runs (a batch scheduler's stop cleans up like Ctrl-C).

A batch scheduler stops a job with SIGTERM; Python's default action ends the process at once, so ``finally``
blocks do not run and a benchmark build left its hidden ``.NAME.*.building`` folder behind (Ctrl-C, SIGINT,
already cleaned up). Inside :func:`sigterm_raises`, SIGTERM raises ``SystemExit(143)`` (128 + 15, the status
a shell reports for a process killed by SIGTERM) in the main thread instead.

The CLI handles SIGTERM like Ctrl-C for every command (:func:`sigterm_like_ctrl_c`: it raises
:class:`Terminated`, a ``SystemExit(143)``), and :func:`run_async` is ``asyncio.run`` with SIGTERM handled as
asyncio handles Ctrl-C: the main task is cancelled, so the model runs (``run``, ``eval``, ``perturb``, a judge)
store every reply received and release their folder lock before the process exits 143. A new-user trial found
``vqaudit run`` killed by SIGTERM at once (exit -15), losing the replies of its last ``FLUSH_S`` seconds.

A SIGTERM that arrives once a command's output is complete loses nothing, so it does not make the command look
failed (new-user trial: an audit that had printed "report written" exited 143). A command says its output is
complete with :func:`output_complete`; a SIGTERM from then on raises :class:`Completed` (exit status 0, with a
line saying the output was complete). A SIGTERM held back while a file set was renamed
(:func:`vqaudit.files.atomic_write_set`) and raised once the set was complete is a :class:`TerminatedAfterWrite`,
so the command can tell it from a stop that came before its output was whole. Once the CLI's outcome is decided,
:func:`exit_on_sigterm` makes a SIGTERM during the interpreter's shutdown (0.4 s after a 5,000-row audit) end the
process at once with that outcome, not as killed.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
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


class TerminatedAfterWrite(Terminated):
    """A SIGTERM held back while a file set was renamed, raised once the whole set was in place (exit status 143).

    Raised by :func:`vqaudit.files.atomic_write_set` in place of the :class:`Terminated` the SIGTERM raised: the
    new files are complete, so a command whose output that set is may stop cleanly (:class:`Completed`).
    """


class Completed(SystemExit):
    """SIGTERM stopped a command after its output was complete: exit status 0; the CLI prints :attr:`note`."""

    def __init__(self, note: str) -> None:
        """A ``SystemExit(0)`` carrying ``note``, one line saying what was complete (e.g. which folder)."""
        super().__init__(0)
        self.note = note


_COMPLETE: list[str] = []
"""The note of :func:`output_complete` (empty before): :func:`_raise_terminated` raises :class:`Completed` then."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    if _COMPLETE:
        raise Completed(_COMPLETE[0])
    raise Terminated


_ON_WRITE: list[str] = []
"""The note of :func:`completes_on_write` (empty outside it): :func:`output_written` passes it to
:func:`output_complete`."""


@contextmanager
def completes_on_write(note: str) -> Iterator[None]:
    """Within the block, the command's output is complete once a file set is whole (:func:`output_written`).

    ``vqaudit.files.atomic_write_set`` calls :func:`output_written` right after its last rename, while SIGINT
    and SIGTERM are still held back, so no SIGTERM can fall between the set being whole and the command saying
    so (a re-trial saw 3 of 60 multiple-choice audits stopped in that gap exit 143 with complete output).
    """
    _ON_WRITE[:] = [note]
    try:
        yield
    finally:
        _ON_WRITE.clear()


def output_written() -> None:
    """A file set was just completed: under :func:`completes_on_write`, the output is complete (else nothing)."""
    if _ON_WRITE:
        output_complete(_ON_WRITE[0])


def output_complete(note: str) -> None:
    """Say that the running command's output is complete; a SIGTERM from now on raises :class:`Completed` (exit 0).

    Applies under :func:`sigterm_like_ctrl_c` (the CLI), until that block ends; elsewhere (another handler in
    place, or not the main thread) nothing changes. It also holds for a SIGTERM held back while a file set was
    renamed and raised once the set was whole (:func:`completes_on_write`).

    Args:
        note: the line the CLI prints on such a stop, saying what was complete and where.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    _COMPLETE[:] = [note]


_DECIDED: list[int] = []
"""The exit status :func:`exit_on_sigterm` was given (empty before): :func:`_ignore_sigterm_at_shutdown` reads it."""


def _flush_std() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def exit_on_sigterm(code: int) -> None:
    """From now on a SIGTERM ends the process with exit status ``code``: the CLI's outcome is decided.

    Until the ``atexit`` handlers have run a SIGTERM ends the process at once (``os._exit(code)``, stdout and
    stderr flushed first). The interpreter's last step, freeing every object (0.4 s after a 5,000-row audit), runs
    no Python handler, so from there on SIGTERM is ignored (:func:`_ignore_sigterm_at_shutdown`) and the process
    ends with ``code`` by itself. Before, a SIGTERM in either step was reported as a kill (exit -15, 143 from a
    shell) of a command that had finished. Main thread only; elsewhere nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        return

    def _exit(signum: int, frame: FrameType | None) -> None:
        _flush_std()
        os._exit(code)

    _DECIDED[:] = [code]
    signal.signal(signal.SIGTERM, _exit)


def _ignore_sigterm_at_shutdown() -> None:
    """``atexit`` handler: once :func:`exit_on_sigterm` has run, ignore SIGTERM while the interpreter frees memory.

    Registered when this module is imported, so it runs after the ``atexit`` handlers registered later (they run
    in reverse order): those (joining worker processes, say) stay stoppable by SIGTERM; what follows only frees
    objects. Output is flushed first, so nothing left to write can block the exit.
    """
    if _DECIDED and threading.current_thread() is threading.main_thread():
        _flush_std()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


atexit.register(_ignore_sigterm_at_shutdown)


@contextmanager
def sigterm_like_ctrl_c() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` in the main thread, as Ctrl-C raises KeyboardInterrupt.

    The old handler is restored after; outside the main thread the block runs unchanged. A nested
    :func:`sigterm_raises` or :func:`run_async` sets its own handler meanwhile.
    """
    _COMPLETE.clear()  # each command starts with its output not yet complete
    try:
        with _sigterm_handler(_raise_terminated):
            yield
    finally:
        _COMPLETE.clear()


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
    import asyncio  # here, not at the top: every command imports this module, few run an event loop

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
