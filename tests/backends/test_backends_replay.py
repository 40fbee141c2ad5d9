"""``replay:FILE`` names what is wrong with a file: rows for views the benchmark lacks, lines without ``text``.

A row for a view the benchmark lacks is refused as ``import-predictions`` refuses one (a reply meant for another
benchmark), before anything is asked or any run folder written; a line without ``text`` and without the
``reasoning`` that makes a missing text legal (a reply cut off while thinking) names the file and row; a recorded
error row (``"text": null``, an exported failed call) still replays as that view's error, naming file and row.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vqaudit.backends import BackendCallError, Completion, GenerationParams, Request, load_backend
from vqaudit.errors import VqauditError
from vqaudit.run import load_responses, run_benchmark
from vqaudit.store import load_benchmark


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _answer(view_id: str) -> dict[str, Any]:
    return {"view_id": view_id, "text": json.dumps({"answerable": False, "answer": None})}


def test_a_row_for_a_view_the_benchmark_lacks_is_refused_naming_file_row_and_id(
    make_bench: Callable[..., Path], tmp_path: Path
) -> None:
    bench = make_bench(1, 2)
    views = [v.view_id for v in load_benchmark(bench).views]
    replies = _write(tmp_path / "r.jsonl", [_answer(views[0]), _answer("g9-v0"), _answer(views[1]), _answer("other")])
    out = tmp_path / "run"
    with pytest.raises(VqauditError) as info:
        run_benchmark(bench, f"replay:{replies}", out, progress=False)
    assert str(info.value) == (
        f"{replies}: row 2, field 'view_id': view 'g9-v0' is not in the benchmark {bench} "
        "(1 more rows name unknown views); a replay file holds replies for this benchmark's "
        "views only"
    )
    assert not out.exists()  # refused before the run folder is made


def test_the_check_is_on_every_view_whatever_the_shard(make_bench: Callable[..., Path], tmp_path: Path) -> None:
    bench = make_bench(2, 2)
    views = [v.view_id for v in load_benchmark(bench).views]
    replies = _write(tmp_path / "r.jsonl", [_answer(v) for v in views])
    asked = 0
    for i in (1, 2):  # every row belongs to the benchmark: no shard refuses the rows of the other
        summary = run_benchmark(bench, f"replay:{replies}", tmp_path / f"s{i}", progress=False, shard=(i, 2))
        asked += summary.n_asked
    assert asked == len(views) == 4


def test_cli_refusal_is_one_line_exit_2(
    make_bench: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from shortanswer.helpers import run_cli

    bench = make_bench(1, 1)
    replies = _write(tmp_path / "r.jsonl", [_answer("nope")])
    code = run_cli(monkeypatch, "run", str(bench), "--model", f"replay:{replies}", "--out", str(tmp_path / "run"))
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines() == [
        f"error: {replies}: row 1, field 'view_id': view 'nope' is not in the "
        f"benchmark {bench}; a replay file holds replies for this benchmark's views "
        "only"
    ]


def test_a_line_without_text_names_file_and_row(tmp_path: Path) -> None:
    replies = _write(tmp_path / "r.jsonl", [_answer("a"), {"view_id": "b", "finish_reason": "stop"}])
    with pytest.raises(VqauditError) as info:
        load_backend(f"replay:{replies}")
    assert str(info.value) == (
        f"{replies}: row 2, field 'text': missing (the reply, or null with 'reasoning' for "
        "a reply cut off while thinking)"
    )


def test_a_line_without_text_but_with_reasoning_is_a_cut_reply(tmp_path: Path) -> None:
    replies = _write(tmp_path / "r.jsonl", [{"view_id": "b", "reasoning": "The bar is", "finish_reason": "length"}])
    backend = load_backend(f"replay:{replies}")
    reply = asyncio.run(backend.complete(Request("b", "p", "q", None, None, GenerationParams())))
    assert reply == Completion(None, "The bar is", "length", None)


def test_a_recorded_error_row_names_file_and_row(make_bench: Callable[..., Path], tmp_path: Path) -> None:
    bench = make_bench(1, 2)
    views = [v.view_id for v in load_benchmark(bench).views]
    replies = _write(
        tmp_path / "r.jsonl", [_answer(views[0]), {"view_id": views[1], "text": None, "error": "HTTP 500"}]
    )
    out = tmp_path / "run"
    summary = run_benchmark(bench, f"replay:{replies}", out, progress=False)
    assert summary.n_errors == 1
    error = load_responses(out)[views[1]].error
    assert error == f"{replies}: row 2: the replay file records no reply text for view {views[1]!r}"
    with pytest.raises(BackendCallError):  # and directly, the same call
        asyncio.run(
            load_backend(f"replay:{replies}").complete(Request(views[1], "p", "q", None, None, GenerationParams()))
        )
