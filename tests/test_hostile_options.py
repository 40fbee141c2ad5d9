"""Numeric options are bounded: an infinite timeout, 10^11 draws or 10^11 groups are refused with one line, exit 2,
before any folder is written (before, ``--timeout inf`` gave an OverflowError traceback and left a run folder)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def vqaudit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vqaudit", *args], capture_output=True, text=True, timeout=120, cwd=cwd
    )


@pytest.mark.parametrize(
    ("args", "option", "bound"),
    [
        (("run", "bench", "--model", "reference:gold", "--out", "run", "--timeout", "inf"), "--timeout", "86400"),
        (("run", "bench", "--model", "reference:gold", "--out", "run", "--timeout", "1e309"), "--timeout", "86400"),
        (("score", "run", "--draws", "100000000000"), "--draws", "1000000"),
        (("eval", "--out", "run", "--draws", "1000001"), "--draws", "1000000"),
        (("build", "charts", "--out", "run", "--groups", "99999999999"), "--groups", "1000000"),
        (("build", "scenes", "--out", "run", "--groups", "1000001"), "--groups", "1000000"),
        (("eval", "--out", "run", "--groups", "1000001"), "--groups", "1000000"),
    ],
)
def test_out_of_range_numbers_are_one_line_and_write_nothing(
    tmp_path: Path, args: tuple[str, ...], option: str, bound: str
) -> None:
    (tmp_path / "bench").mkdir()
    done = vqaudit(*args, cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and option in lines[0] and bound in lines[0], done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench"]  # no run, report or build folder
