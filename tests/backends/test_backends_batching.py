"""Batching of concurrent calls (backends/batching.py) and typed --model-arg reading (backends/options.py).

The batch function here is a plain Python function, so every expected batch is worked out by hand.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

import pytest

from vqaudit.backends.base import BackendCallError
from vqaudit.backends.batching import Batcher, isolate_failures
from vqaudit.backends.options import ModelArgs, parse_model_args
from vqaudit.errors import VqauditError


class Recorder:
    """Replies ``"<item>!"``; records each batch and the thread it ran on; items starting with 'bad' fail."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.threads: set[int] = set()

    def __call__(self, items: Sequence[str]) -> list[str | BackendCallError]:
        self.batches.append(list(items))
        self.threads.add(threading.get_ident())
        if any(item.startswith("boom") for item in items):
            raise RuntimeError("batch exploded")
        return [BackendCallError(f"{item} is bad") if item.startswith("bad") else f"{item}!" for item in items]


async def _gather(batcher: Batcher[str], items: list[str]) -> list[str | BaseException]:
    try:
        return list(await asyncio.gather(*(batcher.submit(i) for i in items), return_exceptions=True))
    finally:
        await batcher.aclose()


def test_concurrent_items_are_batched_up_to_batch_size_per_group() -> None:
    run = Recorder()
    batcher = Batcher(run, batch_size=3, group_key=lambda item: item[0], name="t")
    items = ["a1", "b1", "a2", "a3", "a4", "b2"]
    results = asyncio.run(_gather(batcher, items))
    assert results == ["a1!", "b1!", "a2!", "a3!", "a4!", "b2!"]
    # submission order is kept within a group; a group waits for its turn but never mixes with another
    assert run.batches == [["a1", "a2", "a3"], ["b1", "b2"], ["a4"]]
    assert batcher.batch_sizes == [3, 2, 1]
    assert len(run.threads) == 1 and threading.get_ident() not in run.threads  # one worker thread, not the loop


def test_callers_that_resubmit_join_the_next_batch() -> None:
    """Four workers each asking three items in turn, as the run stage does: batches of four, not fragments."""
    run = Recorder()
    batcher = Batcher(run, batch_size=4, group_key=lambda item: 0, name="t")

    async def worker(w: int) -> list[str]:
        replies = []
        for k in range(3):
            replies.append(await batcher.submit(f"w{w}-{k}"))
            await asyncio.sleep(0)  # storing the reply
        return replies

    async def main() -> list[list[str]]:
        try:
            return list(await asyncio.gather(*(worker(w) for w in range(4))))
        finally:
            await batcher.aclose()

    assert asyncio.run(main()) == [[f"w{w}-{k}!" for k in range(3)] for w in range(4)]
    assert batcher.batch_sizes == [4, 4, 4]


def test_item_errors_and_exploding_batches() -> None:
    run = Recorder()
    batcher = Batcher(lambda items: isolate_failures(run, items), batch_size=8, group_key=lambda item: 0, name="t")
    results = asyncio.run(_gather(batcher, ["a", "bad1", "boom", "c"]))
    assert results[0] == "a!" and results[3] == "c!"
    assert isinstance(results[1], BackendCallError) and str(results[1]) == "bad1 is bad"
    assert isinstance(results[2], BackendCallError)
    assert str(results[2]) == "generation failed: RuntimeError: batch exploded"
    # the whole batch raised, so each item was run alone: only "boom" fails
    assert run.batches == [["a", "bad1", "boom", "c"], ["a"], ["bad1"], ["boom"], ["c"]]


def test_a_fatal_error_is_not_retried_item_by_item() -> None:
    calls: list[list[str]] = []

    def closing(items: Sequence[str]) -> list[str | BackendCallError]:
        calls.append(list(items))
        raise BackendCallError("the backend was closed during generation", fatal=True)

    results = isolate_failures(closing, ["a", "b", "c"])
    assert calls == [["a", "b", "c"]]
    assert all(isinstance(r, BackendCallError) and r.fatal for r in results) and len(results) == 3


def test_a_batch_function_that_raises_fails_its_items_not_the_batcher() -> None:
    def run(items: Sequence[str]) -> list[str | BackendCallError]:
        if "x" in items:
            raise MemoryError("out of memory")
        return [f"{i}!" for i in items]

    async def main() -> tuple[list[str | BaseException], str]:
        batcher = Batcher(run, batch_size=2, group_key=lambda item: 0, name="t")
        try:
            first = list(await asyncio.gather(batcher.submit("x"), batcher.submit("y"), return_exceptions=True))
            return first, await batcher.submit("z")
        finally:
            await batcher.aclose()

    first, later = asyncio.run(main())
    assert all(isinstance(r, BackendCallError) and "MemoryError: out of memory" in str(r) for r in first)
    assert later == "z!"


