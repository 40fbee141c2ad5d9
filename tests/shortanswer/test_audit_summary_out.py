"""`vqaudit audit-summary`: the folders it is given and the folder it writes.

- A user's own ``summary.md`` / ``summary.json`` in ``--out`` is never overwritten (as ``vqaudit audit`` keeps a
  ``report.md`` it did not write); a rerun into its own folder replaces its earlier summary.
- ``--perturb A B`` passes B as an audit folder (click reads one value per option): the error says B is a
  ``vqaudit perturb`` folder and how to give it, and the reverse for an audit folder given to ``--perturb``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shortanswer.helpers import run_cli


def _audit(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real audit folder: three DocVQA predictions with embedded gold (exact match decides nothing here)."""
    preds = tmp / "m1.jsonl"
    rows = [("1", "paris", ["paris"]), ("2", "lyon", ["nice"]), ("3", "12", ["12"])]
    preds.write_text("".join(json.dumps({"questionId": q, "prediction": p, "answers": a}) + "\n" for q, p, a in rows))
    out = tmp / "audit-m1"
    assert run_cli(monkeypatch, "audit", str(preds), "--benchmark", "docvqa", "--out", str(out)) == 0
    return out


@pytest.mark.parametrize("name", ["summary.md", "summary.json"])
def test_a_users_own_summary_file_is_not_overwritten(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    audit = _audit(tmp_path, monkeypatch)
    out = tmp_path / "notes"
    out.mkdir()
    (out / name).write_text("my own notes\n")
    capsys.readouterr()
    assert run_cli(monkeypatch, "audit-summary", str(audit), "--out", str(out)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"error: {out / name}: exists and was not written by `vqaudit audit-summary`; the summary would "
        "overwrite it: choose another --out"
    ]
    assert (out / name).read_text() == "my own notes\n"
    assert sorted(p.name for p in out.iterdir()) == [".vqaudit.lock", name]  # nothing written but the lock


def test_a_rerun_replaces_its_own_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    audit = _audit(tmp_path, monkeypatch)
    out = tmp_path / "summary"
    assert run_cli(monkeypatch, "audit-summary", str(audit), "--out", str(out)) == 0
    first = (out / "summary.md").read_text()
    assert first.startswith("# Short-answer audit summary\n")
    assert run_cli(monkeypatch, "audit-summary", str(audit), "--out", str(out)) == 0
    assert (out / "summary.md").read_text() == first


def test_a_folder_of_the_other_kind_is_named_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    audit = _audit(tmp_path, monkeypatch)
    perturb = tmp_path / "perturb-m1"  # the check reads only which file the folder holds
    perturb.mkdir()
    (perturb / "perturbations.json").write_text("{}")
    out = tmp_path / "summary"
    capsys.readouterr()
    # `--perturb P1 P2` as the README's old usage line suggested: P2 arrives as an audit folder.
    assert (
        run_cli(monkeypatch, "audit-summary", str(audit), "--perturb", str(audit), str(perturb), "--out", str(out)) == 2
    )
    assert capsys.readouterr().err.strip() == (
        f"error: {perturb}: no report.json but a perturbations.json in this folder (it is a `vqaudit perturb` "
        "folder: give it after `--perturb`, one `--perturb FOLDER` per folder)"
    )
    assert run_cli(monkeypatch, "audit-summary", str(audit), "--perturb", str(audit), "--out", str(out)) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {audit}: no perturbations.json but a report.json in this folder (it is a `vqaudit audit` folder: "
        "give it without `--perturb`)"
    )
    assert not out.exists() or [p.name for p in out.iterdir()] == [".vqaudit.lock"]  # nothing written


def test_the_help_of_the_new_options_says_what_they_need_and_give() -> None:
    # New-user trial: `--labels` said only "Human labels (question_id, label) to validate the judge" (not that it
    # needs --judge, nor what it reports), `--second-judge` only "agreement and kappa", and `report --help` did not
    # mention the paired differences of several runs.
    from typer.testing import CliRunner

    from vqaudit.cli import app

    runner = CliRunner()
    audit = " ".join(runner.invoke(app, ["audit", "--help"], terminal_width=200).output.split())
    assert (
        "label yes/no) of official errors, to validate the judge (needs --judge): precision with its 95% Wilson"
        in audit
    )
    assert "A second judge spec (needs --judge)" in audit
    report = " ".join(runner.invoke(app, ["report", "--help"], terminal_width=200).output.split())
    assert "Delta common-state Bk and Jk and Delta conditional disagreement" in report


def test_a_summary_folder_another_process_writes_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from vqaudit.folder_lock import folder_lock

    audit = _audit(tmp_path, monkeypatch)
    out = tmp_path / "summary"
    with folder_lock(out, "vqaudit audit-summary", kind="summary folder"):
        capsys.readouterr()
        assert run_cli(monkeypatch, "audit-summary", str(audit), "--out", str(out)) == 2
    err = capsys.readouterr().err.strip()
    assert "vqaudit audit-summary" in err and "is writing this summary folder" in err and len(err.splitlines()) == 1
    assert not (out / "summary.md").exists()
