"""Chart question programs: small trees over a world's table with exact answers.

A **program** (seed 000, §3.2-3.3, appendix D) is a frozen-dataclass tree over cells ``(series, category)``:

- numeric (answer: :class:`~fractions.Fraction`): :class:`Lookup`, :class:`Const`, :class:`Difference`,
  :class:`Sum`, :class:`Mean`, :class:`Max`, :class:`Min` (the last five take numeric sub-programs, so trees
  compose), :class:`CountAbove` (cells strictly above a numeric threshold program), :class:`Rank`;
- categorical (answer: ``str``, only at the root): :class:`ArgMax`, :class:`ArgMin`, :class:`Compare`.

Tie rules (the same in :func:`evaluate` and in the z3 encoding, :func:`vqaudit.suites.charts.program_z3.encode_z3`):

- ``argmax`` / ``argmin``: the *first* cell, in the program's cell order, among those attaining the extreme
  (for cells made with :func:`series_cells` that is the first category in the chart's order);
- ``compare``: the label of the strictly larger cell, or ``"equal"``;
- ``rank``: competition ranking, descending: ``1 + #cells strictly greater``; tied cells share the better rank.

A categorical answer names what varies between the program's cells: the category when they share one series,
the series when they share one category, else ``"series, category"`` (see :func:`cell_labels`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from vqaudit.errors import VqauditError
from vqaudit.suites.charts.world import World, fraction_text

Cell = tuple[str, str]
"""A cell of a table: ``(series, category)``."""
Answer = Fraction | str

EQUAL = "equal"
PROGRAM_KINDS = (
    "lookup",
    "difference",
    "sum",
    "mean",
    "max",
    "min",
    "argmax",
    "argmin",
    "compare",
    "count_above",
    "rank",
)


@dataclass(frozen=True)
class Lookup:
    """The value of one cell."""

    cell: Cell


@dataclass(frozen=True)
class Const:
    """A constant (used as a threshold or inside recursive trees)."""

    value: Fraction


@dataclass(frozen=True)
class Difference:
    """``left - right`` of two numeric programs."""

    left: NumProgram
    right: NumProgram


@dataclass(frozen=True)
class Sum:
    """``left + right`` of two numeric programs."""

    left: NumProgram
    right: NumProgram


@dataclass(frozen=True)
class Mean:
    """Arithmetic mean of one or more numeric programs (exact rational)."""

    args: tuple[NumProgram, ...]


@dataclass(frozen=True)
class Max:
    """Largest of one or more numeric programs."""

    args: tuple[NumProgram, ...]


@dataclass(frozen=True)
class Min:
    """Smallest of one or more numeric programs."""

    args: tuple[NumProgram, ...]


@dataclass(frozen=True)
class CountAbove:
    """How many of ``cells`` are strictly greater than ``threshold`` (a numeric program, often :class:`Const`)."""

    cells: tuple[Cell, ...]
    threshold: NumProgram


@dataclass(frozen=True)
class Rank:
    """Rank of ``cell`` among ``cells`` (which contain it): ``1 + #cells strictly greater``."""

    cell: Cell
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class ArgMax:
    """Label of the largest of ``cells`` (first one on a tie)."""

    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class ArgMin:
    """Label of the smallest of ``cells`` (first one on a tie)."""

    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class Compare:
    """Label of the larger of two cells, or ``"equal"``."""

    a: Cell
    b: Cell


NumProgram = Lookup | Const | Difference | Sum | Mean | Max | Min | CountAbove | Rank
Program = NumProgram | ArgMax | ArgMin | Compare
_NUMERIC = (Lookup, Const, Difference, Sum, Mean, Max, Min, CountAbove, Rank)


def is_numeric(program: Program) -> bool:
    """Whether the program's answer is a number (else a label)."""
    return isinstance(program, _NUMERIC)


def over(cells: Sequence[Cell]) -> tuple[Lookup, ...]:
    """Lookups of ``cells``, as arguments for :class:`Mean`, :class:`Max` or :class:`Min`."""
    return tuple(Lookup(c) for c in cells)


def series_cells(world: World, series: str) -> tuple[Cell, ...]:
    """The cells of one series, in the chart's category order."""
    return tuple((series, c) for c in world.categories)


def category_cells(world: World, category: str) -> tuple[Cell, ...]:
    """The cells at one category (the cells a mask over that category hides), in series order."""
    return tuple((s, category) for s in world.series)


def world_table(world: World) -> dict[Cell, Fraction]:
    """The world's values as ``{(series, category): value}``."""
    return {(s, c): world.values[i][j] for i, s in enumerate(world.series) for j, c in enumerate(world.categories)}


def cell_labels(cells: Sequence[Cell]) -> tuple[str, ...]:
    """Answer labels of ``cells``: category if all share a series, series if all share a category, else both."""
    if len({s for s, _ in cells}) == 1:
        return tuple(c for _, c in cells)
    if len({c for _, c in cells}) == 1:
        return tuple(s for s, _ in cells)
    return tuple(f"{s}, {c}" for s, c in cells)


