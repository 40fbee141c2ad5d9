"""Shared fixtures: one small chart benchmark, built once per test session (once for all xdist workers).

Marks: ``slow`` (registered in pyproject.toml) is on every test that takes seconds on its own (measured with
``--durations``) and, by :func:`pytest_collection_modifyitems`, on every test that uses a fixture in
``SLOW_FIXTURES`` (benchmarks built once per session or module, each taking seconds), so ``-m "not slow"`` never
builds them.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from vqaudit.suites.charts.build import build_charts

CHART_GROUPS = 24
CHART_SEED = 11
SLOW_FIXTURES = frozenset({"chart_bench", "program_bench", "evaluated", "built", "bundled"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _sigterm_handler_restored() -> Iterator[None]:
    """Put back the SIGTERM handler a test found: ``vqaudit.cli.main`` run in-process leaves one that ends the
    process with the command's status (``signals.exit_on_sigterm``), meant for a process about to exit."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, before)


def shared_build(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]) -> Path:
    """``build(DIR/bench)`` once per session; under pytest-xdist once for all workers, behind a file lock.

    The workers of one session share the parent of their base temporary folders (``pytest-N/``), so the first
    worker to get there builds and the others wait and reuse it. Tests must treat the folder as read-only (copy
    it to change it), as they already must for a session fixture.
    """
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        out = tmp_path_factory.mktemp(name) / "bench"
        build(out)
        return out
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp().parent / f"shared-{name}"
    out = root / "bench"
    with FileLock(f"{root}.lock"):
        if not (root / "complete").is_file():
            root.mkdir(exist_ok=True)
            build(out)
            (root / "complete").touch()
    return out


@pytest.fixture(scope="session")
def chart_bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 24-group chart benchmark (seed 11), built with 2 workers."""
    return shared_build(tmp_path_factory, "charts", lambda out: build_charts(out, CHART_GROUPS, CHART_SEED, workers=2))


@pytest.fixture(scope="session")
def program_bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 16-group chart benchmark over every program kind, with determined masked (D) views (seed 2)."""
    return shared_build(
        tmp_path_factory,
        "charts-programs",
        lambda out: build_charts(out, 16, 2, workers=2, programs="all", determined=True),
    )
