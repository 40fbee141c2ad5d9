"""staging.staged_folder: a folder is built in a temporary sibling and appears only when the build succeeds."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from vqaudit.errors import VqauditError
from vqaudit.staging import staged_folder


def test_success_renames_the_staged_folder_into_place(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    with staged_folder(out) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".bench.") and tmp.name.endswith(".building")
        assert not out.exists()  # nothing at the target while building
        (tmp / "views.jsonl").write_text("x\n")
    assert (out / "views.jsonl").read_text() == "x\n"
    assert [p.name for p in tmp_path.iterdir()] == ["bench"]
    assert out.stat().st_mode & stat.S_IROTH  # not mkdtemp's 0700 (the test run's umask is 022)


def test_an_existing_empty_folder_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "bench").mkdir()
    with staged_folder(tmp_path / "bench") as tmp:
        (tmp / "a").write_text("a")
    assert [p.name for p in (tmp_path / "bench").iterdir()] == ["a"]


def test_a_failure_leaves_nothing_behind(tmp_path: Path) -> None:
    out = tmp_path / "sub" / "bench"
    with pytest.raises(RuntimeError, match="group 3 failed"), staged_folder(out) as tmp:
        (tmp / "images").mkdir()
        (tmp / "images" / "g0.png").write_bytes(b"png")
        raise RuntimeError("group 3 failed")
    assert not out.exists() and list((tmp_path / "sub").iterdir()) == []


def test_refuses_a_non_empty_folder_or_a_file_before_building(tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("precious")
    (tmp_path / "file").write_text("f")
    ran = []
    for target, message in ((tmp_path / "full", "exists and is not empty"), (tmp_path / "file", "not a folder")):
        with pytest.raises(VqauditError, match=message), staged_folder(target):
            ran.append(target)
    assert ran == [] and (tmp_path / "full" / "keep.txt").read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "full"]
