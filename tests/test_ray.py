"""The same bytes and the same cache on Ray as locally, and a lost Ray worker loses nothing cached.

All Ray tests share one local Ray instance (2 CPUs, started by the ``ray_instance`` fixture: Ray's start-up takes
10-60 s here) and run on one xdist worker (``xdist_group``, ``make test`` uses ``--dist loadgroup``). That
instance is a fresh one of the test session's own (``start_ray`` never joins a cluster Ray's temp folder records),
so the tests pass whatever other Ray runs on the machine; ``test_ray_without_an_address_never_joins_a_recorded
_cluster`` checks it against a decoy cluster. The executor tests at the top need no Ray.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from fixture_modules import fake_openai_server
from vqaudit.errors import VqauditError
from vqaudit.executors import (
    LocalExecutor,
    RayExecutor,
    _check_versions,
    current,
    make_executor,
    using,
)
from vqaudit.ray_session import ray_session, start_ray, stop_ray
from vqaudit.run import run_benchmark
from vqaudit.score import score_run
from vqaudit.suites.charts.build import build_charts
from vqaudit.verify import run_fault_suite, verify_benchmark

CHART_GROUPS, CHART_SEED = 24, 11  # the chart_bench fixture of tests/conftest.py


def _square_plus(offset: int, x: int) -> int:
    return x * x + offset


def _fail_on_three(x: int) -> int:
    if x == 3:
        raise VqauditError("row 3, field 'x': refused")
    return x


# -- the executor table (no Ray) --------------------------------------------------------------------------------


def test_make_executor_rows_and_errors() -> None:
    assert make_executor("local").name == "local"
    assert make_executor("ray", "10.0.0.1:6379") == RayExecutor(address="10.0.0.1:6379")
    with pytest.raises(VqauditError, match="--executor 'dask'"):
        make_executor("dask")
    with pytest.raises(VqauditError, match="--ray-address applies only to --executor ray"):
        make_executor("local", "10.0.0.1:6379")


def test_using_installs_and_restores_the_executor() -> None:
    assert isinstance(current(), LocalExecutor)
    ray = RayExecutor(address="auto")
    with using(ray):
        assert current() is ray
    assert isinstance(current(), LocalExecutor)


def test_local_map_keeps_item_order_for_any_worker_count() -> None:
    fn = functools.partial(_square_plus, 1)
    expected = [x * x + 1 for x in range(23)]  # by hand: the map is fn over 0..22 in order
    for workers in (1, 2, 3):
        assert list(LocalExecutor().map(fn, range(23), workers=workers, chunksize=4)) == expected


def test_a_worker_with_other_library_versions_is_refused() -> None:
    driver = {"python": "3.11.7", "host": "head", "numpy": "2.1.0"}
    _check_versions(driver, {"python": "3.11.7", "host": "node-7", "numpy": "2.1.0"})  # same: accepted
    with pytest.raises(VqauditError, match="node-7 runs numpy 1.26.4 but this driver numpy 2.1.0"):
        _check_versions(driver, {"python": "3.11.7", "host": "node-7", "numpy": "1.26.4"})


# -- on a local Ray instance ------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def ray_instance() -> Iterator[Any]:
    """One local Ray instance with 2 CPUs for every Ray test of the session (shut down at the end)."""
    pytest.importorskip("ray", reason="the [ray] extra is not installed (pip install 'vqaudit[ray]')")
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    ray = start_ray(RayExecutor(num_cpus=2))
    from ray import cloudpickle  # tests/ is not importable on the workers: ship this module's functions by value

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    session = ray_session()
    assert session is not None and session.local
    yield ray
    stop_ray()
    assert not ray.is_initialized() and not session.folder.exists()  # shut down, its own folder removed


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_ray_map_equals_local_map_for_any_window_and_chunk(ray_instance: Any) -> None:
    fn = functools.partial(_square_plus, 7)
    expected = [x * x + 7 for x in range(50)]
    for workers, chunksize in ((1, 1), (3, 4), (8, 50)):
        assert list(RayExecutor().map(fn, range(50), workers=workers, chunksize=chunksize)) == expected


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_a_user_error_in_a_ray_task_keeps_its_one_line(ray_instance: Any) -> None:
    with pytest.raises(VqauditError, match=r"^row 3, field 'x': refused$"):
        list(RayExecutor().map(_fail_on_three, range(8), workers=1, chunksize=2))


@pytest.fixture(scope="module")
def ray_bench(ray_instance: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's chart benchmark (24 groups, seed 11) built again on Ray."""
    out = tmp_path_factory.mktemp("ray-build") / "bench"
    with using(RayExecutor()):
        build_charts(out, CHART_GROUPS, CHART_SEED, workers=1)
    return out


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_ray_build_is_byte_identical_to_the_local_build(ray_bench: Path, chart_bench: Path) -> None:
    # chart_bench: the same 24 groups and seed built locally with 2 processes (tests/conftest.py)
    local, ray = _tree(chart_bench), _tree(ray_bench)
    assert sorted(local) == sorted(ray)
    assert sum(name.startswith("certificates/") for name in ray) > 0  # certificates compared too
    assert [name for name in local if local[name] != ray[name]] == []


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_verify_and_audit_checker_on_ray_give_the_local_verdicts(ray_bench: Path) -> None:
    with using(RayExecutor()):
        faults = verify_benchmark(ray_bench, workers=2)
        table = run_fault_suite(ray_bench, max_views=3, workers=2)
    assert faults == []
    assert table == run_fault_suite(ray_bench, max_views=3, workers=1)
    assert all(designed == rejected for kind, (designed, rejected) in table.items())  # genuine: all accepted


