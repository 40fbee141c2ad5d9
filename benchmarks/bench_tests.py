"""Time the steps of ``make test`` (ruff, mypy, the suite on two cores) and the suite without the slow tests.

Run from the repository root: ``.venv/bin/python benchmarks/bench_tests.py [--skip-full] [-- PYTEST ARGS]``. It
runs each step once with this interpreter (``python -m ruff`` / ``mypy`` / ``pytest``), prints the wall time of
each and the total, and exits 1 if a step failed. No target: the figure depends on the machine and its load
(report the load average printed with it). ``--skip-full`` times only ``-m "not slow"``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time


def timed(label: str, args: list[str]) -> tuple[float, int]:
    """Run ``args``; print and return (wall seconds, exit code); on failure print the output's last 40 lines."""
    start = time.perf_counter()
    done = subprocess.run(args, check=False, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    print(f"{label:<34} {seconds:7.1f} s  exit {done.returncode}", flush=True)
    if done.returncode:
        print("\n".join((done.stdout + done.stderr).splitlines()[-40:]), flush=True)
    return seconds, done.returncode


def main() -> int:
    """Time every step; return 1 if any failed."""
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    py = sys.executable
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; cpus: {os.cpu_count()}")
    steps = [("ruff check src tests benchmarks", [py, "-m", "ruff", "check", "-q", "src", "tests", "benchmarks"]),
             ("mypy (strict, src)", [py, "-m", "mypy"])]
    if "--skip-full" not in argv:
        steps.append(("pytest -n 2 (make test)", [py, "-m", "pytest", "-n", "2", "-p", "no:cacheprovider", *extra]))
    steps.append(('pytest -n 2 -m "not slow"', [py, "-m", "pytest", "-n", "2", "-m", "not slow", "-p",
                                                "no:cacheprovider", *extra]))
    results = [timed(label, args) for label, args in steps]
    make_test = sum(s for (label, _), (s, _) in zip(steps, results, strict=True) if "not slow" not in label)
    print(f"{'make test steps, total':<34} {make_test:7.1f} s")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 1 if any(code for _, code in results) else 0


if __name__ == "__main__":
    sys.exit(main())
