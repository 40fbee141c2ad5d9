"""Local pool workers die with their parent and leave SIGTERM/SIGINT to it (new-user trial; executors.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")


def _children(pid: int) -> list[int]:
    """Pids whose parent is ``pid`` (field 4 of /proc/PID/stat, after the parenthesised command name)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _status(pid: int) -> dict[str, str] | None:
    """/proc/PID/status as a dict; None once the process is gone or a zombie (dead, waiting to be reaped)."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return None
    status = dict(line.split(":\t", 1) for line in lines if ":\t" in line)
    return None if status.get("State", "").startswith(("Z", "X")) else status


def _has(mask: str, sig: int) -> bool:
    """Whether signal ``sig`` is in a /proc signal mask (hex, bit sig - 1; proc(5))."""
    return bool(int(mask, 16) >> (sig - 1) & 1)


def test_build_workers_die_with_a_sigkilled_parent(tmp_path: Path) -> None:
    # The trial: `vqaudit build charts --workers 2`, SIGKILLed, left both workers for good (parent pid 1) and they
    # ignored SIGTERM (a forked worker kept the parent's Python handler: SigCgt had SIGTERM).
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vqaudit",
            "build",
            "charts",
            "--groups",
            "2000",
            "--workers",
            "2",
            "--out",
            str(tmp_path / "bench"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while len(workers) < 2:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the build started no 2 pool workers"
            workers = _children(proc.pid)
            time.sleep(0.01)
        deadline = time.monotonic() + 10
        statuses = [_status(pid) for pid in workers]
        while not all(s is not None and _has(s["SigIgn"], signal.SIGINT) for s in statuses):  # initializer ran
            assert time.monotonic() < deadline, f"a worker does not ignore SIGINT: {statuses}"
            time.sleep(0.01)
            statuses = [_status(pid) for pid in workers]
        for status in statuses:
            assert status is not None
            assert not _has(status["SigCgt"], signal.SIGTERM)  # default action: a SIGTERM ends the worker
            assert not _has(status["SigIgn"], signal.SIGTERM)
        proc.kill()
        assert proc.wait(10) == -signal.SIGKILL
        deadline = time.monotonic() + 5
        while any(_status(pid) is not None for pid in workers):
            assert time.monotonic() < deadline, [(pid, _status(pid)) for pid in workers]
            time.sleep(0.01)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        for pid in workers:  # never leave them behind, whatever failed
            if _status(pid) is not None:
                os.kill(pid, signal.SIGKILL)
