"""Answerability certifier: does the visible part of a chart determine a program's answer? (seed 000, §3.2-3.3).

Setting: a complete table, a set of **hidden** cells (those under a mask) and the declared **domain** (grid step
and fixed axis range). An **admissible completion** keeps every visible cell and gives each hidden cell a grid
value ``k * step`` inside ``[axis_lo, axis_hi]``. The image determines the answer iff every admissible completion
gives the same answer. Two deciders, which must agree (appendix D):

- :func:`certify_enumeration`: evaluate every completion of the hidden cells the program reads;
- :func:`certify_z3`: ask z3 for an admissible completion whose answer differs from the answer of the reference
  completion (the table itself); UNSAT is the proof of determination, a model is a witness.

An *ambiguous* certificate carries a witness: two admissible completions (full tables) with different answers,
checked by exact evaluation before it is returned. Hidden cells the program does not read cannot change the
answer and are kept at their table values. The two known wrong shortcuts are here too, for the audit:
:func:`shortcut_reads_hidden` and :func:`shortcut_endpoints`. A stored certificate is re-verified by
:mod:`vqaudit.suites.charts.certificate_check`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

import z3  # type: ignore[import-untyped]

from vqaudit.errors import VqauditError
from vqaudit.suites.charts.program_text import program_to_json
from vqaudit.suites.charts.program_z3 import encode_z3, z3_value
from vqaudit.suites.charts.programs import Answer, Cell, Program, answer_text, cells_read, evaluate
from vqaudit.suites.charts.world import World, fraction_text

Status = Literal["determined", "ambiguous"]
ENUMERATION_LIMIT = 256
""":func:`certify` enumerates when the number of completions of the read hidden cells is at most this."""
CERTIFICATE_FORMAT = "vqaudit-answerability/1"


@dataclass(frozen=True)
class Domain:
    """The admissible values of a hidden cell: multiples of ``grid_step`` inside ``[axis_lo, axis_hi]``."""

    axis_lo: Fraction
    axis_hi: Fraction
    grid_step: Fraction

    def __post_init__(self) -> None:
        if self.grid_step <= 0 or self.axis_lo > self.axis_hi or self.k_lo > self.k_hi:
            raise VqauditError(f"empty or invalid domain [{self.axis_lo}, {self.axis_hi}] step {self.grid_step}")

    @property
    def k_lo(self) -> int:
        """Smallest grid index ``k`` with ``k * step >= axis_lo``."""
        return math.ceil(self.axis_lo / self.grid_step)

    @property
    def k_hi(self) -> int:
        """Largest grid index ``k`` with ``k * step <= axis_hi``."""
        return math.floor(self.axis_hi / self.grid_step)

    def values(self) -> list[Fraction]:
        """All admissible values, ascending."""
        return [k * self.grid_step for k in range(self.k_lo, self.k_hi + 1)]

    def admits(self, value: Fraction) -> bool:
        """Whether ``value`` is on the grid and inside the axis range."""
        return self.axis_lo <= value <= self.axis_hi and (value / self.grid_step).denominator == 1

    def to_json(self) -> dict[str, str]:
        """Exact text of the three numbers."""
        return {
            "axis_lo": fraction_text(self.axis_lo),
            "axis_hi": fraction_text(self.axis_hi),
            "grid_step": fraction_text(self.grid_step),
        }

    @staticmethod
    def of_world(world: World) -> Domain:
        """The declared domain of a world."""
        return Domain(world.axis_lo, world.axis_hi, world.grid_step)


@dataclass(frozen=True)
class Certificate:
    """The decision for one (table, hidden cells, domain, program).

    Attributes:
        status: ``"determined"`` (answerable) or ``"ambiguous"`` (unanswerable).
        method: ``"enumeration"`` or ``"z3"``.
        answer: the reference completion's answer (the table's own); when determined, the only answer.
        table: the reference completion (the full table the certifier was given).
        witness: when ambiguous, two admissible full tables whose answers differ (the first is the reference).
        witness_answers: their answers.
        n_enumerated: completions evaluated (enumeration), else 0.
        smt2: the z3 query (z3 path): "exists an admissible completion whose answer differs from ``answer``".
        z3_result: ``"unsat"`` (proof) or ``"sat"`` (witness found), z3 path only.
        z3_version: z3's version string, z3 path only.
    """

    status: Status
    method: Literal["enumeration", "z3"]
    program: Program
    hidden_cells: tuple[Cell, ...]
    domain: Domain
    answer: Answer
    table: dict[Cell, Fraction]
    witness: tuple[dict[Cell, Fraction], dict[Cell, Fraction]] | None = None
    witness_answers: tuple[Answer, Answer] | None = None
    n_enumerated: int = 0
    smt2: str = ""
    z3_result: str = ""
    z3_version: str = ""

    @property
    def determined(self) -> bool:
        """True when the visible cells determine the answer."""
        return self.status == "determined"

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (format ``vqaudit-answerability/1``); witness tables as ``[series, category, value]``."""
        out: dict[str, Any] = {
            "format": CERTIFICATE_FORMAT,
            "status": self.status,
            "method": self.method,
            "program": program_to_json(self.program),
            "hidden_cells": [list(c) for c in self.hidden_cells],
            "domain": self.domain.to_json(),
            "answer": answer_text(self.answer),
            "table": _table_json(self.table),
        }
        if self.witness is not None and self.witness_answers is not None:
            out["witness"] = [_table_json(t) for t in self.witness]
            out["witness_answers"] = [answer_text(a) for a in self.witness_answers]
        if self.method == "enumeration":
            out["n_enumerated"] = self.n_enumerated
        else:
            out.update(z3_result=self.z3_result, z3_version=self.z3_version, smt2=self.smt2)
        return out


