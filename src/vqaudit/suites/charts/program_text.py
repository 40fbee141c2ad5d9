"""Text forms of chart question programs: JSON (for certificates) and natural-language questions.

Templates are rendered from the world's names (series, categories, category label, unit); see
:mod:`vqaudit.suites.charts.programs` for the programs and their tie rules (seed 000, §3.2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.suites.charts.programs import (
    ArgMax,
    ArgMin,
    Cell,
    Compare,
    Const,
    CountAbove,
    Difference,
    Lookup,
    Max,
    Mean,
    Min,
    NumProgram,
    Program,
    Rank,
    Sum,
    cell_labels,
    is_numeric,
    validate,
)
from vqaudit.suites.charts.world import World, fraction_text


def _cells_json(cells: Sequence[Cell]) -> list[list[str]]:
    return [[s, c] for s, c in cells]


def program_to_json(program: Program) -> dict[str, Any]:
    """JSON-ready dict: ``op`` plus fields, rationals as exact text.

    A lookup is ``{"op": "lookup", "series": ..., "category": ...}``, the form of the witness certificates
    (docs/certifier.md).
    """
    match program:
        case Lookup((s, c)):
            return {"op": "lookup", "series": s, "category": c}
        case Const(value):
            return {"op": "const", "value": fraction_text(Fraction(value))}
        case Difference(l, r) | Sum(l, r):
            op = "difference" if isinstance(program, Difference) else "sum"
            return {"op": op, "left": program_to_json(l), "right": program_to_json(r)}
        case Mean(args) | Max(args) | Min(args):
            return {"op": type(program).__name__.lower(), "args": [program_to_json(a) for a in args]}
        case CountAbove(cells, t):
            return {"op": "count_above", "cells": _cells_json(cells), "threshold": program_to_json(t)}
        case Rank(cell, cells):
            return {"op": "rank", "cell": list(cell), "cells": _cells_json(cells)}
        case ArgMax(cells) | ArgMin(cells):
            return {"op": type(program).__name__.lower(), "cells": _cells_json(cells)}
        case Compare(a, b):
            return {"op": "compare", "a": list(a), "b": list(b)}
    raise VqauditError(f"not a program: {program!r}")  # pragma: no cover


def program_from_json(data: Mapping[str, Any]) -> Program:
    """Inverse of :func:`program_to_json`; validates the tree. Raises VqauditError on a malformed program."""

    def cell(x: Any) -> Cell:
        s, c = x
        return (str(s), str(c))

    def cells(xs: Any) -> tuple[Cell, ...]:
        return tuple(cell(x) for x in xs)

    def sub(x: Any) -> Any:
        return program_from_json(x)

    try:
        op = data["op"]
        builders: dict[str, Any] = {
            "lookup": lambda: Lookup((str(data["series"]), str(data["category"]))),
            "const": lambda: Const(Fraction(data["value"])),
            "difference": lambda: Difference(sub(data["left"]), sub(data["right"])),
            "sum": lambda: Sum(sub(data["left"]), sub(data["right"])),
            "mean": lambda: Mean(tuple(sub(a) for a in data["args"])),
            "max": lambda: Max(tuple(sub(a) for a in data["args"])),
            "min": lambda: Min(tuple(sub(a) for a in data["args"])),
            "count_above": lambda: CountAbove(cells(data["cells"]), sub(data["threshold"])),
            "rank": lambda: Rank(cell(data["cell"]), cells(data["cells"])),
            "argmax": lambda: ArgMax(cells(data["cells"])),
            "argmin": lambda: ArgMin(cells(data["cells"])),
            "compare": lambda: Compare(cell(data["a"]), cell(data["b"])),
        }
        if op not in builders:
            raise ValueError(f"unknown op {op!r}")
        program: Program = builders[op]()
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise VqauditError(f"malformed chart program: {exc!r}") from None
    validate(program)
    return program


def _cell_phrase(cell: Cell, world: World) -> str:
    return f"the value of {cell[0]} for {cell[1]}"


def _set_phrase(cells: Sequence[Cell], world: World) -> str:
    series = {s for s, _ in cells}
    if len(series) == 1 and tuple(c for _, c in cells) == world.categories:
        return f"{cells[0][0]} over all {len(cells)} {world.category_label.lower()} entries shown"
    names = [f"{s} for {c}" for s, c in cells]
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]


def _has_unit(program: Program) -> bool:
    match program:
        case Lookup() | Const():
            return True
        case Difference(l, r) | Sum(l, r):
            return _has_unit(l) and _has_unit(r)
        case Mean(args) | Max(args) | Min(args):
            return all(_has_unit(a) for a in args)
    return False


def answer_unit(program: Program, world: World) -> str | None:
    """The unit of the answer (the world's value unit) or None for counts, ranks and labels."""
    return world.unit if is_numeric(program) and _has_unit(program) else None


def phrase(program: NumProgram, world: World) -> str:
    """Noun phrase of a numeric program ("the largest value of A over all 5 year entries shown")."""

    def sub(p: NumProgram, wrap: bool) -> str:
        text = phrase(p, world)
        return f"({text})" if wrap and isinstance(p, Difference | Sum) else text

    match program:
        case Lookup(cell):
            return _cell_phrase(cell, world)
        case Const(value):
            return f"{fraction_text(Fraction(value))} {world.unit}"
        case Difference(l, r):
            return f"{sub(l, True)} minus {sub(r, True)}"
        case Sum(l, r):
            return f"the sum of {sub(l, True)} and {sub(r, True)}"
        case Mean(args) | Max(args) | Min(args):
            word = {"Mean": "average", "Max": "largest", "Min": "smallest"}[type(program).__name__]
            if all(isinstance(a, Lookup) for a in args):
                return f"the {word} value of {_set_phrase([a.cell for a in args], world)}"  # type: ignore[union-attr]
            return f"the {word} of " + "; ".join(sub(a, False) for a in args)
        case CountAbove(cells, t):
            return f"the number of values among {_set_phrase(cells, world)} strictly above {sub(t, True)}"
        case Rank(cell, cells):
            return (
                f"the rank of {_cell_phrase(cell, world)} among {_set_phrase(cells, world)} "
                "(1 = largest; tied values share the better rank)"
            )
    raise VqauditError(f"not a numeric program: {program!r}")  # pragma: no cover


def question(program: Program, world: World) -> str:
    """The natural-language question of a program, rendered from the world's names and unit."""
    validate(program)
    match program:
        case ArgMax(cells) | ArgMin(cells):
            word = "largest" if isinstance(program, ArgMax) else "smallest"
            full_series = len({x for x, _ in cells}) == 1 and tuple(c for _, c in cells) == world.categories
            what = (
                f"Which {world.category_label.lower()} has the {word} value of {cells[0][0]}"
                if full_series
                else f"Which of {_set_phrase(cells, world)} has the {word} value"
            )
            return f"{what}? On a tie, name the first one in the chart's order."
        case Compare(a, b):
            la, lb = cell_labels((a, b))
            return (
                f"Which is larger, {_cell_phrase(a, world)} or {_cell_phrase(b, world)}? Answer {la!r}, "
                f"{lb!r} or 'equal'."
            )
        case CountAbove() | Rank():
            return f"What is {phrase(program, world)}?"
    assert is_numeric(program)
    unit = answer_unit(program, world)
    return f"What is {phrase(program, world)}" + (f", in {unit}?" if unit else "?")
