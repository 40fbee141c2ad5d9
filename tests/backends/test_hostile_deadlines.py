"""Hung calls and retry waits do not hold the run hostage.

With 3% of requests hanging, a run waited the full timeout for each hung call (90% of the views were done after
7.7 s; the run took 259 s), and a call waiting out its backoff held one of the ``--concurrency`` slots. The
figures are measured in ``benchmarks/bench_reliability.py``; these tests pin the rules by their values.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vqaudit.backends import BackendCallError, Completion, GenerationParams, ModelOptions, Request, load_backend
from vqaudit.backends.deadlines import FACTOR, MIN_SAMPLES, WINDOW, AttemptLimits
from vqaudit.run import load_responses, run_benchmark
from vqaudit.schema import View
from vqaudit.store import load_benchmark


def test_attempt_limits_by_hand() -> None:
    assert (MIN_SAMPLES, WINDOW, FACTOR) == (16, 200, 8.0)
    limits = AttemptLimits(floor_s=10.0)
    for _ in range(15):
        limits.record(0.1)
    assert limits.limit_s(0) == float("inf")  # 15 samples: not adapted yet
    limits.record(0.1)
    assert limits.limit_s(0) == 10.0 and limits.limit_s(2) == 40.0  # 8 * 0.1 < floor; doubles per retry
    slow = AttemptLimits(floor_s=1.0)
    for seconds in range(1, 21):  # 1, 2, ..., 20 s: the 90th percentile (18th of 20) is 18 s
        slow.record(float(seconds))
    assert slow.limit_s(0) == 8 * 18.0 and slow.limit_s(1) == 2 * 8 * 18.0
    for _ in range(WINDOW):  # the window forgets: 200 fast replies
        slow.record(0.01)
    assert slow.limit_s(0) == 1.0


def _requests(bench: Path, n: int) -> tuple[list[View], list[Request]]:
    loaded = load_benchmark(bench)
    views = list(loaded.views)[:n]
    reqs = [
        Request(v, "p", v.question, loaded.image_path(v).read_bytes(), "image/png", GenerationParams()) for v in views
    ]
    return views, reqs


def test_a_hung_attempt_is_cut_at_the_adapted_limit(make_bench: Callable[..., Path], hostile: Any) -> None:
    views, reqs = _requests(make_bench(6, 3), 18)
    hostile.faults = {views[16].image_sha256: ["hang"]}
    backend = load_backend(
        f"openai:m@{hostile.url}", ModelOptions(max_retries=0, timeout_s=60.0, attempt_floor_s=0.2, concurrency=4)
    )

    async def go() -> str:
        try:
            for request in reqs[:16]:  # 16 quick replies: the limit adapts to the floor, 0.2 s
                await backend.complete(request)
            with pytest.raises(BackendCallError) as info:
                await backend.complete(reqs[16])
            return str(info.value)
        finally:
            await backend.aclose()

    # cut at the adapted limit, max(0.2 s floor, 8 x p90 of the quick replies): 0.2 s on an idle machine, a little
    # more when the shared machine slows the quick replies down, never the 60 s socket timeout
    message = asyncio.run(go())
    match = re.fullmatch(r"failed after 1 attempts: timeout after ([0-9.]+) s", message)
    assert match is not None, message
    assert 0.2 <= float(match[1]) <= 5.0


def test_a_call_that_hung_first_is_cut_once_the_others_show_the_pace(
    make_bench: Callable[..., Path], tmp_path: Path, hostile: Any
) -> None:
    bench = make_bench(10, 3)  # 30 views
    first = load_benchmark(bench).views[0]
    hostile.faults = {first.image_sha256: ["hang"]}
    options: dict[str, Any] = {
        "max_retries": 1,
        "backoff_base_s": 0.001,
        "timeout_s": 60.0,
        "attempt_floor_s": 0.2,
        "request_deadline_s": 20.0,
    }
    out = tmp_path / "run"
    summary = run_benchmark(
        bench, f"openai:m@{hostile.url}", out, concurrency=2, progress=False, options=ModelOptions(**options)
    )
    # without the re-read limit the hung attempt would run to the 20 s request deadline and the view would fail
    assert summary.n_errors == 0
    assert hostile.snapshot()[first.image_sha256] == 2
    assert load_responses(out)[first.view_id].error is None


def test_the_request_deadline_bounds_all_attempts(make_bench: Callable[..., Path], hostile: Any) -> None:
    views, reqs = _requests(make_bench(1, 1), 1)
    hostile.default = "hang"
    backend = load_backend(
        f"openai:m@{hostile.url}", ModelOptions(max_retries=5, timeout_s=60.0, request_deadline_s=0.5)
    )

    async def go() -> str:
        try:
            with pytest.raises(BackendCallError) as info:
                await backend.complete(reqs[0])
            return str(info.value)
        finally:
            await backend.aclose()

    assert asyncio.run(go()) == (
        "no reply within the request deadline of 0.5 s (1 attempts; last: timeout after 0.5 s)"
    )
    assert hostile.snapshot() == {views[0].image_sha256: 1}


def test_a_retry_wait_does_not_hold_the_slot(make_bench: Callable[..., Path], tmp_path: Path, hostile: Any) -> None:
    bench = make_bench(2, 2)
    views = load_benchmark(bench).views
    hostile.faults = {views[0].image_sha256: ["429"]}
    options: dict[str, Any] = {"max_retries": 1, "backoff_base_s": 2.0, "timeout_s": 30.0}  # the retry waits 1 to 2 s
    out = tmp_path / "run"
    summary = run_benchmark(
        bench, f"openai:m@{hostile.url}", out, concurrency=1, progress=False, options=ModelOptions(**options)
    )
    assert (summary.n_asked, summary.n_errors) == (4, 0)
    sha = [v.image_sha256 for v in views]
    # with one slot, the other three views were asked while the first waited; it was asked again last
    assert hostile.order == [sha[0], sha[1], sha[2], sha[3], sha[0]]
    assert hostile.peak_in_flight == 1


def test_no_backoff_is_not_a_passed_deadline(make_bench: Callable[..., Path], hostile: Any) -> None:
    views, reqs = _requests(make_bench(1, 1), 1)
    hostile.faults = {views[0].image_sha256: ["500", "500"]}
    backend = load_backend(f"openai:m@{hostile.url}", ModelOptions(max_retries=2, backoff_base_s=0.0, timeout_s=5.0))

    async def go() -> str:
        try:
            reply = await backend.complete(reqs[0])
            return reply.text or "" if isinstance(reply, Completion) else reply
        finally:
            await backend.aclose()

    assert asyncio.run(go()).startswith('{"answerable": true')  # two retries with no wait, then the reply
    assert hostile.snapshot() == {views[0].image_sha256: 3}
