"""Every command's outputs appear whole or not at all, and file-system failures are one line naming the file.

``report`` from a truncated ``outcomes.jsonl`` or onto a full disk leaves no partial report folder (and an earlier
report as it was); ``score`` with a folder in ``metrics.json``'s place writes nothing; ``score`` while a run holds
the folder says to wait; a build's hidden staging folder left by a killed process is removed by the next build,
and a live one refuses a second build into the folder; a full disk during ``run`` keeps the paid replies and says
how to carry them to a disk with room."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from vqaudit.cli import os_error_line
from vqaudit.errors import VqauditError
from vqaudit.files import atomic_write_bytes, named_os_error, read_json
from vqaudit.folder_lock import folder_lock
from vqaudit.staging import _HOST, staged_folder
from vqaudit.suites.charts.build import build_charts


def vqaudit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vqaudit", *args], capture_output=True, text=True, timeout=300)


def _one_line(done: subprocess.CompletedProcess[str], *parts: str) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = [line for line in done.stderr.strip().splitlines() if not line.startswith("progress: ")]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A 2-group chart benchmark (seed 1) and a scored reference:gold run on it."""
    root = tmp_path_factory.mktemp("hostile-outputs")
    build_charts(root / "bench", 2, 1, workers=1)
    assert vqaudit("run", str(root / "bench"), "--model", "reference:gold", "--out", str(root / "run")).returncode == 0
    assert vqaudit("score", str(root / "run"), "--draws", "100").returncode == 0
    return root / "bench", root / "run"


def _copy_run(scored: tuple[Path, Path], tmp_path: Path) -> Path:
    bench, run = scored
    shutil.copytree(bench, tmp_path / "bench")
    shutil.copytree(run, tmp_path / "run")
    return tmp_path / "run"


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _siblings(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.parent.iterdir() if p.name.startswith(f".{folder.name}."))


# --- report: whole or nothing ------------------------------------------------------------------------------------


def test_report_from_a_truncated_outcomes_file_leaves_no_report(scored: tuple[Path, Path], tmp_path: Path) -> None:
    run = _copy_run(scored, tmp_path)
    earlier = tmp_path / "earlier"
    assert vqaudit("report", str(run), "--out", str(earlier)).returncode == 0
    before = _tree(earlier)
    assert {"report.md", "index.html", "samples.html"} <= set(before)
    data = (run / "outcomes.jsonl").read_bytes()
    (run / "outcomes.jsonl").write_bytes(data[: len(data) - 40])  # cut inside the last line
    # refused naming the file (by the seal score wrote over outcomes.jsonl, before anything is read)
    _one_line(vqaudit("report", str(run), "--out", str(tmp_path / "new")), f"{run / 'outcomes.jsonl'}: ")
    assert not (tmp_path / "new").exists() and _siblings(tmp_path / "new") == []  # before: report.md was left
    _one_line(vqaudit("report", str(run), "--out", str(earlier)), f"{run / 'outcomes.jsonl'}: ")
    assert _tree(earlier) == before and _siblings(earlier) == []  # the earlier report is untouched


def test_a_second_report_replaces_the_first_whole(scored: tuple[Path, Path], tmp_path: Path) -> None:
    run = _copy_run(scored, tmp_path)
    out = tmp_path / "rep"
    assert vqaudit("report", str(run), "--out", str(out)).returncode == 0
    (out / "notes.txt").write_text("mine")  # a file the report does not write is kept
    (out / "samples" / "stale.html").write_text("old")  # inside a folder the report writes: replaced with it
    done = vqaudit("report", str(run), "--out", str(out))
    assert done.returncode == 0 and f"HTML report: {out / 'index.html'}" in done.stdout
    assert (out / "notes.txt").read_text() == "mine" and not (out / "samples" / "stale.html").exists()
    assert (out / "report.md").is_file() and _siblings(out) == []


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs (a disk that fills up), mounted for the test; skipped where mounting is not allowed."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def _fill(disk: Path, leave: int) -> None:
    free = shutil.disk_usage(disk).free
    (disk / "filler").write_bytes(b"\0" * max(free - leave, 0))


def test_report_onto_a_full_disk_leaves_no_report(scored: tuple[Path, Path], tmp_path: Path, small_disk: Path) -> None:
    run = _copy_run(scored, tmp_path)
    _fill(small_disk, 24 * 1024)  # the report's HTML, assets and sample pages need more than this
    line = _one_line(vqaudit("report", str(run), "--out", str(small_disk / "rep")))
    assert line.startswith(f"error: {small_disk}/.rep.") and line.endswith(
        ": no space left on the device: free space, or copy the folder to a disk with room, and rerun the same "
        "command (a rerun of `vqaudit run` asks only the views still missing)"
    ), line
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler"]  # no report folder, no staging folder


def test_run_onto_a_full_disk_keeps_the_replies_and_says_how_to_carry_them(
    scored: tuple[Path, Path], small_disk: Path
) -> None:
    bench, _ = scored
    _fill(small_disk, 60 * 1024)  # room for run.json and the empty cache, not for the replies' WAL
    out = small_disk / "run"
    line = _one_line(vqaudit("run", str(bench), "--model", "reference:gold", "--out", str(out)))
    assert line.startswith(f"error: {out / 'responses.sqlite'}: the disk is full (")
    assert (
        f"copy the run folder to a disk with room (cp -a {out} NEW_FOLDER) and rerun with --out NEW_FOLDER: a "
        "rerun asks only the views still missing. Do not delete responses.sqlite"
    ) in line
    assert "afresh" not in line and "move it away" not in line
    assert (out / "responses.sqlite").is_file()


