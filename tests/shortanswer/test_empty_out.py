"""``--out ''`` is refused: it would write into the folder the user ran the command from.

``Path("")`` is the current folder, so an empty ``--out`` (an unset shell variable: ``--out "$OUT"``) wrote the
audit into the folder the user ran it from, beside their own files. Now an empty or whitespace-only ``--out`` of
``audit``, ``perturb`` and ``audit-summary`` is refused with one line and exit 2 (a usage error, as click gives
any bad option value), before anything is read or written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shortanswer.helpers import run_cli


def _preds(path: Path) -> Path:
    path.write_text(
        json.dumps({"question_id": 1, "question": "q?", "prediction": "cat", "gt_answers": ["cat"] * 10}) + "\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("out", ["", " ", "\t "])
@pytest.mark.parametrize("command", ["audit", "perturb", "audit-summary"])
def test_an_empty_out_is_refused_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: str, out: str
) -> None:
    monkeypatch.chdir(tmp_path)
    preds = _preds(tmp_path / "p.jsonl")
    args = {
        "audit": ["audit", str(preds), "--benchmark", "textvqa"],
        "perturb": [
            "perturb",
            str(preds),
            "--benchmark",
            "textvqa",
            "--model",
            "openai:m@http://127.0.0.1:9/v1",
            "--images",
            str(tmp_path),
        ],
        "audit-summary": ["audit-summary", str(tmp_path)],
    }[command]
    assert run_cli(monkeypatch, *args, "--out", out) == 2  # before: 0 for audit, the report in the current folder
    err = capsys.readouterr().err
    assert err == (
        f"error: Invalid value for '--out': {out!r} names no folder (an empty path would mean the "
        "current folder); give the output folder's name\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.jsonl"]  # nothing written


def test_a_named_out_still_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    preds = _preds(tmp_path / "p.jsonl")
    assert run_cli(monkeypatch, "audit", str(preds), "--benchmark", "textvqa", "--out", "X") == 0
    assert json.loads((tmp_path / "X" / "report.json").read_text())["scores"]["Overall"] == 100.0  # 10 of 10 "cat"