def _server_module() -> ModuleType:
    return fake_openai_server()


def _rows(run_dir: Path) -> dict[str, tuple[str, str | None, str | None]]:
    if not (run_dir / "responses.sqlite").is_file():
        return {}
    conn = sqlite3.connect(run_dir / "responses.sqlite", timeout=30)
    try:
        rows = conn.execute("SELECT key, view_id, text, error FROM responses").fetchall()
    except sqlite3.OperationalError:  # the table is not created yet
        rows = []
    finally:
        conn.close()
    return {key: (view_id, text, error) for key, view_id, text, error in rows}


@pytest.fixture
def server() -> Iterator[Any]:
    server = _server_module().FakeOpenAIServer(delay_s=0.02).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_a_run_through_ray_gives_the_local_cache_and_metrics(
    ray_instance: Any, chart_bench: Path, server: Any, tmp_path: Path
) -> None:
    spec = f"openai:fake@{server.url}"
    local = run_benchmark(chart_bench, spec, tmp_path / "local", concurrency=4, progress=False)
    ray = run_benchmark(
        chart_bench, spec, tmp_path / "ray", concurrency=4, progress=False, executor=RayExecutor(), replicas=2
    )
    assert (ray.n_views, ray.n_asked, ray.n_errors) == (local.n_views, local.n_asked, 0)
    assert _rows(tmp_path / "ray") == _rows(tmp_path / "local")
    info = json.loads((tmp_path / "ray" / "run.json").read_text())
    assert info["model_identity"] == json.loads((tmp_path / "local" / "run.json").read_text())["model_identity"]
    assert score_run(tmp_path / "ray", n_draws=200) == score_run(tmp_path / "local", n_draws=200)
    again = run_benchmark(
        chart_bench, spec, tmp_path / "ray", concurrency=4, progress=False, executor=RayExecutor(), replicas=2
    )
    assert (again.n_asked, again.n_cached) == (0, local.n_views)  # resume: nothing asked twice
    # no replica lost: run.json holds no replicas_lost (left out when empty, as before the field existed)
    assert "replicas_lost" not in json.loads((tmp_path / "ray" / "run.json").read_text())
    assert ray_instance.util.list_named_actors() == []  # the replicas were ended, their CPUs returned


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_killing_a_ray_worker_mid_run_loses_no_cached_reply(
    ray_instance: Any, chart_bench: Path, server: Any, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    spec = f"openai:fake@{server.url}"
    out = tmp_path / "ray"
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["summary"] = run_benchmark(
                chart_bench, spec, out, concurrency=2, progress=False, executor=RayExecutor(), replicas=2
            )
        except Exception as exc:  # noqa: BLE001 - whatever the kill does, it is checked below
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 300
    while len(_rows(out)) < 20 and time.monotonic() < deadline and thread.is_alive():
        time.sleep(0.05)
    replicas = [n for n in ray_instance.util.list_named_actors() if n.startswith("vqaudit-replica")]
    assert len(replicas) == 2, (replicas, outcome)
    pid = ray_instance.get(ray_instance.get_actor(replicas[0]).pid.remote())
    before = _rows(out)
    os.kill(pid, signal.SIGKILL)
    thread.join(600)
    assert not thread.is_alive()
    after = _rows(out)
    assert {k: after[k] for k in before} == before  # every reply cached before the kill is still there
    # the driver replaced the replica and re-sent its calls in flight: the run finished without an error, and the
    # one loss (replica slot 0, the one killed) is recorded in run.json and said on stderr
    assert "error" not in outcome and outcome["summary"].n_errors == 0, outcome
    lost = json.loads((out / "run.json").read_text()).get("replicas_lost", [])
    assert [loss["replica"] for loss in lost] == [int(replicas[0].rsplit("-", 1)[1])]
    err = capfd.readouterr().err
    assert f"Ray replica {lost[0]['replica']} of {spec} lost (" in err
    # the replacement starts at once; whether it is up before the surviving replica has asked the last views
    # depends on the machine's load: `replaced` records which happened, and stderr says the same
    assert lost[0]["replaced"] == (f"Ray replica {lost[0]['replica']} of {spec} replaced" in err)
    rerun = run_benchmark(chart_bench, spec, out, concurrency=2, progress=False, executor=RayExecutor(), replicas=2)
    assert rerun.n_errors == 0
    assert rerun.n_asked == len(_rows(out)) - len(after)  # the rerun asked only what was missing
    local = run_benchmark(chart_bench, spec, tmp_path / "local", concurrency=2, progress=False)
    assert _rows(out) == _rows(tmp_path / "local")
    assert local.n_errors == 0


def test_cli_refuses_ray_options_without_the_ray_executor(tmp_path: Path) -> None:
    import subprocess

    def vqaudit(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "vqaudit", *args], capture_output=True, text=True, timeout=300)

    done = vqaudit("build", "charts", "--groups", "1", "--out", str(tmp_path / "b"), "--ray-address", "auto")
    assert (done.returncode, done.stderr.strip()) == (2, "error: --ray-address applies only to --executor ray")
    assert not (tmp_path / "b").exists()
    done = vqaudit("build", "charts", "--groups", "1", "--out", str(tmp_path / "b"), "--executor", "dask")
    assert done.returncode == 2 and "'dask' is not one of 'local', 'ray'" in done.stderr
    done = vqaudit(
        "run", str(tmp_path), "--model", "reference:gold", "--out", str(tmp_path / "r"), "--ray-replicas", "2"
    )
    assert (done.returncode, done.stderr.strip()) == (2, "error: --ray-replicas applies only to --executor ray")


