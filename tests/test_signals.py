"""signals.run_async: SIGTERM handled as asyncio.run handles Ctrl-C (new-user trial: `run` died at once on SIGTERM)."""

from __future__ import annotations

import asyncio
import os
import signal
import threading

import pytest

from vqaudit.signals import SIGTERM_EXIT, Terminated, run_async

pytestmark = pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                                reason="signal handlers are set in the main thread only")


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
