"""SIGTERM and ``vqaudit audit`` in a real process: a SIGTERM once the output is whole is a clean stop.

The trial: an audit that had completed and printed "report written" and then received SIGTERM exited 143 (or was
reported killed), though its output was whole. The rule now (docs/shortanswer.md, "The output folder"): a
SIGTERM before the report set is renamed into place stops the audit with 143 and leaves the previous audit as
it was; from the last rename on, the output is complete, and a SIGTERM ends the audit with exit 0 and a line
saying the report was completely written. Each case runs ``vqaudit`` in a child process (``python -c``) that
either sends itself SIGTERM at one step (the rename of the first file, the rendering of ``report.md``) or stops
at one step and says so on stderr, where this test sends it SIGTERM (after "report written", in an ``atexit``
handler, while the interpreter frees its objects). Expected scores are hand computations (TextVQA VQA accuracy,
test_audit_output.py): ten answers "cat" and the prediction "cat" score 1 (100 points), "dog" scores 0.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from shortanswer.helpers import run_cli
from vqaudit.folder_lock import LOCK_FILE

pytestmark = pytest.mark.slow  # each case starts a Python process and audits in it (about 2 s)

SRC = Path(__file__).resolve().parents[2] / "src"

CHILD = r"""
import atexit, os, signal, sys, time
from pathlib import Path
where, preds, out = sys.argv[1:4]
import typer
import vqaudit.files as files
from vqaudit.cli import main  # imports vqaudit.signals, whose atexit handler must run after the pause below

def pause(seconds=30.0, write=os.write, sleep=time.sleep):
    write(2, b"paused\n")
    sleep(seconds)

if where == "renames":  # SIGTERM arrives while the three files are renamed into place
    real_replace = os.replace
    def replace(src, dst):
        if Path(dst).name == "rows.jsonl":
            os.kill(os.getpid(), signal.SIGTERM)
        real_replace(src, dst)
    files.os.replace = replace
elif where == "rendering":  # SIGTERM arrives while report.md is written to its temporary file
    real_temp = files._temp_file
    def temp_file(path, chunks):
        if path.name == "report.md":
            os.kill(os.getpid(), signal.SIGTERM)
        return real_temp(path, chunks)
    files._temp_file = temp_file
elif where == "printed":  # stops after printing "report written", before releasing the folder lock
    real_echo = typer.echo
    def echo(message=None, **kwargs):
        real_echo(message, **kwargs)
        if str(message).startswith("report written"):
            pause()
    typer.echo = echo
elif where == "atexit":
    atexit.register(pause)
elif where == "shutdown":  # freed with __main__'s globals, after every atexit handler
    class Last:
        def __del__(self, pause=pause):
            pause(1.0)
    last = Last()
sys.argv = ["vqaudit", "--quiet", "audit", preds, "--benchmark", "textvqa", "--out", out]
main()
"""


def _preds(path: Path, prediction: str) -> Path:
    path.write_text(
        "".join(
            json.dumps({"question_id": i, "question": f"q{i}?", "prediction": prediction, "gt_answers": ["cat"] * 10})
            + "\n"
            for i in (1, 2)
        ),
        encoding="utf-8",
    )
    return path


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != LOCK_FILE}


def _child(where: str, preds: Path, out: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, where, str(preds), str(out)],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _earlier_audit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, dict[str, bytes]]:
    """An audit of predictions 'dog' (0 points) in OUT; then the same file rewritten to 'cat' (100 points)."""
    preds, out = _preds(tmp_path / "p.jsonl", "dog"), tmp_path / "out"
    assert run_cli(monkeypatch, "audit", str(preds), "--benchmark", "textvqa", "--out", str(out)) == 0
    assert json.loads((out / "report.json").read_text())["scores"]["Overall"] == 0.0
    _preds(preds, "cat")
    return preds, out, _snapshot(out)


def test_a_sigterm_held_during_the_renames_ends_with_exit_0_and_says_the_report_is_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    preds, out, _ = _earlier_audit(tmp_path, monkeypatch)
    child = _child("renames", preds, out)
    stdout, stderr = child.communicate(timeout=60)
    assert child.returncode == 0, stderr  # before: 143, "terminated (SIGTERM); rerun the same command to resume"
    assert stderr == (
        f"stopped by SIGTERM after the audit was completely written to {out} (report.md, "
        "report.json, rows.jsonl): nothing was lost\n"
    )
    assert stdout == ""  # stopped as asked: report.md is not printed
    assert json.loads((out / "report.json").read_text())["scores"]["Overall"] == 100.0  # the new audit, whole
    assert (out / "rows.jsonl").read_text().count('"official": 1.0') == 2
    assert sorted(_snapshot(out)) == ["report.json", "report.md", "rows.jsonl"]


def test_a_sigterm_before_the_renames_still_stops_with_143_and_keeps_the_earlier_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    preds, out, before = _earlier_audit(tmp_path, monkeypatch)
    child = _child("rendering", preds, out)
    stdout, stderr = child.communicate(timeout=60)
    assert child.returncode == 143  # 128 + 15: nothing of the new audit was written
    assert (
        stderr == "error: terminated (SIGTERM); rerun the same command "
        "(a run resumes from its stored replies, other commands start again)\n"
    )
    assert stdout == ""
    assert _snapshot(out) == before  # the earlier audit byte for byte, no temporary file


@pytest.mark.parametrize("where", ["printed", "atexit", "shutdown"])
def test_a_sigterm_after_report_written_is_a_clean_exit(tmp_path: Path, where: str) -> None:
    # before: 143 with "terminated" ("printed"), or killed by the signal (-15, 143 from a shell) while the
    # interpreter shut down ("atexit", "shutdown")
    out = tmp_path / "out"
    child = _child(where, _preds(tmp_path / "p.jsonl", "cat"), out)
    assert child.stderr is not None
    lines = []
    for line in child.stderr:
        lines.append(line)
        if line == "paused\n":
            break
    assert lines[-1] == "paused\n", "".join(lines)
    assert lines[-2] == f"report written to {out / 'report.md'}\n"
    child.send_signal(signal.SIGTERM)
    stdout, rest = child.communicate(timeout=60)
    assert child.returncode == 0, rest
    note = (
        f"stopped by SIGTERM after the audit was completely written to {out} (report.md, report.json, "
        "rows.jsonl): nothing was lost\n"
    )
    assert rest == (note if where == "printed" else "")
    assert "| official | 100.00 |" in stdout  # report.md was printed in full before the stop
    assert json.loads((out / "report.json").read_text())["scores"]["Overall"] == 100.0
