"""benchmarks/_timing.py: the CPU time every benchmark script reports and judges its targets on.

The CPU figures are checked with processes that burn a known amount of their own CPU time (each loops until its
own ``time.process_time()`` passes the amount), so the bounds hold whatever the machine's load: they are lower
bounds on CPU that was certainly spent, not speed assertions.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "_timing.py"
spec = importlib.util.spec_from_file_location("bench_timing", PATH)
assert spec is not None and spec.loader is not None
timing = importlib.util.module_from_spec(spec)
sys.modules["bench_timing"] = timing
spec.loader.exec_module(timing)

BURN = "import sys, time\nwhile time.process_time() < {s}:\n    pass\nprint('burnt', flush=True)\n{after}"


def _burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_cpu_of_this_process_is_counted_as_self_not_children() -> None:
    with timing.timed("burn", descendants=False) as t:
        _burn(0.15)
    assert t.cpu_self >= 0.15
    assert t.cpu_children == 0.0
    assert t.wall >= 0.9 * t.cpu_self  # one busy thread cannot use more CPU than wall time (clock granularity aside)


def test_a_child_that_ended_and_was_waited_for_is_counted() -> None:
    with timing.timed("child") as t:
        subprocess.run([sys.executable, "-c", BURN.format(s=0.3, after="")], check=True, capture_output=True)
    assert t.cpu_children >= 0.29  # getrusage(RUSAGE_CHILDREN): us resolution
    assert t.cpu_self < t.cpu_children


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="running descendants are read from /proc")
def test_a_child_still_running_at_the_end_is_counted_from_proc() -> None:
    code = BURN.format(s=0.3, after="time.sleep(30)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        with timing.timed("live child") as t:
            assert proc.stdout is not None and proc.stdout.readline() == "burnt\n"
        assert proc.poll() is None  # still running: not in getrusage(RUSAGE_CHILDREN)
        assert t.cpu_children >= 0.28  # /proc/PID/stat ticks (10 ms)
        with timing.timed("not a descendant", descendants=False) as untracked:
            pass
        assert untracked.cpu_children == 0.0
    finally:
        proc.kill()
        proc.wait()


def test_the_report_line_by_hand() -> None:
    t = timing.Timing("render", 4, "reply", wall=2.0, cpu_self=1.0, cpu_children=0.5, load=(1.0, 2.5, 3.25))
    assert t.cpu == 1.5
    assert t.line("note") == (
        "render: 4 replies, wall 2.00 s, CPU 1.50 s (self 1.00 s + children 500 ms); "
        "per reply 375 ms CPU, 500 ms wall; CPU/wall 0.75; load 1.00 2.50 3.25; note"
    )
    one = timing.Timing("x", 1, "frame", wall=0.0012, cpu_self=0.000_25)
    assert one.line() == (
        "x: 1 frame, wall 1.2 ms, CPU 250 us (self 250 us + children 0 us); per frame 250 us CPU, "
        "1.2 ms wall; CPU/wall 0.21; load 0.00 0.00 0.00"
    )


def test_ratio_is_per_unit_and_judge_compares_on_the_given_side(capsys: pytest.CaptureFixture[str]) -> None:
    ours = timing.Timing("ours", 10, "frame", wall=1.0, cpu_self=0.8)
    base = timing.Timing("base", 5, "frame", wall=2.0, cpu_self=2.0)
    # per frame: ours 0.08 s CPU, 0.1 s wall; base 0.4 s CPU, 0.4 s wall
    assert timing.ratio(ours, base) == "ours / base: 0.20x the CPU time (wall 0.25x)"
    assert timing.judge("fps", 16.1, 10.0, higher=True)
    assert not timing.judge("fps", 9.9, 10.0, higher=True)
    assert timing.judge("seconds", 0.9, 5.0, unit=" s")
    assert not timing.judge("seconds", 5.1, 5.0, unit=" s")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "target (CPU time): fps at least 10: measured 16.10: OK"
    assert out[1] == "target (CPU time): fps at least 10: measured 9.90: TARGET MISSED"
    assert out[2] == "target (CPU time): seconds at most 5 s: measured 0.900 s: OK"
