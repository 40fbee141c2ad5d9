"""The scoring modules' per-string memos, scoped to one audit.

The scoring functions memoize pure functions of one string or one row (``functools.lru_cache``: the vqaEval
normalization, number readings, contract classification, output repairs, reference overlays, canonical features),
each bounded at up to 262,144 entries. Their results never depend on what the memos hold, only their speed does;
but left alone they keep up to that many entries of the last audit alive for the whole process. :func:`scoped`
empties them when an audit ends, so one audit's strings do not outlive it, and :func:`clear` empties them at any
point where the strings already read are not read again.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

_PACKAGE = "vqaudit.scoring"


def memoized() -> list[object]:
    """Every ``lru_cache`` function defined at module level in a loaded module of :mod:`vqaudit.scoring`.

    Only modules already imported are looked at (a memo of a module never imported is empty), and only functions
    defined in the module itself (not ones it imports), so each memo is listed once.
    """
    found: list[object] = []
    for name, module in list(sys.modules.items()):
        if module is None or not (name == _PACKAGE or name.startswith(_PACKAGE + ".")):
            continue
        for value in vars(module).values():
            if (
                hasattr(value, "cache_clear")
                and hasattr(value, "cache_info")
                and getattr(value, "__module__", None) == name
            ):
                found.append(value)
    return found


def clear() -> int:
    """Empty every memo of :func:`memoized`; returns the number of entries dropped."""
    dropped = 0
    for fn in memoized():
        dropped += fn.cache_info().currsize  # type: ignore[attr-defined]
        fn.cache_clear()  # type: ignore[attr-defined]
    return dropped


@contextmanager
def scoped() -> Iterator[None]:
    """Run the block, then :func:`clear` the memos, however the block ends (an error included)."""
    try:
        yield
    finally:
        clear()
