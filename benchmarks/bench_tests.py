"""Time the steps of ``make test`` (ruff, mypy, the suite on two cores) and the suite without the slow tests.

Run from the repository root: ``.venv/bin/python benchmarks/bench_tests.py [--skip-full] [-- PYTEST ARGS]``. It
runs each step once with this interpreter (``python -m ruff`` / ``mypy`` / ``pytest``), prints the wall and CPU
time of each (the CPU of the step's processes, pytest-xdist workers included) and the totals, and exits 1 if a
step failed. No target: the figure depends on the machine and its load (report the load average printed with
it). ``--skip-full`` times only ``-m "not slow"``.
"""

from __future__ import annotations

import subprocess
import sys

from _timing import Timing, load_line, timed


def step(label: str, args: list[str]) -> tuple[Timing, int]:
    """Run ``args``; print and return (its timing, exit code); on failure print the output's last 40 lines.

    Its CPU time is that of the child process and of everything it waited for (pytest-xdist workers included).
    """
    with timed(label) as took:
        done = subprocess.run(args, check=False, capture_output=True, text=True)
    print(took.line(f"exit {done.returncode}"), flush=True)
    if done.returncode:
        print("\n".join((done.stdout + done.stderr).splitlines()[-40:]), flush=True)
    return took, done.returncode


def main() -> int:
    """Time every step; return 1 if any failed."""
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    py = sys.executable
    print(f"before: {load_line()}")
    steps = [
        ("ruff check src tests benchmarks", [py, "-m", "ruff", "check", "-q", "src", "tests", "benchmarks"]),
        ("mypy (strict, src)", [py, "-m", "mypy"]),
    ]
    if "--skip-full" not in argv:
        steps.append(("pytest -n 2 (make test)", [py, "-m", "pytest", "-n", "2", "-p", "no:cacheprovider", *extra]))
    steps.append(
        (
            'pytest -n 2 -m "not slow"',
            [py, "-m", "pytest", "-n", "2", "-m", "not slow", "-p", "no:cacheprovider", *extra],
        )
    )
    results = [step(label, args) for label, args in steps]
    make_test = [t for (label, _), (t, _) in zip(steps, results, strict=True) if "not slow" not in label]
    print(
        f"make test steps, total: wall {sum(t.wall for t in make_test):.1f} s, "
        f"CPU {sum(t.cpu for t in make_test):.1f} s"
    )
    print(f"after: {load_line()}")
    return 1 if any(code for _, code in results) else 0


if __name__ == "__main__":
    sys.exit(main())