def _table_json(table: Mapping[Cell, Fraction]) -> list[list[str]]:
    return [[s, c, fraction_text(v)] for (s, c), v in table.items()]


def _prepare(
    table: Mapping[Cell, Fraction], hidden_cells: Iterable[Cell], domain: Domain, program: Program
) -> tuple[dict[Cell, Fraction], tuple[Cell, ...], list[Cell], Answer]:
    """Check the inputs; return the table, the hidden cells, the read hidden cells and the reference answer."""
    ref = dict(table)
    hidden = tuple(dict.fromkeys(hidden_cells))
    for cell in hidden:
        if cell not in ref:
            raise VqauditError(f"hidden cell {cell} is not in the table")
        if not domain.admits(ref[cell]):
            raise VqauditError(f"hidden cell {cell} has value {ref[cell]} outside the domain")
    missing = cells_read(program) - ref.keys()
    if missing:
        raise VqauditError(f"program reads cells not in the table: {sorted(missing)}")
    read = [c for c in hidden if c in cells_read(program)]
    return ref, hidden, read, evaluate(program, ref)


def n_completions(hidden_cells: Iterable[Cell], domain: Domain, program: Program) -> int:
    """Number of admissible completions of the hidden cells the program reads (what enumeration evaluates)."""
    read = cells_read(program)
    return int(len(domain.values()) ** len({c for c in hidden_cells if c in read}))


def check_witness(
    table: Mapping[Cell, Fraction],
    hidden_cells: Iterable[Cell],
    domain: Domain,
    program: Program,
    a: Mapping[Cell, Fraction],
    b: Mapping[Cell, Fraction],
) -> list[str]:
    """Problems with a claimed witness ``(a, b)``; empty when it is valid.

    Valid: both completions keep every visible cell of ``table``, give admissible values to the hidden cells, and
    have different answers by exact evaluation.
    """
    hidden = set(hidden_cells)
    problems: list[str] = []
    for name, t in (("a", a), ("b", b)):
        if t.keys() != table.keys():
            problems.append(f"completion {name} has different cells from the table")
            continue
        for cell, v in t.items():
            if cell in hidden and not domain.admits(v):
                problems.append(f"completion {name}: hidden cell {cell} = {v} is not admissible")
            elif cell not in hidden and v != table[cell]:
                problems.append(f"completion {name}: visible cell {cell} changed")
    if not problems and evaluate(program, a) == evaluate(program, b):
        problems.append("the two completions give the same answer")
    return problems


