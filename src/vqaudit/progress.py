"""Progress of the long steps on stderr: a live bar on a terminal, plain lines in a log, nothing when quiet.

Every long step (build, verify, run, score and its bootstrap, report, the audits, import-predictions) opens one
:func:`step` with its name and the number of items it will do, and reports how many are done. How that is shown
is decided once per process (:func:`mode`):

- ``bar``: stderr is a terminal: a live rich bar (step, bar, done/total, elapsed, time left);
- ``plain``: stderr is a file or a pipe (nohup, Slurm, CI logs): one line, at most every :data:`EVERY_S`
  seconds, and at each quarter (25, 50, 75, 100 %): ``progress: STEP: DONE/TOTAL (P%), R/s, elapsed E, left L``;
- ``quiet``: ``vqaudit --quiet``: nothing.

This module imports nothing of vqaudit (so any stage may report without knowing of the CLI), and rich only when a
bar is shown.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Literal, TextIO, TypeVar

Mode = Literal["bar", "plain", "quiet"]

EVERY_S = 10.0
"""Plain mode: the least time between two lines that are not quarter lines, in seconds."""

_mode: Mode | None = None
T = TypeVar("T")


def set_quiet(quiet: bool) -> None:
    """Silence every progress report of this process (``vqaudit --quiet``); call before the first step."""
    global _mode
    _mode = "quiet" if quiet else None


def mode() -> Mode:
    """How progress is shown in this process, decided at the first call: quiet, else bar on a terminal, else plain."""
    global _mode
    if _mode is None:
        _mode = "bar" if sys.stderr.isatty() else "plain"
    return _mode


class Reporter:
    """What a step calls as it goes; this base class shows nothing (quiet mode, or a step of no items)."""

    def __init__(self, name: str, total: int) -> None:
        self.name = name
        self.total = max(0, total)
        self.done = 0

    def advance(self, n: int = 1) -> None:
        """``n`` more items are done."""
        self.update(self.done + n)

    def update(self, done: int) -> None:
        """``done`` items of ``total`` are done (a count, not an increment)."""
        self.done = done
        self._show()

    def close(self) -> None:
        """The step ended (done or not): stop showing it."""

    def _show(self) -> None:
        pass


def duration(seconds: float) -> str:
    """``seconds`` as ``M:SS``, or ``H:MM:SS`` from one hour (``75.4`` -> ``"1:15"``, ``3725`` -> ``"1:02:05"``)."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class PlainReporter(Reporter):
    """Plain lines for a log: at most one every ``every_s`` seconds of ``clock``, and one at each quarter.

    A line is written when an update crosses into a new quarter of ``total`` (25, 50, 75 and 100 %), or when at
    least ``every_s`` seconds passed since the last line (or the start). The rate is items per second since the
    start; the time left is the items left at that rate (``?`` before the first item).

    Args:
        name: the step, as the line names it.
        total: items the step will do (a step of 0 items writes nothing).
        stream: where lines go (default: ``sys.stderr`` at the time of each line).
        clock: seconds, monotonic (injectable so the rules are tested without sleeping).
        every_s: the least time between two lines that are not quarter lines.
    """

    def __init__(
        self,
        name: str,
        total: int,
        *,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        every_s: float = EVERY_S,
    ) -> None:
        super().__init__(name, total)
        self._stream = stream
        self._clock = clock
        self._every_s = every_s
        self._start = clock()
        self._last_line = self._start
        self._quarter = 0

    def _show(self) -> None:
        if self.total == 0:
            return
        now = self._clock()
        quarter = min(4, self.done * 4 // self.total)
        if quarter > self._quarter or now - self._last_line >= self._every_s:
            self._quarter = max(self._quarter, quarter)
            self._last_line = now
            self._write(self.line(now))

    def line(self, now: float) -> str:
        """The line for the state at time ``now`` of the clock (without a newline)."""
        elapsed = now - self._start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = duration((self.total - self.done) / rate) if rate > 0 else "?"
        pct = 100 * self.done // self.total
        rate_text = f"{rate:.0f}/s" if rate >= 100 else f"{rate:.1f}/s" if rate >= 0.1 else f"{rate * 60:.1f}/min"
        return (
            f"progress: {self.name}: {self.done}/{self.total} ({pct}%), {rate_text}, elapsed {duration(elapsed)}, "
            f"left {left}"
        )

    def _write(self, line: str) -> None:
        stream = self._stream or sys.stderr
        stream.write(line + "\n")
        stream.flush()


class BarReporter(Reporter):
    """A live rich bar on stderr: step, bar, done/total, elapsed, time left; it stays on screen after ``close``.

    Steps inside steps (score, then its bootstrap) share one live display (rich allows one at a time): each
    step is one row of it, and the display stops when the outermost step closes.
    """

    _live: Any = None
    _open = 0

    def __init__(self, name: str, total: int) -> None:
        super().__init__(name, total)
        if BarReporter._live is None:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            BarReporter._live = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
            )
            BarReporter._live.start()
        BarReporter._open += 1
        self._bar = BarReporter._live
        self._task = self._bar.add_task(name, total=self.total)
        self._closed = False

    def _show(self) -> None:
        self._bar.update(self._task, completed=self.done)

    def close(self) -> None:
        """Stop this step's row; the live display stops with the outermost step."""
        if self._closed:
            return
        self._closed = True
        BarReporter._open -= 1
        if BarReporter._open == 0:
            self._bar.stop()
            BarReporter._live = None


def reporter(name: str, total: int) -> Reporter:
    """A reporter of step ``name`` of ``total`` items in this process's :func:`mode` (call ``close`` at the end)."""
    how = mode()
    if how == "quiet" or total <= 0:
        return Reporter(name, total)
    return BarReporter(name, total) if how == "bar" else PlainReporter(name, total)


@contextmanager
def step(name: str, total: int) -> Iterator[Reporter]:
    """Report step ``name`` of ``total`` items while the ``with`` block runs (see the module docstring).

    Example: ``with step("scoring charts", len(views)) as bar: ... bar.advance()``.
    """
    shown = reporter(name, total)
    try:
        yield shown
    finally:
        shown.close()


def track(items: Iterable[T], name: str, total: int) -> Iterator[T]:
    """Yield ``items`` (``total`` of them), reporting each one as done once the loop asks for the next."""
    with step(name, total) as shown:
        for item in items:
            yield item
            shown.advance()
