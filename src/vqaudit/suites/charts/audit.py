"""The synthetic certifier audit of seed 000 (§3.3, appendix D) on a family of four-cell worlds.

**Family** (also in ``docs/certifier.md``). One series ``S`` with four categories ``c1..c4``; a grid
``lo:hi:step`` (default ``0:3:1``, values {0, 1, 2, 3}). Base part: for each of the :func:`base_programs`, every
non-empty set ``H`` of hidden cells and every assignment of grid values to the visible cells (the hidden cells'
reference values are drawn from a seeded generator; they do not change the decision). With ``n`` grid values that
is ``sum_h C(4,h) n^(4-h) = (n+1)^4 - n^4`` cases per program. Recursive part: :func:`recursive_programs` draws
seeded random trees of depth <= 3 (sum, difference, max, min, mean over lookups of ``c1..c4``, leaves may repeat);
each tree is audited on one seeded random world with every non-empty hidden set (15 cases per tree).

For every case both deciders run (:func:`~vqaudit.suites.charts.certify.certify_enumeration`,
:func:`~vqaudit.suites.charts.certify.certify_z3`), and both known shortcuts are scored against enumeration.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from vqaudit.errors import VqauditError
from vqaudit.suites.charts.certify import (
    Domain,
    certify_enumeration,
    certify_z3,
    shortcut_endpoints,
    shortcut_reads_hidden,
)
from vqaudit.suites.charts.program_text import program_to_json
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
    over,
)

SERIES = "S"
CELLS: tuple[Cell, ...] = tuple((SERIES, f"c{i}") for i in range(1, 5))


def parse_grid(spec: str) -> Domain:
    """Parse ``lo:hi:step`` (rationals, e.g. ``0:3:1`` or ``0:2:1/2``). Raises VqauditError when malformed."""
    try:
        lo, hi, step = (Fraction(x) for x in spec.split(":"))
    except ValueError:
        raise VqauditError(f"--grid must be lo:hi:step, e.g. 0:3:1 (got {spec!r})") from None
    domain = Domain(lo, hi, step)
    if len(domain.values()) < 2:
        raise VqauditError(f"grid {spec!r} has fewer than two values")
    return domain


def base_programs(domain: Domain) -> list[tuple[str, Program]]:
    """The named base programs of the family (``count_above`` uses the axis midpoint as its threshold)."""
    c1, c2 = CELLS[0], CELLS[1]
    mid = Const((domain.axis_lo + domain.axis_hi) / 2)
    return [
        ("lookup(c1)", Lookup(c1)),
        ("difference(c1, c2)", Difference(Lookup(c1), Lookup(c2))),
        ("sum(c1, c2)", Sum(Lookup(c1), Lookup(c2))),
        ("mean(S)", Mean(over(CELLS))),
        ("max(S)", Max(over(CELLS))),
        ("min(S)", Min(over(CELLS))),
        ("argmax(S)", ArgMax(CELLS)),
        ("argmin(S)", ArgMin(CELLS)),
        ("compare(c1, c2)", Compare(c1, c2)),
        ("count_above(S, midpoint)", CountAbove(CELLS, mid)),
        ("rank(c1 in S)", Rank(c1, CELLS)),
        ("difference(max(S), c1)", Difference(Max(over(CELLS)), Lookup(c1))),
        ("difference(max(S), min(S))", Difference(Max(over(CELLS)), Min(over(CELLS)))),
        ("count_above(S, mean(S))", CountAbove(CELLS, Mean(over(CELLS)))),
    ]


def _tree(rng: np.random.Generator, depth: int) -> NumProgram:
    if depth == 0 or rng.random() < 0.25:
        return Lookup(CELLS[int(rng.integers(4))])
    op = int(rng.integers(5))
    if op < 2:
        left, right = _tree(rng, depth - 1), _tree(rng, depth - 1)
        return Sum(left, right) if op == 0 else Difference(left, right)
    args = tuple(_tree(rng, depth - 1) for _ in range(int(rng.integers(2, 4))))
    return (Max, Min, Mean)[op - 2](args)


def recursive_programs(n_trees: int, seed: int) -> list[tuple[str, NumProgram]]:
    """``n_trees`` distinct seeded random trees of depth <= 3 whose root is an operator (not a bare lookup)."""
    rng = np.random.default_rng([seed, 1])
    out: dict[NumProgram, None] = {}
    for _ in range(100 * n_trees):
        if len(out) == n_trees:
            break
        tree = _tree(rng, 3)
        if not isinstance(tree, Lookup):
            out.setdefault(tree)
    return [(f"tree{i}", t) for i, t in enumerate(out)]


@dataclass(frozen=True)
class AuditRow:
    """Counts for one part (``base``, ``recursive``, ``total``) or one program."""

    name: str
    cases: int = 0
    constant: int = 0
    ambiguous: int = 0
    agree: int = 0
    reads_hidden_false_rejections: int = 0
    endpoints_missed: int = 0

    def add(self, constant: bool, agree: bool, reads_hidden_wrong: bool, endpoints_wrong: bool) -> AuditRow:
        """This row with one more case counted."""
        return AuditRow(
            self.name,
            self.cases + 1,
            self.constant + constant,
            self.ambiguous + (not constant),
            self.agree + agree,
            self.reads_hidden_false_rejections + (reads_hidden_wrong and constant),
            self.endpoints_missed + (endpoints_wrong and not constant),
        )


@dataclass(frozen=True)
class AuditResult:
    """The audit table: rows per part and per base program.

    ``disagreements`` lists any case where enumeration and z3 differ (must be empty); ``other_shortcut_errors``
    counts errors the shortcuts cannot make in theory (reads-hidden missing an ambiguity, endpoints rejecting a
    constant case; must be 0).
    """

    grid: Domain
    parts: tuple[AuditRow, ...]
    programs: tuple[AuditRow, ...]
    disagreements: tuple[dict[str, Any], ...]
    other_shortcut_errors: int
    seconds_enumeration: float
    seconds_z3: float
    definitions: dict[str, str] = field(default_factory=dict)

    @property
    def total(self) -> AuditRow:
        """The ``total`` row."""
        return self.parts[-1]

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict with every count, the program definitions and the timings."""

        def row(r: AuditRow) -> dict[str, Any]:
            return dict(r.__dict__)

        return {
            "grid": self.grid.to_json(),
            "parts": [row(r) for r in self.parts],
            "programs": [row(r) for r in self.programs],
            "disagreements": list(self.disagreements),
            "other_shortcut_errors": self.other_shortcut_errors,
            "seconds_enumeration": round(self.seconds_enumeration, 3),
            "seconds_z3": round(self.seconds_z3, 3),
            "definitions": self.definitions,
        }

    def to_markdown(self, per_program: bool = True) -> str:
        """The audit table (and, optionally, one row per program) as Markdown."""
        head = (
            "| {} | cases | constant | ambiguous | enumeration = z3 | reads-hidden false rejections "
            "| endpoints-only missed |\n|---|---|---|---|---|---|---|\n"
        )

        def lines(rows: Sequence[AuditRow]) -> str:
            return "".join(
                f"| {r.name} | {r.cases} | {r.constant} | {r.ambiguous} | {r.agree}/{r.cases} | "
                f"{r.reads_hidden_false_rejections} | {r.endpoints_missed} |\n"
                for r in rows
            )

        g = self.grid
        out = (
            f"Grid: values k*{g.grid_step} in [{g.axis_lo}, {g.axis_hi}] ({len(g.values())} values); "
            f"enumeration {self.seconds_enumeration:.1f} s, z3 {self.seconds_z3:.1f} s.\n\n"
            + head.format("part")
            + lines(self.parts)
        )
        if per_program:
            out += "\n" + head.format("program") + lines(self.programs)
        return out


