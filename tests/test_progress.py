"""Progress of long steps (vqaudit.progress): the plain-line rules under a fake clock, and real commands with
stderr redirected to a file (a log: nohup, Slurm, CI) writing their progress lines; ``--quiet`` silences them."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

from vqaudit.progress import PlainReporter, duration

LINE = re.compile(
    r"^progress: (?P<step>.+): (?P<done>\d+)/(?P<total>\d+) \((?P<pct>\d+)%\), \S+/(s|min), "
    r"elapsed \d+:\d\d(:\d\d)?, left (\d+:\d\d(:\d\d)?|\?)$"
)


class FakeClock:
    """A monotonic clock moved by hand (seconds)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _lines(stream: io.StringIO) -> list[str]:
    return stream.getvalue().splitlines()


def test_a_line_at_each_quarter_and_none_between() -> None:
    clock, out = FakeClock(), io.StringIO()
    shown = PlainReporter("run m", 8, stream=out, clock=clock)
    done_at_line = []
    for done in range(1, 9):
        clock.now += 1.0  # 1 s per item: never 10 s between two lines, so only quarters write
        before = len(_lines(out))
        shown.update(done)
        if len(_lines(out)) > before:
            done_at_line.append(done)
    assert done_at_line == [2, 4, 6, 8]  # 25, 50, 75, 100 % of 8
    # At 2 of 8 after 2 s: 1 item/s, 6 left -> 0:06 left.
    assert _lines(out)[0] == "progress: run m: 2/8 (25%), 1.0/s, elapsed 0:02, left 0:06"
    assert _lines(out)[-1] == "progress: run m: 8/8 (100%), 1.0/s, elapsed 0:08, left 0:00"


def test_a_line_every_10_s_at_most_between_quarters() -> None:
    clock, out = FakeClock(), io.StringIO()
    shown = PlainReporter("build charts", 1000, stream=out, clock=clock)
    for done in range(1, 101):  # 100 items, 1 every 0.5 s: 50 s, all inside the first quarter (250 items)
        clock.now += 0.5
        shown.update(done)
    lines = _lines(out)
    # Lines at 10, 20, 30, 40, 50 s (items 20, 40, 60, 80, 100), none in between.
    assert [int(LINE.match(line)["done"]) for line in lines] == [20, 40, 60, 80, 100]  # type: ignore[index]
    # 100 items in 50 s = 2.0/s; 900 left -> 450 s = 7:30.
    assert lines[-1] == "progress: build charts: 100/1000 (10%), 2.0/s, elapsed 0:50, left 7:30"


def test_a_quarter_line_does_not_wait_for_10_s_and_resets_the_timer() -> None:
    clock, out = FakeClock(), io.StringIO()
    shown = PlainReporter("score r", 4, stream=out, clock=clock)
    clock.now += 9.0
    shown.update(1)  # quarter at 9 s: written although 10 s have not passed
    clock.now += 9.0
    shown.update(1)  # same count, 9 s after that line: nothing
    clock.now += 1.0
    shown.update(1)  # 10 s after the last line: written
    assert [line.split(", elapsed ")[1] for line in _lines(out)] == ["0:09, left 0:27", "0:19, left 0:57"]


def test_no_items_no_lines_and_slow_rates_per_minute() -> None:
    clock, out = FakeClock(), io.StringIO()
    PlainReporter("empty", 0, stream=out, clock=clock).update(0)
    assert out.getvalue() == ""
    slow = PlainReporter("run m", 4, stream=out, clock=clock)
    clock.now += 120.0
    slow.update(1)  # 1 item in 120 s = 0.5/min; 3 left at that rate = 360 s
    assert _lines(out) == ["progress: run m: 1/4 (25%), 0.5/min, elapsed 2:00, left 6:00"]


def test_duration() -> None:
    assert (duration(0), duration(75.4), duration(3725)) == ("0:00", "1:15", "1:02:05")


def _vqaudit_logged(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Run vqaudit with stderr redirected to a file, as in a batch job's log; return it and its progress lines."""
    log = tmp_path / "stderr.log"
    with log.open("w") as err:
        done = subprocess.run(
            [sys.executable, "-m", "vqaudit", *args], stdout=subprocess.PIPE, stderr=err, text=True, timeout=600
        )
    lines = log.read_text().splitlines()
    assert done.returncode == 0, lines
    return done, [line for line in lines if line.startswith("progress: ")]


def _steps(lines: list[str]) -> dict[str, list[tuple[int, int]]]:
    out: dict[str, list[tuple[int, int]]] = {}
    for line in lines:
        m = LINE.match(line)
        assert m is not None, line
        out.setdefault(m["step"], []).append((int(m["done"]), int(m["total"])))
    return out


def test_build_run_and_eval_write_progress_lines_to_a_log(tmp_path: Path) -> None:
    bench, run = tmp_path / "bench", tmp_path / "run"
    _, lines = _vqaudit_logged(tmp_path, "build", "charts", "--out", str(bench), "--groups", "4")
    assert _steps(lines)["build charts"] == [(1, 4), (2, 4), (3, 4), (4, 4)]  # one line per quarter
    _, lines = _vqaudit_logged(tmp_path, "run", str(bench), "--model", "reference:gold", "--out", str(run))
    assert _steps(lines)["run reference:gold"] == [(5, 20), (10, 20), (15, 20), (20, 20)]  # 4 groups x 5 views
    _, lines = _vqaudit_logged(
        tmp_path,
        "eval",
        "--out",
        str(tmp_path / "eval"),
        "--groups",
        "2",
        "--model",
        "reference:gold",
        "--draws",
        "100",
    )
    steps = _steps(lines)
    assert steps["build charts"][-1] == (2, 2)
    assert steps["run reference:gold"][-1] == (10, 10)
    assert steps[f"score {tmp_path / 'eval' / 'runs' / 'reference_gold'}"][-1] == (10, 10)
    assert (100, 100) in steps["bootstrap draws (2 groups)"]  # score --draws 100 (the HTML report draws its own)


def test_quiet_writes_no_progress(tmp_path: Path) -> None:
    _, lines = _vqaudit_logged(tmp_path, "--quiet", "build", "charts", "--out", str(tmp_path / "b"), "--groups", "2")
    assert lines == []


def test_audit_reports_reading_layers_and_writing_in_a_log(tmp_path: Path) -> None:
    """``vqaudit audit`` reports its three long steps: the prediction file read (its lines are the total), the
    layer passes, and rows.jsonl written; 2,000 rows here, so each step writes its quarter lines (25, 50, 75,
    100 %), the reader updating every 1,000 rows and the writer per 10,000-line chunk."""
    predictions = tmp_path / "p.jsonl"
    with predictions.open("w", encoding="utf-8") as handle:
        for i in range(2000):
            row = {"question_id": i + 1, "prediction": "stop", "answers": ["stop"] * 10}
            handle.write(json.dumps(row) + "\n")
    _, lines = _vqaudit_logged(
        tmp_path, "audit", str(predictions), "--benchmark", "textvqa", "--out", str(tmp_path / "a")
    )
    steps = _steps(lines)
    assert steps["reading p.jsonl"] == [(1000, 2000), (2000, 2000)]  # 50 % at the first update, then 100 %
    assert steps["audit: writing rows.jsonl"] == [(2000, 2000)]  # one chunk of 2,000 lines
    assert (
        steps["audit textvqa: layer passes over 2000 rows"][-1][0]
        == steps["audit textvqa: layer passes over 2000 rows"][-1][1]
    )
