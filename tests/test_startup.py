"""Start-up of the command line: ``vqaudit --help`` imports none of the heavy modules it has no use for.

The CPU time is measured by ``benchmarks/bench_startup.py`` (against ``import typer, rich`` in the same run);
this test checks the cause of a slow start instead of a time: which modules are loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys

NOT_AT_START = (
    "pydantic",  # the backends' option models and the schema
    "vqaudit.backends",
    "vqaudit.schema",
    "vqaudit.harness.common",  # the importers (the harness table, vqaudit.harness.formats, is read for --to)
    "vqaudit.executors",
    "vqaudit.run",
    "importlib.metadata",  # vqaudit.__version__ is read on first use
    "asyncio",  # vqaudit.signals imports it in run_async
    "typer.rich_utils",  # plain help: rich's help panels alone cost twice typer and rich together
    "rich.console",  # the CLI's stderr console is made at its first print
    "numpy",
)


def _loaded_by(*args: str) -> set[str]:
    code = (
        "import json, sys\nsys.argv = ['vqaudit', *json.loads(sys.argv[1])]\nfrom vqaudit.cli import app\n"
        "try:\n    app()\nexcept SystemExit:\n    pass\nprint(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(list(args))], capture_output=True, text=True, timeout=120, check=True
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_help_imports_no_heavy_module() -> None:
    loaded = _loaded_by("--help")
    assert "vqaudit.cli" in loaded and "typer" in loaded  # the check ran the command line
    assert sorted(m for m in NOT_AT_START if m in loaded) == []


def test_a_command_help_imports_none_of_vqaudit_heavy_modules_either() -> None:
    # typer itself builds pydantic adapters for a command's parameters (typer/_adapters.py), which loads pydantic
    # and, through its plugin loader, importlib.metadata: those two are typer's cost, not vqaudit's.
    loaded = _loaded_by("run", "--help")
    assert sorted(m for m in NOT_AT_START if m in loaded and m not in ("pydantic", "importlib.metadata")) == []


def test_the_version_is_still_read() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import vqaudit; print(vqaudit.__version__)"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    from importlib.metadata import version

    assert done.stdout.strip() == version("vqaudit")