def test_a_bad_or_silent_ray_address_fails_at_once_with_one_line() -> None:
    # without the probe, ray.init retries an address where nobody listens for minutes
    import socket

    from vqaudit.ray_session import _probe

    with pytest.raises(VqauditError, match=r"--ray-address 'head': expected HOST:PORT"):
        _probe("head")
    with pytest.raises(VqauditError, match=r"--ray-address 'head:99999': expected HOST:PORT"):
        _probe("head:99999")
    with socket.socket() as sock:  # a port that was free a moment ago: nobody listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(VqauditError, match=rf"--ray-address 127.0.0.1:{port}: no Ray head answers there"):
        _probe(f"127.0.0.1:{port}")


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_verify_on_ray_declares_imported_tables_on_the_workers(ray_instance: Any, tmp_path: Path) -> None:
    # Imported (PlotQA) charts keep their tables in BENCH/tables/; fresh Ray workers never read them, so the
    # driver ships them with the checks (a fork()ed local pool inherits them instead).
    from typer.testing import CliRunner

    from suites.test_imported_charts import plotqa_files
    from vqaudit.cli import app

    annotations, qa = plotqa_files(tmp_path)
    bench = tmp_path / "bench"
    runner = CliRunner()
    res = runner.invoke(
        app,
        [
            "build",
            "charts",
            "--from",
            "plotqa",
            "--annotations",
            str(annotations),
            "--qa",
            str(qa),
            "--out",
            str(bench),
        ],
    )
    assert res.exit_code == 0, res.output
    ver = runner.invoke(app, ["verify", str(bench), "--workers", "2", "--executor", "ray"])
    assert ver.exit_code == 0, ver.output
    checker = runner.invoke(app, ["audit-checker", str(bench), "--workers", "2", "--executor", "ray"])
    assert checker.exit_code == 0, checker.output


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_replicas_start_only_when_something_is_left_to_ask(ray_instance: Any, server: Any) -> None:
    # an openai: backend is cheap to build (no check hook), so the driver computes its identity, the spec
    # (backends/openai.py OpenAIBackend.identity), and no replica (no model load) starts before the first call
    import asyncio

    from vqaudit.backends.base import ModelOptions
    from vqaudit.backends.distributed import RayReplicas

    spec = f"openai:fake@{server.url}"
    replicas = RayReplicas.start(RayExecutor(), spec, ModelOptions(concurrency=2), 2)
    assert (replicas.identity, replicas.actors) == (spec, [])
    assert not [n for n in ray_instance.util.list_named_actors() if n.startswith("vqaudit-replica")]
    asyncio.run(replicas.aclose())


