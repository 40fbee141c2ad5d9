"""``vqaudit eval --executor``: the executor of ``build`` and ``run``, passed to the stages eval performs.

Ray itself is tested in ``tests/test_ray.py``; nothing here starts Ray. That eval hands the executor to its build
and run stages is shown by a malformed ``--ray-address``: the build's parallel map (or the run's model loading)
is where a Ray executor first connects, and ``ray_session._probe`` refuses the address there with its one line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BAD_ADDRESS = "error: --ray-address 'nohost': expected HOST:PORT (e.g. 10.0.0.1:6379), ray://HOST:PORT or auto"


def vqaudit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vqaudit", *args], capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_eval_with_the_local_executor_builds_runs_and_scores(tmp_path: Path) -> None:
    done = vqaudit(
        "eval", "charts", "--groups", "2", "--model", "reference:gold", "--executor", "local", "--out", str(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "bench" / "manifest.json").read_text())
    assert (manifest["n_groups"], manifest["seed"]) == (2, 0)
    # seed 000 §4: the gold policy answers every supported view and abstains on every unsupported one, so it
    # passes every group (Bk = Jk = 1) and misses no view
    gold = json.loads((tmp_path / "runs" / "reference_gold" / "metrics.json").read_text())["charts"]
    assert (gold["Bk"], gold["Jk"], gold["n_groups"]) == (1.0, 1.0, 2)
    assert f"report: {tmp_path / 'report' / 'report.md'}" in done.stdout


def test_eval_refuses_an_unknown_executor_in_one_line(tmp_path: Path) -> None:
    done = vqaudit("eval", "charts", "--executor", "dask", "--out", str(tmp_path / "e"))
    line = done.stderr.strip()  # click's wording around the choice list varies between versions
    assert done.returncode == 2 and "\n" not in line, done.stderr
    assert line.startswith("error: Invalid value for '--executor': ") and "'dask' is not one of 'local', 'ray'" in line
    done = vqaudit("eval", "charts", "--ray-replicas", "2", "--out", str(tmp_path / "e"))
    assert (done.returncode, done.stderr.strip()) == (2, "error: --ray-replicas applies only to --executor ray")
    done = vqaudit("eval", "charts", "--ray-address", "auto", "--out", str(tmp_path / "e"))
    assert (done.returncode, done.stderr.strip()) == (2, "error: --ray-address applies only to --executor ray")
    assert not (tmp_path / "e").exists()


def test_eval_builds_and_runs_on_the_executor_it_is_given(tmp_path: Path, chart_bench: Path) -> None:
    pytest.importorskip("ray")  # without the [ray] extra the line names the extra instead (tests/test_ray.py)
    # the build stage: the first group map connects to Ray, and the malformed address is refused there
    done = vqaudit(
        "eval",
        "charts",
        "--groups",
        "2",
        "--model",
        "reference:gold",
        "--executor",
        "ray",
        "--ray-address",
        "nohost",
        "--out",
        str(tmp_path / "built"),
    )
    assert (done.returncode, done.stderr.strip()) == (2, BAD_ADDRESS)
    assert not (tmp_path / "built" / "bench" / "manifest.json").exists()
    # the run stage (the benchmark exists, nothing is built): the model is loaded on the executor
    done = vqaudit(
        "eval",
        "charts",
        "--bench",
        str(chart_bench),
        "--model",
        "reference:gold",
        "--executor",
        "ray",
        "--ray-address",
        "nohost",
        "--out",
        str(tmp_path / "ran"),
    )
    assert (done.returncode, done.stderr.strip()) == (2, BAD_ADDRESS)
    assert not (tmp_path / "ran" / "runs" / "reference_gold" / "responses.sqlite").exists()
