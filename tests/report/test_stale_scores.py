"""A report never shows metrics older than the replies on disk (new-user trial: run -> score -> run
--retry-errors -> report showed the old numbers, exit 0).

Through the real CLI (subprocess). The benchmark is the shared 24-group chart benchmark (120 views, 5 per group:
original, S, C supported; M, I negative). Every reply is the abstention ``{"answerable": false, ...}``, so by
docs/metrics.md's definitions, computed by hand:

- with the first 100 views replied and the last 20 (4 groups) recorded as errors (invalid): a view's decision is
  right only for an abstaining negative view, 2 per replied group: 20 groups x 2 = 40 of 120 -> decision_accuracy
  33.3%; EU = invalid negatives / negatives = 8 / 48 = 16.7%; invalid_rate = 20 / 120 = 16.7%;
- with all 120 replied: 24 x 2 = 48 of 120 -> decision_accuracy 40.0%; EU 0.0; invalid_rate 0.0; Ebal 50.0.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ABSTAIN = '{"answerable": false, "answer": null, "reason": "r"}'


def vqaudit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vqaudit", *args], capture_output=True, text=True, timeout=600)


def _replay(path: Path, bench: Path, n: int) -> None:
    views = [json.loads(line) for line in (bench / "views.jsonl").open()]
    path.write_text("".join(json.dumps({"view_id": v["view_id"], "text": ABSTAIN}) + "\n" for v in views[:n]))


def _overview_row(report_md: Path) -> list[str]:
    row = next(line for line in report_md.read_text().splitlines() if line.startswith("| run_ |"))
    return [cell.strip() for cell in row.strip("|").split("|")]


def test_report_refuses_a_run_whose_replies_changed_since_score(chart_bench: Path, tmp_path: Path) -> None:
    replay, run = tmp_path / "rp.jsonl", tmp_path / "run_"
    _replay(replay, chart_bench, 100)
    assert vqaudit("run", str(chart_bench), "--model", f"replay:{replay}", "--out", str(run)).returncode == 1
    first = vqaudit("score", str(run), "--draws", "50")
    assert first.returncode == 0, first.stderr
    done = vqaudit("report", str(run), "--out", str(tmp_path / "rep0"))
    assert done.returncode == 0, done.stderr
    cells = _overview_row(tmp_path / "rep0" / "report.md")
    assert cells[7].split()[0] == "33.3" and cells[9].split()[0] == "16.7"  # decision_accuracy, EU (see above)

    _replay(replay, chart_bench, 120)  # the missing replies arrive
    again = vqaudit("run", str(chart_bench), "--model", f"replay:{replay}", "--out", str(run), "--retry-errors")
    assert again.returncode == 0, again.stderr
    stale = vqaudit("report", str(run), "--out", str(tmp_path / "rep1"))
    # a new replay file is a new model identity: every view was asked again, 120 rows written since `score`
    assert stale.returncode == 2
    assert stale.stderr.strip().splitlines() == [
        f"error: {run}: replies changed since `vqaudit score` (120 new); run `vqaudit score {run}` first"
    ]
    assert not (tmp_path / "rep1").exists()  # refused before anything was written

    assert vqaudit("score", str(run), "--draws", "50").returncode == 0
    fresh = vqaudit("report", str(run), "--out", str(tmp_path / "rep1"))
    assert fresh.returncode == 0, fresh.stderr
    cells = _overview_row(tmp_path / "rep1" / "report.md")
    assert [cells[i].split()[0] for i in (7, 9, 12, 13)] == ["40.0", "0.0", "50.0", "0.0"]  # da, EU, Ebal, invalid


def test_a_retry_that_adds_one_reply_makes_the_run_stale(chart_bench: Path, tmp_path: Path) -> None:
    """The write counter sees a replaced error under the same model identity (reference:gold asks nothing twice)."""
    import sqlite3

    run = tmp_path / "run_"
    assert vqaudit("run", str(chart_bench), "--model", "reference:gold", "--out", str(run)).returncode == 0
    assert vqaudit("score", str(run), "--draws", "50").returncode == 0
    with sqlite3.connect(run / "responses.sqlite") as db:  # one reply turned into a recorded error, as a failed call
        db.execute("UPDATE responses SET text = NULL, error = 'boom' WHERE created = 1")
    assert vqaudit("score", str(run), "--draws", "50").returncode == 0
    assert vqaudit("report", str(run), "--out", str(tmp_path / "rep")).returncode == 0
    retried = vqaudit("run", str(chart_bench), "--model", "reference:gold", "--out", str(run), "--retry-errors")
    assert retried.returncode == 0, retried.stderr
    stale = vqaudit("report", str(run), "--out", str(tmp_path / "rep"))
    assert stale.returncode == 2 and "replies changed since `vqaudit score` (1 new)" in stale.stderr


def test_a_run_scored_before_scored_json_still_reports_with_a_note(chart_bench: Path, tmp_path: Path) -> None:
    run = tmp_path / "run_"
    assert vqaudit("run", str(chart_bench), "--model", "reference:gold", "--out", str(run)).returncode == 0
    assert vqaudit("score", str(run), "--draws", "50").returncode == 0
    (run / "scored.json").unlink()  # as a run folder scored by an older vqaudit
    done = vqaudit("report", str(run), "--out", str(tmp_path / "rep"))
    assert done.returncode == 0, done.stderr
    assert f"warning: {run}: scored before vqaudit recorded what it scored (no scored.json)" in done.stderr
    assert (tmp_path / "rep" / "index.html").is_file()


def _can_mount_read_only() -> bool:
    import shutil

    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs none /mnt && mount -o remount,ro /mnt"],
        capture_output=True,
        timeout=60,
    )
    return probe.returncode == 0


def test_a_scored_run_on_a_read_only_disk_still_reports(chart_bench: Path, tmp_path: Path) -> None:
    # Checking that the replies are unchanged since `score` opens responses.sqlite; opened read-write (WAL mode,
    # schema), a run folder on a read-only disk (a shared copy) could no longer be reported: "not a readable
    # response cache (unable to open database file)". The read-only disk is a read-only bind mount in a user and
    # mount namespace of its own (util-linux unshare), so nothing outside this test sees it.
    import pytest

    if not _can_mount_read_only():
        pytest.skip("needs `unshare -rm` (user and mount namespaces) to mount a folder read-only")
    replay, run, mounted = tmp_path / "rp.jsonl", tmp_path / "run_", tmp_path / "ro" / "run_"
    _replay(replay, chart_bench, 120)
    assert vqaudit("run", str(chart_bench), "--model", f"replay:{replay}", "--out", str(run)).returncode == 0
    assert vqaudit("score", str(run), "--draws", "50").returncode == 0
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    mounted.mkdir(parents=True)
    script = (
        f"mount --bind '{run}' '{mounted}' && mount -o remount,ro,bind '{mounted}' && "
        f"! touch '{mounted}/probe' 2>/dev/null && "
        f"'{sys.executable}' -m vqaudit report '{mounted}' --out '{tmp_path / 'rep'}'"
    )
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    cells = _overview_row(tmp_path / "rep" / "report.md")
    assert cells[7].split()[0] == "40.0" and cells[9].split()[0] == "0.0"  # all 120 replied (module docstring)
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before
