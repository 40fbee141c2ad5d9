"""Vectorized group bootstrap: count-weight draws, summed statistics, percentile intervals, paired differences.

Seed 000 §4 ("Denominators and uncertainty") and appendix B: descriptive 95% percentile intervals come from
10,000 bootstrap draws of the groups of one source, with replacement, keeping all views of a group together;
paired comparisons reuse the same draws (docs/papers.md, vocabulary).

A draw is a vector of ``n_groups`` non-negative integer weights summing to ``n_groups`` (how often each group was
drawn). Every metric here is a ratio of sums of per-group counts, so one draw's totals are ``weights @ counts``
and all draws together are one matrix product ``W @ C`` with ``W`` of shape ``(n_draws, n_groups)`` and ``C`` of
shape ``(n_groups, n_columns)``.

The weights depend only on ``(n_groups, n_draws, seed)``: row ``d`` is the same whatever the chunk size and
whatever ``n_draws >= d + 1`` is, so two runs on the same benchmark (same groups in the same order) share draws.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from vqaudit.errors import VqauditError
from vqaudit.progress import step

DEFAULT_DRAWS = 10_000
"""Bootstrap draws per source (seed 000 §4)."""

CONFIDENCE = 0.95
"""Coverage of the percentile intervals (seed 000 §4)."""

_CHUNK_ELEMENTS = 1 << 20
"""Weights generated per chunk (rows x groups); bounds the int64 scratch memory to ~8 MB."""

_CACHE_ELEMENTS = 1 << 24
"""Largest weight matrix (rows x groups) kept in memory as float32 (64 MB) and reused between calls."""

_FLOAT32_EXACT = float(1 << 24)
"""Integers below 2**24 are exact in float32, so sums bounded by it are exact."""

Statistic = Callable[[NDArray[np.float64]], NDArray[np.float64]]
"""Maps summed counts of shape ``(..., n_columns)`` to one value per leading index, shape ``(...)``."""


def _check_sizes(n_groups: int, n_draws: int) -> None:
    if n_groups < 1:
        raise VqauditError(f"bootstrap needs at least one group, got n_groups={n_groups}")
    if n_draws < 0:
        raise VqauditError(f"bootstrap draws must be >= 0, got n_draws={n_draws}")


def _default_chunk(n_groups: int) -> int:
    return max(1, _CHUNK_ELEMENTS // n_groups)


def bootstrap_weights(n_groups: int, n_draws: int, seed: int, chunk: int | None = None) -> Iterator[NDArray[np.int64]]:
    """Yield the group bootstrap count weights in chunks of rows.

    Each row is one draw: ``n_groups`` group indices drawn uniformly with replacement, turned into counts with a
    (row-offset) ``bincount``. The stream comes from ``numpy.random.default_rng(seed)`` drawing int64 indices row
    after row, so the concatenated rows do not depend on ``chunk`` (checked in the tests).

    Args:
        n_groups: Number of groups G (>= 1).
        n_draws: Number of draws D (>= 0).
        seed: Seed of the generator.
        chunk: Rows per yielded array; default keeps each chunk near 2**20 weights.

    Yields:
        int64 arrays of shape ``(rows, n_groups)`` with rows <= chunk; every row sums to ``n_groups``; the rows
        of all chunks together are the D draws in order.

    Raises:
        VqauditError: if ``n_groups < 1``, ``n_draws < 0`` or ``chunk < 1``.
    """
    _check_sizes(n_groups, n_draws)
    rows_per_chunk = _default_chunk(n_groups) if chunk is None else chunk
    if rows_per_chunk < 1:
        raise VqauditError(f"bootstrap chunk must be >= 1, got chunk={chunk}")
    rng = np.random.default_rng(seed)
    for start in range(0, n_draws, rows_per_chunk):
        rows = min(rows_per_chunk, n_draws - start)
        picks = rng.integers(0, n_groups, size=(rows, n_groups), dtype=np.int64)
        picks += (np.arange(rows, dtype=np.int64) * n_groups)[:, None]
        yield np.bincount(picks.ravel(), minlength=rows * n_groups).reshape(rows, n_groups)


@lru_cache(maxsize=4)
def _cached_weights(n_groups: int, n_draws: int, seed: int) -> NDArray[np.float32]:
    out = np.empty((n_draws, n_groups), dtype=np.float32)
    start = 0
    with step(f"bootstrap draws ({n_groups} groups)", n_draws) as shown:
        for block in bootstrap_weights(n_groups, n_draws, seed):
            out[start : start + block.shape[0]] = block
            start += block.shape[0]
            shown.update(start)
    out.flags.writeable = False
    return out


def draw_weights(n_groups: int, n_draws: int, seed: int) -> NDArray[np.float32]:
    """Return all bootstrap weights as one read-only float32 matrix, cached per ``(n_groups, n_draws, seed)``.

    Args:
        n_groups: Number of groups G (>= 1).
        n_draws: Number of draws D (>= 0); ``D * G`` must be at most 2**24 (use :func:`bootstrap_weights`
            chunks beyond that).
        seed: Seed of the draws.

    Returns:
        Array of shape ``(D, G)``, integer-valued, each row summing to G; the same rows as
        :func:`bootstrap_weights`.

    Raises:
        VqauditError: on bad sizes, or when the matrix would exceed the in-memory limit.
    """
    _check_sizes(n_groups, n_draws)
    if n_groups * n_draws > _CACHE_ELEMENTS:
        raise VqauditError(f"{n_draws} x {n_groups} bootstrap weights are too many to hold; stream them in chunks")
    return _cached_weights(n_groups, n_draws, seed)


def clear_weight_cache() -> None:
    """Forget the cached weight matrices (frees their memory; the next call regenerates identical draws)."""
    _cached_weights.cache_clear()


def bootstrap_totals(
    counts: NDArray[np.integer] | NDArray[np.floating], *, n_draws: int, seed: int
) -> NDArray[np.float64]:
    """Sum per-group counts under every bootstrap draw: ``W @ counts``.

    Args:
        counts: Non-negative integer-valued array of shape ``(G, K)``: K sufficient-statistic counts per group,
            rows in the canonical group order (the order fixes which group each weight applies to).
        n_draws: Number of draws D (>= 0).
        seed: Seed of the draws.

    Returns:
        float64 array of shape ``(D, K)``: the column totals of each resampled benchmark (exact integers).

    Raises:
        VqauditError: if ``counts`` is not two-dimensional with at least one row, or on bad sizes.
    """
    matrix = np.asarray(counts)
    if matrix.ndim != 2 or matrix.shape[0] < 1:
        raise VqauditError(f"bootstrap counts must have shape (groups, columns), got {matrix.shape}")
    n_groups = int(matrix.shape[0])
    _check_sizes(n_groups, n_draws)
    largest = float(matrix.max()) if matrix.size else 0.0
    exact32 = largest * n_groups < _FLOAT32_EXACT
    if exact32 and n_groups * n_draws <= _CACHE_ELEMENTS:
        product = draw_weights(n_groups, n_draws, seed) @ matrix.astype(np.float32)
        return product.astype(np.float64)
    out = np.empty((n_draws, matrix.shape[1]), dtype=np.float64)
    dtype = np.float32 if exact32 else np.float64
    right = matrix.astype(dtype)
    start = 0
    with step(f"bootstrap draws ({n_groups} groups)", n_draws) as shown:
        for block in bootstrap_weights(n_groups, n_draws, seed):
            out[start : start + block.shape[0]] = np.matmul(block.astype(dtype), right)
            start += block.shape[0]
            shown.update(start)
    return out


def percentile_interval(
    samples: NDArray[np.floating], *, confidence: float = CONFIDENCE
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Nan-aware percentile interval over the draws (axis 0).

    Draws whose statistic is undefined (NaN, e.g. a resample without any negative view) are left out.

    Args:
        samples: Array of shape ``(D, ...)`` of per-draw statistics.
        confidence: Coverage in (0, 1); 0.95 gives the 2.5th and 97.5th percentiles.

    Returns:
        ``(lo, hi)``, each of shape ``samples.shape[1:]``; NaN where every draw is NaN or D == 0.

    Raises:
        VqauditError: if ``confidence`` is not in (0, 1).
    """
    if not 0.0 < confidence < 1.0:
        raise VqauditError(f"confidence must be in (0, 1), got {confidence}")
    values = np.asarray(samples, dtype=np.float64)
    if values.shape[0] == 0:
        empty = np.full(values.shape[1:], np.nan)
        return empty, empty.copy()
    tail = (1.0 - confidence) / 2.0 * 100.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns give NaN, which is what we want
        lo, hi = np.nanpercentile(values, [tail, 100.0 - tail], axis=0)
    return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)


