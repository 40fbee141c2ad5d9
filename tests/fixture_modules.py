"""Load a module of tests/fixtures/ by path, once per process (tests/ is not a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def load_fixture_module(name: str, path: Path) -> ModuleType:
    """The module at ``path``, registered in ``sys.modules`` as ``name`` (loaded at most once per process)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def fake_openai_server() -> ModuleType:
    """tests/fixtures/fake_openai_server.py."""
    return load_fixture_module("fake_openai_server", FIXTURES / "fake_openai_server.py")
