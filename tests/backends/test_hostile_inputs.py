"""Bad input a new user gives: each is one clear line (VqauditError) naming what is wrong, or is cleaned up."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from vqaudit.errors import VqauditError
from vqaudit.files import read_jsonl
from vqaudit.run import load_responses, run_benchmark
from vqaudit.schema import Group, Obligation, View
from vqaudit.score import score_run
from vqaudit.store import RESPONSES_FILE, load_benchmark, manifest_problems, write_benchmark


def _hashed(bench: Path) -> Path:
    """Rewrite a test benchmark's manifest with the views/groups hashes a real build records."""
    views, groups = read_jsonl(bench / "views.jsonl", View), read_jsonl(bench / "groups.jsonl", Group)
    write_benchmark(bench, views, groups, {}, {"name": bench.name})
    return bench


def _regold(bench: Path, gold: str) -> list[View]:
    views = read_jsonl(bench / "views.jsonl", View)
    views[0] = views[0].model_copy(update={"obligation": Obligation(kind="answer", gold=(gold,), answer_type="number")})
    return views


def test_score_refuses_a_gold_edited_after_the_run(make_bench: Callable[..., Path], tmp_path: Path) -> None:
    bench = _hashed(make_bench())
    out = tmp_path / "run"
    run_benchmark(bench, "reference:gold", out, progress=False)
    assert score_run(out, n_draws=10)["charts"]["Jk"] == 1.0
    groups = read_jsonl(bench / "groups.jsonl", Group)
    edited = _regold(bench, "1")
    (bench / "views.jsonl").write_text("".join(v.model_dump_json() + "\n" for v in edited))
    with pytest.raises(VqauditError, match="views.jsonl does not match its hash in manifest.json"):
        score_run(out, n_draws=10)
    write_benchmark(bench, edited, groups, {}, {"name": bench.name})  # a forged manifest: consistent again
    with pytest.raises(VqauditError, match=r"its manifest.json is not the one run .* was made on"):
        score_run(out, n_draws=10)


def test_corrupted_response_cache_is_one_line(make_bench: Callable[..., Path], tmp_path: Path) -> None:
    bench, out = make_bench(), tmp_path / "run"
    run_benchmark(bench, "reference:gold", out, progress=False)
    (out / RESPONSES_FILE).write_bytes(b"this is not a database" * 100)
    for wal in out.glob(f"{RESPONSES_FILE}-*"):
        wal.unlink()
    with pytest.raises(VqauditError, match="responses.sqlite: not a readable response cache"):
        load_responses(out)
    with pytest.raises(VqauditError, match="responses.sqlite: not a readable response cache"):
        run_benchmark(bench, "reference:gold", out, progress=False)


def test_run_folder_inside_the_benchmark_is_refused(make_bench: Callable[..., Path]) -> None:
    bench = make_bench()
    for out in (bench, bench / "runs" / "x"):
        with pytest.raises(VqauditError, match="would be inside the benchmark folder"):
            run_benchmark(bench, "reference:gold", out, progress=False)
    assert not (bench / RESPONSES_FILE).exists() and not (bench / "runs").exists()


def test_non_utf8_views_file_names_file_and_row(make_bench: Callable[..., Path]) -> None:
    bench = make_bench()
    lines = (bench / "views.jsonl").read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b"What", b"Wh\xe4t")  # Latin-1 text
    (bench / "views.jsonl").write_bytes(b"".join(lines))
    with pytest.raises(VqauditError, match=r"views.jsonl: row 2: not UTF-8 text \(byte \d+ of the row is 0xe4\)"):
        load_benchmark(bench)


def test_manifest_must_be_an_object_with_an_object_of_files(make_bench: Callable[..., Path]) -> None:
    bench = make_bench()
    (bench / "manifest.json").write_text("[1, 2]")
    with pytest.raises(VqauditError, match=r"manifest.json: expected a JSON object, got a JSON list"):
        load_benchmark(bench)
    (bench / "manifest.json").write_text(json.dumps({"files": "x"}))
    assert manifest_problems(load_benchmark(bench)) == ["manifest.json field 'files' is a JSON str, not an object"]


def test_sigterm_during_a_build_leaves_no_building_folder(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    code = (
        "import sys, time; from pathlib import Path; from vqaudit.staging import staged_folder\n"
        "with staged_folder(Path(sys.argv[1])) as tmp:\n"
        "    (tmp / 'views.jsonl').write_text('x'); print('building', flush=True); time.sleep(600)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "building\n"
        assert [p.name for p in tmp_path.iterdir()][0].endswith(".building")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 143
    finally:
        if proc.poll() is None:
            proc.kill()
    assert list(tmp_path.iterdir()) == []
