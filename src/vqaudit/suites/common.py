"""What every benchmark builder shares: parallel group building in a fixed order, and the recorded versions."""

from __future__ import annotations

import importlib
import platform
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

import vqaudit

T = TypeVar("T")


def map_groups(make: Callable[[int], T], n_groups: int, workers: int, chunksize: int = 4) -> Iterator[T]:
    """Yield ``make(0), make(1), ...`` in group order, on ``workers`` processes when ``workers > 1``.

    Each group seeds its own generator from (seed, group index), so the output is identical for any worker count.
    """
    if workers <= 1:
        yield from map(make, range(n_groups))
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(make, range(n_groups), chunksize=chunksize)


def versions(*packages: str) -> dict[str, str]:
    """Versions of vqaudit, Python and the named packages (everything that affects pixels and labels)."""
    out = {"vqaudit": vqaudit.__version__, "python": platform.python_version()}
    for name in packages:
        module = importlib.import_module(name)
        out["pillow" if name == "PIL" else name] = str(getattr(module, "__version__", "unknown"))
    return dict(sorted(out.items()))
