"""Golden JSON files: expected results kept as diffable text under ``tests/golden/``.

A golden file holds one JSON value written by :func:`golden_text`: objects and lists are spread one entry per
line down to a few levels, deeper values stay on one line (so a list of rows is one row per line and a changed
number shows as a one-line diff). Keys are sorted; floats are written by ``json`` (``repr``: exact round trip);
NaN is written as ``NaN`` (read back by Python's ``json``). A test calls :func:`assert_golden`; when the text
differs it fails with a unified diff (the first lines) naming the file.

Regenerate after a deliberate change: ``VQAUDIT_UPDATE_GOLDEN=1 python -m pytest TESTS`` rewrites every golden
file those tests compare against (and passes); review ``git diff tests/golden`` and say in the commit why the
values moved.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Any

import pytest

GOLDEN = Path(__file__).resolve().parent
UPDATE_ENV = "VQAUDIT_UPDATE_GOLDEN"
SHOWN_DIFF_LINES = 120


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _dump(value: Any, depth: int, indent: str) -> str:
    inner = indent + " "
    if depth > 0 and isinstance(value, dict) and value:
        items = [
            f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {_dump(value[k], depth - 1, inner)}"
            for k in sorted(value)
        ]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if depth > 0 and isinstance(value, list) and value and any(isinstance(v, dict | list) for v in value):
        return "[\n" + ",\n".join(inner + _compact(v) for v in value) + "\n" + indent + "]"
    return _compact(value)


def golden_text(value: Any, depth: int = 4) -> str:
    """The text of a golden file for ``value`` (a JSON-ready value); objects expanded ``depth`` levels deep."""
    return _dump(value, depth, "") + "\n"


def assert_golden(name: str, value: Any, depth: int = 4) -> None:
    """Fail with a diff unless ``value`` written by :func:`golden_text` equals ``tests/golden/NAME`` byte for byte.

    With ``VQAUDIT_UPDATE_GOLDEN=1`` in the environment the file is (re)written instead.
    """
    path = GOLDEN / name
    actual = golden_text(value, depth)
    if os.environ.get(UPDATE_ENV) == "1":
        path.write_text(actual, encoding="utf-8")
        return
    if not path.is_file():
        pytest.fail(f"{path} is missing; write it with {UPDATE_ENV}=1 (then review and commit it)")
    expected = path.read_text(encoding="utf-8")
    if actual == expected:
        return
    diff = list(
        difflib.unified_diff(expected.splitlines(), actual.splitlines(), f"golden/{name}", "actual", lineterm="", n=1)
    )
    changed = sum(1 for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---"))
    shown = "\n".join(diff[:SHOWN_DIFF_LINES])
    more = f"\n... {len(diff) - SHOWN_DIFF_LINES} more diff lines" if len(diff) > SHOWN_DIFF_LINES else ""
    pytest.fail(
        f"{path} differs ({changed} changed lines); if the change is deliberate, rerun with "
        f"{UPDATE_ENV}=1 and review git diff\n{shown}{more}",
        pytrace=False,
    )
