"""The label audits: ``audit-checker`` and ``audit-certifier``.

``audit-checker`` injects designed faults the checker must reject; ``audit-certifier`` is the synthetic
certifier audit (seed 000, §3.3, appendix D).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from vqaudit.cli.options import ExecutorName, ExecutorOpt, RayAddress, executor
from vqaudit.errors import VqauditError


def audit_certifier_cmd(
    grid: Annotated[str, typer.Option(help="Admissible grid lo:hi:step, e.g. 0:3:1 or 0:2:1/2.")] = "0:3:1",
    recursive: Annotated[bool, typer.Option(help="Include the recursive-tree programs.")] = True,
    trees: Annotated[int, typer.Option(min=1, help="Number of recursive trees (15 cases each).")] = 32,
    seed: Annotated[int, typer.Option(min=0, help="Seed of reference values, trees and tree worlds.")] = 0,
    out: Annotated[Path | None, typer.Option(help="Write the result here: .json, else Markdown.")] = None,
) -> None:
    """Audit the answerability certifier on the four-cell family: enumeration vs z3 and the two shortcuts.

    Prints the Markdown table. Exits with status 1 if enumeration and z3 disagree on any case.
    """
    from vqaudit.suites.charts.audit import run_audit

    result = run_audit(grid, recursive=recursive, n_trees=trees, seed=seed)
    text = result.to_markdown()
    typer.echo(text)
    if out is not None:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            if out.suffix == ".json":
                out.write_text(json.dumps(result.to_json(), indent=2) + "\n", encoding="utf-8")
            else:
                out.write_text("# Certifier audit\n\n" + text, encoding="utf-8")
        except OSError as exc:
            raise VqauditError(f"{out}: cannot write the audit result: {exc}") from None
    if result.disagreements:
        typer.echo(f"enumeration and z3 disagree on {len(result.disagreements)} cases", err=True)
        raise typer.Exit(1)


def audit_checker_cmd(
    bench: Annotated[Path, typer.Argument(help="A built chart benchmark.")],
    max_views: Annotated[int, typer.Option(min=2, help="Masked views to make faults from (9 faults each).")] = 12,
    workers: Annotated[int, typer.Option(min=1, help="Re-rendering processes.")] = 2,
    executor_name: ExecutorOpt = ExecutorName.local,
    ray_address: RayAddress = None,
) -> None:
    """Inject designed faults into genuine certificates; exit 1 unless the checker rejects every one."""
    from vqaudit.executors import using
    from vqaudit.verify import run_fault_suite

    with using(executor(executor_name, ray_address)):
        table = run_fault_suite(bench, max_views=max_views, workers=workers)
    typer.echo("| fault kind | designed | rejected |\n|---|---|---|")
    for kind, (n, rejected) in table.items():
        label = "genuine (accepted)" if kind == "genuine" else kind
        typer.echo(f"| {label} | {n} | {rejected} |")
    faults = {k: v for k, v in table.items() if k != "genuine"}
    ok = all(n == r for n, r in faults.values()) and table["genuine"][0] == table["genuine"][1]
    if not ok:
        raise typer.Exit(1)
