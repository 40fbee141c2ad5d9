"""Helpers of the column-at-once passes of the short-answer audit (issue 19 part 3)."""

from __future__ import annotations

from collections.abc import Sequence


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