def _ambiguous(
    ref: dict[Cell, Fraction],
    other: dict[Cell, Fraction],
    hidden: tuple[Cell, ...],
    domain: Domain,
    program: Program,
    **fields: Any,
) -> Certificate:
    problems = check_witness(ref, hidden, domain, program, ref, other)
    if problems:
        raise VqauditError(f"internal error: witness failed its own check: {problems}")
    answers = (evaluate(program, ref), evaluate(program, other))
    return Certificate(
        status="ambiguous",
        program=program,
        hidden_cells=hidden,
        domain=domain,
        answer=answers[0],
        table=ref,
        witness=(ref, other),
        witness_answers=answers,
        **fields,
    )


def certify_enumeration(
    table_values: Mapping[Cell, Fraction], hidden_cells: Iterable[Cell], domain: Domain, program: Program
) -> Certificate:
    """Decide by evaluating every admissible completion of the hidden cells the program reads.

    Args:
        table_values: the complete table ``{(series, category): value}``; hidden cells' values must be admissible
            (they form the reference completion).
        hidden_cells: the cells under the mask.
        domain: grid step and fixed axis range.
        program: the question program.

    Returns:
        A determined certificate (``n_enumerated`` = all completions) or an ambiguous one whose witness is the
        reference table and the first completion, in grid order, with another answer.

    Raises:
        VqauditError: a hidden cell off the domain or missing, or a read cell missing from the table.
    """
    ref, hidden, read, answer = _prepare(table_values, hidden_cells, domain, program)
    n = 0
    for combo in itertools.product(domain.values(), repeat=len(read)):
        n += 1
        other = {**ref, **dict(zip(read, combo, strict=True))}
        if evaluate(program, other) != answer:
            return _ambiguous(ref, other, hidden, domain, program, method="enumeration", n_enumerated=n)
    return Certificate(
        status="determined",
        method="enumeration",
        program=program,
        hidden_cells=hidden,
        domain=domain,
        answer=answer,
        table=ref,
        n_enumerated=n,
    )


def certify_z3(
    table_values: Mapping[Cell, Fraction], hidden_cells: Iterable[Cell], domain: Domain, program: Program
) -> Certificate:
    """Decide with z3: is there an admissible completion whose answer differs from the reference answer?

    Each read hidden cell is ``k * grid_step`` with an integer ``k`` in ``[k_lo, k_hi]`` (exact admissibility);
    visible cells are exact rational constants. UNSAT proves the answer determined; SAT yields a model, turned
    into a full-table witness and checked by exact evaluation.

    Args: as :func:`certify_enumeration`.

    Returns:
        A certificate with ``method="z3"``, the SMT-LIB2 query text, the result and the z3 version.

    Raises:
        VqauditError: bad inputs, z3 answering ``unknown``, or a model that fails exact re-evaluation.
    """
    ref, hidden, read, answer = _prepare(table_values, hidden_cells, domain, program)
    step = z3_value(domain.grid_step)
    ks = {cell: z3.Int(f"k{i}") for i, cell in enumerate(read)}
    terms = {
        cell: (z3.ToReal(ks[cell]) * step if cell in ks else z3_value(v))
        for cell, v in ref.items()
        if cell in cells_read(program)
    }
    solver = z3.SimpleSolver()
    for k in ks.values():
        solver.add(k >= domain.k_lo, k <= domain.k_hi)
    encoded = encode_z3(program, terms)
    if isinstance(answer, Fraction):
        solver.add(encoded != z3_value(answer))
    else:
        solver.add(z3.Not(encoded[answer]))
    smt2 = solver.to_smt2()
    result = solver.check()
    fields: dict[str, Any] = {
        "method": "z3",
        "smt2": smt2,
        "z3_result": str(result),
        "z3_version": z3.get_version_string(),
    }
    if result == z3.unsat:
        return Certificate(
            status="determined", program=program, hidden_cells=hidden, domain=domain, answer=answer, table=ref, **fields
        )
    if result != z3.sat:
        raise VqauditError(f"z3 returned {result} for {program_to_json(program)}")
    model = solver.model()
    other = dict(ref)
    for cell, k in ks.items():
        other[cell] = model.eval(k, model_completion=True).as_long() * domain.grid_step
    return _ambiguous(ref, other, hidden, domain, program, **fields)


