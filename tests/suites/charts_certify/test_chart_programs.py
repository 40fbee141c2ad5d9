"""Chart question programs: hand-computed answers, tie rules, z3 encodings, JSON and question text."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import z3  # type: ignore[import-untyped]

from vqaudit.errors import VqauditError
from vqaudit.suites.charts.program_text import program_from_json, program_to_json, question
from vqaudit.suites.charts.program_z3 import encode_z3, z3_value
from vqaudit.suites.charts.programs import (
    PROGRAM_KINDS,
    ArgMax,
    ArgMin,
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
    answer_text,
    category_cells,
    cells_read,
    evaluate,
    evaluate_world,
    over,
    sample_program,
    series_cells,
    validate,
    world_table,
)
from vqaudit.suites.charts.world import World

# World (conftest): A = (4, 7.5, 7.5), B = (2, 9, 0) for years 2001, 2002, 2003.
A1, A2, A3 = ("A", "2001"), ("A", "2002"), ("A", "2003")
B1, B2, B3 = ("B", "2001"), ("B", "2002"), ("B", "2003")
ROW_A = (A1, A2, A3)
ALL = (A1, A2, A3, B1, B2, B3)

CASES: list[tuple[Program, Fraction | str]] = [
    (Lookup(A2), Fraction(15, 2)),  # A 2002 = 7.5
    (Difference(Lookup(A1), Lookup(B1)), Fraction(2)),  # 4 - 2 = 2
    (Difference(Lookup(A3), Lookup(A3)), Fraction(0)),  # same cell: 7.5 - 7.5 = 0
    (Sum(Lookup(A2), Lookup(B2)), Fraction(33, 2)),  # 7.5 + 9 = 16.5
    (Mean(over(ROW_A)), Fraction(19, 3)),  # (4 + 7.5 + 7.5) / 3 = 19/3
    (Max(over(ROW_A)), Fraction(15, 2)),  # max(4, 7.5, 7.5) = 7.5
    (Min(over((B1, B2, B3))), Fraction(0)),  # min(2, 9, 0) = 0
    (ArgMax(ROW_A), "2002"),  # 7.5 ties at 2002 and 2003 -> first: 2002
    (ArgMin(ROW_A), "2001"),  # 4 is the smallest of A
    (ArgMin((A1, B1)), "B"),  # one category: labels are series; 2 < 4
    (ArgMax((A1, B2)), "B, 2002"),  # mixed cells: "series, category"; 9 > 4
    (Compare(A2, A3), "equal"),  # 7.5 vs 7.5
    (Compare(A1, B1), "A"),  # 4 > 2, labels are series
    (Compare(B3, B2), "2002"),  # 0 < 9, labels are categories
    (CountAbove(ALL, Const(Fraction(7))), Fraction(3)),  # 7.5, 7.5, 9 are > 7 -> 3
    (CountAbove(ROW_A, Const(Fraction(15, 2))), Fraction(0)),  # strictly above 7.5: none
    (Rank(A3, ROW_A), Fraction(1)),  # nobody above 7.5; tie shares rank 1
    (Rank(A1, ROW_A), Fraction(3)),  # 1 + two values above 4 = 3
    (Rank(B3, ALL), Fraction(6)),  # 0 is below all five others: 1 + 5 = 6
    (Difference(Max(over(ROW_A)), Lookup(B1)), Fraction(11, 2)),  # 7.5 - 2 = 5.5
    (CountAbove(ROW_A, Mean(over(ROW_A))), Fraction(2)),  # mean 19/3 ~ 6.33: 7.5 and 7.5 -> 2
    (Difference(Max(over(ALL)), Min(over(ALL))), Fraction(9)),  # range 9 - 0 = 9
    (Sum(Rank(A1, ROW_A), CountAbove(ALL, Const(Fraction(8)))), Fraction(4)),  # 3 + one (9) = 4
    (Mean((Max(over(ROW_A)), Lookup(B3))), Fraction(15, 4)),  # (7.5 + 0) / 2 = 3.75
]


@pytest.mark.parametrize(("program", "expected"), CASES)
def test_hand_computed(world: World, program: Program, expected: Fraction | str) -> None:
    assert evaluate(program, world_table(world)) == expected


@pytest.mark.parametrize(("program", "expected"), CASES)
def test_z3_encoding_matches_evaluation(world: World, program: Program, expected: Fraction | str) -> None:
    terms = {cell: z3_value(v) for cell, v in world_table(world).items()}
    encoded = encode_z3(program, terms)
    if isinstance(expected, Fraction):
        assert z3.simplify(encoded == z3_value(expected)).eq(z3.BoolVal(True))
    else:
        truth = {label: z3.is_true(z3.simplify(cond)) for label, cond in encoded.items()}
        assert [k for k, v in truth.items() if v] == [expected]


@pytest.mark.parametrize(("program", "expected"), CASES)
def test_json_round_trip_and_question(world: World, program: Program, expected: Fraction | str) -> None:
    data = program_to_json(program)
    assert program_from_json(data) == program
    text = question(program, world)
    assert text.endswith("?") or text.endswith(".")
    assert "None" not in text and "Fraction" not in text
    assert answer_text(expected)


def test_question_texts(world: World) -> None:
    assert question(Lookup(A2), world) == "What is the value of A for 2002, in %?"
    q = question(Max(over(series_cells(world, "A"))), world)
    assert q == "What is the largest value of A over all 3 year entries shown, in %?"
    assert question(ArgMax(ROW_A), world).startswith("Which year has the largest value of A?")
    assert "'equal'" in question(Compare(A1, B1), world)
    assert question(Rank(A1, ROW_A), world).startswith("What is the rank of the value of A for 2001")
    assert ", in %" not in question(CountAbove(ROW_A, Const(Fraction(5))), world)
    assert "minus" in question(Difference(Max(over(ROW_A)), Lookup(B1)), world)


def test_cells_read_and_helpers(world: World) -> None:
    assert cells_read(Difference(Max(over(ROW_A)), Lookup(B1))) == {A1, A2, A3, B1}
    assert cells_read(CountAbove((A1,), Mean(over((B2,))))) == {A1, B2}
    assert category_cells(world, "2002") == (A2, B2)
    assert evaluate_world(Lookup(("A", "1999")), world) is None
    with pytest.raises(VqauditError):
        evaluate(Lookup(("A", "1999")), world_table(world))


@pytest.mark.parametrize(
    "bad",
    [
        Mean(()),
        Rank(A1, (A2, A3)),
        ArgMax(()),
        ArgMax((A1, A1)),
        Difference(ArgMax(ROW_A), Lookup(A1)),  # type: ignore[arg-type]
    ],
)
def test_validate_rejects(bad: Program) -> None:
    with pytest.raises(VqauditError):
        validate(bad)


@pytest.mark.parametrize(
    "data",
    [
        {"op": "nope"},
        {"op": "lookup"},
        {"op": "max", "args": []},
        {"op": "const", "value": "x"},
        {"op": "rank", "cell": ["A", "1"], "cells": []},
    ],
)
def test_from_json_rejects(data: dict[str, object]) -> None:
    with pytest.raises(VqauditError):
        program_from_json(data)


@pytest.mark.parametrize("kind", PROGRAM_KINDS)
def test_sample_program_reads_queried_cell(world: World, kind: str) -> None:
    rng = np.random.default_rng(0)
    program = sample_program(world, kind, 1, 2, rng)
    validate(program)
    assert B3 in cells_read(program)
    assert program_to_json(program)["op"] == kind
    with pytest.raises(VqauditError):
        sample_program(world, "median", 0, 0, rng)
