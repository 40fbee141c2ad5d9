"""Benchmark and run folders hold only their own regular files: a symbolic link (even to an identical copy of the
image it replaces, which hashes alike), a FIFO, or a path leaving the folder is refused by ``verify``, ``run`` and
``export`` with one line naming the file, row and field, and nothing is sent or written."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vqaudit.errors import VqauditError
from vqaudit.store import contained_file, load_benchmark, manifest_problems
from vqaudit.suites.charts.build import build_charts


def vqaudit(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vqaudit", *args], capture_output=True, text=True, timeout=300, cwd=cwd
    )


@pytest.fixture(scope="module")
def small_bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hostile-folders") / "bench"
    build_charts(out, 2, 1, workers=1)
    return out


def _copy(bench: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "bench"
    shutil.copytree(bench, dst)
    return dst


def _first_image(bench: Path) -> tuple[str, Path]:
    view = load_benchmark(bench, check_images=False).views[0]
    return view.image, bench / view.image


def _one_line(done: subprocess.CompletedProcess[str], *parts: str) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = [line for line in done.stderr.strip().splitlines() if not line.startswith("progress: ")]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


def test_an_image_linked_to_an_identical_copy_outside_is_refused_everywhere(small_bench: Path, tmp_path: Path) -> None:
    bench = _copy(small_bench, tmp_path)
    rel, image = _first_image(bench)
    outside = tmp_path / "outside.png"
    shutil.copyfile(image, outside)  # identical bytes: the recorded hashes still match
    image.unlink()
    image.symlink_to(outside)
    assert manifest_problems(load_benchmark(small_bench)) == []  # the genuine copy is intact
    # row 1 of views.jsonl is the view whose image was replaced
    expected = (f"{bench / 'views.jsonl'}: row 1, field 'image'", rel, "is a symbolic link")
    _one_line(vqaudit("verify", str(bench)), *expected)
    _one_line(vqaudit("run", str(bench), "--model", "reference:gold", "--out", str(tmp_path / "run")), *expected)
    _one_line(vqaudit("export", str(bench), "--to", "vlmevalkit", "--out", str(tmp_path / "exp")), *expected)
    assert not (tmp_path / "run").exists() and not (tmp_path / "exp").exists()


def test_a_linked_images_folder_is_refused(small_bench: Path, tmp_path: Path) -> None:
    bench = _copy(small_bench, tmp_path)
    rel, _ = _first_image(bench)
    folder = bench / Path(rel).parts[0]
    shutil.move(folder, tmp_path / "elsewhere")
    folder.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(
        VqauditError,
        match=f"row 1, field 'image': {rel} is a symbolic link \\(its folder {Path(rel).parts[0]} is one\\)",
    ):
        load_benchmark(bench, check_images=False)


@pytest.mark.parametrize("name", ["views.jsonl", "groups.jsonl", "manifest.json"])
def test_linked_benchmark_files_are_refused(small_bench: Path, tmp_path: Path, name: str) -> None:
    bench = _copy(small_bench, tmp_path)
    shutil.move(bench / name, tmp_path / name)
    (bench / name).symlink_to(tmp_path / name)
    _one_line(vqaudit("verify", str(bench)), f"{bench / name}: is a symbolic link")


def test_a_fifo_image_is_refused_without_blocking(small_bench: Path, tmp_path: Path) -> None:
    bench = _copy(small_bench, tmp_path)
    rel, image = _first_image(bench)
    image.unlink()
    os.mkfifo(image)  # reading it would block for ever
    with pytest.raises(VqauditError, match=f"row 1, field 'image': {rel} is not a regular file"):
        load_benchmark(bench)


def test_a_manifest_file_entry_leaving_the_folder_is_refused(small_bench: Path, tmp_path: Path) -> None:
    bench = _copy(small_bench, tmp_path)
    manifest = (bench / "manifest.json").read_text()
    (bench / "manifest.json").write_text(manifest.replace('"files": {', '"files": {\n    "../outside.png": "00",', 1))
    with pytest.raises(VqauditError, match=r"manifest.json: field 'files': \.\./outside\.png leaves the folder"):
        load_benchmark(bench, check_images=False)


def test_contained_file_reasons(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "a" / "f")
    assert contained_file(tmp_path, "a/f") == (tmp_path / "a" / "f", None)
    assert contained_file(tmp_path, "a/g")[1] == "missing"
    assert contained_file(tmp_path, "link")[1] == "is a symbolic link"
    assert contained_file(tmp_path, "a")[1] == "is not a regular file"
    assert contained_file(tmp_path, "a/f/x")[1] == "is not a regular file"
    assert contained_file(tmp_path, "../a/f")[1] == "leaves the folder"
    assert contained_file(tmp_path, "/etc/passwd")[1] == "leaves the folder"


def test_a_run_folder_with_a_linked_file_is_refused(small_bench: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert vqaudit("run", str(small_bench), "--model", "reference:gold", "--out", str(run)).returncode == 0
    shutil.move(run / "run.json", tmp_path / "run.json")
    (run / "run.json").symlink_to(tmp_path / "run.json")
    _one_line(vqaudit("score", str(run)), f"{run / 'run.json'}: is a symbolic link")
    _one_line(
        vqaudit("run", str(small_bench), "--model", "reference:gold", "--out", str(run)),
        f"{run / 'run.json'}: is a symbolic link",
    )
