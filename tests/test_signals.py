"""signals: SIGTERM handled as asyncio.run handles Ctrl-C (new-user trial: `run` died at once on SIGTERM); a SIGTERM
once a command's output is complete is a clean stop (docs/shortanswer.md, "The output folder"; the CLI end to end:
tests/shortanswer/test_audit_sigterm.py)."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from vqaudit.files import atomic_write_set
from vqaudit.signals import (
    SIGTERM_EXIT,
    Completed,
    Terminated,
    TerminatedAfterWrite,
    completes_on_write,
    output_complete,
    run_async,
    sigterm_like_ctrl_c,
)

pytestmark = pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(), reason="signal handlers are set in the main thread only"
)


def test_sigterm_cancels_the_main_task_so_its_cleanup_runs() -> None:
    before = signal.getsignal(signal.SIGTERM)
    steps: list[str] = []

    async def main() -> None:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.sleep(60)  # cancelled at once by the SIGTERM, never slept out
            steps.append("slept")
        except asyncio.CancelledError:
            steps.append("cancelled")
            raise
        finally:
            steps.append("cleaned up")

    with pytest.raises(Terminated) as info:
        run_async(main())
    assert info.value.code == SIGTERM_EXIT == 143  # 128 + 15, as a shell reports a SIGTERM stop
    assert steps == ["cancelled", "cleaned up"]
    assert signal.getsignal(signal.SIGTERM) is before  # the handler is restored


def test_without_a_signal_it_is_asyncio_run() -> None:
    async def main() -> int:
        await asyncio.sleep(0)
        return 7

    assert run_async(main()) == 7


def _set(folder: Path, text: str) -> list[tuple[Path, list[str]]]:
    return [(folder / "rows.jsonl", [text]), (folder / "report.json", [text])]


def test_a_sigterm_held_during_the_renames_is_raised_as_terminated_after_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_replace = os.replace

    def replace(src: Any, dst: Any) -> None:
        if Path(dst).name == "rows.jsonl":
            os.kill(os.getpid(), signal.SIGTERM)  # held back until the last rename is done
        real_replace(src, dst)

    monkeypatch.setattr("vqaudit.files.os.replace", replace)
    with sigterm_like_ctrl_c(), pytest.raises(TerminatedAfterWrite) as info:
        atomic_write_set(_set(tmp_path, "new\n"))
    assert info.value.code == 143  # still a Terminated to a caller that does not look further
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {"rows.jsonl": "new\n", "report.json": "new\n"}


def test_a_sigterm_before_the_renames_is_a_plain_terminated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    atomic_write_set(_set(tmp_path, "old\n"))

    def chunks() -> Any:
        os.kill(os.getpid(), signal.SIGTERM)  # while the second file is rendered: nothing renamed yet
        yield "new\n"

    with sigterm_like_ctrl_c(), pytest.raises(Terminated) as info:
        atomic_write_set([(tmp_path / "rows.jsonl", ["new\n"]), (tmp_path / "report.json", chunks())])
    assert type(info.value) is Terminated
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {"rows.jsonl": "old\n", "report.json": "old\n"}


def test_after_output_complete_a_sigterm_raises_completed_with_exit_0() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with sigterm_like_ctrl_c(), pytest.raises(Completed) as info:
        output_complete("all written")
        os.kill(os.getpid(), signal.SIGTERM)
    assert (info.value.code, info.value.note) == (0, "all written")
    assert signal.getsignal(signal.SIGTERM) is before  # the block restores the handler it found
    with sigterm_like_ctrl_c(), pytest.raises(Terminated):  # a new command starts without the mark
        os.kill(os.getpid(), signal.SIGTERM)


def test_inside_completes_on_write_the_output_is_complete_from_the_last_rename_with_no_gap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Re-trial: 3 of 60 multiple-choice audits stopped by SIGTERM just after their report set was renamed into
    # place exited 143 ("rerun to resume"), though all three files were complete: the signal fell between
    # atomic_write_set returning and the command calling output_complete. Now the set's last rename marks it.
    with sigterm_like_ctrl_c(), pytest.raises(Completed) as info, completes_on_write("set written"):
        atomic_write_set(_set(tmp_path, "new\n"))
        os.kill(os.getpid(), signal.SIGTERM)  # right after the renames, before the command says anything
    assert (info.value.code, info.value.note) == (0, "set written")
    real_replace = os.replace

    def replace(src: Any, dst: Any) -> None:
        if Path(dst).name == "rows.jsonl":
            os.kill(os.getpid(), signal.SIGTERM)  # held back during the renames, raised once the set is whole
        real_replace(src, dst)

    monkeypatch.setattr("vqaudit.files.os.replace", replace)
    with sigterm_like_ctrl_c(), pytest.raises(Completed), completes_on_write("set written"):
        atomic_write_set(_set(tmp_path, "newer\n"))
    monkeypatch.setattr("vqaudit.files.os.replace", real_replace)

    def chunks() -> Any:
        os.kill(os.getpid(), signal.SIGTERM)  # while rendering: the set is not written, a plain stop
        yield "newest\n"

    with sigterm_like_ctrl_c(), pytest.raises(Terminated) as stop, completes_on_write("set written"):
        atomic_write_set([(tmp_path / "rows.jsonl", ["newest\n"]), (tmp_path / "report.json", chunks())])
    assert type(stop.value) is Terminated
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {"rows.jsonl": "newer\n", "report.json": "newer\n"}
    with sigterm_like_ctrl_c(), pytest.raises(Terminated) as later:  # outside the block: a set marks nothing
        atomic_write_set(_set(tmp_path, "last\n"))
        os.kill(os.getpid(), signal.SIGTERM)
    assert type(later.value) is Terminated
