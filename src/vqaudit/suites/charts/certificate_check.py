"""Re-verifying a stored answerability certificate (``certificates/*.json`` of a chart benchmark; seed 000, §3.3).

``vqaudit verify`` trusts no certificate it reads: an ambiguous one must carry a witness that
:func:`vqaudit.suites.charts.certify.check_witness` accepts with the recorded answers, and a determined one must
decide the same again (its recorded z3 query still UNSAT, :func:`recheck_smt2`). The certifier that writes them is
:mod:`vqaudit.suites.charts.certify`.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import z3  # type: ignore[import-untyped]

from vqaudit.errors import VqauditError
from vqaudit.suites.charts.certify import Domain, certify_enumeration, certify_z3, check_witness
from vqaudit.suites.charts.programs import Cell, answer_text, evaluate


def recheck_smt2(smt2: str) -> str:
    """Re-run a recorded z3 query (a certificate's ``smt2``); return ``"unsat"``, ``"sat"`` or ``"unknown"``.

    A determined z3 certificate is re-verified when this returns ``"unsat"``.

    Raises:
        VqauditError: the text does not parse as SMT-LIB2.
    """
    solver = z3.SimpleSolver()
    try:
        solver.add(z3.parse_smt2_string(smt2))
    except z3.Z3Exception as exc:
        raise VqauditError(f"recorded smt2 query does not parse: {exc}") from None
    return str(solver.check())


def recheck_certificate(data: Mapping[str, Any]) -> list[str]:
    """Re-verify a certificate's JSON (:meth:`Certificate.to_json`); return the failed conditions (empty = valid).

    Ambiguous: the witness's first table is the certificate's table, the pair passes :func:`check_witness`, and
    the recorded answers are the exact ones. Determined: the recorded z3 query is still UNSAT (z3 path), and
    deciding the recorded table again (same method) gives "determined" with the recorded answer.
    """
    from vqaudit.suites.charts.program_text import program_from_json

    def table(rows: Any) -> dict[Cell, Fraction]:
        return {(str(s), str(c)): Fraction(v) for s, c, v in rows}

    try:
        program = program_from_json(data["program"])
        dom = data["domain"]
        domain = Domain(Fraction(dom["axis_lo"]), Fraction(dom["axis_hi"]), Fraction(dom["grid_step"]))
        hidden = tuple((str(s), str(c)) for s, c in data["hidden_cells"])
        ref, status, method = table(data["table"]), data["status"], data["method"]
        witness = [table(t) for t in data["witness"]] if status == "ambiguous" else []
    except (KeyError, TypeError, ValueError, ZeroDivisionError, VqauditError) as exc:
        return [f"malformed answerability certificate: {exc!r}"]
    if status == "ambiguous":
        if len(witness) != 2 or witness[0] != ref:
            return ["witness must be the certificate's table and one alternative"]
        problems = check_witness(ref, hidden, domain, program, *witness)
        if not problems and [answer_text(evaluate(program, t)) for t in witness] != data.get("witness_answers"):
            problems.append("recorded witness answers are not the exact answers")
        return problems
    if status != "determined" or method not in ("enumeration", "z3"):
        return [f"unknown status/method {status!r}/{method!r}"]
    problems = []
    if method == "z3":
        try:
            if recheck_smt2(str(data.get("smt2", ""))) != "unsat":
                problems.append("recorded z3 query is not unsat")
        except VqauditError as exc:
            problems.append(str(exc))
    try:
        again = (certify_z3 if method == "z3" else certify_enumeration)(ref, hidden, domain, program)
    except VqauditError as exc:
        return [*problems, f"cannot re-decide: {exc}"]
    if not again.determined or answer_text(again.answer) != data.get("answer"):
        problems.append(f"re-deciding gives {again.status} with answer {answer_text(again.answer)}")
    return problems