# --- score: one set ----------------------------------------------------------------------------------------------


def test_score_with_a_folder_in_place_of_metrics_writes_nothing(scored: tuple[Path, Path], tmp_path: Path) -> None:
    run = _copy_run(scored, tmp_path)
    outcomes = (run / "outcomes.jsonl").read_bytes()
    (run / "metrics.json").unlink()
    (run / "metrics.json").mkdir()
    _one_line(
        vqaudit("score", str(run), "--draws", "50"),
        f"{run / 'metrics.json'}: is not a regular file; every file of the folder must be a regular file "
        "(move this one away and rerun)",
    )
    assert (run / "outcomes.jsonl").read_bytes() == outcomes  # before: new outcomes beside the old metrics
    assert not [p for p in run.iterdir() if p.name.endswith(".tmp")]


def test_score_while_a_run_holds_the_folder(scored: tuple[Path, Path], tmp_path: Path) -> None:
    run = _copy_run(scored, tmp_path)
    with folder_lock(run, "vqaudit run --model reference:gold"):
        line = _one_line(vqaudit("score", str(run)), f"{run}: vqaudit run --model reference:gold (pid {os.getpid()}")
    assert "is writing this run folder; wait for it to finish, then score again" in line
    assert "vqaudit run` again" not in line


# --- staged builds -----------------------------------------------------------------------------------------------


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_stale_staging_folder_of_a_dead_process_is_removed(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    stale = tmp_path / f".bench.{_HOST}-{_dead_pid()}.abcd1234.building"
    (stale / "images").mkdir(parents=True)
    (stale / "images" / "g0.png").write_bytes(b"half a build")
    legacy = tmp_path / ".bench.k3j2h1g0.building"  # an older version's name (no owner): left alone
    legacy.mkdir()
    other_host = tmp_path / f".bench.{'0' * 8 if _HOST != '0' * 8 else '1' * 8}-{os.getpid()}.x.building"
    other_host.mkdir()  # another machine's process id means nothing here: left alone
    with staged_folder(out) as tmp:
        (tmp / "a").write_text("a")
    assert not stale.exists() and legacy.is_dir() and other_host.is_dir() and (out / "a").is_file()


def test_a_live_staging_folder_refuses_a_second_build(tmp_path: Path) -> None:
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = tmp_path / f".bench.{_HOST}-{sleeper.pid}.abcd1234.building"
        live.mkdir()
        busy = rf"bench: another process \(pid {sleeper.pid}\) is writing this folder now \(.*\); wait for it to finish"
        with pytest.raises(VqauditError, match=busy), staged_folder(tmp_path / "bench"):
            pass
        assert live.is_dir() and not (tmp_path / "bench").exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_folder_filled_meanwhile_discards_the_build_with_one_line(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    discarded = (
        r"bench: another process wrote this folder while this build ran \(two builds into one folder\?\); "
        r"this build was discarded"
    )
    with pytest.raises(VqauditError, match=discarded), staged_folder(out) as tmp:
        (tmp / "mine").write_text("m")
        out.mkdir()
        (out / "theirs").write_text("t")  # what a second build renamed into place first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench"] and [p.name for p in out.iterdir()] == ["theirs"]


def test_the_staging_folder_names_this_process(tmp_path: Path) -> None:
    with staged_folder(tmp_path / "bench") as tmp:
        assert tmp.name.startswith(f".bench.{_HOST}-{os.getpid()}.") and tmp.name.endswith(".building")


# --- one line naming the file ------------------------------------------------------------------------------------


def test_os_errors_name_the_file() -> None:
    full = OSError(errno.ENOSPC, "No space left on device")
    assert named_os_error(full, Path("/x/metrics.json")).filename == "/x/metrics.json"
    assert os_error_line(named_os_error(full, Path("/x/metrics.json"))) == (
        "/x/metrics.json: no space left on the device: free space, or copy the folder to a disk with room, and "
        "rerun the same command (a rerun of `vqaudit run` asks only the views still missing)"
    )
    assert os_error_line(FileExistsError(errno.EEXIST, "File exists", "/x/out")) == (
        "/x/out: already exists: choose a new name, or move it away"
    )
    assert os_error_line(FileExistsError(errno.EEXIST, "File exists", __file__)) == (
        f"{__file__}: a file where a folder was expected: choose another path, or move the file away"
    )
    assert os_error_line(IsADirectoryError(errno.EISDIR, "Is a directory", "/x/a.tsv")) == (
        "/x/a.tsv: is a folder where a file was expected"
    )
    assert os_error_line(OSError(errno.EXDEV, "Invalid cross-device link", "/a", None, "/b")) == (
        "/a -> /b: Invalid cross-device link"
    )


def test_a_write_under_a_file_names_the_path(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(OSError) as raised:
        atomic_write_bytes(tmp_path / "file" / "report.md", b"r")
    assert raised.value.filename is not None and str(tmp_path / "file") in str(raised.value.filename)


def test_a_garbage_manifest_is_one_line_naming_it(scored: tuple[Path, Path], tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    shutil.copytree(scored[0], bench)
    (bench / "manifest.json").write_bytes(b'{"format": "\xff\xfe garbage"}\n')
    with pytest.raises(VqauditError, match=r"manifest\.json: not UTF-8 text \(line 1: byte 0xff at offset 12\)"):
        read_json(bench / "manifest.json")
    _one_line(vqaudit("verify", str(bench)), f"{bench / 'manifest.json'}: not UTF-8 text")
