"""Where an in-process model comes from, and what identifies it in the response cache (``hf:``, ``vllm:``).

A target (the text after ``hf:`` or ``vllm:``) is either a local model folder or a Hugging Face hub repo id
(``org/name``). The cache key of every reply includes the backend's ``identity``:

- a local folder: the SHA-256 of its config, tokenizer, processor and chat-template files, of its weights
  index, of its custom modeling code (``*.py``) and of each weights file's name, size and content (whole files
  up to 64 MiB; larger ones by their first and last 16 MiB, so a 15 GB checkpoint is fingerprinted in well
  under a second), so replies cached for one set of weights are never reused for another one saved in the same
  folder;
- a hub repo: the commit the revision resolved to (read from the local hub cache after loading), so a moved
  branch (``main``) never reuses replies of the old commit.

None of this imports torch, transformers or vllm.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from vqaudit.errors import VqauditError

# Files that decide what the model computes from a prompt, besides the weights.
FINGERPRINT_FILES = (
    "config.json",
    "generation_config.json",
    "preprocessor_config.json",
    "processor_config.json",
    "image_processor_config.json",
    "video_preprocessor_config.json",
    "tokenizer_config.json",
    "tokenizer.json",
    "tokenizer.model",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "merges.txt",
    "chat_template.jinja",
    "chat_template.json",
)
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
CODE_SUFFIXES = (".py",)  # custom modeling code of a trust_remote_code folder
WHOLE_FILE_LIMIT = 64 << 20
EDGE_BYTES = 16 << 20
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class ModelSource:
    """A resolved target: a local folder or a hub repo id.

    Attributes:
        target: the text after ``KIND:`` as given.
        local: the folder (resolved, absolute) when the target is a local folder, else None.
        repo_id: the hub repo id when the target is not a local folder, else None.
        model_type: ``config.json``'s ``model_type`` for a local folder (``""`` if it has none); None for a repo.
    """

    target: str
    local: Path | None
    repo_id: str | None
    model_type: str | None

    @property
    def load_from(self) -> str:
        """What ``from_pretrained`` / ``LLM(model=...)`` is given: the folder path or the repo id."""
        return str(self.local) if self.local is not None else str(self.repo_id)


def require_extra(kind: str, extra: str, modules: tuple[str, ...]) -> None:
    """Import ``modules`` or raise one line naming the extra to install.

    Args:
        kind: the backend kind (``hf``, ``vllm``), named in the message.
        extra: the optional-dependency extra that brings the modules.
        modules: top-level module names, imported in order.

    Raises:
        VqauditError: a module is missing (or fails to import); the message names ``pip install 'vqaudit[EXTRA]'``.
    """
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise VqauditError(
                f"the {kind}: backend needs the [{extra}] extra ({module} cannot be imported: "
                f"{_first_line(str(exc)) or type(exc).__name__}); pip install 'vqaudit[{extra}]'"
            ) from None


def resolve_source(spec: str, target: str) -> ModelSource:
    """Decide whether ``target`` is a local model folder or a hub repo id, and check a local folder.

    A target that exists on disk, or that starts with ``/``, ``.``, ``~`` or contains a backslash, is a local
    path; anything else must look like a hub repo id (``name`` or ``org/name``).

    Args:
        spec: the model spec (named in errors).
        target: the text after ``KIND:``.

    Returns:
        The ModelSource.

    Raises:
        VqauditError: a local path that is missing, not a folder, or has no readable ``config.json`` object; or a
            target that is neither a path nor a valid repo id.
    """
    text = target.strip()
    path = Path(text).expanduser()
    looks_local = text.startswith(("/", ".", "~")) or "\\" in text
    if path.exists() or looks_local:
        if not path.is_dir():
            what = "is not a folder" if path.exists() else "does not exist"
            raise VqauditError(
                f"model spec {spec!r}: {path} {what} (expected a model folder with config.json, "
                "or a hub repo id such as llava-hf/llava-1.5-7b-hf)"
            )
        config = path / "config.json"
        try:
            data = json.loads(config.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise VqauditError(
                f"model spec {spec!r}: {config} does not exist; this is not a Hugging Face model "
                "folder (save one with save_pretrained)"
            ) from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise VqauditError(f"model spec {spec!r}: {config}: unreadable JSON ({_first_line(str(exc))})") from None
        if not isinstance(data, dict):
            raise VqauditError(f"model spec {spec!r}: {config}: expected a JSON object")
        model_type = data.get("model_type")
        return ModelSource(
            target=target,
            local=path.resolve(),
            repo_id=None,
            model_type=model_type if isinstance(model_type, str) else "",
        )
    if not _HUB_ID.match(text) or ".." in text:
        raise VqauditError(
            f"model spec {spec!r}: {target!r} is neither an existing folder nor a hub repo id (org/name)"
        )
    return ModelSource(target=target, local=None, repo_id=text, model_type=None)


def _hash_file(digest: hashlib._Hash, path: Path) -> None:
    size = path.stat().st_size
    digest.update(f"{path.name}\0{size}\0".encode())
    with path.open("rb") as handle:
        if size <= WHOLE_FILE_LIMIT:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
            return
        digest.update(handle.read(EDGE_BYTES))
        handle.seek(size - EDGE_BYTES)
        digest.update(handle.read(EDGE_BYTES))


def folder_fingerprint(folder: Path) -> str:
    """Return ``sha256:HEX`` of a model folder's config, tokenizer and processor files and its weights.

    Args:
        folder: a model folder (``save_pretrained`` layout).

    Returns:
        ``sha256:`` and 64 hex digits; equal for two folders with byte-identical such files, whatever their
        path or modification times.

    Raises:
        OSError: a file cannot be read.
    """
    digest = hashlib.sha256()
    names = sorted(
        p.name
        for p in folder.iterdir()
        if p.is_file()
        and (
            p.name in FINGERPRINT_FILES
            or p.name.endswith(".index.json")
            or p.name.endswith(WEIGHT_SUFFIXES + CODE_SUFFIXES)
        )
    )
    for name in names:
        _hash_file(digest, folder / name)
    return f"sha256:{digest.hexdigest()}"


def hub_commit(repo_id: str, revision: str | None, cache_dir: Path | None = None) -> str | None:
    """Return the commit a hub revision resolved to, read from the local hub cache (no network).

    Args:
        repo_id: the hub repo id.
        revision: branch, tag or commit (None: ``main``).
        cache_dir: the hub cache folder (None: huggingface_hub's default, ``HF_HUB_CACHE``).

    Returns:
        40 hex digits, or None when the cache does not know the revision (or ``huggingface_hub`` is absent).
    """
    if revision is not None and _COMMIT.match(revision):
        return revision
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    found = try_to_load_from_cache(repo_id, "config.json", cache_dir=cache_dir, revision=revision)
    if not isinstance(found, str):
        return None
    commit = Path(found).parent.name
    return commit if _COMMIT.match(commit) else None


def source_identity(spec: str, source: ModelSource, revision: str | None, extras: dict[str, str]) -> str:
    """Return the cache identity of a loaded model: spec, resolved weights and reply-changing options.

    Args:
        spec: the model spec.
        source: where the model was loaded from.
        revision: the hub revision asked for (ignored for a local folder).
        extras: options that change replies (e.g. ``{"dtype": "torch.bfloat16"}``), added in key order.

    Returns:
        e.g. ``hf:/models/x@sha256:…;dtype=torch.float32`` or ``hf:org/name@<commit>;dtype=…``; a hub revision
        that cannot be resolved gives ``@revision=<revision or main>``.

    Raises:
        OSError: a local model file cannot be read.
    """
    if source.local is not None:
        pinned = folder_fingerprint(source.local)
    else:
        commit = hub_commit(str(source.repo_id), revision)
        pinned = commit if commit is not None else f"revision={revision or 'main'}"
    tail = "".join(f";{key}={extras[key]}" for key in sorted(extras))
    return f"{spec}@{pinned}{tail}"


def _first_line(text: str, limit: int = 300) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def load_error(spec: str, source: ModelSource, exc: BaseException) -> VqauditError:
    """Turn an exception raised while loading a model into one clear line.

    Args:
        spec: the model spec.
        source: where the model was being loaded from.
        exc: what loading raised.

    Returns:
        A VqauditError naming the spec, the folder's ``model_type`` (when known) and the exception's first line.
    """
    where = f"folder {source.local}" if source.local is not None else f"hub repo {source.repo_id}"
    kind = f" (model_type {source.model_type!r})" if source.model_type else ""
    message = _first_line(str(exc)) or "no message"
    if "out of memory" in message.lower() or type(exc).__name__ == "OutOfMemoryError":
        hint = "; try a smaller dtype (--model-arg dtype=bfloat16), another device, or a smaller model"
    elif source.local is None:
        hint = "; is the repo id right, and is the model in the local hub cache or the hub reachable?"
    else:
        hint = ""
    return VqauditError(f"model spec {spec!r}: cannot load the {where}{kind}: {type(exc).__name__}: {message}{hint}")


def no_thinking_switch(spec: str, enable_thinking: bool) -> str:
    """The one line refusing ``enable_thinking`` for a model whose chat template has no such switch."""
    return (
        f"model spec {spec!r}: enable_thinking={str(enable_thinking).lower()}: this model's chat template has "
        "no thinking switch (its source never mentions enable_thinking); drop the setting"
    )


def template_has_thinking_switch(*templates: object) -> bool:
    """Whether any chat template source (a string, or a dict of named templates) mentions ``enable_thinking``.

    A template that never reads the variable ignores it: passing ``enable_thinking`` to it would change nothing
    the model sees while the cache key said it did (Qwen3's template reads it: ``{%- if enable_thinking is defined
    and enable_thinking is false %}``, Qwen3 model card, "Switching Between Thinking and Non-Thinking Mode").
    """
    for template in templates:
        sources = template.values() if isinstance(template, dict) else (template,)
        if any(isinstance(t, str) and "enable_thinking" in t for t in sources):
            return True
    return False
