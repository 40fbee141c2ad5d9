from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from vqaudit.backends import GenerationParams, ResponseCache, cache_key
from vqaudit.schema import Response


def _response(key: str, view_id: str = "v1", *, text: str | None = "t", error: str | None = None) -> Response:
    return Response(
        view_id=view_id,
        model="reference:gold",
        prompt_id="answerability-json-v1",
        params=GenerationParams().as_dict(),
        text=text,
        error=error,
        latency_s=0.25,
        cache_key=key,
    )


def test_cache_key_is_sha256_of_canonical_json() -> None:
    key = cache_key("m", "p", "prompt", "ab" * 32, GenerationParams())
    material = {
        "image_sha256": "ab" * 32,
        "model": "m",
        "params": {"max_tokens": 512, "temperature": 0.0},
        "prompt": "prompt",
        "prompt_id": "p",
    }
    expected = hashlib.sha256(json.dumps(material, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert key == expected
    # a dict of params gives the same key as the dataclass, in any key order
    assert cache_key("m", "p", "prompt", "ab" * 32, {"max_tokens": 512, "temperature": 0.0}) == key


@pytest.mark.parametrize(
    "changed",
    [
        ("m2", "p", "prompt", "ab" * 32, GenerationParams()),
        ("m", "p2", "prompt", "ab" * 32, GenerationParams()),
        ("m", "p", "prompt ", "ab" * 32, GenerationParams()),
        ("m", "p", "prompt", "cd" * 32, GenerationParams()),
        ("m", "p", "prompt", "ab" * 32, GenerationParams(temperature=0.7)),
        ("m", "p", "prompt", "ab" * 32, GenerationParams(max_tokens=64)),
    ],
)
def test_cache_key_changes_with_every_input(changed: tuple[str, str, str, str, GenerationParams]) -> None:
    assert cache_key(*changed) != cache_key("m", "p", "prompt", "ab" * 32, GenerationParams())


def test_put_get_roundtrip_and_persistence(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    with ResponseCache(path) as cache:
        assert cache.get("k1") is None
        assert cache.put(_response("k1", text='{"answerable": false}'))
        assert cache.put(_response("k2", "v2", text=None, error="HTTP 500"))
    with ResponseCache(path) as cache:
        assert cache.get("k1") == _response("k1", text='{"answerable": false}')
        assert cache.get("k2") == _response("k2", "v2", text=None, error="HTTP 500")
        assert cache.keys() == {"k1", "k2"}
        assert cache.error_keys() == {"k2"}
        assert len(cache) == 2
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_put_never_duplicates_or_overwrites_a_reply(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "r.sqlite") as cache:
        assert cache.put(_response("k1", text="first"))
        assert not cache.put(_response("k1", text="second"))
        assert not cache.put(_response("k1", text="third"), replace_error=True)  # a reply is never replaced
        assert len(cache) == 1
        assert cache.get("k1") == _response("k1", text="first")


def test_error_replaced_only_on_explicit_retry(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "r.sqlite") as cache:
        cache.put(_response("k1", text=None, error="timeout"))
        cache.put(_response("k2", "v2", text="ok"))
        assert not cache.put(_response("k1", text="late reply"))
        assert cache.get("k1") == _response("k1", text=None, error="timeout")
        assert cache.put(_response("k1", text="late reply"), replace_error=True)
        assert cache.get("k1") == _response("k1", text="late reply")
        assert len(cache) == 2
        # the replaced row now counts as the latest inserted
        assert [r.cache_key for r in cache.responses()] == ["k2", "k1"]


def test_responses_in_insertion_order(tmp_path: Path) -> None:
    keys = ["kc", "ka", "kb", "kd"]
    with ResponseCache(tmp_path / "r.sqlite") as cache:
        for i, key in enumerate(keys):
            cache.put(_response(key, f"v{i}"))
        assert [r.cache_key for r in cache.responses()] == keys
        assert [r.view_id for r in cache.responses()] == ["v0", "v1", "v2", "v3"]


def test_view_keys_are_replaced_as_a_whole(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "r.sqlite") as cache:
        assert cache.view_keys() == {}
        cache.set_view_keys({"a": "k1", "b": "k2"})
        cache.set_view_keys({"b": "k3"})
        assert cache.view_keys() == {"b": "k3"}


def test_put_requires_a_key(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "r.sqlite") as cache, pytest.raises(ValueError, match="cache_key"):
        cache.put(_response(""))