def _pids_mentioning(text: str) -> list[int]:
    """Processes whose command line contains ``text`` (the decoy cluster's own temp folder: only its processes)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_ray_without_an_address_never_joins_a_recorded_cluster() -> None:
    # Ray 2.60's ray.init() without an address joins the cluster recorded in $RAY_TMPDIR/ray/ray_current_cluster
    # or named by RAY_ADDRESS (ray._private.services.get_ray_address_from_environment): a dead one hangs, a live
    # one is taken over. A decoy head records itself there (RAY_TMPDIR: a folder of this test's own, so no other
    # Ray on the machine is disturbed) and RAY_ADDRESS names it too; `--executor ray` must start its own instance.
    pytest.importorskip("ray", reason="the [ray] extra is not installed (pip install 'vqaudit[ray]')")
    import shutil
    import socket
    import subprocess
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="vqd-", dir="/tmp"))  # short: Ray's socket paths must fit in 107 bytes
    env = {**os.environ, "RAY_TMPDIR": str(root / "r"), "TMPDIR": str(root / "t"), "RAY_USAGE_STATS_ENABLED": "0"}
    (root / "r").mkdir()
    (root / "t").mkdir()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    decoy = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("ray")),
            "start",
            "--head",
            "--block",
            "--port",
            str(port),
            "--num-cpus",
            "1",
            "--include-dashboard",
            "false",
            "--disable-usage-stats",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        recorded = root / "r" / "ray" / "ray_current_cluster"
        deadline = time.monotonic() + 180
        while not recorded.is_file() and time.monotonic() < deadline and decoy.poll() is None:
            time.sleep(0.5)
        assert recorded.is_file(), "the decoy cluster did not start"
        env["RAY_ADDRESS"] = recorded.read_text().strip()
        started = time.monotonic()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "vqaudit",
                "build",
                "charts",
                "--groups",
                "1",
                "--out",
                str(root / "bench"),
                "--executor",
                "ray",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
        took = time.monotonic() - started
        assert done.returncode == 0, done.stderr
        assert (root / "bench" / "manifest.json").is_file()
        # a driver that joins a cluster on this machine writes python-core-driver-*.log into that cluster's session
        # logs (seen with Ray 2.60); the decoy has none, and its recorded address is untouched
        logs = root / "r" / "ray" / "session_latest" / "logs"
        assert logs.is_dir() and not list(logs.glob("python-core-driver-*")), took
        assert recorded.read_text().strip() == env["RAY_ADDRESS"]
        # Ray's own messages stay off the console; the instance's folder (in TMPDIR) is removed at exit
        assert "gcs_client" not in done.stderr and " INFO " not in done.stderr and "WARNING" not in done.stderr
        assert list((root / "t").iterdir()) == []
    finally:
        decoy.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            decoy.wait(30)
        for pid in _pids_mentioning(str(root)):  # the decoy's GCS, raylet and helpers, by their process ids
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(root, ignore_errors=True)


def test_a_refused_token_or_unreachable_cluster_is_one_line_naming_the_fix() -> None:
    # the inputs are what Ray 2.60 gave here: ray.init(address=...) against a head started with RAY_AUTH_MODE=token
    # raised ConnectionError("Failed to connect to Ray cluster at 192.0.2.2:6391") after about 20 s, while its C++
    # client logged "InvalidAuthToken" on the driver's stderr (captured by start_ray into the session folder)
    from vqaudit.ray_session import _init_failure

    said = (
        "[2026-12-03 11:37:01,142 W 10965 10965] gcs_client.cc:210: Failed to get cluster ID from GCS server: "
        "Unauthenticated: RPC error: InvalidAuthToken: Authentication token is missing or incorrect\n"
    )
    refused = _init_failure(
        "127.0.0.1:6391", ConnectionError("Failed to connect to Ray cluster at 192.0.2.2:6391"), said
    )
    assert refused.startswith(
        "--ray-address 127.0.0.1:6391: the Ray cluster refuses this driver's authentication "
        "token (InvalidAuthToken): set RAY_AUTH_MODE=token"
    )
    lost = _init_failure(
        "127.0.0.1:6391", ConnectionError("Failed to connect to Ray cluster at 192.0.2.2:6391\nmore"), ""
    )
    assert lost == (
        "--ray-address 127.0.0.1:6391: cannot connect to a Ray cluster there: Failed to connect to Ray "
        "cluster at 192.0.2.2:6391"
    )
    assert "\n" not in refused + lost
