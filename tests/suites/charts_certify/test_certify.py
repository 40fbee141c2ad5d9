"""The answerability certifier: known constant and ambiguous cases, witnesses, proofs, shortcuts, audit."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from vqaudit.errors import VqauditError
from vqaudit.suites.charts.audit import run_audit
from vqaudit.suites.charts.certificate_check import recheck_certificate, recheck_smt2
from vqaudit.suites.charts.certify import (
    Certificate,
    Domain,
    certify,
    certify_enumeration,
    certify_world,
    certify_z3,
    check_witness,
    cross_check,
    shortcut_endpoints,
    shortcut_reads_hidden,
)
from vqaudit.suites.charts.programs import (
    PROGRAM_KINDS,
    ArgMax,
    Cell,
    Compare,
    Const,
    CountAbove,
    Difference,
    Lookup,
    Max,
    Min,
    Program,
    Rank,
    Sum,
    category_cells,
    evaluate,
    over,
    sample_program,
    world_table,
)
from vqaudit.suites.charts.tables import TABLE_NAMES, load_table
from vqaudit.suites.charts.world import sample_world

from .conftest import make_world

DOMAIN = Domain(Fraction(0), Fraction(10), Fraction(1, 2))  # 21 admissible values per hidden cell
A1, A2, A3 = ("A", "2001"), ("A", "2002"), ("A", "2003")
B1, B2, B3 = ("B", "2001"), ("B", "2002"), ("B", "2003")
ROW_A = (A1, A2, A3)


def _table(a: tuple[str, str, str], b: tuple[str, str, str] = ("2", "9", "0")) -> dict[Cell, Fraction]:
    return world_table(make_world(a, b))


# (table A row, hidden cells, program, determined?, the only answer when determined)
KNOWN: list[tuple[tuple[str, str, str], tuple[Cell, ...], Program, bool, Fraction | str | None]] = [
    # same cell twice: c - c = 0 whatever c is
    (("4", "7.5", "7.5"), (A1,), Difference(Lookup(A1), Lookup(A1)), True, Fraction(0)),
    # a visible A value sits at axis_hi = 10: the max of A is 10 for every completion
    (("4", "10", "1"), (A1, A3), Max(over(ROW_A)), True, Fraction(10)),
    # a visible B value sits at axis_lo = 0: the min of B is 0
    (("4", "7.5", "7.5"), (B1, B2), Min(over((B1, B2, B3))), True, Fraction(0)),
    # first cell visible at axis_hi: later cells can at best tie, and ties go to the first -> "2001"
    (("10", "3", "3"), (A2, A3), ArgMax(ROW_A), True, "2001"),
    # but the last cell at axis_hi with the first hidden: the first can tie and win -> ambiguous
    (("3", "3", "10"), (A1,), ArgMax(ROW_A), False, None),
    # nothing lies strictly above axis_hi: count is 0 whatever the hidden cells are
    (("4", "7.5", "7.5"), (A1, A2), CountAbove(ROW_A, Const(Fraction(10))), True, Fraction(0)),
    # nothing is strictly above the maximum of the same cells
    (("4", "7.5", "7.5"), ROW_A, CountAbove(ROW_A, Max(over(ROW_A))), True, Fraction(0)),
    # visible cell at axis_hi is ranked 1 (ties share the better rank)
    (("10", "7.5", "7.5"), (A2, A3), Rank(A1, ROW_A), True, Fraction(1)),
    # the hidden cell is not read: trivially determined
    (("4", "7.5", "7.5"), (B3,), Sum(Lookup(A1), Lookup(A2)), True, Fraction(23, 2)),
    # range with both extremes visible at the axis ends: 10 - 0
    (("0", "5", "10"), (A2,), Difference(Max(over(ROW_A)), Min(over(ROW_A))), True, Fraction(10)),
    # ambiguous: hidden lookup, comparison against a hidden cell, max with interior visible values
    (("4", "7.5", "7.5"), (A1,), Lookup(A1), False, None),
    (("4", "7.5", "7.5"), (A1,), Compare(A1, A2), False, None),
    (("4", "7.5", "7.5"), (A3,), Max(over(ROW_A)), False, None),
]


@pytest.mark.parametrize(("row", "hidden", "program", "determined", "answer"), KNOWN)
def test_known_cases_both_paths(
    row: tuple[str, str, str],
    hidden: tuple[Cell, ...],
    program: Program,
    determined: bool,
    answer: Fraction | str | None,
) -> None:
    table = _table(row)
    enum, smt = cross_check(table, hidden, DOMAIN, program)
    for cert in (enum, smt):
        assert cert.determined is determined
        if determined:
            assert cert.answer == answer
        else:
            assert cert.witness is not None
            assert check_witness(table, hidden, DOMAIN, program, *cert.witness) == []
    if determined:  # the endpoint shortcut can only miss ambiguity, never reject a constant case
        assert shortcut_endpoints(table, hidden, DOMAIN, program) == "determined"
    else:  # the reads-hidden shortcut can only reject, never miss ambiguity
        assert shortcut_reads_hidden(program, hidden) == "ambiguous"


def test_witness_completions_admissible_and_answers_differ() -> None:
    table = _table(("4", "7.5", "7.5"))
    hidden = (A1, A2)
    cert = certify_z3(table, hidden, DOMAIN, Difference(Lookup(A1), Lookup(A2)))
    assert not cert.determined and cert.witness is not None and cert.witness_answers is not None
    a, b = cert.witness
    for t in (a, b):
        assert t.keys() == table.keys()
        assert all(DOMAIN.admits(t[c]) for c in hidden)
        assert all(t[c] == table[c] for c in table if c not in hidden)
    program = Difference(Lookup(A1), Lookup(A2))
    assert evaluate(program, a) != evaluate(program, b)
    assert cert.witness_answers == (evaluate(program, a), evaluate(program, b))
    # a forged witness is caught
    assert check_witness(table, hidden, DOMAIN, program, a, a)
    assert check_witness(table, hidden, DOMAIN, program, a, {**b, A1: Fraction(1, 3)})
    assert check_witness(table, hidden, DOMAIN, program, a, {**b, B1: Fraction(5)})


def test_z3_proof_verified_by_brute_force() -> None:
    table = _table(("10", "3", "3"))
    hidden = (A2, A3, B2)
    program = Difference(Max(over(ROW_A)), Min(over((A1, B1))))  # max(A) = 10 fixed; min(4.., 2) = 2 -> 8
    cert = certify_z3(table, hidden, DOMAIN, program)
    assert cert.determined and cert.z3_result == "unsat" and cert.answer == Fraction(8)
    assert cert.z3_version and "(check-sat)" in cert.smt2
    assert recheck_smt2(cert.smt2) == "unsat"
    answers = {
        evaluate(program, {**table, **dict(zip(hidden, combo, strict=True))})
        for combo in itertools.product(DOMAIN.values(), repeat=len(hidden))
    }
    assert answers == {Fraction(8)}  # all 21^3 completions
    data = cert.to_json()
    assert data["status"] == "determined" and data["method"] == "z3" and data["answer"] == "8"


def test_endpoint_shortcut_misses_interior_ambiguity() -> None:
    table = _table(("4", "6", "5"))
    program = Difference(Max(over(ROW_A)), Min(over(ROW_A)))
    # A3 hidden: at 0 or 10 the range is 6 or 6; at 5 it is 2 -> ambiguous only inside the range
    assert shortcut_endpoints(table, (A3,), DOMAIN, program) == "determined"
    cert = certify_enumeration(table, (A3,), DOMAIN, program)
    assert not cert.determined
    assert shortcut_reads_hidden(program, (A3,)) == "ambiguous"
    assert shortcut_reads_hidden(program, (B3,)) == "determined"


def test_certify_picks_method_and_serialises() -> None:
    table = _table(("4", "7.5", "7.5"))
    small = certify(table, (A1,), DOMAIN, Lookup(A1))
    assert small.method == "enumeration" and small.n_enumerated <= 21
    big = certify(table, (A1,), DOMAIN, Lookup(A1), enumeration_limit=0)
    assert big.method == "z3" and big.z3_result == "sat"
    data = big.to_json()
    assert data["format"] == "vqaudit-answerability/1" and len(data["witness"]) == 2
    assert data["witness_answers"][0] == "4"
    det = certify(table, (B3,), DOMAIN, Lookup(A1))
    assert isinstance(det, Certificate) and det.determined and det.to_json()["n_enumerated"] == 1


def test_bad_inputs() -> None:
    table = _table(("4", "7.5", "7.5"))
    with pytest.raises(VqauditError):
        certify(table, (("A", "1999"),), DOMAIN, Lookup(A1))
    with pytest.raises(VqauditError):
        certify({**table, A1: Fraction(1, 3)}, (A1,), DOMAIN, Lookup(A1))  # off-grid hidden value
    with pytest.raises(VqauditError):
        certify(table, (A1,), DOMAIN, Lookup(("C", "2001")))
    with pytest.raises(VqauditError):
        Domain(Fraction(1), Fraction(0), Fraction(1))
    with pytest.raises(VqauditError):
        recheck_smt2("(assert (")


def test_random_real_worlds_agree() -> None:
    rng = np.random.default_rng(7)
    checked = 0
    while checked < 22:
        table = load_table(TABLE_NAMES[int(rng.integers(len(TABLE_NAMES)))])
        world = sample_world(table, "vbar", 1 if len(table.series) == 1 else 2, 4, rng)
        if world is None:
            continue
        s, c = int(rng.integers(len(world.series))), int(rng.integers(len(world.categories)))
        program = sample_program(world, PROGRAM_KINDS[checked % len(PROGRAM_KINDS)], s, c, rng)
        hidden = category_cells(world, world.categories[c])
        enum, smt = cross_check(world_table(world), hidden, Domain.of_world(world), program)
        assert certify_world(world, hidden, program).status == enum.status
        checked += 1


@pytest.mark.slow
def test_small_audit_agrees_and_shortcuts_fail() -> None:
    names = ["max(S)", "argmax(S)", "compare(c1, c2)", "difference(max(S), min(S))", "count_above(S, mean(S))"]
    result = run_audit("0:2:1", n_trees=6, program_names=names)
    total = result.total
    assert total.cases == 5 * 175 + 6 * 15
    assert total.agree == total.cases and not result.disagreements
    assert total.constant > 0 and total.ambiguous > 0 and total.constant + total.ambiguous == total.cases
    assert total.reads_hidden_false_rejections > 0
    assert total.endpoints_missed > 0
    assert result.other_shortcut_errors == 0
    md = result.to_markdown()
    assert "| total |" in md and "| max(S) |" in md
    with pytest.raises(VqauditError):
        run_audit("0:2:1", program_names=["median"])
    with pytest.raises(VqauditError):
        run_audit("0:0:1")


def test_recheck_certificate_accepts_genuine_and_rejects_tampered() -> None:
    table = _table(("10", "3", "3"))
    det_program = Rank(A1, ROW_A)  # A1 = 10 = axis_hi visible -> rank 1
    amb_program = Compare(A2, A3)
    certs = [
        f(table, (A2, A3), DOMAIN, p) for f in (certify_enumeration, certify_z3) for p in (det_program, amb_program)
    ]
    for cert in certs:
        assert recheck_certificate(cert.to_json()) == [], cert.to_json()
    det_z3, amb_z3 = certs[2].to_json(), certs[3].to_json()
    assert recheck_certificate({**det_z3, "answer": "2"})
    assert recheck_certificate({**det_z3, "smt2": "(assert true)"})
    assert recheck_certificate({**det_z3, "smt2": "(assert ("})
    assert recheck_certificate({**amb_z3, "status": "determined"})  # re-deciding finds it ambiguous
    bad_witness = [
        amb_z3["witness"][0],
        [[s, c, "1/3" if [s, c] == list(A2) else v] for s, c, v in amb_z3["witness"][1]],
    ]
    assert recheck_certificate({**amb_z3, "witness": bad_witness})
    assert recheck_certificate({**amb_z3, "witness_answers": ["x", "y"]})
    assert recheck_certificate({"status": "determined"})
