"""One way for every benchmark script to time a step and report it: wall, CPU (self and children), load average.

Wall time on the shared 2-core machine moves with the other sessions' load, so every script prints CPU time
beside it and judges its target on CPU time (:func:`judge`); where a reference exists (a plain implementation,
a peer's code) it is timed in the same run and the ratio printed (:func:`ratio`).

- ``cpu_self``: user + system seconds of this process, all its threads (``time.process_time``, ns resolution);
- ``cpu_children``: user + system seconds of child processes: those that ended and were waited for
  (``getrusage(RUSAGE_CHILDREN)``, us resolution, which includes their own waited-for descendants), plus, on
  Linux, every descendant still running (``/proc/PID/stat`` utime + stime + cutime + cstime, in clock ticks of
  10 ms), so pool workers, servers, browsers and Ray workers that outlive the step are counted too. A child
  reaped between the two readings of one snapshot can be missed or counted twice;
- ``load``: the 1, 5 and 15 minute load averages at the end of the step.

Usage::

    with timed("render", count=20, unit="frame") as t:
        for scene in scenes:
            render(scene)
    print(t.line())          # render: 20 frames, wall 1.24 s, CPU 1.20 s (self 1.20 + children 0.00) ...
    judge("frames per CPU second", 20 / t.cpu, 10.0, higher=True)
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _live_descendants_cpu() -> float:
    """CPU seconds of this process's running descendants (Linux ``/proc``; 0.0 elsewhere)."""
    me = os.getpid()
    try:
        names = os.listdir("/proc")
    except OSError:
        return 0.0
    children: dict[int, list[int]] = {}
    ticks: dict[int, int] = {}
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # fields[0] is field 3 (state) of proc(5)
        if len(fields) < 15:
            continue
        pid = int(name)
        children.setdefault(int(fields[1]), []).append(pid)
        ticks[pid] = sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
    total, todo = 0, list(children.get(me, []))
    while todo:
        pid = todo.pop()
        total += ticks.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total / _TICK


def _children_cpu(descendants: bool) -> float:
    """CPU seconds of the waited-for children (and, with ``descendants``, of the running ones)."""
    live = _live_descendants_cpu() if descendants else 0.0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime + live


def _seconds(x: float) -> str:
    """A duration with a unit that keeps 3 significant figures: ``1.23 s``, ``45.6 ms``, ``789 us``."""
    if x >= 1.0:
        return f"{x:.2f} s" if x < 100 else f"{x:.0f} s"
    if x >= 1e-3:
        return f"{x * 1e3:.3g} ms"
    return f"{x * 1e6:.3g} us"


def _plural(unit: str) -> str:
    return unit[:-1] + "ies" if unit.endswith("y") and unit[-2:-1] not in "aeiou" else unit + "s"


@dataclass
class Timing:
    """One timed step: ``count`` units of work (frames, views, requests) in ``wall`` / ``cpu_*`` seconds."""

    label: str
    count: int = 1
    unit: str = ""
    wall: float = 0.0
    cpu_self: float = 0.0
    cpu_children: float = 0.0
    load: tuple[float, float, float] = field(default=(0.0, 0.0, 0.0))

    @property
    def cpu(self) -> float:
        """CPU seconds of this process and its children."""
        return self.cpu_self + self.cpu_children

    def per(self, seconds: float) -> float:
        """``seconds`` per unit of work."""
        return seconds / max(self.count, 1)

    def line(self, note: str = "") -> str:
        """The one report line: totals, per unit (when ``unit``), CPU/wall, load average, then ``note``."""
        what = f"{self.count:,} {_plural(self.unit) if self.count != 1 else self.unit}, " if self.unit else ""
        text = (
            f"{self.label}: {what}wall {_seconds(self.wall)}, CPU {_seconds(self.cpu)} "
            f"(self {_seconds(self.cpu_self)} + children {_seconds(self.cpu_children)})"
        )
        if self.unit:
            text += f"; per {self.unit} {_seconds(self.per(self.cpu))} CPU, {_seconds(self.per(self.wall))} wall"
        text += f"; CPU/wall {self.cpu / max(self.wall, 1e-9):.2f}; load {' '.join(f'{x:.2f}' for x in self.load)}"
        return text + (f"; {note}" if note else "")


@contextmanager
def timed(label: str, count: int = 1, unit: str = "", *, descendants: bool = True) -> Iterator[Timing]:
    """Time the ``with`` block; the yielded :class:`Timing` is filled in when the block ends (``count`` may be set
    inside it). ``descendants=False`` skips the ``/proc`` scan (for steps that start no process and are repeated
    many times)."""
    timing = Timing(label, count, unit)
    c0 = _children_cpu(descendants)
    s0, w0 = time.process_time(), time.perf_counter()
    yield timing
    w1, s1 = time.perf_counter(), time.process_time()
    c1 = _children_cpu(descendants)
    timing.wall, timing.cpu_self, timing.cpu_children = w1 - w0, s1 - s0, max(c1 - c0, 0.0)
    timing.load = os.getloadavg()


def measure(label: str, fn: Callable[[], object]) -> Timing:
    """Time one call of ``fn`` in this process only (two clock reads each side, no children, no load average):
    for short measurements repeated many times."""
    s0, w0 = time.process_time(), time.perf_counter()
    fn()
    w1, s1 = time.perf_counter(), time.process_time()
    return Timing(label, wall=w1 - w0, cpu_self=s1 - s0)


def ratio(timing: Timing, baseline: Timing) -> str:
    """``timing`` against a ``baseline`` measured in the same run, per unit of work: CPU ratio and wall ratio."""
    cpu = timing.per(timing.cpu) / max(baseline.per(baseline.cpu), 1e-12)
    wall = timing.per(timing.wall) / max(baseline.per(baseline.wall), 1e-12)
    return f"{timing.label} / {baseline.label}: {cpu:.2f}x the CPU time (wall {wall:.2f}x)"


def judge(what: str, value: float, target: float, *, higher: bool = False, unit: str = "") -> bool:
    """Print and return whether ``value`` (a CPU-time figure) meets ``target`` (``higher``: at least, else at most)."""
    ok = value >= target if higher else value <= target
    bound = "at least" if higher else "at most"
    shown = f"{value:.3f}" if abs(value) < 1 else f"{value:.2f}" if abs(value) < 100 else f"{value:.0f}"
    print(
        f"target (CPU time): {what} {bound} {target:g}{unit}: measured {shown}{unit}: "
        + ("OK" if ok else "TARGET MISSED")
    )
    return ok


def load_line() -> str:
    """The load average now, for scripts that print it before and after their steps."""
    return f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs"
