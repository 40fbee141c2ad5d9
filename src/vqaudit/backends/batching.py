"""Batching concurrent ``complete`` calls for in-process model backends (``hf:``, ``vllm:``).

The run stage calls ``Backend.complete`` from up to ``--concurrency`` tasks at once, one request each. A local
model is fastest when it generates for many prompts at once, so :class:`Batcher` collects the requests waiting
at a moment (up to ``batch_size`` that share a group key, e.g. the same generation parameters), hands them to a
blocking ``run_batch`` function on one worker thread (the model is only ever used from that thread, and the
event loop stays free to store replies), and resolves each caller's future with its own reply.

A batch is formed once no new request arrived for ``linger_s`` (or it is full, or ``max_linger_s`` passed
since its first request), so callers that re-submit right after storing their previous reply join the next
batch instead of fragmenting it. A caller cancelled while waiting is dropped from its batch.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Generic, TypeVar

from vqaudit.backends.base import BackendCallError

T = TypeVar("T")


@dataclass
class _Pending(Generic[T]):
    item: T
    future: asyncio.Future[str]


class Batcher(Generic[T]):
    """Collects concurrently submitted items into batches run on one worker thread."""

    def __init__(
        self,
        run_batch: Callable[[Sequence[T]], Sequence[str | BackendCallError]],
        *,
        batch_size: int,
        group_key: Callable[[T], Hashable],
        name: str,
        linger_s: float = 0.005,
        max_linger_s: float = 0.05,
    ) -> None:
        """Set up a batcher (no thread or task starts before the first ``submit``).

        Args:
            run_batch: blocking function from a batch of items (1 to ``batch_size``, one group key) to one
                result per item, in order: the reply text or a BackendCallError for that item. An exception it
                raises fails every item of the batch.
            batch_size: maximum items per batch (at least 1).
            group_key: items are batched only with items of an equal key.
            name: thread name prefix (shown in stack dumps).
            linger_s: a batch is formed once no new item arrived for this many seconds.
            max_linger_s: ... or once this many seconds passed since the batch's first item was submitted.

        Raises:
            ValueError: ``batch_size`` below 1.
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self._run_batch = run_batch
        self.batch_size = batch_size
        self._group_key = group_key
        self._linger_s = linger_s
        self._max_linger_s = max_linger_s
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self._pending: list[_Pending[T]] = []
        self._running: list[_Pending[T]] = []
        self._wakeup: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.closing = threading.Event()
        self.batch_sizes: list[int] = []

    async def submit(self, item: T) -> str:
        """Queue ``item`` for the next batch of its group and return its reply.

        Raises:
            BackendCallError: ``run_batch`` failed for this item (or for its whole batch), or the batcher was
                closed before the item ran.
        """
        if self.closing.is_set():
            raise BackendCallError("the backend was closed", fatal=True)
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done() or self._loop is not loop:
            self._loop = loop
            self._pending = []
            self._wakeup = asyncio.Event()
            self._task = loop.create_task(self._consume())
        future: asyncio.Future[str] = loop.create_future()
        self._pending.append(_Pending(item, future))
        assert self._wakeup is not None
        self._wakeup.set()
        return await future

    async def _linger(self) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._max_linger_s
        while len(self._pending) < self.batch_size and loop.time() < deadline:
            seen = len(self._pending)
            await asyncio.sleep(self._linger_s)
            if len(self._pending) == seen:
                return

    def _take_batch(self) -> list[_Pending[T]]:
        live = [p for p in self._pending if not p.future.done()]
        if not live:
            self._pending = []
            return []
        key = self._group_key(live[0].item)
        batch: list[_Pending[T]] = []
        rest: list[_Pending[T]] = []
        for pending in live:
            if len(batch) < self.batch_size and self._group_key(pending.item) == key:
                batch.append(pending)
            else:
                rest.append(pending)
        self._pending = rest
        return batch

    async def _consume(self) -> None:
        assert self._wakeup is not None
        loop = asyncio.get_running_loop()
        try:
            while True:
                await self._wakeup.wait()
                await self._linger()
                batch = self._take_batch()
                if not self._pending:
                    self._wakeup.clear()
                if not batch:
                    continue
                self.batch_sizes.append(len(batch))
                self._running = batch
                items = [p.item for p in batch]
                try:
                    results: Sequence[str | BackendCallError] = await loop.run_in_executor(
                        self._executor, self._run_batch, items
                    )
                    if len(results) != len(batch):
                        raise BackendCallError(f"the model returned {len(results)} replies for {len(batch)} prompts")
                except Exception as exc:  # one failed batch fails its items, not the run
                    results = [_as_call_error(exc)] * len(batch)
                for pending, result in zip(batch, results, strict=True):
                    if pending.future.done():
                        continue
                    if isinstance(result, BackendCallError):
                        pending.future.set_exception(result)
                    else:
                        pending.future.set_result(result)
                self._running = []
        finally:
            for pending in self._running + self._pending:
                if not pending.future.done():
                    pending.future.set_exception(BackendCallError("the backend was closed", fatal=True))
            self._pending = []
            self._running = []

    async def aclose(self) -> None:
        """Stop the batcher: fail waiting items, let a running batch see ``closing`` and end its thread."""
        self.closing.set()
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        self._executor.shutdown(wait=False, cancel_futures=True)


def isolate_failures(
    run: Callable[[Sequence[T]], Sequence[str | BackendCallError]], items: Sequence[T]
) -> list[str | BackendCallError]:
    """Run ``items`` as one batch; if the batch raises, run each item alone so one bad item fails only itself.

    Args:
        run: blocking batch function (as for :class:`Batcher`).
        items: the batch.

    Returns:
        One result per item, in order: the reply or a BackendCallError (the exception's type and message). A
        fatal BackendCallError (the backend is closing) is returned for every item without running them alone.
    """
    try:
        return list(run(items))
    except Exception as exc:
        if len(items) == 1 or (isinstance(exc, BackendCallError) and exc.fatal):
            return [_as_call_error(exc)] * len(items)  # a fatal error (closing) would fail each item alone too
    results: list[str | BackendCallError] = []
    for item in items:
        try:
            results.extend(run([item]))
        except Exception as exc:
            results.append(_as_call_error(exc))
    return results


def _as_call_error(exc: Exception) -> BackendCallError:
    if isinstance(exc, BackendCallError):
        return exc
    return BackendCallError(f"generation failed: {type(exc).__name__}: {str(exc).strip()[:300]}")