def _cases(
    domain: Domain, programs: Sequence[tuple[str, Program]], recursive: Sequence[tuple[str, Program]], seed: int
) -> list[tuple[str, str, Program, dict[Cell, Fraction], tuple[Cell, ...]]]:
    rng = np.random.default_rng([seed, 0])
    grid = domain.values()
    subsets = [tuple(c for c in CELLS if c in s) for h in range(1, 5) for s in itertools.combinations(CELLS, h)]
    out = []
    for name, program in programs:
        for hidden in subsets:
            visible = [c for c in CELLS if c not in hidden]
            for combo in itertools.product(grid, repeat=len(visible)):
                table = dict(zip(visible, combo, strict=True))
                table.update({c: grid[int(rng.integers(len(grid)))] for c in hidden})
                out.append(("base", name, program, {c: table[c] for c in CELLS}, hidden))
    for name, program in recursive:
        world = {c: grid[int(rng.integers(len(grid)))] for c in CELLS}
        out += [("recursive", name, program, world, hidden) for hidden in subsets]
    return out


def run_audit(
    grid: str = "0:3:1",
    *,
    recursive: bool = True,
    n_trees: int = 32,
    seed: int = 0,
    program_names: Sequence[str] | None = None,
) -> AuditResult:
    """Run the synthetic audit (seed 000, §3.3, appendix D) on the four-cell family.

    Args:
        grid: ``lo:hi:step`` of the admissible grid (default ``0:3:1``: values 0..3).
        recursive: include the recursive-tree part.
        n_trees: number of recursive trees (15 cases each).
        seed: seed of the hidden cells' reference values, the trees and their worlds.
        program_names: restrict the base part to these program names (default: all of :func:`base_programs`).

    Returns:
        The counts per part (``base``, ``recursive``, ``total``) and per program, with any enumeration/z3
        disagreement listed (none expected).

    Raises:
        VqauditError: a malformed grid or an unknown program name.
    """
    domain = parse_grid(grid)
    programs = base_programs(domain)
    if program_names is not None:
        unknown = set(program_names) - {n for n, _ in programs}
        if unknown:
            raise VqauditError(f"unknown audit programs: {sorted(unknown)}")
        programs = [(n, p) for n, p in programs if n in program_names]
    trees: list[tuple[str, Program]] = list(recursive_programs(n_trees, seed)) if recursive else []
    rows: dict[str, AuditRow] = {}
    parts = {p: AuditRow(p) for p in ("base", "recursive", "total")}
    disagreements: list[dict[str, Any]] = []
    other = 0
    t_enum = t_z3 = 0.0
    for part, name, program, table, hidden in _cases(domain, programs, trees, seed):
        t0 = time.perf_counter()
        enum = certify_enumeration(table, hidden, domain, program)
        t1 = time.perf_counter()
        smt = certify_z3(table, hidden, domain, program)
        t_enum, t_z3 = t_enum + t1 - t0, t_z3 + time.perf_counter() - t1
        constant = enum.determined
        agree = enum.status == smt.status and enum.answer == smt.answer
        if not agree:
            disagreements.append(
                {
                    "program": program_to_json(program),
                    "hidden": [list(c) for c in hidden],
                    "enumeration": enum.status,
                    "z3": smt.status,
                }
            )
        rh = shortcut_reads_hidden(program, hidden) != enum.status
        ep = shortcut_endpoints(table, hidden, domain, program) != enum.status
        other += (rh and not constant) + (ep and constant)
        if part == "base":
            rows[name] = rows.get(name, AuditRow(name)).add(constant, agree, rh, ep)
        for key in (part, "total"):
            parts[key] = parts[key].add(constant, agree, rh, ep)
    definitions = {n: str(program_to_json(p)) for n, p in [*programs, *trees]}
    kept = tuple(parts[p] for p in ("base", "recursive", "total") if p != "recursive" or recursive)
    return AuditResult(
        grid=domain,
        parts=kept,
        programs=tuple(rows.values()),
        disagreements=tuple(disagreements),
        other_shortcut_errors=other,
        seconds_enumeration=t_enum,
        seconds_z3=t_z3,
        definitions=definitions,
    )
