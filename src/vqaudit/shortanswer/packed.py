"""Compact row stores: a sequence of records held as compressed blocks and decoded only while read.

A short-answer audit reads every row of its prediction file several times (the join, the layer passes, the
report's ``rows.jsonl``), but only a chunk at a time. Held as Python objects, a TextVQA row costs about 1.3 KB
(the record, its attribute slots, the ten annotator answers as separate strings; ``tracemalloc`` at 50,000 rows,
``benchmarks/bench_audit_memory.py``), which put a 500,000-row audit at 839 MB. A :class:`Packed` sequence holds
:data:`BLOCK_ROWS` records at a time as one ``zlib``-compressed ``marshal`` string of their field tuples and decodes
one block when a row of it is read, so what stays held grows by the compressed size of the rows (tens of bytes a
row) instead of their objects.

Only plain data goes in: ``marshal`` takes strings, numbers, booleans, None and tuples of them, exactly the field
types of :class:`~vqaudit.shortanswer.records.Prediction` and :class:`~vqaudit.shortanswer.records.AuditRow`; a
record read back is equal field for field to the one stored (strings and floats come back equal, not the same
object), so every figure computed from the rows is unchanged.
"""

from __future__ import annotations

import marshal
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import fields
from operator import attrgetter
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")

BLOCK_ROWS = 2048
"""Records per compressed block: large enough that ``zlib`` finds the repeats between rows (field names are not
stored, but questions, answers and splits repeat), small enough that decoding one row decodes few others."""

_LEVEL = 1
"""``zlib`` level: level 1 compresses these blocks to about a third and costs a fraction of the audit's time."""


class Packed(Sequence[T], Generic[T]):
    """A growing sequence of records held as compressed blocks (see the module docstring).

    ``encode`` turns a record into marshal-able plain data (a tuple of its fields), ``decode`` turns that back into
    an equal record. Reading by index decodes the block holding the row and keeps that one block decoded, so
    reading rows in order decodes each block once; iterating decodes block after block and keeps none. Two
    sequences compare equal when their records do, in order (another :class:`Packed`, a tuple or a list).
    """

    __slots__ = ("_blocks", "_cached", "_cached_at", "_decode", "_encode", "_names", "_rows", "_tail")

    def __init__(
        self,
        encode: Callable[[T], Any],
        decode: Callable[[Any], T],
        items: Iterable[T] = (),
        names: Sequence[str] | None = None,
    ) -> None:
        """A sequence holding ``items``, packed with ``encode`` and read back with ``decode``.

        ``names``: the attribute names of a record's stored tuple, in order, when ``encode`` stores records as
        the tuple of those attributes (:func:`packed_records`); they let :meth:`field` read one without records.
        """
        self._encode = encode
        self._decode = decode
        self._names = tuple(names) if names is not None else None
        self._rows = BLOCK_ROWS  # records per block, fixed for this sequence
        self._blocks: list[bytes] = []
        self._tail: list[T] = []
        self._cached: list[T] = []
        self._cached_at = -1
        self.extend(items)

    def append(self, item: T) -> None:
        """Add ``item`` at the end; every :data:`BLOCK_ROWS` records are packed into one block."""
        self._tail.append(item)
        if len(self._tail) == self._rows:
            self._blocks.append(zlib.compress(marshal.dumps(list(map(self._encode, self._tail))), _LEVEL))
            self._tail = []

    def extend(self, items: Iterable[T]) -> None:
        """:meth:`append` each of ``items`` in order."""
        for item in items:
            self.append(item)

    def _block(self, k: int) -> list[T]:
        if k == len(self._blocks):
            return self._tail
        if k != self._cached_at:
            self._cached = self._unpack(k)
            self._cached_at = k
        return self._cached

    def _unpack(self, k: int) -> list[T]:
        return list(map(self._decode, marshal.loads(zlib.decompress(self._blocks[k]))))

    def __len__(self) -> int:
        return len(self._blocks) * self._rows + len(self._tail)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            out: list[T] = []
            while start < stop:
                k, at = divmod(start, self._rows)
                block = self._block(k) if k == len(self._blocks) else self._unpack(k)
                take = block[at : at + stop - start]
                out.extend(take)
                start += len(take)
            return out
        n = len(self)
        if not -n <= index < n:
            raise IndexError("row index out of range")
        k, at = divmod(index % n, self._rows)
        return self._block(k)[at]

    def __iter__(self) -> Iterator[T]:
        for k in range(len(self._blocks)):
            yield from self._unpack(k)
        yield from list(self._tail)

    def field(self, name: str) -> Iterator[Any]:
        """The attribute ``name`` of every record, in order, read from the stored tuples without building records.

        Raises:
            ValueError: the records are not stored as named tuples of attributes (no ``names`` given), or
                ``name`` is not one of them.
        """
        if self._names is None or name not in self._names:
            raise ValueError(f"no stored attribute {name!r}")
        k = self._names.index(name)
        for b in range(len(self._blocks)):
            yield from [values[k] for values in marshal.loads(zlib.decompress(self._blocks[b]))]
        yield from [getattr(item, name) for item in self._tail]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Packed | tuple | list):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # equal to tuples and lists, which hash differently

    def __repr__(self) -> str:
        return f"Packed({len(self)} records in {len(self._blocks)} blocks)"


def packed_records(cls: type[T], items: Iterable[T] = ()) -> Packed[T]:
    """A :class:`Packed` of dataclass records of ``cls``, each stored as the tuple of its fields in order.

    ``cls`` must be a dataclass whose fields are all plain data (str, int, float, bool, None, tuples of them) and
    whose ``__init__`` takes them in field order, as :class:`~vqaudit.shortanswer.records.Prediction` and
    :class:`~vqaudit.shortanswer.records.AuditRow`.

    A record is rebuilt without calling the dataclass ``__init__`` (a frozen one sets each field through
    ``object.__setattr__``): the fields are set in order into its slots or attribute dict, which is all that
    ``__init__`` does for a class without ``__post_init__`` (one with it is built by ``cls(*fields)``), so the
    record is equal to, prints like and ``asdict``-s like the one stored.

    Raises:
        TypeError: ``cls`` is not a dataclass.
    """
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    get = attrgetter(*names)
    new = object.__new__
    if hasattr(cls, "__post_init__"):

        def decode(values: tuple[Any, ...]) -> T:
            return cls(*values)

    elif "__dict__" not in dir(cls) and hasattr(cls, "__slots__"):  # slots: each field set by its descriptor
        setters = [getattr(cls, name).__set__ for name in names]

        def decode(values: tuple[Any, ...]) -> T:
            record = new(cls)
            for set_field, value in zip(setters, values, strict=True):
                set_field(record, value)
            return record

    else:  # the attribute dict filled in field order: what the dataclass __init__ does, without its calls

        def decode(values: tuple[Any, ...]) -> T:
            record = new(cls)
            record.__dict__.update(zip(names, values, strict=True))
            return record

    return Packed(get, decode, items, names)


def _same(value: str) -> str:
    return value


def packed_strings(items: Iterable[str] = ()) -> Packed[str]:
    """A :class:`Packed` of strings."""
    return Packed(_same, _same, items)


def field_values(records: Iterable[Any], name: str) -> Iterator[Any]:
    """The attribute ``name`` of each record, in order.

    :meth:`Packed.field` where the records are packed with their attribute names (no record is built), else
    ``getattr`` of each record.
    """
    if isinstance(records, Packed) and records._names is not None and name in records._names:
        return records.field(name)
    return map(attrgetter(name), records)
