"""Where hf:/vllm: models come from and what pins them in the cache key (backends/model_files.py)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from vqaudit.backends import model_files
from vqaudit.backends.model_files import (
    ModelSource,
    folder_fingerprint,
    hub_commit,
    resolve_source,
    source_identity,
)
from vqaudit.errors import VqauditError

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _folder(root: Path, weights: bytes = b"\x00" * 100) -> Path:
    root.mkdir(parents=True)
    (root / "config.json").write_text(json.dumps({"model_type": "llava"}))
    (root / "tokenizer.json").write_text("{}")
    (root / "model.safetensors").write_bytes(weights)
    return root


def test_resolve_source(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "m")
    assert resolve_source("hf:x", str(folder)) == ModelSource(str(folder), folder.resolve(), None, "llava")
    assert resolve_source("hf:x", "llava-hf/llava-1.5-7b-hf") == ModelSource(
        "llava-hf/llava-1.5-7b-hf", None, "llava-hf/llava-1.5-7b-hf", None
    )
    assert resolve_source("hf:x", "gpt2").repo_id == "gpt2"
    (tmp_path / "f").write_text("x")
    (tmp_path / "empty").mkdir()
    (tmp_path / "badjson").mkdir()
    (tmp_path / "badjson" / "config.json").write_text("{nope")
    (tmp_path / "list").mkdir()
    (tmp_path / "list" / "config.json").write_text("[]")
    cases = {
        str(tmp_path / "missing"): "does not exist",
        "./relative/missing": "does not exist",
        str(tmp_path / "f"): "is not a folder",
        str(tmp_path / "empty"): "config.json does not exist; this is not a Hugging Face model folder",
        str(tmp_path / "badjson"): "unreadable JSON",
        str(tmp_path / "list"): "expected a JSON object",
        "a/b/c": "neither an existing folder nor a hub repo id",
        "org/..": "neither an existing folder nor a hub repo id",
        "org name": "neither an existing folder nor a hub repo id",
    }
    for target, message in cases.items():
        with pytest.raises(VqauditError, match=message) as info:
            resolve_source(f"hf:{target}", target)
        assert str(info.value).startswith(f"model spec 'hf:{target}': ")
        assert "\n" not in str(info.value)


def test_fingerprint_is_content_not_path(tmp_path: Path) -> None:
    a = _folder(tmp_path / "a")
    b = tmp_path / "b"
    shutil.copytree(a, b)
    (b / "README.md").write_text("not part of the model")
    assert folder_fingerprint(a) == folder_fingerprint(b)
    # by hand: sha256 over (name NUL size NUL content) of the model files in name order
    digest = hashlib.sha256()
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        data = (a / name).read_bytes()
        digest.update(f"{name}\0{len(data)}\0".encode() + data)
    assert folder_fingerprint(a) == f"sha256:{digest.hexdigest()}"

    (b / "model.safetensors").write_bytes(b"\x00" * 99 + b"\x01")  # one weight byte changed
    assert folder_fingerprint(a) != folder_fingerprint(b)
    c = tmp_path / "c"
    shutil.copytree(a, c)
    (c / "chat_template.jinja").write_text("{{ messages }}")  # another chat template: another model input
    assert folder_fingerprint(a) != folder_fingerprint(c)


def test_large_weights_are_fingerprinted_by_their_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_files, "WHOLE_FILE_LIMIT", 64)
    monkeypatch.setattr(model_files, "EDGE_BYTES", 16)
    base = bytes(range(100))
    a = _folder(tmp_path / "a", base)
    tail = _folder(tmp_path / "tail", base[:-1] + b"\xff")
    head = _folder(tmp_path / "head", b"\xff" + base[1:])
    middle = _folder(tmp_path / "middle", base[:50] + b"\xff" + base[51:])
    assert len({folder_fingerprint(p) for p in (a, tail, head)}) == 3
    assert folder_fingerprint(middle) == folder_fingerprint(a)  # the documented limit of the fast path


def test_hub_commit_from_the_local_cache(tmp_path: Path) -> None:
    assert hub_commit("org/name", COMMIT) == COMMIT  # a commit is its own resolution
    repo = tmp_path / "models--org--name"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(COMMIT)
    (repo / "snapshots" / COMMIT).mkdir(parents=True)
    (repo / "snapshots" / COMMIT / "config.json").write_text("{}")
    assert hub_commit("org/name", None, tmp_path) == COMMIT
    assert hub_commit("org/name", "main", tmp_path) == COMMIT
    assert hub_commit("org/name", "v2", tmp_path) is None
    assert hub_commit("org/other", None, tmp_path) is None


def test_source_identity(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "m")
    local = resolve_source("hf:m", str(folder))
    assert source_identity("hf:m", local, None, {"dtype": "float32", "a": "1"}) == (
        f"hf:m@{folder_fingerprint(folder)};a=1;dtype=float32"
    )
    hub = resolve_source("hf:org/x", "org/x")
    assert source_identity("hf:org/x", hub, COMMIT, {}) == f"hf:org/x@{COMMIT}"
    assert source_identity("hf:org/x", hub, "v1-does-not-resolve", {}) == "hf:org/x@revision=v1-does-not-resolve"
