"""The audit's layer columns over all rows, held compactly while the audit pools them.

:func:`vqaudit.shortanswer.audit_layers.layer_passes` computes each layer of a chunk of rows as a Python list (a float
object per score, a tuple per row for the canonical ``(score, kind)`` and the repaired scores, a tuple of tuples of
strings per overlay). Kept for every row of a 500,000-row file these cost about 280 bytes a row (``tracemalloc``
at 50,000 rows, ``benchmarks/bench_audit_memory.py``). :class:`LayerColumns` keeps them instead as

- scores in ``array('d')`` (8 bytes a row; a float goes in and comes back bit for bit, NaN and -0.0 included),
  unless a layer gave some non-float value, which keeps the column a list so that every value comes back as the
  type it was (an int score would print as ``1`` in ``rows.jsonl``, not ``1.0``);
- the canonical kinds, contracts, RA-Eval results: lists of shared objects (a pointer a row);
- the overlays: a :class:`~vqaudit.shortanswer.packed.Packed` sequence (compressed blocks).

Every read gives a value equal to the one the layer computed, so the pooled figures and records are unchanged:
the pooled means are sums over the same floats in the same order.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, MutableSequence, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from vqaudit.scoring.contracts import Contract
from vqaudit.scoring.repair import VARIANTS, Overlay
from vqaudit.shortanswer.packed import Packed

Column = MutableSequence[Any]


def _same(value: Overlay) -> Overlay:
    return value


def _extend(column: Column, values: Sequence[Any]) -> Column:
    """``column`` extended by ``values``; an ``array('d')`` given a non-float value becomes a list first."""
    if isinstance(column, array) and any(type(v) is not float for v in values):
        column = list(column)
    column.extend(values)
    return column


class Zipped(Sequence[tuple[Any, ...]]):
    """Columns read as one sequence of row tuples (``zip`` of them, by index): ``z[i] == (a[i], b[i], ...)``."""

    __slots__ = ("_columns",)

    def __init__(self, *columns: Sequence[Any]) -> None:
        """Raises ValueError: the columns differ in length."""
        if len({len(c) for c in columns}) > 1:
            raise ValueError("the columns differ in length")
        self._columns = columns

    def __len__(self) -> int:
        return len(self._columns[0]) if self._columns else 0

    @overload
    def __getitem__(self, index: int) -> tuple[Any, ...]: ...

    @overload
    def __getitem__(self, index: slice) -> list[tuple[Any, ...]]: ...

    def __getitem__(self, index: int | slice) -> tuple[Any, ...] | list[tuple[Any, ...]]:
        if isinstance(index, slice):
            return list(zip(*(c[index] for c in self._columns), strict=True))
        return tuple(c[index] for c in self._columns)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return zip(*self._columns, strict=True)


@dataclass
class LayerColumns:
    """Every layer column of the rows added so far (see the module docstring), in row order.

    Attributes:
        official: official score per row.
        canonical: canonical score per row.
        kinds: canonical kind per row (None: no canonical match).
        contracts: contract per row.
        overlays: reference overlay per row.
        repaired: per variant of :data:`VARIANTS`, the repaired score per row.
        ra: RA-Eval result per row (None: not tested).
    """

    official: Column = field(default_factory=lambda: array("d"))
    canonical: Column = field(default_factory=lambda: array("d"))
    kinds: list[str | None] = field(default_factory=list)
    contracts: list[Contract] = field(default_factory=list)
    overlays: Packed[Overlay] = field(default_factory=lambda: Packed(_same, _same))
    repaired: dict[str, Column] = field(default_factory=lambda: {v: array("d") for v in VARIANTS})
    ra: list[bool | None] = field(default_factory=list)

    def add(
        self,
        official: Sequence[float],
        canon: Sequence[tuple[float, str | None]],
        contracts: Sequence[Contract],
        overlays: Sequence[Overlay],
        repaired: Sequence[tuple[float, ...]],
        ra: Sequence[bool | None],
    ) -> None:
        """Append one chunk's columns as :func:`vqaudit.shortanswer.audit_layers.layer_passes` returns them.

        Raises:
            ValueError: the chunk's columns differ in length, or a row has not one repaired score per variant.
        """
        n = len(official)
        if any(len(c) != n for c in (canon, contracts, overlays, repaired, ra)):
            raise ValueError("the chunk's layer columns differ in length")
        if any(len(r) != len(VARIANTS) for r in repaired):
            raise ValueError(f"a row has not one repaired score per variant ({len(VARIANTS)})")
        self.official = _extend(self.official, official)
        self.canonical = _extend(self.canonical, [c[0] for c in canon])
        self.kinds.extend([c[1] for c in canon])
        self.contracts.extend(contracts)
        self.overlays.extend(overlays)
        for k, v in enumerate(VARIANTS):
            self.repaired[v] = _extend(self.repaired[v], [r[k] for r in repaired])
        self.ra.extend(ra)

    def canon(self) -> Zipped:
        """The canonical ``(score, kind)`` of each row."""
        return Zipped(self.canonical, self.kinds)

    def repaired_rows(self) -> Zipped:
        """Each row's repaired scores, in :data:`VARIANTS` order."""
        return Zipped(*(self.repaired[v] for v in VARIANTS))
