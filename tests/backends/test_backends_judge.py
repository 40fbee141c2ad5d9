"""Judges against a real local HTTP server: the early stop on an unreachable judge, and `score --judge` checks.

The stop rule (backends/judge.py) mirrors `vqaudit run`: when the first min(8, calls to ask) judge calls all fail
after their retries, the command stops with a VqauditError instead of failing every remaining call; verdicts
received before stay in the SQLite cache and a rerun asks only what is missing.
"""

from __future__ import annotations

import socket
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from upd.helpers import row, write_tsv
from vqaudit.backends import Backend, ModelOptions, load_backend, valid_specs
from vqaudit.backends.judge import EARLY_STOP_CALLS
from vqaudit.cli import main
from vqaudit.errors import VqauditError
from vqaudit.run import run_benchmark
from vqaudit.schema import Response, View
from vqaudit.scoring.upd import score_upd_views
from vqaudit.shortanswer.judge import run_judge
from vqaudit.shortanswer.records import AuditRow
from vqaudit.store import JUDGE_FILE, load_benchmark
from vqaudit.suites.upd.build import build_upd


def _judge(url: str) -> Backend:
    return load_backend(f"openai:judge-llm@{url}", ModelOptions(max_retries=0, backoff_base_s=0.001, timeout_s=2.0))