def test_wrong_number_of_results_is_an_error_for_each_item() -> None:
    batcher = Batcher(lambda items: ["only one"], batch_size=2, group_key=lambda item: 0, name="t")
    results = asyncio.run(_gather(batcher, ["a", "b"]))
    assert all(isinstance(r, BackendCallError) and "returned 1 replies for 2 prompts" in str(r) for r in results)


def test_closing_fails_waiting_callers_and_later_submits() -> None:
    started = threading.Event()
    release = threading.Event()

    def slow(items: Sequence[str]) -> list[str | BackendCallError]:
        started.set()
        release.wait(5)
        return [f"{i}!" for i in items]

    async def main() -> tuple[list[str | BaseException], BaseException | None]:
        batcher = Batcher(slow, batch_size=1, group_key=lambda item: 0, name="t")
        tasks = [asyncio.ensure_future(batcher.submit(i)) for i in ("a", "b")]
        while not started.is_set():
            await asyncio.sleep(0.001)
        await batcher.aclose()
        release.set()
        results = list(await asyncio.gather(*tasks, return_exceptions=True))
        try:
            await batcher.submit("c")
        except BackendCallError as exc:
            return results, exc
        return results, None

    results, late = asyncio.run(main())
    assert all(isinstance(r, BackendCallError) and r.fatal for r in results)
    assert isinstance(late, BackendCallError) and late.fatal


def test_a_cancelled_caller_is_dropped_from_its_batch() -> None:
    run = Recorder()

    async def main() -> str:
        batcher = Batcher(run, batch_size=4, group_key=lambda item: 0, name="t", linger_s=0.02)
        gone = asyncio.ensure_future(batcher.submit("gone"))
        kept = asyncio.ensure_future(batcher.submit("kept"))
        await asyncio.sleep(0.005)  # both queued, the batch not yet formed
        gone.cancel()
        try:
            return await kept
        finally:
            await batcher.aclose()

    assert asyncio.run(main()) == "kept!"
    assert run.batches == [["kept"]]


def test_batch_size_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        Batcher(Recorder(), batch_size=0, group_key=lambda item: 0, name="t")


def test_parse_model_args() -> None:
    # the key is stripped, the value kept as given (it may hold "=" or be empty), in the order given
    assert parse_model_args(["dtype=bfloat16", " batch_size =4", "chat_template=a=b", "note="]) == (
        ("dtype", "bfloat16"),
        ("batch_size", "4"),
        ("chat_template", "a=b"),
        ("note", ""),
    )
    for bad in ["dtype", "=x", "  =x"]:
        with pytest.raises(VqauditError) as info:
            parse_model_args(["ok=1", bad])
        assert str(info.value) == f"--model-arg {bad!r}: expected KEY=VALUE (e.g. --model-arg dtype=bfloat16)"
    with pytest.raises(VqauditError) as info:
        parse_model_args(["a=1", "a=2"])
    assert str(info.value) == "--model-arg 'a=2': key 'a' is given twice ('1' and '2')"


def test_model_args_reads_typed_values_and_rejects_the_rest() -> None:
    args = ModelArgs("hf:m", {"n": "12", "on": "Yes", "off": "0", "x": "0.5", "kind": "b"}, ["n", "on", "off"])
    assert args.take_int("n", None) == 12
    assert args.take_int("missing", 7) == 7
    assert args.take_bool("on", False) is True
    assert args.take_bool("off", True) is False
    assert args.take_float("x", None, minimum=0.0, maximum=1.0) == 0.5
    assert args.take_str("kind", choices=("a", "b")) == "b"
    args.finish()

    cases = [
        ({"n": "0"}, lambda a: a.take_int("n", None), "--model-arg n='0': expected an integer from 1 to"),
        ({"n": "1.5"}, lambda a: a.take_int("n", None), "n='1.5': expected an integer"),
        ({"n": "-3"}, lambda a: a.take_int("n", None), "n='-3': expected an integer"),
        ({"b": "maybe"}, lambda a: a.take_bool("b", False), "b='maybe': expected true or false"),
        ({"x": "nan"}, lambda a: a.take_float("x", None, minimum=0.0, maximum=1.0), "x='nan': expected a number"),
        ({"x": "2"}, lambda a: a.take_float("x", None, minimum=0.0, maximum=1.0), "x='2': expected a number"),
        ({"k": "c"}, lambda a: a.take_str("k", choices=("a", "b")), "k='c': expected a or b"),
        ({"k": " "}, lambda a: a.take_str("k"), "k=' ': expected a nonempty value"),
    ]
    for given, read, message in cases:
        with pytest.raises(VqauditError, match=message.replace("(", "\\(").replace("?", "\\?")):
            read(ModelArgs("hf:m", given, ["n", "b", "x", "k"]))

    unknown = ModelArgs("hf:m", {"colour": "red", "size": "2"}, ["device", "dtype"])
    with pytest.raises(VqauditError) as info:
        unknown.finish()
    assert str(info.value) == ("model spec 'hf:m': unknown --model-arg colour, size; this backend takes device, dtype")
