"""Fixtures for the backend and run tests: a tiny benchmark folder and a fake OpenAI-compatible server."""

from __future__ import annotations

import io
import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest
from PIL import Image

from fixture_modules import load_fixture_module
from vqaudit.files import sha256_bytes, write_json, write_jsonl
from vqaudit.schema import Group, Obligation, View

# The hf/vllm tests load only local folders; never let transformers or huggingface_hub reach the hub.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

SERVER_PATH = Path(__file__).resolve().parents[1] / "fixtures" / "fake_openai_server.py"


def _load_server_module() -> ModuleType:
    return load_fixture_module("fake_openai_server", SERVER_PATH)


def tiny_png(seed: int) -> bytes:
    """A 4x4 PNG whose bytes differ for every seed below 2**24."""
    color = (seed & 0xFF, (seed >> 8) & 0xFF, (seed >> 16) & 0xFF)
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), color).save(buffer, format="PNG")
    return buffer.getvalue()


def write_benchmark(root: Path, n_groups: int = 3, views_per_group: int = 3) -> Path:
    """Write a benchmark folder: group g has one supported view (gold str(10*g)) and negative views."""
    (root / "images").mkdir(parents=True, exist_ok=True)
    views: list[View] = []
    groups: list[Group] = []
    for g in range(n_groups):
        group_id = f"g{g}"
        question = f"What is the value of bar {g}?"
        view_ids: list[str] = []
        for k in range(views_per_group):
            view_id = f"{group_id}-v{k}"
            data = tiny_png(g * views_per_group + k)
            (root / "images" / f"{view_id}.png").write_bytes(data)
            if k == 0:
                obligation = Obligation(kind="answer", gold=(str(10 * g),), answer_type="number")
            else:
                obligation = Obligation(kind="abstain")
            views.append(
                View(
                    view_id=view_id,
                    group_id=group_id,
                    source="charts",
                    state="original" if k == 0 else "M",
                    image=f"images/{view_id}.png",
                    image_sha256=sha256_bytes(data),
                    question=question,
                    obligation=obligation,
                )
            )
            view_ids.append(view_id)
        groups.append(Group(group_id=group_id, source="charts", question=question, view_ids=tuple(view_ids)))
    write_jsonl(root / "views.jsonl", views)
    write_jsonl(root / "groups.jsonl", groups)
    write_json(root / "manifest.json", {"name": root.name, "n_views": len(views), "n_groups": len(groups)})
    return root


def cache_rows(run_dir: Path) -> list[tuple[str, str | None, str | None]]:
    """(view_id, text, error) of every row of a run's cache, read with a separate connection."""
    path = run_dir / "responses.sqlite"
    if not path.exists():
        return []
    conn = sqlite3.connect(path, timeout=30)
    try:
        return conn.execute("SELECT view_id, text, error FROM responses ORDER BY created").fetchall()
    except sqlite3.OperationalError:  # table not created yet
        return []
    finally:
        conn.close()


@pytest.fixture
def make_bench(tmp_path: Path) -> Callable[..., Path]:
    counter = iter(range(1000))

    def make(n_groups: int = 3, views_per_group: int = 3) -> Path:
        return write_benchmark(tmp_path / f"bench{next(counter)}", n_groups, views_per_group)

    return make


@pytest.fixture
def server_module() -> ModuleType:
    return _load_server_module()


@pytest.fixture
def fake_server(server_module: ModuleType) -> Iterator[object]:
    server = server_module.FakeOpenAIServer(timeout_sleep_s=1.0).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def read_rows() -> Callable[[Path], list[tuple[str, str | None, str | None]]]:
    return cache_rows


# -- a hostile server (tests/fixtures/hostile_server.py) --------------------------------------------------------

HOSTILE_PATH = SERVER_PATH.parent / "hostile_server.py"


def load_hostile_module() -> ModuleType:
    """The hostile server module, loaded by path (tests/ is not a package)."""
    return load_fixture_module("hostile_server", HOSTILE_PATH)


@pytest.fixture
def hostile_module() -> ModuleType:
    return load_hostile_module()


@pytest.fixture
def hostile(hostile_module: ModuleType) -> Iterator[object]:
    server = hostile_module.HostileServer(timeout_sleep_s=1.0).start()
    try:
        yield server
    finally:
        server.stop()


TINY_VLM_PATH = Path(__file__).resolve().parents[1] / "fixtures" / "tiny_vlm.py"


def load_tiny_vlm_module() -> ModuleType:
    """tests/fixtures/tiny_vlm.py as a module (it builds tiny random-weight LLaVA folders)."""
    return load_fixture_module("tiny_vlm", TINY_VLM_PATH)


def require_hf_extra() -> None:
    """Skip (with the reason) where the [hf] extra is not installed; in CI (CI=true) a missing extra fails."""
    if os.environ.get("CI"):
        import torch  # noqa: F401
        import transformers  # noqa: F401

        return
    pytest.importorskip("torch", reason="the [hf] extra is not installed (pip install 'vqaudit[hf]')")
    pytest.importorskip("transformers", reason="the [hf] extra is not installed (pip install 'vqaudit[hf]')")


@pytest.fixture(scope="session")
def tiny_vlm() -> ModuleType:
    """tests/fixtures/tiny_vlm.py (needs the [hf] extra: skipped without it, except in CI)."""
    require_hf_extra()
    return load_tiny_vlm_module()


@pytest.fixture(scope="session")
def tiny_llava(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random-weight LLaVA model folder (seed 0), built once per test session (about 3 s)."""
    require_hf_extra()
    return load_tiny_vlm_module().build_tiny_llava(tmp_path_factory.mktemp("tiny-llava") / "model", seed=0)


@pytest.fixture(scope="session")
def tiny_idefics3(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random-weight Idefics3 model folder (seed 0): a second architecture, built once per session."""
    require_hf_extra()
    return load_tiny_vlm_module().build_tiny_idefics3(tmp_path_factory.mktemp("tiny-idefics3") / "model", seed=0)


@pytest.fixture(scope="session")
def tiny_chart_bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 4-group chart benchmark (20 views, seed 3) for the in-process model backends."""
    from vqaudit.suites.charts.build import build_charts

    out = tmp_path_factory.mktemp("hf-charts") / "bench"
    build_charts(out, 4, 3, workers=1)
    return out
