"""Fixtures for the MM-UPD tests: a small build of the bundled data, shared by the session."""

from __future__ import annotations

from pathlib import Path

import pytest

from vqaudit.schema import View
from vqaudit.store import load_benchmark
from vqaudit.suites.upd.build import build_upd


@pytest.fixture(scope="session")
def small_bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 40 bundled rows (20 MMBench samples, 20 easy-VQA items), every variant and setting, seed 0."""
    out = tmp_path_factory.mktemp("upd") / "bench"
    build_upd(out, tsv=None, variant="all", setting="all", seed=0, max_items=40)
    return out


@pytest.fixture(scope="session")
def small_views(small_bench: Path) -> list[View]:
    """The views of ``small_bench``."""
    return list(load_benchmark(small_bench, check_images=False).views)
