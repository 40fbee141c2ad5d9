"""The audit-certifier command function (registered by cli.py as ``vqaudit audit-certifier``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from vqaudit.cli.audits import audit_certifier_cmd


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("audit-certifier")(audit_certifier_cmd)
    app.command("other")(lambda: None)  # two commands, so typer keeps the sub-command name
    return app


@pytest.mark.slow
def test_audit_command_writes_json_and_markdown(tmp_path: Path) -> None:
    out = tmp_path / "audit.json"
    result = CliRunner().invoke(_app(), ["audit-certifier", "--grid", "0:1:1", "--no-recursive", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "| total |" in result.output
    data = json.loads(out.read_text())
    total = data["parts"][-1]
    assert total["name"] == "total" and total["agree"] == total["cases"] == 14 * 65
    # two grid values: every completion is a corner, so the endpoint shortcut cannot miss anything here
    assert total["endpoints_missed"] == 0 and total["reads_hidden_false_rejections"] > 0
    md = tmp_path / "audit.md"
    assert (
        CliRunner().invoke(_app(), ["audit-certifier", "--grid", "0:1:1", "--no-recursive", "--out", str(md)]).exit_code
        == 0
    )
    assert md.read_text().startswith("# Certifier audit")


def test_audit_command_bad_grid() -> None:
    result = CliRunner().invoke(_app(), ["audit-certifier", "--grid", "zero"])
    assert result.exit_code != 0