def certify(
    table_values: Mapping[Cell, Fraction],
    hidden_cells: Iterable[Cell],
    domain: Domain,
    program: Program,
    *,
    enumeration_limit: int = ENUMERATION_LIMIT,
) -> Certificate:
    """Decide answerability: enumeration if :func:`n_completions` <= ``enumeration_limit``, else z3.

    Args: as :func:`certify_enumeration`, plus the enumeration threshold.

    Returns:
        The certificate (see :class:`Certificate`); ``status`` says whether the image determines the answer.
    """
    hidden = tuple(hidden_cells)
    if n_completions(hidden, domain, program) <= enumeration_limit:
        return certify_enumeration(table_values, hidden, domain, program)
    return certify_z3(table_values, hidden, domain, program)


def certify_world(world: World, hidden_cells: Iterable[Cell], program: Program, **kwargs: Any) -> Certificate:
    """:func:`certify` on a world's table and declared domain (``hidden_cells`` e.g. from ``category_cells``)."""
    from vqaudit.suites.charts.programs import world_table

    return certify(world_table(world), hidden_cells, Domain.of_world(world), program, **kwargs)


def cross_check(
    table_values: Mapping[Cell, Fraction], hidden_cells: Iterable[Cell], domain: Domain, program: Program
) -> tuple[Certificate, Certificate]:
    """Run both deciders; return ``(enumeration, z3)`` certificates.

    Raises:
        VqauditError: the two disagree on the status (or on the determined answer).
    """
    hidden = tuple(hidden_cells)
    enum = certify_enumeration(table_values, hidden, domain, program)
    smt = certify_z3(table_values, hidden, domain, program)
    if enum.status != smt.status or enum.answer != smt.answer:
        raise VqauditError(
            f"enumeration says {enum.status}, z3 says {smt.status} for "
            f"{program_to_json(program)} with hidden {list(hidden)}"
        )
    return enum, smt


def shortcut_reads_hidden(program: Program, hidden_cells: Iterable[Cell]) -> Status:
    """Known wrong shortcut: claim ``ambiguous`` whenever the program reads a hidden cell.

    Never misses ambiguity, but falsely rejects constant-answer cases (seed 000, §3.3, appendix D).
    """
    return "ambiguous" if cells_read(program) & set(hidden_cells) else "determined"


def shortcut_endpoints(
    table_values: Mapping[Cell, Fraction], hidden_cells: Iterable[Cell], domain: Domain, program: Program
) -> Status:
    """Known wrong shortcut: claim ``determined`` if the 2^h corner completions agree.

    The corners put each read hidden cell at the lowest or the highest grid value.

    Never claims a false ambiguity, but misses ambiguity inside the range (seed 000, §3.3, appendix D).
    """
    ref, _, read, _ = _prepare(table_values, hidden_cells, domain, program)
    ends = (domain.k_lo * domain.grid_step, domain.k_hi * domain.grid_step)
    answers = {
        evaluate(program, {**ref, **dict(zip(read, combo, strict=True))})
        for combo in itertools.product(ends, repeat=len(read))
    }
    return "determined" if len(answers) == 1 else "ambiguous"
