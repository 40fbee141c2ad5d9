"""``openai:MODEL@URL1,URL2,...``: least-loaded dispatch, one cache, dead endpoints out."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from vqaudit.backends import BackendCallError, Completion, GenerationParams, ModelOptions, Request, load_backend
from vqaudit.backends.deadlines import AttemptTimeout, within
from vqaudit.backends.http_base import DEAD_AFTER
from vqaudit.backends.http_transport import env_proxy
from vqaudit.backends.openai import OpenAIBackend
from vqaudit.errors import VqauditError
from vqaudit.run import RunSummary, load_responses, run_benchmark
from vqaudit.store import load_benchmark

Rows = Callable[[Path], list[tuple[str, str | None, str | None]]]
OPTIONS = ModelOptions(max_retries=3, backoff_base_s=0.001, timeout_s=5.0)


@pytest.fixture
def second_server(server_module: ModuleType) -> Iterator[Any]:
    server = server_module.FakeOpenAIServer().start()
    try:
        yield server
    finally:
        server.stop()


def _closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (a port bound, then released): connection refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_spec_with_several_urls() -> None:
    backend = load_backend("openai:org/model@http://a:1/v1,https://b:2/v1/")
    assert isinstance(backend, OpenAIBackend)
    assert backend.model == "org/model"
    assert [e.url for e in backend.endpoints] == ["http://a:1/v1/chat/completions", "https://b:2/v1/chat/completions"]
    assert backend.identity == "openai:org/model@http://a:1/v1,https://b:2/v1/"  # one cache key for all endpoints
    for bad in ("openai:m@http://a/v1,", "openai:m@http://a/v1,ftp://b", "openai:m@http://a/v1,,http://b/v1"):
        with pytest.raises(VqauditError, match="MODEL@URL1,URL2"):
            load_backend(bad)
    with pytest.raises(VqauditError, match="http://a/v1 is listed twice"):
        load_backend("openai:m@http://a/v1,http://b/v1,http://a/v1")


def test_pick_is_least_loaded_skips_endpoints_out_and_avoids_the_last_failure() -> None:
    backend = OpenAIBackend(spec="s", model="m", base_url=["http://a/v1", "http://b/v1", "http://c/v1"])
    a, b, c = backend.endpoints
    a.in_flight, b.in_flight, c.in_flight = 3, 1, 2
    assert all(backend._pick() is b for _ in range(6))
    assert backend._pick(avoid=b) is c  # a retry goes elsewhere: c is the least loaded of the others
    b.error = "taken out"
    assert backend._pick() is c and backend._pick(avoid=c) is a
    a.in_flight = c.in_flight = 0  # ties are taken in turn
    assert {backend._pick().base_url for _ in range(4)} == {"http://a/v1", "http://c/v1"}
    a.error = "taken out"
    assert backend._pick(avoid=c) is c  # the only endpoint in rotation


def test_run_over_two_servers_and_a_dead_endpoint(
    make_bench: Callable[..., Path], tmp_path: Path, fake_server: Any, second_server: Any, read_rows: Rows
) -> None:
    bench = make_bench(6, 4)  # 24 views, 24 distinct images
    dead = _closed_port_url()
    spec = f"openai:m@{fake_server.url},{dead},{second_server.url}"
    out = tmp_path / "run"
    summary = run_benchmark(bench, spec, out, concurrency=4, progress=False, options=OPTIONS)
    assert (summary.n_views, summary.n_asked, summary.n_errors) == (24, 24, 0)
    assert list(summary.endpoints_out) == [dead]
    assert summary.endpoints_out[dead].startswith(
        f"taken out of rotation after {DEAD_AFTER} failures in a row: connection error: "
    )
    info = json.loads((out / "run.json").read_text())
    assert info["endpoints_out"] == summary.endpoints_out
    # each view was answered once, by one of the two live servers, and both took a share
    hits_a, hits_b = fake_server.snapshot(), second_server.snapshot()
    views = load_benchmark(bench).views
    assert sum(hits_a.values()) + sum(hits_b.values()) == 24
    assert set(hits_a) | set(hits_b) == {v.image_sha256 for v in views} and not set(hits_a) & set(hits_b)
    assert hits_a and hits_b
    # one cache: every reply under the spec's key, asked nothing on resume
    assert len(read_rows(out)) == 24 and all(text is not None for _, text, _ in read_rows(out))
    again = run_benchmark(bench, spec, out, concurrency=4, progress=False, options=OPTIONS)
    assert again == RunSummary(n_views=24, n_cached=24, n_asked=0, n_errors=0, out_dir=out)
    assert len(load_responses(out)) == 24


def test_a_401_endpoint_leaves_the_rotation_instead_of_stopping_the_run(
    make_bench: Callable[..., Path], tmp_path: Path, fake_server: Any, second_server: Any
) -> None:
    bench = make_bench(4, 4)
    second_server.default = "401"  # a server started with another key: every call to it would fail
    second_server.hold_until(4, max_s=10.0)  # its first four 401s come back together, after it is out
    spec = f"openai:m@{second_server.url},{fake_server.url}"
    summary = run_benchmark(bench, spec, tmp_path / "run", concurrency=8, progress=False, options=OPTIONS)
    assert (summary.n_asked, summary.n_errors) == (16, 0)
    assert list(summary.endpoints_out) == [second_server.url]
    assert "taken out of rotation: HTTP 401" in summary.endpoints_out[second_server.url]
    assert sum(fake_server.snapshot().values()) == 16
    assert second_server.peak_in_flight == 4  # the four were in flight at once: none of their 401s was fatal


def test_the_last_endpoint_in_rotation_keeps_the_single_server_rules(
    make_bench: Callable[..., Path], tmp_path: Path, fake_server: Any, second_server: Any
) -> None:
    bench = make_bench(5, 4)
    fake_server.default = second_server.default = "401"
    spec = f"openai:m@{fake_server.url},{second_server.url}"
    # the first 401 takes its server out; the second comes from the last server in rotation: fatal, the run stops
    with pytest.raises(VqauditError, match="HTTP 401"):
        run_benchmark(bench, spec, tmp_path / "run", concurrency=1, progress=False, options=OPTIONS)
    # stopped at once: of the 20 views, only the calls already under way (4 workers per slot) reached a server
    assert sum(fake_server.snapshot().values()) + sum(second_server.snapshot().values()) <= 4
    # both dead by connection: the last one is kept, its requests fail after their retries, the run stops early
    spec = f"openai:m@{_closed_port_url()},{_closed_port_url()}"
    with pytest.raises(VqauditError, match="the first 4 requests all failed"):
        run_benchmark(bench, spec, tmp_path / "run2", concurrency=1, progress=False, options=OPTIONS)


def test_within_returns_cuts_and_passes_an_outer_cancel_through() -> None:
    async def go() -> None:
        async def sleep_then(value: str, seconds: float) -> str:
            await asyncio.sleep(seconds)
            return value

        assert await within(sleep_then("ok", 0.0), lambda: 10.0) == "ok"
        with pytest.raises(AttemptTimeout) as info:
            await within(sleep_then("late", 5.0), lambda: 0.05)
        assert info.value.limit_s == 0.05
        with pytest.raises(AttemptTimeout):
            await within(sleep_then("never", 0.0), lambda: 0.0)  # no time at all: not started
        task = asyncio.create_task(within(sleep_then("cancelled", 5.0), lambda: 10.0))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        current = asyncio.current_task()
        assert current is not None and current.cancelling() == 0  # no cancel request left over from the cut

    asyncio.run(go())


def test_backend_body_unchanged_for_one_endpoint() -> None:
    backend = load_backend("openai:m@http://127.0.0.1:9/v1")
    assert isinstance(backend, OpenAIBackend) and len(backend.endpoints) == 1
    body = backend.body(Request("v", "p", "q?", None, None, GenerationParams()))
    assert body == {
        "model": "m",
        "messages": [{"role": "user", "content": "q?"}],
        "temperature": 0.0,
        "max_tokens": 512,
    }


def test_a_redirect_is_not_followed(fake_server: Any, make_bench: Callable[..., Path]) -> None:
    # as with httpx before: a 3xx fails the call at once (the key is never sent on to another host)
    bench = make_bench(1, 1)
    view = load_benchmark(bench).views[0]
    fake_server.faults = {view.image_sha256: ["301"]}
    bench_image = (bench / view.image).read_bytes()
    backend = load_backend(f"openai:m@{fake_server.url}", OPTIONS)

    async def go() -> str:
        try:
            await backend.complete(Request(view.view_id, "p", "q", bench_image, "image/png", GenerationParams()))
        except BackendCallError as exc:
            assert not exc.fatal
            return str(exc)
        finally:
            await backend.aclose()
        return "no error"

    assert asyncio.run(go()).startswith(f"HTTP 301 from {fake_server.url}/chat/completions")
    assert fake_server.snapshot() == {view.image_sha256: 1}


def test_env_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    assert env_proxy("https://api.example.com/v1") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    assert env_proxy("https://api.example.com/v1") == "http://proxy.internal:3128"
    assert env_proxy("http://api.example.com/v1") is None  # HTTPS_PROXY is for https URLs only
    assert env_proxy("https://127.0.0.1:8000/v1") is None  # NO_PROXY


def test_cli_endpoint_option(
    make_bench: Callable[..., Path], tmp_path: Path, fake_server: Any, second_server: Any
) -> None:
    from typer.testing import CliRunner

    from vqaudit.cli import app
    from vqaudit.cli.options import with_endpoints

    assert with_endpoints("openai:m@http://a/v1", ["http://b/v1", "http://c/v1"]) == (
        "openai:m@http://a/v1,http://b/v1,http://c/v1"
    )
    assert with_endpoints("reference:gold", None) == "reference:gold"
    with pytest.raises(VqauditError, match="the model 'reference:gold' has one endpoint"):
        with_endpoints("reference:gold", ["http://b/v1"])
    # the row's endpoints flag decides, not the kind's name: every HTTP provider takes several
    assert with_endpoints("anthropic:m@http://a/v1", ["http://b/v1"]) == "anthropic:m@http://a/v1,http://b/v1"
    with pytest.raises(VqauditError, match="expected one http"):
        with_endpoints("openai:m@http://a/v1", ["http://b/v1,http://c/v1"])
    bench = make_bench(4, 2)
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(bench),
            "--model",
            f"openai:m@{fake_server.url}",
            "--endpoint",
            second_server.url,
            "--out",
            str(out),
            "--concurrency",
            "4",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads((out / "run.json").read_text())["model"] == f"openai:m@{fake_server.url},{second_server.url}"
    assert sum(fake_server.snapshot().values()) + sum(second_server.snapshot().values()) == 8


def test_backend_used_again_in_a_new_event_loop(fake_server: Any, make_bench: Callable[..., Path]) -> None:
    bench = make_bench(1, 2)
    views = load_benchmark(bench).views
    backend = load_backend(f"openai:m@{fake_server.url}", OPTIONS)
    requests = [
        Request(v.view_id, "p", "q", (bench / v.image).read_bytes(), "image/png", GenerationParams()) for v in views
    ]
    # no aclose between the two loops: the second must not reuse the first loop's session
    first = asyncio.run(backend.complete(requests[0]))
    second = asyncio.run(backend.complete(requests[1]))
    asyncio.run(backend.aclose())
    assert isinstance(first, Completion) and isinstance(second, Completion)
    assert first.text is not None and second.text is not None
    assert json.loads(first.text)["answer"] == views[0].image_sha256[:8]
    assert json.loads(second.text)["answer"] == views[1].image_sha256[:8]


def test_cli_names_an_endpoint_out_as_a_warning_not_an_error(
    make_bench: Callable[..., Path], tmp_path: Path, fake_server: Any
) -> None:
    # New-user trial: with URL2 dead the run succeeds (exit 0) yet stderr said "error: endpoint ...". A notice about
    # a run that did not fail is a warning; "error:" is kept for what fails the command (cli/options.py::error).
    from typer.testing import CliRunner

    from vqaudit.cli import app

    bench = make_bench(6, 4)  # 24 views: enough calls for the dead endpoint to fail DEAD_AFTER times in a row
    dead = _closed_port_url()
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(bench),
            "--model",
            f"openai:m@{fake_server.url},{dead}",
            "--out",
            str(tmp_path / "run"),
            "--concurrency",
            "4",
            "--timeout",
            "5",
        ],
    )
    assert result.exit_code == 0, result.output
    lines = [
        line for line in result.stderr.splitlines() if not line.startswith(("24 views: ", "progress: "))
    ]  # the summary line, the progress lines
    assert [line.split(" taken out")[0] for line in lines] == [f"warning: endpoint {dead}"]
    assert not any(line.startswith("error:") for line in lines)
    assert lines[0].startswith(
        f"warning: endpoint {dead} taken out of rotation after {DEAD_AFTER} failures in a row: connection error: "
    )
