"""z3 encodings of chart question programs: the SMT side of the certifier (seed 000, §3.3, appendix D).

:func:`encode_z3` states a program's answer over z3 terms with the tie rules of
:func:`vqaudit.suites.charts.programs.evaluate` (first cell wins an argmax/argmin tie, ``"equal"`` for a
compare tie, competition ranking), so the certifier (:mod:`vqaudit.suites.charts.certify`) can ask for an
admissible completion whose answer differs.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import z3  # type: ignore[import-untyped]

from vqaudit.errors import VqauditError
from vqaudit.suites.charts.programs import (
    EQUAL,
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
    Program,
    Rank,
    Sum,
    cell_labels,
)


def z3_value(value: Fraction) -> Any:
    """An exact z3 rational constant."""
    return z3.RealVal(f"{value.numerator}/{value.denominator}")


def encode_z3(program: Program, cells: Mapping[Cell, Any]) -> Any:
    """z3 encoding of the program over ``cells`` (cell -> z3 Real expression or exact constant).

    Returns:
        For a numeric program, a z3 Real expression equal to :func:`evaluate`'s answer. For a categorical one,
        a ``dict[label, z3 Bool]`` whose conditions are exhaustive and mutually exclusive: exactly one holds, the
        one naming :func:`evaluate`'s answer (same tie rules).

    Raises:
        VqauditError: a read cell is missing from ``cells``.
    """

    def v(cell: Cell) -> Any:
        if cell not in cells:
            raise VqauditError(f"no z3 term for cell {cell}")
        return cells[cell]

    def e(p: Program) -> Any:
        return encode_z3(p, cells)

    def pick(xs: list[Any], larger: bool) -> Any:
        out = xs[0]
        for x in xs[1:]:
            out = z3.If(x > out if larger else x < out, x, out)
        return out

    one, zero = z3.RealVal(1), z3.RealVal(0)
    match program:
        case Lookup(cell):
            return v(cell)
        case Const(value):
            return z3_value(Fraction(value))
        case Difference(l, r):
            return e(l) - e(r)
        case Sum(l, r):
            return e(l) + e(r)
        case Mean(args):
            return z3.Sum(*[e(a) for a in args]) / z3.RealVal(len(args))
        case Max(args) | Min(args):
            return pick([e(a) for a in args], isinstance(program, Max))
        case CountAbove(cs, t):
            th = e(t)
            return z3.Sum(*[z3.If(v(c) > th, one, zero) for c in cs]) + zero
        case Rank(cell, cs):
            return one + z3.Sum(*[z3.If(v(c) > v(cell), one, zero) for c in cs])
        case ArgMax(cs) | ArgMin(cs):
            largest = isinstance(program, ArgMax)

            def better(x: Any, y: Any) -> Any:
                return x > y if largest else x < y

            conds: dict[str, list[Any]] = {}
            for i, (ci, label) in enumerate(zip(cs, cell_labels(cs), strict=True)):
                beats = [
                    better(v(ci), v(cj)) if j < i else z3.Not(better(v(cj), v(ci))) for j, cj in enumerate(cs) if j != i
                ]
                conds.setdefault(label, []).append(z3.And(*beats) if beats else z3.BoolVal(True))
            return {k: z3.Or(*c) for k, c in conds.items()}
        case Compare(a, b):
            la, lb = cell_labels((a, b))
            cmp: dict[str, list[Any]] = {EQUAL: [v(a) == v(b)]}
            cmp.setdefault(la, []).append(v(a) > v(b))
            cmp.setdefault(lb, []).append(v(b) > v(a))
            return {k: z3.Or(*c) for k, c in cmp.items()}
    raise VqauditError(f"not a program: {program!r}")  # pragma: no cover
