"""Start-up cost of the command line: CPU time of ``vqaudit --help`` against ``python -c "import typer, rich"``.

Every command pays the start-up before it does anything, and ``--help`` is nothing else. The baseline is the
least a typer + rich command line can cost (the interpreter, typer and rich imported), measured in the same run,
interleaved with the command, so the machine's load affects both alike. Each is started ``--reps`` times (default
7) as a fresh process; the CPU time of a process is its user + system time (``getrusage`` of the waited-for
child). Prints the min and median of each and the ratio of the medians (and of the mins); the target is a ratio
of at most 2.5 (median).

It also lists the heavy modules ``vqaudit --help`` imports that it should not need (pydantic models of the
backends, the harness importers, ``importlib.metadata``, asyncio, numpy, typer's rich help panels): none should
be listed (``tests/test_startup.py`` checks the same without timing anything).

Measured on the shared 2-core machine (load 4-9), 5-7 runs each: before (commit 422683e) median 785 ms
against 121 ms, 6.5x (mins 7.2x); after, median 272 ms against 124 ms, 2.2x (mins 216 / 105 ms, 2.1x). Once the
imports were lazy, typer's rich help panels were the largest part left: ``import typer.rich_utils`` alone is
0.25-0.32 CPU-s against 0.09-0.15 for ``import typer, rich`` (2.2-2.5x by itself), so the help is click's plain
layout (``vqaudit.cli.help_format.PlainHelpGroup``).

Run from the repository root: ``.venv/bin/python benchmarks/bench_startup.py [--reps N]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from _timing import Timing, judge, load_line, timed

TARGET = 2.5
"""``vqaudit --help`` at most this many times the CPU time of importing typer and rich."""

HEAVY = (
    "vqaudit.backends.options",
    "vqaudit.backends.base",
    "vqaudit.harness.common",
    "importlib.metadata",
    "numpy",
    "pydantic",
    "vqaudit.schema",
    "asyncio",
    "typer.rich_utils",
)
"""Modules ``--help`` has no use for (checked after it ran)."""

ROOT = Path(__file__).resolve().parents[1]


def _env() -> dict[str, str]:
    src = str(ROOT / "src")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}


def _once(label: str, args: list[str]) -> Timing:
    with timed(label, descendants=False) as took:
        subprocess.run(args, check=True, capture_output=True, env=_env())
    return took


def _loaded_by_help() -> list[str]:
    code = (
        "import sys; sys.argv = ['vqaudit', '--help']\nfrom vqaudit.cli import app\n"
        "try:\n    app()\nexcept SystemExit:\n    pass\n"
        f"print('HEAVY:', *(m for m in {HEAVY!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=_env())
    return done.stdout.splitlines()[-1].split()[1:]


def main() -> int:
    """Time both commands ``--reps`` times, interleaved; print the figures; return 1 if the target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7)
    reps = parser.parse_args().reps
    print(f"before: {load_line()}")
    py = sys.executable
    base: list[float] = []
    cli: list[float] = []
    for _ in range(reps):
        base.append(_once("import typer, rich", [py, "-c", "import typer, rich"]).cpu)
        cli.append(_once("vqaudit --help", [py, "-m", "vqaudit", "--help"]).cpu)
    for label, values in (("python -c 'import typer, rich'", base), ("vqaudit --help", cli)):
        print(
            f"{label}: {reps} runs, CPU min {min(values) * 1e3:.0f} ms, median {statistics.median(values) * 1e3:.0f} ms"
        )
    print(f"ratio of the mins: {min(cli) / min(base):.2f}x")
    heavy = _loaded_by_help()
    print(f"heavy modules imported by --help: {', '.join(heavy) if heavy else 'none'}")
    print(f"after: {load_line()}")
    ok = judge(
        "vqaudit --help / import typer, rich (median CPU)",
        statistics.median(cli) / statistics.median(base),
        TARGET,
        unit="x",
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