def paired_bootstrap_difference(
    counts_a: NDArray[np.integer] | NDArray[np.floating],
    counts_b: NDArray[np.integer] | NDArray[np.floating],
    statistic: Statistic,
    *,
    n_draws: int = DEFAULT_DRAWS,
    seed: int = 0,
    confidence: float = CONFIDENCE,
) -> tuple[float, float, float]:
    """Paired bootstrap of ``statistic(A) - statistic(B)`` with the same draws applied to both runs.

    Row ``g`` of both count matrices must describe the same group (same benchmark, same canonical order); each
    draw weights group ``g`` identically in A and B, so the difference is paired.

    Args:
        counts_a: Per-group counts of run A, shape ``(G, K)``.
        counts_b: Per-group counts of run B, same shape and group order.
        statistic: Maps totals of shape ``(..., K)`` to values of shape ``(...)`` (NaN where undefined).
        n_draws: Number of draws D (>= 0).
        seed: Seed of the draws.
        confidence: Interval coverage in (0, 1).

    Returns:
        ``(point, lo, hi)``: the difference on the full data and its percentile interval (NaN when undefined).

    Raises:
        VqauditError: if the shapes differ, or on bad sizes.
    """
    a = np.asarray(counts_a, dtype=np.float64)
    b = np.asarray(counts_b, dtype=np.float64)
    if a.shape != b.shape:
        raise VqauditError(f"paired bootstrap needs count matrices of the same shape, got {a.shape} and {b.shape}")
    point = float(statistic(a.sum(axis=0)) - statistic(b.sum(axis=0)))
    width = a.shape[1]
    totals = bootstrap_totals(np.concatenate([a, b], axis=1), n_draws=n_draws, seed=seed)
    diffs = statistic(totals[:, :width]) - statistic(totals[:, width:])
    lo, hi = percentile_interval(diffs, confidence=confidence)
    return point, float(lo), float(hi)
