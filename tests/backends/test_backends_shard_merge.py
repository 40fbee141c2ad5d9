"""``run --shard I/N`` splits a benchmark by cache key; ``merge`` joins the shards' caches."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from vqaudit.cli import app
from vqaudit.errors import VqauditError
from vqaudit.folder_lock import folder_lock
from vqaudit.merge import merge_runs
from vqaudit.run import load_responses, run_benchmark
from vqaudit.score import score_run
from vqaudit.store import parse_shard, shard_of

Rows = Callable[[Path], list[tuple[str, str | None, str | None]]]


def test_shard_of_by_hand() -> None:
    # the first 15 hex digits (60 bits) modulo N, plus one
    assert shard_of("0" * 64, 4) == 1
    assert shard_of("f" * 15 + "0" * 49, 4) == 4  # 2**60 - 1 = 3 (mod 4)
    assert shard_of("000000000000005" + "f" * 49, 3) == 3  # 5 = 2 (mod 3); digits after the 15th do not count
    assert shard_of("abc" + "0" * 61, 1) == 1


@pytest.mark.parametrize("text", ["0/3", "4/3", "a/b", "3", "1/0", "-1/2", "1/20000", ""])
def test_parse_shard_refuses(text: str) -> None:
    with pytest.raises(VqauditError, match="expected I/N"):
        parse_shard(text)


def test_parse_shard() -> None:
    assert parse_shard("2/4") == (2, 4)
    assert parse_shard(" 1/1 ") == (1, 1)


def _shard_runs(bench: Path, root: Path, n: int) -> list[Path]:
    runs = []
    for i in range(1, n + 1):
        out = root / f"shard{i}"
        run_benchmark(bench, "reference:gold", out, progress=False, shard=(i, n))
        runs.append(out)
    return runs


def test_shards_split_the_views_and_merge_back_to_the_whole_run(
    make_bench: Callable[..., Path], tmp_path: Path, read_rows: Rows
) -> None:
    bench = make_bench(6, 3)  # 18 views, 18 distinct images
    whole = tmp_path / "whole"
    run_benchmark(bench, "reference:gold", whole, progress=False)
    runs = _shard_runs(bench, tmp_path, 3)
    per_shard = [load_responses(r) for r in runs]
    # every view is in exactly one shard, the one its cache key names
    ids = [v for responses in per_shard for v in responses]
    assert sorted(ids) == sorted(load_responses(whole)) and len(ids) == 18
    for i, responses in enumerate(per_shard, start=1):
        assert all(shard_of(r.cache_key, 3) == i for r in responses.values())
        assert json.loads((runs[i - 1] / "run.json").read_text())["shard"] == f"{i}/3"
    with pytest.raises(VqauditError, match="merge the shards first|join the shards"):
        score_run(runs[0], n_draws=10)

    summary = merge_runs(runs, tmp_path / "merged")
    assert (summary.n_runs, summary.n_rows, summary.n_duplicates, summary.n_views, summary.n_errors) == (
        3,
        18,
        0,
        18,
        0,
    )
    merged = load_responses(tmp_path / "merged")
    expected = load_responses(whole)
    assert {v: r.text for v, r in merged.items()} == {v: r.text for v, r in expected.items()}
    assert {v: r.cache_key for v, r in merged.items()} == {v: r.cache_key for v, r in expected.items()}
    info = json.loads((tmp_path / "merged" / "run.json").read_text())
    assert info["shard"] is None and info["n_views"] == 18
    assert info["merged_from"] == [str(r.resolve()) for r in runs]
    assert len(read_rows(tmp_path / "merged")) == 18  # one row per key
    # the merged run scores exactly like the run asked in one go
    assert score_run(tmp_path / "merged", n_draws=50) == score_run(whole, n_draws=50)


def test_merge_drops_duplicates_and_prefers_a_reply_to_an_error(
    make_bench: Callable[..., Path], tmp_path: Path, read_rows: Rows
) -> None:
    bench = make_bench(2, 3)
    a, b = tmp_path / "a", tmp_path / "b"
    run_benchmark(bench, "reference:gold", a, progress=False)
    run_benchmark(bench, "reference:gold", b, progress=False)
    first_view, first_text, _ = read_rows(a)[0]
    with sqlite3.connect(a / "responses.sqlite") as conn:  # run a recorded an error for its first key
        conn.execute("UPDATE responses SET text = NULL, error = 'HTTP 500' WHERE view_id = ?", (first_view,))
    summary = merge_runs([a, b], tmp_path / "m")
    assert (summary.n_rows, summary.n_duplicates, summary.n_errors) == (6, 6, 0)
    assert load_responses(tmp_path / "m")[first_view].text == first_text
    assert len(read_rows(tmp_path / "m")) == 6


def test_merge_conflict_names_the_key_and_writes_nothing(make_bench: Callable[..., Path], tmp_path: Path) -> None:
    bench = make_bench(2, 3)
    a, b = tmp_path / "a", tmp_path / "b"
    run_benchmark(bench, "reference:gold", a, progress=False)
    run_benchmark(bench, "reference:gold", b, progress=False)
    with sqlite3.connect(b / "responses.sqlite") as conn:
        (key,) = conn.execute("SELECT key FROM responses ORDER BY created LIMIT 1").fetchone()
        conn.execute("UPDATE responses SET text = 'another reply' WHERE key = ?", (key,))
    with pytest.raises(VqauditError, match=f"cache key {key}: .* hold different replies"):
        merge_runs([a, b], tmp_path / "m")
    assert not (tmp_path / "m").exists()
    assert not list(tmp_path.glob(".m.*"))  # no staging folder left behind


def test_merge_refuses_a_missing_shard_other_models_and_an_existing_out(
    make_bench: Callable[..., Path], tmp_path: Path
) -> None:
    bench = make_bench(4, 3)
    runs = _shard_runs(bench, tmp_path, 3)
    with pytest.raises(VqauditError, match="shard 2/3 is missing"):
        merge_runs([runs[0], runs[2]], tmp_path / "m")
    other = tmp_path / "abstain"
    run_benchmark(bench, "reference:always-abstain", other, progress=False)
    with pytest.raises(VqauditError, match="field 'model'"):
        merge_runs([*runs, other], tmp_path / "m")
    with pytest.raises(VqauditError, match="given twice"):
        merge_runs([runs[0], runs[0]], tmp_path / "m")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(VqauditError, match="not empty"):
        merge_runs(runs, tmp_path / "full")
    assert not (tmp_path / "m").exists()


def test_a_run_folder_holds_one_shard(make_bench: Callable[..., Path], tmp_path: Path) -> None:
    bench = make_bench()
    out = tmp_path / "run"
    run_benchmark(bench, "reference:gold", out, progress=False, shard=(1, 2))
    with pytest.raises(VqauditError, match="shard 1/2, not shard 2/2"):
        run_benchmark(bench, "reference:gold", out, progress=False, shard=(2, 2))
    with pytest.raises(VqauditError, match="shard 1/2, not the whole benchmark"):
        run_benchmark(bench, "reference:gold", out, progress=False)


def test_cli_shard_and_merge(make_bench: Callable[..., Path], tmp_path: Path) -> None:
    bench = make_bench(3, 2)
    runner = CliRunner()
    for i in (1, 2):
        result = runner.invoke(
            app, ["run", str(bench), "--model", "reference:gold", "--out", str(tmp_path / f"s{i}"), "--shard", f"{i}/2"]
        )
        assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--out", str(tmp_path / "m")])
    assert result.exit_code == 0, result.output
    assert "merged 2 runs: 6 responses (0 duplicate rows dropped), 6 views" in result.output
    assert len(load_responses(tmp_path / "m")) == 6


def test_merge_refuses_a_run_still_being_written(make_bench: Callable[..., Path], tmp_path: Path) -> None:
    bench = make_bench()
    runs = _shard_runs(bench, tmp_path, 2)
    with (
        folder_lock(runs[1], "vqaudit run --model reference:gold"),
        pytest.raises(VqauditError, match="vqaudit run --model"),
    ):
        merge_runs(runs, tmp_path / "m")
    assert not (tmp_path / "m").exists()
    assert merge_runs(runs, tmp_path / "m").n_views == 9  # once the run is done


def test_replay_shards_of_one_file_merge_and_of_an_edited_file_do_not(
    make_bench: Callable[..., Path], tmp_path: Path
) -> None:
    # The replay identity holds the file's SHA-256: shards of the same bytes share it and merge into the run
    # asked in one go; a shard asked after the file was edited is another model version, refused by merge.
    bench = make_bench(4, 2)
    views = [json.loads(line)["view_id"] for line in (bench / "views.jsonl").read_text().splitlines()]
    replay = tmp_path / "replay.jsonl"
    replay.write_text("".join(json.dumps({"view_id": v, "text": f"t-{v}"}) + "\n" for v in views))
    spec = f"replay:{replay}"
    run_benchmark(bench, spec, tmp_path / "whole", progress=False)
    shards = [tmp_path / f"shard{i}" for i in (1, 2)]
    for i, out in enumerate(shards, start=1):
        run_benchmark(bench, spec, out, progress=False, shard=(i, 2))
    merge_runs(shards, tmp_path / "merged")
    merged, whole = load_responses(tmp_path / "merged"), load_responses(tmp_path / "whole")
    assert {v: (r.text, r.cache_key) for v, r in merged.items()} == {v: (r.text, r.cache_key) for v, r in whole.items()}
    assert json.loads((tmp_path / "merged" / "run.json").read_text())["model_identity"].startswith(f"{spec}@sha256:")

    replay.write_text(replay.read_text().replace("t-", "u-"))
    run_benchmark(bench, spec, tmp_path / "edited2", progress=False, shard=(2, 2))
    with pytest.raises(VqauditError, match="field 'model_identity'"):
        merge_runs([shards[0], tmp_path / "edited2"], tmp_path / "m2")


def test_merge_refuses_a_killed_shard_and_merges_once_it_is_rerun(
    make_bench: Callable[..., Path], tmp_path: Path, fake_server: Any, read_rows: Rows
) -> None:
    # Re-trial: a shard killed mid-run merged with exit 0 ("0 with a recorded error"); `score` then refused the
    # merged folder and advised `vqaudit run` into it, which refuses a merged folder.
    bench = make_bench(4, 5)  # 20 views
    spec = f"openai:m@{fake_server.url}"
    env = {**os.environ, "VQAUDIT_TEST_KEY": "sk-test-merge"}
    command = [
        sys.executable,
        "-m",
        "vqaudit",
        "--quiet",
        "run",
        str(bench),
        "--model",
        spec,
        "--concurrency",
        "1",
        "--api-key-env",
        "VQAUDIT_TEST_KEY",
        "--max-retries",
        "0",
    ]
    s1, s2 = tmp_path / "s1", tmp_path / "s2"
    assert subprocess.run([*command, "--out", str(s1), "--shard", "1/2"], env=env, timeout=120).returncode == 0
    fake_server.stall_after(2)  # shard 2 gets 2 replies, then the server holds its calls: killed part way
    proc = subprocess.Popen([*command, "--out", str(s2), "--shard", "2/2"], env=env)
    try:
        deadline = time.monotonic() + 60
        while len(read_rows(s2)) < 2:
            assert proc.poll() is None, "the shard's run ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.01)
        proc.kill()  # SIGKILL: the run writes nothing more
        assert proc.wait(10) == -9
    finally:
        if proc.poll() is None:
            proc.kill()
    n_shard2 = 20 - len(load_responses(s1))  # the views of shard 2: those shard 1 did not ask
    with pytest.raises(VqauditError) as refused:
        merge_runs([s1, s2], tmp_path / "m")
    assert str(refused.value).startswith(
        f"{s2}: the run of shard 2/2 did not finish ({n_shard2 - 2} of {n_shard2} "
        "views have no reply: killed or stopped part way); rerun that shard with "
        f"the same command (`vqaudit run {bench.resolve()} --model {spec} --out "
        f"{s2} --shard 2/2`"
    )
    assert not (tmp_path / "m").exists()
    cli = subprocess.run(
        [sys.executable, "-m", "vqaudit", "merge", str(s1), str(s2), "--out", str(tmp_path / "m")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (cli.returncode, cli.stderr) == (2, f"error: {refused.value}\n")
    fake_server.unstall()
    assert subprocess.run([*command, "--out", str(s2), "--shard", "2/2"], env=env, timeout=120).returncode == 0
    assert merge_runs([s1, s2], tmp_path / "m").n_views == 20  # the advice worked: the shard finished


def test_a_merged_folder_missing_replies_is_told_to_rerun_its_shards(
    make_bench: Callable[..., Path], tmp_path: Path
) -> None:
    bench = make_bench(3, 3)
    runs = _shard_runs(bench, tmp_path, 2)
    merged = tmp_path / "m"
    merge_runs(runs, merged)
    with sqlite3.connect(merged / "responses.sqlite") as conn:
        conn.execute("DELETE FROM responses WHERE rowid = (SELECT MIN(rowid) FROM responses)")
    with pytest.raises(VqauditError) as refused:
        score_run(merged, n_draws=10)
    text = str(refused.value)
    assert f"was made by `vqaudit merge` from {runs[0].resolve()}, {runs[1].resolve()}" in text
    assert "--out SHARD_FOLDER --shard I/N`), then `vqaudit merge` them again into a new folder" in text
    assert f"--out {merged}`" not in text  # `vqaudit run --out MERGED` is refused: never advised
    with pytest.raises(VqauditError, match="merged by `vqaudit merge`; run into another folder"):
        run_benchmark(bench, "reference:gold", merged, progress=False)
