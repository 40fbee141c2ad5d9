"""Helpers of the column-at-once passes of the short-answer audit (the speed of the target pass)."""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager


def repeated_rows(*columns: Sequence[object]) -> tuple[list[int], list[int]] | None:
    """The rows made of the same objects as an earlier row, found by identity (cheap: no string is hashed).

    Args:
        columns: equally long columns; row ``k`` is ``(c[k] for c in columns)``.

    Returns:
        None when every row has its own objects in some column (checked first, on whole columns), else
        ``(firsts, where)``: the first row of each distinct row in order, and for each row the first row made of
        the same objects. Rows of equal but distinct objects count as distinct (a speed-up only: a pure function
        of the row gives the same value either way).
    """
    n = len(columns[0])
    if n < 2 or any(len(set(map(id, column))) == n for column in columns):
        return None
    first: dict[tuple[int, ...], int] = {}
    where = [first.setdefault(key, k) for k, key in enumerate(zip(*(map(id, c) for c in columns), strict=True))]
    return (list(first.values()), where) if len(first) < n else None


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a column pass runs (restored afterwards).

    The passes allocate several small objects per row and keep them alive, so the collector's generational
    passes would rescan every row already done (as ``vqaudit.shortanswer.audit_layers.gc_paused`` explains for
    the audit).

    At the end, ``freeze()`` + ``unfreeze()`` moves the objects made meanwhile straight into the oldest
    generation, so the next collection does not scan them all at once; they stay collectable.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:  # never unfreeze what a caller froze
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()
