"""``vqaudit audit-leaks BENCH``: attack every masked chart view with the chart reader and a pixel probe.

A command function only; ``vqaudit.cli`` registers it (``app.command("audit-leaks")(audit_leaks_cmd)``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def audit_leaks_cmd(
    bench: Annotated[Path, typer.Argument(help="A built chart benchmark.")],
    faults: Annotated[
        bool, typer.Option(help="Also design audit-checker's faults and count the leaking ones.")
    ] = False,
    max_views: Annotated[
        int | None,
        typer.Option(min=2, help="Masked views to read (default: all; with --faults, 6 to design faults from)."),
    ] = None,
) -> None:
    """Read every masked view with the mask ignored; exit 1 if any hidden value is recovered (a leak)."""
    from vqaudit.suites.charts.leaks import LEAKING_FAULTS, audit_fault_leaks, audit_leaks

    if faults:
        table = audit_fault_leaks(bench, max_views=max_views or 6)
        typer.echo("| fault kind | designed | leaking |\n|---|---|---|")
        for kind, (n, leaking) in table.items():
            typer.echo(f"| {'genuine (no leak expected)' if kind == 'genuine' else kind} | {n} | {leaking} |")
        missed = any(table[k][1] < table[k][0] for k in LEAKING_FAULTS if k in table)
        if missed or table["genuine"][1]:
            raise typer.Exit(1)
        return
    checked, leaks = audit_leaks(bench, max_views=max_views)
    for leak in leaks:
        typer.echo(
            f"LEAK {leak.view_id}: {leak.series} at {leak.category} = {leak.value} recovered by the "
            f"{leak.method} ({leak.how})"
        )
    typer.echo(f"{bench}: {checked} masked views read with the mask ignored; {len(leaks)} hidden values recovered")
    if leaks:
        raise typer.Exit(1)
