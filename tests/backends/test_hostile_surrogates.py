"""A reply holding a lone UTF-16 surrogate goes through run -> cache -> score -> outcomes.jsonl.

Before the fix, the cache write (``sqlite3``: "surrogates not allowed") or ``write_jsonl`` (pydantic) raised a
UnicodeEncodeError traceback, and at temperature 0 the same reply came back on every resume.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from vqaudit.backends import ModelOptions
from vqaudit.run import load_responses, run_benchmark
from vqaudit.score import load_outcomes, score_run
from vqaudit.store import load_benchmark

OPTIONS: dict[str, Any] = {"max_retries": 1, "backoff_base_s": 0.001, "timeout_s": 5.0}

ESCAPED_IN_BODY = 'note\ud800: {"answerable": true, "answer": "0", "reason": "r\udfff"}'
"""Sent as ``\\ud800`` / ``\\udfff`` JSON escapes in the HTTP body (json.dumps escapes them)."""
RAW_IN_BODY_BYTES = b'"{\\"answerable\\": false, \\"answer\\": null, \\"reason\\": \\"x\xed\xa0\x80\\"}"'
"""A JSON string literal whose bytes hold ``ED A0 80``: a raw lone surrogate (invalid strict UTF-8)."""
RAW_IN_BODY_TEXT = '{"answerable": false, "answer": null, "reason": "x\ud800"}'
ESCAPED_BY_MODEL = '{"answerable": true, "answer": "1\\udc00", "reason": "r"}'
"""The model itself writes the escape inside its JSON: the parsed answer holds U+DC00."""


def _schedule(server: Any, bench: Path, completion_body: Callable[[bytes], bytes]) -> dict[str, str]:
    sha = {v.view_id: v.image_sha256 for v in load_benchmark(bench).views}
    server.replies = {"escaped": ESCAPED_IN_BODY, "model": ESCAPED_BY_MODEL}
    server.bodies_raw = {"raw": completion_body(RAW_IN_BODY_BYTES)}
    server.faults = {sha["g0-v0"]: ["reply:escaped"], sha["g0-v1"]: ["body:raw"], sha["g1-v0"]: ["reply:model"]}
    return sha


def test_surrogate_replies_run_resume_and_score(
    make_bench: Callable[..., Path], tmp_path: Path, hostile: Any, hostile_module: ModuleType
) -> None:
    bench = make_bench(2, 2)
    _schedule(hostile, bench, hostile_module.completion_body)
    out = tmp_path / "run"
    spec = f"openai:m@{hostile.url}"
    summary = run_benchmark(bench, spec, out, progress=False, options=ModelOptions(**OPTIONS))
    assert (summary.n_asked, summary.n_errors) == (4, 0)
    responses = load_responses(out)
    assert responses["g0-v0"].text == ESCAPED_IN_BODY  # stored and read back code point for code point
    assert responses["g0-v1"].text == RAW_IN_BODY_TEXT
    assert responses["g1-v0"].text == ESCAPED_BY_MODEL
    again = run_benchmark(bench, spec, out, progress=False, options=ModelOptions(**OPTIONS))
    assert (again.n_asked, again.n_cached, again.n_errors) == (0, 4, 0)

    score_run(out, n_draws=10)
    data = (out / "outcomes.jsonl").read_bytes()
    data.decode("utf-8")  # strict UTF-8: the surrogates are written as JSON escapes
    assert b"note\\ud800" in data and b"\\udfff" in data and b"x\\ud800" in data and b"1\\udc00" in data
    outcomes = {o.view_id: o for o in load_outcomes(out)}
    assert outcomes["g0-v0"].raw == ESCAPED_IN_BODY
    # g0-v0 is the supported view with gold "0": the JSON object after the prose is found and is right
    assert (outcomes["g0-v0"].decision, outcomes["g0-v0"].answer_correct) == ("answer", True)
    assert outcomes["g0-v1"].decision == "abstain"  # a negative view abstaining: right
    assert outcomes["g0-v1"].decision_correct
    assert outcomes["g1-v0"].answer == "1\udc00"  # gold is "10": wrong, but scored, not a crash
    assert (outcomes["g1-v0"].decision, outcomes["g1-v0"].answer_correct) == ("answer", False)
    for line in data.decode("utf-8").splitlines():
        json.loads(line)


def test_replay_file_with_raw_and_escaped_surrogates(make_bench: Callable[..., Path], tmp_path: Path) -> None:
    bench = make_bench(1, 2)
    replay = tmp_path / "replay.jsonl"
    replay.write_bytes(
        b'{"view_id": "g0-v0", "text": "{\\"answerable\\": true, \\"answer\\": \\"0\\", '
        b'\\"reason\\": \\"\\ud800\\"}"}\n'
        b'{"view_id": "g0-v1", "text": "raw \xed\xb0\x80 and not utf-8 \xff"}\n'
    )
    out = tmp_path / "run"
    summary = run_benchmark(bench, f"replay:{replay}", out, progress=False)
    assert (summary.n_asked, summary.n_errors) == (2, 0)
    responses = load_responses(out)
    assert responses["g0-v0"].text == '{"answerable": true, "answer": "0", "reason": "\ud800"}'
    raw = responses["g0-v1"].text or ""
    assert raw.encode("utf-8", "surrogateescape") == b"raw \xed\xb0\x80 and not utf-8 \xff"  # lossless
    score_run(out, n_draws=10)
    outcomes = {o.view_id: o for o in load_outcomes(out)}
    assert outcomes["g0-v0"].answer_correct
    assert outcomes["g0-v1"].raw == raw
    assert outcomes["g0-v1"].invalid_reason == "no JSON object in the reply"


def test_a_surrogate_pair_is_the_character_it_encodes(
    make_bench: Callable[..., Path], tmp_path: Path, hostile: Any, hostile_module: ModuleType
) -> None:
    # CESU-8 (as Java writes): U+1F600 as the two 3-byte surrogates ED A0 BD, ED B8 80; then a lone U+D800
    bench = make_bench(1, 1)
    view = load_benchmark(bench).views[0]
    hostile.bodies_raw = {"cesu": hostile_module.completion_body(b'"smile \xed\xa0\xbd\xed\xb8\x80 lone \xed\xa0\x80"')}
    hostile.faults = {view.image_sha256: ["body:cesu"]}
    out = tmp_path / "run"
    run_benchmark(bench, f"openai:m@{hostile.url}", out, progress=False, options=ModelOptions(**OPTIONS))
    assert load_responses(out)[view.view_id].text == "smile \U0001f600 lone \ud800"
    score_run(out, n_draws=10)
    assert load_outcomes(out)[0].raw == "smile \U0001f600 lone \ud800"  # written and read back exactly
    assert "smile \U0001f600 lone \\ud800".encode() in (out / "outcomes.jsonl").read_bytes()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vqaudit", *args], capture_output=True, text=True, timeout=600)


def test_a_surrogate_reply_goes_through_run_score_report_and_eval(tmp_path: Path) -> None:
    # New-user trial: score wrote outcomes.jsonl with a "\ud800" escape (as documented), but report and eval
    # read it back with pydantic's JSON parser, which refuses lone surrogates ("unexpected end of hex escape").
    bench = tmp_path / "bench"
    done = _cli("build", "scenes", "--groups", "1", "--out", str(bench))
    assert done.returncode == 0, done.stderr
    view_ids = [json.loads(line)["view_id"] for line in (bench / "views.jsonl").read_text().splitlines()]
    abstain = '{"answerable": false, "answer": null, "reason": "r\ud800"}'
    replay = tmp_path / "replay.jsonl"
    replay.write_text(
        "".join(
            json.dumps({"view_id": v, "text": "\ud800" if i == 0 else abstain}) + "\n" for i, v in enumerate(view_ids)
        ),
        encoding="utf-8",
    )
    run = tmp_path / "run"
    for args in (
        ("run", str(bench), "--model", f"replay:{replay}", "--out", str(run)),
        ("score", str(run)),
        ("report", str(run), "--out", str(tmp_path / "report")),
    ):
        done = _cli(*args)
        assert done.returncode == 0, (args, done.stderr)
    assert b'"raw":"\\ud800"' in (run / "outcomes.jsonl").read_bytes()
    assert (tmp_path / "report" / "report.md").is_file()
    assert (tmp_path / "report" / "index.html").is_file()
    page = (tmp_path / "report" / "samples" / "page-00000.js").read_text(encoding="utf-8")  # strict UTF-8
    assert '"raw":"\\ud800"' in page  # the HTML sample browser shows the reply, escaped as score wrote it
    done = _cli("eval", "scenes", "--bench", str(bench), "--model", f"replay:{replay}", "--out", str(tmp_path / "eval"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "eval" / "report" / "report.md").is_file()
