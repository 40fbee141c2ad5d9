"""Shared fixtures: one small chart benchmark, built once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from vqaudit.suites.charts.build import build_charts

CHART_GROUPS = 24
CHART_SEED = 11


@pytest.fixture(scope="session")
def chart_bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 24-group chart benchmark (seed 11), built with 2 workers."""
    out = tmp_path_factory.mktemp("charts") / "bench"
    build_charts(out, CHART_GROUPS, CHART_SEED, workers=2)
    return out


@pytest.fixture(scope="session")
def program_bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 16-group chart benchmark over every program kind, with determined masked (D) views (seed 2)."""
    out = tmp_path_factory.mktemp("charts-programs") / "bench"
    build_charts(out, 16, 2, workers=2, programs="all", determined=True)
    return out
