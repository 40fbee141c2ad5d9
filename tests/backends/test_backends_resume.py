"""Kill-and-resume: a run stopped at any point re-asks only what is missing and never stores a reply twice."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vqaudit.backends import ModelOptions
from vqaudit.run import RunSettings, RunSummary, load_responses, run_benchmark, run_benchmark_async
from vqaudit.store import load_benchmark

KEY_ENV = "VQAUDIT_TEST_API_KEY"
SECRET = "sk-test-SECRET-resume-9d3e"
Rows = Callable[[Path], list[tuple[str, str | None, str | None]]]
OPTIONS_DICT = {"api_key_env": KEY_ENV, "max_retries": 2, "backoff_base_s": 0.001, "timeout_s": 5.0}
OPTIONS = ModelOptions(**OPTIONS_DICT)  # type: ignore[arg-type]


def _check_resume(bench: Path, out: Path, server: Any, read_rows: Rows, spec: str) -> None:
    """After an interrupted first run: the second run asks exactly the views without a row, once each."""
    views = load_benchmark(bench).views
    sha = {v.view_id: v.image_sha256 for v in views}
    rows = read_rows(out)
    recorded = [view_id for view_id, _, _ in rows]
    assert len(recorded) == len(set(recorded)), "a reply was stored twice"
    first_hits = server.snapshot()
    # every recorded view was asked exactly once by the first run (no fault was injected)
    assert all(first_hits[sha[v]] == 1 for v in recorded)
    assert 0 < len(recorded) < len(views), "the run was not interrupted part way"

    missing = {v.view_id for v in views} - set(recorded)
    server.reset()
    summary = run_benchmark(bench, spec, out, concurrency=3, progress=False, options=OPTIONS)
    assert summary == RunSummary(
        n_views=len(views), n_cached=len(recorded), n_asked=len(missing), n_errors=0, out_dir=out
    )
    assert server.snapshot() == {sha[v]: 1 for v in missing}
    assert Counter(view_id for view_id, _, _ in read_rows(out)) == {v.view_id: 1 for v in views}
    assert set(load_responses(out)) == {v.view_id for v in views}


def test_cancelled_run_resumes(
    make_bench: Callable[..., Path], tmp_path: Path, fake_server: Any, read_rows: Rows
) -> None:
    # The server answers 6 requests and holds the rest, so the run is always cancelled part way (no race).
    fake_server.stall_after(6)
    bench = make_bench(4, 5)
    out = tmp_path / "run"
    spec = f"openai:m@{fake_server.url}"

    async def run_then_cancel() -> None:
        task = asyncio.create_task(
            run_benchmark_async(bench, spec, out, RunSettings(concurrency=3, progress=False, options=OPTIONS))
        )
        while len(read_rows(out)) < 6:
            assert not task.done()
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run_then_cancel())
    fake_server.unstall()
    _check_resume(bench, out, fake_server, read_rows, spec)


def test_killed_process_resumes(
    make_bench: Callable[..., Path], tmp_path: Path, fake_server: Any, read_rows: Rows
) -> None:
    # The server answers 8 requests and holds the rest, so the child is always killed part way (no race).
    fake_server.stall_after(8)
    bench = make_bench(8, 5)
    out = tmp_path / "run"
    spec = f"openai:m@{fake_server.url}"
    code = (
        "import sys, json; from pathlib import Path; from vqaudit.run import run_benchmark; "
        "from vqaudit.backends import ModelOptions; "
        "run_benchmark(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), concurrency=3, progress=False, "
        "options=ModelOptions(**json.loads(sys.argv[4])))"
    )
    env = {**os.environ, KEY_ENV: SECRET}
    proc = subprocess.Popen([sys.executable, "-c", code, str(bench), spec, str(out), json.dumps(OPTIONS_DICT)], env=env)
    try:
        deadline = time.monotonic() + 60
        while len(read_rows(out)) < 8:
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.005)
        proc.kill()  # SIGKILL: no cleanup runs in the child
        assert proc.wait(10) == -9
    finally:
        if proc.poll() is None:
            proc.kill()
    fake_server.unstall()
    _check_resume(bench, out, fake_server, read_rows, spec)
    assert fake_server.auth_headers == [None] * len(fake_server.auth_headers)  # this process has no key set
    for path in out.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


@pytest.mark.parametrize(
    ("sig", "status", "line"),
    [
        (
            signal.SIGTERM,
            143,
            "error: terminated (SIGTERM); rerun the same command "
            "(a run resumes from its stored replies, other commands start again)",
        ),
        (
            signal.SIGINT,
            130,
            "error: interrupted; rerun the same command "
            "(a run resumes from its stored replies, other commands start again)",
        ),
    ],
)
def test_sigterm_stops_the_cli_run_like_ctrl_c(
    make_bench: Callable[..., Path],
    tmp_path: Path,
    fake_server: Any,
    read_rows: Rows,
    sig: signal.Signals,
    status: int,
    line: str,
) -> None:
    # New-user trial: `vqaudit run` died at once on SIGTERM (status -15, no message, 16 of 20 replies lost); a batch
    # scheduler stops jobs so. SIGTERM must do what Ctrl-C does (asyncio.run cancels the main task, the runner
    # flushes, the lock is released): 128 + 15 = 143, the status a shell gives a SIGTERM stop (signals.py).
    # With concurrency 3 and the server answering 8 requests, then holding the rest, the client has received all 8
    # replies once the server has seen 8 + 3 requests (a slot takes a new request only after its reply came).
    fake_server.stall_after(8)
    bench = make_bench(4, 5)  # 20 views
    out = tmp_path / "run"
    spec = f"openai:m@{fake_server.url}"
    env = {**os.environ, KEY_ENV: SECRET}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vqaudit",
            "--quiet",
            "run",
            str(bench),
            "--model",
            spec,
            "--out",
            str(out),
            "--concurrency",
            "3",
            "--api-key-env",
            KEY_ENV,
            "--max-retries",
            "2",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while fake_server._seen < 8 + 3:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.005)
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == status, stderr
    assert stderr.splitlines() == [line]
    assert sorted(text is not None and error is None for _, text, error in read_rows(out)) == [True] * 8
    lock = out / ".vqaudit.lock"  # released: another process takes it at once (folder_lock.py: fcntl.flock)
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(handle, fcntl.LOCK_UN)
    fake_server.unstall()
    _check_resume(bench, out, fake_server, read_rows, spec)  # the rerun asks exactly the 12 views without a reply
