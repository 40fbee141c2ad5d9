"""SIGTERM as an exception while a block runs, so cleanup code runs (issue 18).

A batch scheduler stops a job with SIGTERM; Python's default action ends the process at once, so ``finally``
blocks do not run and a benchmark build left its hidden ``.NAME.*.building`` folder behind (Ctrl-C, SIGINT,
already cleaned up). Inside :func:`sigterm_raises`, SIGTERM raises ``SystemExit(143)`` (128 + 15, the status
a shell reports for a process killed by SIGTERM) in the main thread instead.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SIGTERM_EXIT = 128 + signal.SIGTERM
"""The exit status of a process stopped by SIGTERM inside :func:`sigterm_raises` (143)."""


def _raise_exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(SIGTERM_EXIT)


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises ``SystemExit(143)`` in the main thread; the old handler is restored after.

    Outside the main thread (where Python cannot set handlers) the block runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
