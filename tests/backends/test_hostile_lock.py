"""Two ``vqaudit run`` processes on one ``--out`` cannot mix models (an OS lock on the run folder).

Before the fix both processes passed the one-model check, both exited 0, and the folder held both models'
replies. The cases run real CLI subprocesses against a real local server (127.0.0.1).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vqaudit.errors import VqauditError
from vqaudit.folder_lock import LOCK_FILE, folder_lock
from vqaudit.run import load_responses, run_benchmark

Rows = Callable[[Path], list[tuple[str, str | None, str | None]]]


def _cli_run(bench: Path, model: str, out: Path) -> subprocess.Popen[str]:
    args = [
        sys.executable,
        "-m",
        "vqaudit",
        "run",
        str(bench),
        "--model",
        model,
        "--out",
        str(out),
        "--concurrency",
        "1",
    ]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _models_in(out: Path) -> set[str]:
    return {r.model for r in load_responses(out).values()}


def _wait_for_lock(out: Path, proc: subprocess.Popen[str]) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None, "the first run ended before the second started"
        assert time.monotonic() < deadline
        path = out / LOCK_FILE
        text = path.read_text() if path.exists() else ""
        if text.endswith("\n"):
            record: dict[str, Any] = json.loads(text)
            return record
        time.sleep(0.01)


def test_second_run_on_a_busy_folder_is_refused(
    make_bench: Callable[..., Path], tmp_path: Path, fake_server: Any
) -> None:
    # 9 views at concurrency 1: the first run takes about 7 s, so the second (a new process, importing vqaudit)
    # starts while it runs even on a loaded machine (at 0.3 s per view, load 8 let the first finish first)
    fake_server.delay_s = 0.8
    bench = make_bench()
    out = tmp_path / "run"
    first = _cli_run(bench, f"openai:model-a@{fake_server.url}", out)
    try:
        holder = _wait_for_lock(out, first)
        assert holder["pid"] == first.pid
        second = _cli_run(bench, f"openai:model-b@{fake_server.url}", out)
        _, err = second.communicate(timeout=120)
        assert second.returncode == 2
        assert err.strip().splitlines() == [
            f"error: {out}: vqaudit run --model openai:model-a@{fake_server.url} (pid {first.pid} on "
            f"{holder['host']}, since {holder['started']}) is writing this run folder; wait for it to finish, "
            "or use another --out (one run folder is written by one process at a time)"
        ]
        assert first.wait(120) == 0
    finally:
        if first.poll() is None:
            first.kill()
    assert _models_in(out) == {f"openai:model-a@{fake_server.url}"}
    assert fake_server.models == {"model-a"}  # the refused run never asked the server


def test_two_runs_started_together_never_mix(make_bench: Callable[..., Path], tmp_path: Path, fake_server: Any) -> None:
    fake_server.delay_s = 0.05
    bench = make_bench()
    out = tmp_path / "run"
    specs = [f"openai:model-{x}@{fake_server.url}" for x in "ab"]
    procs = [_cli_run(bench, spec, out) for spec in specs]
    results = [(p.wait(120), p.communicate()[1]) for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results  # refused by the lock, or (if the first had finished) by the model check
    winner = specs[[code for code, _ in results].index(0)]
    assert _models_in(out) == {winner}
    assert json.loads((out / "run.json").read_text())["model"] == winner
    loser_err = next(err for code, err in results if code == 2)
    assert len(loser_err.strip().splitlines()) == 1
    assert "is writing this run folder" in loser_err or "already holds a run of model" in loser_err


def test_stale_lock_of_a_killed_process_is_taken_over(make_bench: Callable[..., Path], tmp_path: Path) -> None:
    out = tmp_path / "run"
    code = (
        "import sys, time; from pathlib import Path; from vqaudit.folder_lock import folder_lock\n"
        "with folder_lock(Path(sys.argv[1]), 'holder'):\n    print('locked', flush=True); time.sleep(600)"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        with pytest.raises(VqauditError, match=rf"holder \(pid {holder.pid} on .*\) is writing this run folder"):
            run_benchmark(make_bench(), "reference:gold", out, progress=False)
        os.kill(holder.pid, signal.SIGKILL)
        assert holder.wait(10) == -signal.SIGKILL
    finally:
        if holder.poll() is None:
            holder.kill()
    assert json.loads((out / LOCK_FILE).read_text())["pid"] == holder.pid  # the dead holder's record is left ...
    summary = run_benchmark(make_bench(), "reference:gold", out, progress=False)  # ... and its lock is free
    assert summary.n_asked == 9
    assert json.loads((out / LOCK_FILE).read_text())["pid"] == os.getpid()


def test_lock_is_released_after_a_run_and_after_a_failed_check(make_bench: Callable[..., Path], tmp_path: Path) -> None:
    bench, out = make_bench(), tmp_path / "run"
    run_benchmark(bench, "reference:gold", out, progress=False)
    with pytest.raises(VqauditError, match="already holds a run of model 'reference:gold'"):
        run_benchmark(bench, "reference:always-abstain", out, progress=False)
    # free again (the failed check released it); held by a run that has not written run.json yet: refused
    with folder_lock(out, "test"), pytest.raises(VqauditError, match="test .* is writing this run folder"):
        run_benchmark(bench, "reference:gold", out, progress=False)
    assert run_benchmark(bench, "reference:gold", out, progress=False).n_cached == 9


def test_out_naming_a_file_is_one_line(make_bench: Callable[..., Path], tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(VqauditError, match="file: exists and is not a folder; choose another --out"):
        run_benchmark(make_bench(), "reference:gold", target, progress=False)
    with pytest.raises(VqauditError, match="cannot create the folder"):
        run_benchmark(make_bench(), "reference:gold", target / "sub", progress=False)
