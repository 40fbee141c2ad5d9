"""What the multiple-choice branch of ``vqaudit audit`` writes, and when: its files as one set, or none.

The branch wrote ``report.json``, ``rows.jsonl`` and ``report.md`` one after another, so a failure between two of
them left a folder mixing two audits. Now it writes them as one set, as the short-answer branch does
(``files.atomic_write_set``, docs/shortanswer.md "The output folder"); a SIGTERM once they are in place is a
clean stop (item 2). Expected values are hand computations on
the two-row MMBench-style sheets written here: a sheet whose replies are ``A, A`` against gold ``A, B`` has 1 of 2
right (accuracy 0.5); ``B, A`` against the same gold has none right.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from shortanswer.helpers import audit_folder_held, run_cli
from vqaudit.folder_lock import LOCK_FILE


def _sheet(path: Path, replies: tuple[str, str]) -> Path:
    path.write_text(
        f"index,question,A,B,answer,prediction\n1,q1,x,y,A,{replies[0]}\n2,q2,x,y,B,{replies[1]}\n", encoding="utf-8"
    )
    return path


def _mc(monkeypatch: pytest.MonkeyPatch, sheet: Path, out: Path) -> int:
    return run_cli(monkeypatch, "audit", str(sheet), "--benchmark", "mmbench", "--out", str(out))


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != LOCK_FILE}


def _first_audit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Path, Path, dict[str, bytes]]:
    sheet, out = _sheet(tmp_path / "mc.csv", ("A", "A")), tmp_path / "out"
    assert _mc(monkeypatch, sheet, out) == 0
    rows = [json.loads(line) for line in (out / "rows.jsonl").read_text().splitlines()]
    assert [r["correct"] for r in rows] == [True, False]  # gold A, B; replies A, A (module docstring)
    _sheet(sheet, ("B", "A"))  # the same file name and benchmark: the guard lets it rewrite the folder
    return sheet, out, _snapshot(out)


def test_a_failure_while_writing_the_second_file_leaves_the_previous_audit_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: report.json was replaced first, so a failure writing rows.jsonl left the new report.json beside the
    # old rows.jsonl and report.md (exit 2, and the guard then took the folder for the new audit).
    sheet, out, before = _first_audit(monkeypatch, tmp_path)
    real_fsync = os.fsync
    calls: list[int] = []

    def fsync(fd: int) -> None:  # every file the report writes is fsynced once; the second one fails
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr("vqaudit.files.os.fsync", fsync)
    capsys.readouterr()
    assert _mc(monkeypatch, sheet, out) == 2
    assert "no space left" in capsys.readouterr().err.lower()
    assert _snapshot(out) == before  # the first audit byte for byte, and no temporary file left behind
    monkeypatch.setattr("vqaudit.files.os.fsync", real_fsync)
    assert _mc(monkeypatch, sheet, out) == 0  # the rerun the message invites replaces the set whole
    rows = [json.loads(line) for line in (out / "rows.jsonl").read_text().splitlines()]
    assert [r["correct"] for r in rows] == [False, False]  # replies B, A against gold A, B
    assert json.loads((out / "report.json").read_text())["choice"]["correct"] == 0


def test_renames_put_report_json_last_and_a_stop_between_them_leaves_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SIGKILL between two renames cannot be held back; a failure at the second rename stands in for it. The old
    # report.json is removed before the first rename: the folder is visibly incomplete, never the old report.json
    # beside the new rows (before: report.json, the file the guard reads, was the first file replaced).
    sheet, out, _ = _first_audit(monkeypatch, tmp_path)
    real_replace = os.replace
    calls: list[str] = []

    def replace(src: Any, dst: Any) -> None:
        calls.append(Path(dst).name)
        if len(calls) == 2:
            raise OSError("killed")
        real_replace(src, dst)

    monkeypatch.setattr("vqaudit.files.os.replace", replace)
    assert _mc(monkeypatch, sheet, out) == 2
    assert calls == ["rows.jsonl", "report.md"]
    assert sorted(_snapshot(out)) == ["report.md", "rows.jsonl"]  # no report.json, no temporary file
    monkeypatch.setattr("vqaudit.files.os.replace", real_replace)
    assert _mc(monkeypatch, sheet, out) == 0  # a folder without report.json may be rewritten
    assert sorted(_snapshot(out)) == ["report.json", "report.md", "rows.jsonl"]


def test_report_json_keeps_its_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The set writes report.json with write_json's formula (indented, key-sorted, non-ASCII as is, final newline).
    sheet, out = _sheet(tmp_path / "caf\u00e9.csv", ("A", "A")), tmp_path / "out"
    assert _mc(monkeypatch, sheet, out) == 0
    text = (out / "report.json").read_text(encoding="utf-8")
    data = json.loads(text)
    assert text == json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert data["predictions"] == "caf\u00e9.csv" and data["choice"]["accuracy_all"] == 0.5  # 1 of 2 right


def test_a_multiple_choice_audit_into_a_folder_another_audit_is_writing_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two audits into one --out: the second stops at once naming the first (the lock of the short-answer branch,
    # taken in `audit` before the two branches part).
    out = tmp_path / "X"
    sheet = _sheet(tmp_path / "mc.csv", ("A", "A"))
    with audit_folder_held(out, "vqaudit audit other.csv"):
        assert _mc(monkeypatch, sheet, out) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert "vqaudit audit other.csv (pid" in err and "is writing this audit folder" in err
        assert _snapshot(out) == {}
    assert _mc(monkeypatch, sheet, out) == 0  # the lock went with its process


def test_a_sigterm_held_during_the_renames_is_a_clean_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # As the short-answer branch (test_audit_sigterm.py, in a real process): the set is whole, so exit 0 and a
    # line saying so; before: 143, "terminated (SIGTERM); rerun the same command to resume".
    sheet, out, _ = _first_audit(monkeypatch, tmp_path)
    real_replace = os.replace

    def replace(src: Any, dst: Any) -> None:
        if Path(dst).name == "rows.jsonl":
            os.kill(os.getpid(), signal.SIGTERM)  # held back until the last rename
        real_replace(src, dst)

    monkeypatch.setattr("vqaudit.files.os.replace", replace)
    capsys.readouterr()
    assert _mc(monkeypatch, sheet, out) == 0
    captured = capsys.readouterr()
    assert captured.err == (
        f"stopped by SIGTERM after the audit was completely written to {out} (report.md, "
        "report.json, rows.jsonl): nothing was lost\n"
    )
    assert captured.out == ""
    assert json.loads((out / "report.json").read_text())["choice"]["correct"] == 0  # the second sheet, whole


def test_another_prediction_file_of_the_same_name_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Re-trial: `audit mcb/preds.tsv --out mcx` silently replaced the audit of mca/preds.tsv (exit 0), because the
    # multiple-choice report.json named the file by its name only; the short-answer branch refused the same case.
    (tmp_path / "mca").mkdir()
    (tmp_path / "mcb").mkdir()
    first, second = (
        _sheet(tmp_path / "mca" / "preds.csv", ("A", "B")),
        _sheet(tmp_path / "mcb" / "preds.csv", ("B", "A")),
    )
    out = tmp_path / "mcx"
    assert _mc(monkeypatch, first, out) == 0
    before = _snapshot(out)
    assert json.loads(before["report.json"])["predictions_file"] == str(first.resolve())
    capsys.readouterr()
    assert _mc(monkeypatch, second, out) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: {out}: holds the multiple-choice audit of {first.resolve()} on 'mmbench'; this one reads another "
        f"file of the same name ({second.resolve()}) and would overwrite it: choose another --out"
    ]
    assert _snapshot(out) == before
    assert _mc(monkeypatch, first, out) == 0  # the same file again may rewrite its own audit