def _refused_url() -> str:
    """The URL of a 127.0.0.1 port nothing listens on (bound, then closed): connections are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _cache_rows(path: Path) -> list[tuple[str, str | None, str | None]]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT view_id, text, error FROM responses ORDER BY view_id").fetchall()


def _rows(n: int) -> list[AuditRow]:
    return [AuditRow(f"q{i:02d}", f"What is item {i}?", f"item {i}", (f"thing {i}",), "docvqa") for i in range(n)]


def test_short_answer_judge_stops_after_8_failed_calls_and_keeps_what_it_received(
    fake_server: Any, tmp_path: Path
) -> None:
    cache = tmp_path / "judge.sqlite"
    spec = f"openai:judge-llm@{fake_server.url}"
    rows = _rows(12)
    # 1. The server answers: three verdicts ("yes", the fake server's text reply) are cached.
    assert run_judge(rows[:3], spec, cache, backend=_judge(fake_server.url)) == {r.qid: True for r in rows[:3]}
    # 2. The server now answers HTTP 500 to everything: 9 rows are left to ask, the first 8 fail, and the judge
    #    stops there (concurrency 1, so exactly 8 requests reach the server; the 9th is never sent).
    fake_server.reset()
    fake_server.default = "500"
    with pytest.raises(VqauditError) as info:
        run_judge(rows, spec, cache, backend=_judge(fake_server.url), concurrency=1)
    message = str(info.value)
    assert f"the judge at {spec} is unreachable" in message and "first 8 calls all failed" in message
    assert "HTTP 500" in message and f"cached in {cache}" in message
    assert sum(fake_server.snapshot().values()) == EARLY_STOP_CALLS == 8
    stored = _cache_rows(cache)
    assert [(v, t) for v, t, _ in stored if t is not None] == [
        ("judge:q00", "yes"),
        ("judge:q01", "yes"),
        ("judge:q02", "yes"),
    ]
    assert len([e for _, _, e in stored if e is not None and "HTTP 500" in e]) == 8
    # 3. The server is back: the rerun asks only the 9 rows without a verdict (8 recorded errors + 1 never asked).
    fake_server.reset()
    fake_server.default = "ok"
    assert run_judge(rows, spec, cache, backend=_judge(fake_server.url)) == {r.qid: True for r in rows}
    assert sum(fake_server.snapshot().values()) == 9


def test_short_answer_judge_at_a_refused_port_stops_after_all_of_fewer_than_8_calls(tmp_path: Path) -> None:
    url = _refused_url()
    with pytest.raises(VqauditError) as info:
        run_judge(_rows(3), f"openai:judge-llm@{url}", tmp_path / "judge.sqlite", backend=_judge(url))
    assert "is unreachable: its first 3 calls all failed" in str(info.value)  # min(8, 3 calls to ask)
    assert "connection error" in str(info.value)
    stored = _cache_rows(tmp_path / "judge.sqlite")
    assert len(stored) == 3 and all(t is None and e and "connection error" in e for _, t, e in stored)


def _upd_views(tmp_path: Path) -> list[View]:
    """Item 1 (4 options, answer B) under AAD, base setting: 4 standard and 3 AAD views (seed 001, 0.C.1)."""
    rows = [
        row(1, "What colour is the car?", ["red", "blue", "green", "pink"], "B", "attribute_recognition"),
        row(2, "Who is the person?", ["Jackie Chan", "Steve Jobs"], "A", "celebrity_recognition"),
    ]
    out = tmp_path / "bench"
    build_upd(out, tsv=write_tsv(tmp_path / "one.tsv", rows), variant="aad", setting="base", seed=0)
    return [v for v in load_benchmark(out).views if v.meta["item_index"] == 1]


def _replies(views: list[View], undecided: set[str]) -> dict[str, Response]:
    """Replies the matcher decides (the gold letter; an abstention phrase), except for views in ``undecided``."""

    def text(v: View) -> str:
        if v.view_id in undecided:
            return "Hard to say."
        return v.obligation.gold[0] if v.obligation.gold else "I cannot answer"

    return {v.view_id: Response(view_id=v.view_id, model="m", prompt_id="p", text=text(v)) for v in views}


def test_upd_judge_stops_when_unreachable_and_keeps_its_verdicts(fake_server: Any, tmp_path: Path) -> None:
    views = _upd_views(tmp_path)
    aad = [v.view_id for v in views if v.state == "aad"]
    assert len(aad) == 3
    run_dir = tmp_path / "run"
    spec = f"openai:judge-llm@{fake_server.url}"
    # UPD judge letters of an AAD view (prompts.upd.judge_options): A-C options, D = the removed correct option,
    # E = the abstention option, F = none. "E" abstains: right on a UPD view.
    fake_server.text_reply = "E"
    first = score_upd_views(
        views, _replies(views, {aad[0]}), run_dir=run_dir, judge=spec, judge_backend=_judge(fake_server.url)
    )
    assert {o.view_id: o.decided_by for o in first}[aad[0]] == f"judge:{spec}"
    # The judge goes down: two views are left to ask, both fail, and scoring stops (min(8, 2) = 2 calls).
    fake_server.reset()
    fake_server.default = "500"
    with pytest.raises(VqauditError, match=r"is unreachable: its first 2 calls all failed"):
        score_upd_views(
            views, _replies(views, set(aad)), run_dir=run_dir, judge=spec, judge_backend=_judge(fake_server.url)
        )
    assert sum(fake_server.snapshot().values()) == 2
    assert [t for _, t, _ in _cache_rows(run_dir / JUDGE_FILE) if t is not None] == ["E"]  # the verdict received
    # Back up: only the two missing verdicts are asked; every AAD view abstains through the judge.
    fake_server.reset()
    fake_server.default = "ok"
    outcomes = score_upd_views(
        views, _replies(views, set(aad)), run_dir=run_dir, judge=spec, judge_backend=_judge(fake_server.url)
    )
    assert sum(fake_server.snapshot().values()) == 2
    judged = [o for o in outcomes if o.view_id in aad]
    assert all(o.task_correct and o.decided_by == f"judge:{spec}" for o in judged)


def _cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["vqaudit", *args])
    with pytest.raises(SystemExit) as info:
        main()
    code = info.value.code
    return (code if isinstance(code, int) else 1), capsys.readouterr().err


@pytest.mark.parametrize("spec", ["gpt-4", "openai:gpt-4", "reference:oracle"])
def test_score_checks_the_judge_spec_before_scoring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], spec: str
) -> None:
    _upd_views(tmp_path)
    run = tmp_path / "run"
    run_benchmark(tmp_path / "bench", "reference:always-abstain", run, progress=False)
    code, err = _cli(monkeypatch, capsys, "score", str(run), "--judge", spec)
    assert code == 2 and "Traceback" not in err
    assert err.startswith(f"error: model spec {spec!r}") and all(form in err for form in valid_specs())
    assert not (run / "outcomes.jsonl").exists() and not (run / JUDGE_FILE).exists()  # nothing was scored
    code, _ = _cli(monkeypatch, capsys, "score", str(run))
    assert code == 0 and (run / "outcomes.jsonl").is_file()


@pytest.mark.parametrize("spec", ["reference:gold", "reference:always-abstain"])
def test_score_and_eval_upd_refuse_a_reference_policy_as_the_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], spec: str
) -> None:
    # A reference policy replies in a view's own contract (gold replies with the answerability JSON or the gold
    # letter); as a UPD judge its text would be read as verdicts, so both commands refuse it before any work.
    _upd_views(tmp_path)
    run = tmp_path / "run"
    run_benchmark(tmp_path / "bench", "reference:always-abstain", run, progress=False)
    code, err = _cli(monkeypatch, capsys, "score", str(run), "--judge", spec)
    assert code == 2 and "Traceback" not in err
    assert err.startswith(f"error: --judge {spec!r}: a reference policy") and "openai:MODEL@URL" in err
    assert not (run / "outcomes.jsonl").exists() and not (run / JUDGE_FILE).exists()  # nothing was scored
    code, err = _cli(monkeypatch, capsys, "eval", "upd", "--out", str(tmp_path / "eval"), "--judge", spec)
    assert code == 2 and err.startswith(f"error: --judge {spec!r}: a reference policy")
    assert not (tmp_path / "eval").exists()  # nothing was built, run or asked


def test_a_replay_judge_without_the_ids_names_the_ids_it_needs(tmp_path: Path) -> None:
    replay = tmp_path / "judge.jsonl"
    replay.write_text('{"view_id": "q1", "text": "yes"}\n')  # the id lacks the "judge:" prefix
    rows = [AuditRow("q1", "What?", "a", ("b",), "docvqa")]
    with pytest.raises(VqauditError) as info:
        run_judge(rows, f"replay:{replay}", tmp_path / "judge.sqlite")
    message = str(info.value)
    assert "has no reply for its first 1 calls" in message and "'judge:q1'" in message
    assert "unreachable" not in message  # a file is not a server