def validate(program: Program) -> None:
    """Check the tree's shape (recursively).

    Raises:
        VqauditError: an empty or repeated cell set, a rank cell not among its cells, an empty argument list, or
            a categorical program used as an operand.
    """

    def num(p: Any) -> None:
        if not isinstance(p, _NUMERIC):
            raise VqauditError(f"operand {type(p).__name__} is not a numeric program")
        validate(p)

    match program:
        case Difference(l, r) | Sum(l, r):
            num(l)
            num(r)
        case Mean(args) | Max(args) | Min(args):
            if not args:
                raise VqauditError(f"{type(program).__name__.lower()} needs at least one argument")
            for a in args:
                num(a)
        case CountAbove(cells, t):
            _check_cells(cells)
            num(t)
        case Rank(cell, cells):
            _check_cells(cells)
            if cell not in cells:
                raise VqauditError(f"rank cell {cell} is not among its cells")
        case ArgMax(cells) | ArgMin(cells):
            _check_cells(cells)


def _check_cells(cells: tuple[Cell, ...]) -> None:
    if not cells or len(set(cells)) != len(cells):
        raise VqauditError(f"cell set must be non-empty and without repeats: {cells}")


def cells_read(program: Program) -> frozenset[Cell]:
    """Every cell whose value the program reads."""
    match program:
        case Lookup(cell):
            return frozenset([cell])
        case Const():
            return frozenset()
        case Difference(l, r) | Sum(l, r):
            return cells_read(l) | cells_read(r)
        case Mean(args) | Max(args) | Min(args):
            return frozenset().union(*(cells_read(a) for a in args))
        case CountAbove(cells, t):
            return frozenset(cells) | cells_read(t)
        case Rank(_, cells) | ArgMax(cells) | ArgMin(cells):
            return frozenset(cells)
        case Compare(a, b):
            return frozenset([a, b])
    raise VqauditError(f"not a program: {program!r}")  # pragma: no cover


def evaluate(program: Program, table: Mapping[Cell, Fraction]) -> Answer:
    """Exact answer on a complete table (rationals are exact; labels follow the module's tie rules).

    Raises:
        VqauditError: the program reads a cell that is not in ``table``.
    """

    def v(cell: Cell) -> Fraction:
        try:
            return table[cell]
        except KeyError:
            raise VqauditError(f"program reads cell {cell} which is not in the table") from None

    def n(p: Program) -> Fraction:
        out = evaluate(p, table)
        assert isinstance(out, Fraction)
        return out

    match program:
        case Lookup(cell):
            return v(cell)
        case Const(value):
            return Fraction(value)
        case Difference(l, r):
            return n(l) - n(r)
        case Sum(l, r):
            return n(l) + n(r)
        case Mean(args):
            return sum((n(a) for a in args), Fraction(0)) / len(args)
        case Max(args):
            return max(n(a) for a in args)
        case Min(args):
            return min(n(a) for a in args)
        case CountAbove(cells, t):
            th = n(t)
            return Fraction(sum(1 for c in cells if v(c) > th))
        case Rank(cell, cells):
            return Fraction(1 + sum(1 for c in cells if v(c) > v(cell)))
        case ArgMax(cells) | ArgMin(cells):
            vals = [v(c) for c in cells]
            best = max(vals) if isinstance(program, ArgMax) else min(vals)
            return cell_labels(cells)[vals.index(best)]
        case Compare(a, b):
            va, vb = v(a), v(b)
            la, lb = cell_labels((a, b))
            return la if va > vb else lb if vb > va else EQUAL
    raise VqauditError(f"not a program: {program!r}")  # pragma: no cover


def evaluate_world(program: Program, world: World) -> Answer | None:
    """The answer on a world, or None (undefined) when the program reads a cell the world lacks (state I)."""
    table = world_table(world)
    if not cells_read(program) <= table.keys():
        return None
    return evaluate(program, table)


def answer_text(answer: Answer) -> str:
    """Gold-answer text: exact decimal (or p/q) for numbers, the label itself otherwise."""
    return fraction_text(answer) if isinstance(answer, Fraction) else answer


def sample_program(world: World, kind: str, s: int, c: int, rng: np.random.Generator) -> Program:
    """A random program of ``kind`` (one of :data:`PROGRAM_KINDS`) that reads cell (series ``s``, category ``c``).

    Aggregates, argmax/argmin, rank and count run over the queried cell's series; difference, sum and compare
    pair the queried cell with another cell of the same series (random order); count uses a random grid value of
    the world as threshold. The world must have at least two categories.

    Raises:
        VqauditError: an unknown kind or a world with fewer than two categories.
    """
    if len(world.categories) < 2:
        raise VqauditError("sample_program needs a world with at least two categories")
    series = world.series[s]
    cell: Cell = (series, world.categories[c])
    row = series_cells(world, series)
    others = [x for x in row if x != cell]
    other = others[int(rng.integers(len(others)))]
    pair = (cell, other) if rng.random() < 0.5 else (other, cell)
    grid = world.grid_values()
    builders: dict[str, Any] = {
        "lookup": lambda: Lookup(cell),
        "difference": lambda: Difference(Lookup(pair[0]), Lookup(pair[1])),
        "sum": lambda: Sum(Lookup(pair[0]), Lookup(pair[1])),
        "mean": lambda: Mean(over(row)),
        "max": lambda: Max(over(row)),
        "min": lambda: Min(over(row)),
        "argmax": lambda: ArgMax(row),
        "argmin": lambda: ArgMin(row),
        "compare": lambda: Compare(*pair),
        "count_above": lambda: CountAbove(row, Const(grid[int(rng.integers(len(grid)))])),
        "rank": lambda: Rank(cell, row),
    }
    if kind not in builders:
        raise VqauditError(f"unknown program kind {kind!r}; expected one of {', '.join(PROGRAM_KINDS)}")
    program: Program = builders[kind]()
    return program
