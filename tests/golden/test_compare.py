"""The golden-file helper: the text layout and the failure it reports (expected values written by hand)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from golden import compare
from golden.compare import assert_golden, golden_text


def test_layout_expands_objects_and_puts_each_row_on_one_line() -> None:
    value = {"rows": [{"b": 1, "a": [1, 2]}, {"a": None}], "report": {"n": 2, "x": 0.1}, "k": [1, 2]}
    assert golden_text(value) == (
        "{\n"
        ' "k": [1, 2],\n'  # a list of scalars stays on one line
        ' "report": {\n  "n": 2,\n  "x": 0.1\n },\n'
        ' "rows": [\n  {"a": [1, 2], "b": 1},\n  {"a": null}\n ]\n'  # keys sorted, one row per line
        "}\n"
    )
    assert golden_text([[1, "é"], [math.nan]], depth=1) == '[\n [1, "é"],\n [NaN]\n]\n'
    assert golden_text({}) == "{}\n"


def test_a_changed_value_fails_with_a_diff_naming_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compare, "GOLDEN", tmp_path)
    monkeypatch.delenv(compare.UPDATE_ENV, raising=False)
    rows = {"rows": [[1, 0.5], [2, 0.25]]}
    with pytest.raises(pytest.fail.Exception, match="missing; write it with VQAUDIT_UPDATE_GOLDEN=1"):
        assert_golden("g.json", rows)
    monkeypatch.setenv(compare.UPDATE_ENV, "1")
    assert_golden("g.json", rows)  # writes
    assert (tmp_path / "g.json").read_text() == '{\n "rows": [\n  [1, 0.5],\n  [2, 0.25]\n ]\n}\n'
    monkeypatch.setenv(compare.UPDATE_ENV, "0")
    assert_golden("g.json", rows)  # equal: passes
    with pytest.raises(pytest.fail.Exception) as info:
        assert_golden("g.json", {"rows": [[1, 0.5], [2, 0.125]]})
    message = str(info.value)
    assert f"{tmp_path / 'g.json'} differs (2 changed lines)" in message
    assert "\n-  [2, 0.25]\n+  [2, 0.125]\n" in message
