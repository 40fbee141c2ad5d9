"""Replies are committed in batches (``StoreBatch``), and still none received is ever lost."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vqaudit.backends import ModelOptions, ResponseCache
from vqaudit.errors import VqauditError
from vqaudit.run import run_benchmark
from vqaudit.schema import Response
from vqaudit.store import load_benchmark

Rows = Callable[[Path], list[tuple[str, str | None, str | None]]]


def _response(key: str, text: str | None, error: str | None = None) -> Response:
    return Response(
        view_id=f"v-{key}", model="m", prompt_id="p", params={}, text=text, error=error, latency_s=0.0, cache_key=key
    )


def test_put_many_one_row_per_key(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        assert cache.put_many([_response("a", "1"), _response("b", None, "HTTP 500"), _response("a", "2")]) == 2
        assert cache.get("a") is not None and cache.get("a").text == "1"  # type: ignore[union-attr]
        assert cache.put_many([_response("b", "3")]) == 0  # an error is replaced only on an explicit retry
        assert cache.put_many([_response("b", "3"), _response("a", "4")], replace_error=True) == 1
        assert [(r.cache_key, r.text) for r in cache.responses()] == [("a", "1"), ("b", "3")]
        with pytest.raises(ValueError, match="no cache_key"):
            cache.put_many([_response("c", "5"), _response("", "6")])
        assert len(cache) == 2  # nothing of the refused batch was written


def test_replies_received_before_a_fatal_error_are_stored(
    make_bench: Callable[..., Path], tmp_path: Path, fake_server: Any, read_rows: Rows
) -> None:
    bench = make_bench(6, 2)
    views = load_benchmark(bench).views
    fatal = {v.image_sha256 for v in views[6:]}
    fake_server.faults = {sha: ["401"] for sha in fatal}
    options = ModelOptions(max_retries=0, timeout_s=5.0)  # one attempt in flight: none is cut off by the stop
    with pytest.raises(VqauditError, match="HTTP 401"):
        run_benchmark(
            bench, f"openai:m@{fake_server.url}", tmp_path / "run", concurrency=1, progress=False, options=options
        )
    hits = fake_server.snapshot()
    answered = sum(n for sha, n in hits.items() if sha not in fatal)
    assert answered > 0
    rows = read_rows(tmp_path / "run")
    assert len(rows) == answered and all(text is not None for _, text, _ in rows)  # every reply sent is stored
