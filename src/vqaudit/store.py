"""Typed benchmark and run folders: the one module that knows the file names between stages.

A benchmark folder holds ``views.jsonl``, ``groups.jsonl``, ``images/``, ``certificates/`` and ``manifest.json``;
a run folder holds ``run.json``, ``responses.sqlite``, ``outcomes.jsonl``, ``metrics.json``,
``diagnostics.json`` and ``scored.json``. Every file is written with the atomic primitives of
:mod:`vqaudit.files`, so a killed process never leaves a half-written file and never destroys the previous version.

Also exported from here, under the names its callers and ``docs/architecture.md`` use: :func:`contained_file` (the
check that a folder's file is a regular file inside it, :mod:`vqaudit.contained`) and the ``run.json`` records
:class:`RunInfo`, :class:`RunUsage`, :func:`sum_usage` and :class:`ReplicaLoss` (:mod:`vqaudit.run_records`).
"""

from __future__ import annotations

import os
from collections.abc import Container, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from vqaudit.contained import contained_file as contained_file
from vqaudit.contained import folder_hint, require_regular
from vqaudit.errors import VqauditError
from vqaudit.files import (
    M,
    read_json,
    read_jsonl,
    sha256_bytes,
    sha256_file,
    write_json,
    write_jsonl,
)
from vqaudit.run_records import ReplicaLoss as ReplicaLoss
from vqaudit.run_records import RunInfo as RunInfo
from vqaudit.run_records import RunUsage as RunUsage
from vqaudit.run_records import sum_usage as sum_usage
from vqaudit.schema import Group, View

BENCHMARK_FORMAT = "vqaudit-benchmark/1"
"""The ``format`` of every benchmark folder's ``manifest.json``."""


def write_benchmark(
    folder: Path, views: Sequence[View], groups: Sequence[Group], files: dict[str, str], manifest: dict[str, Any]
) -> dict[str, Any]:
    """Write a benchmark's ``views.jsonl``, ``groups.jsonl`` and ``manifest.json`` into ``folder``; return the manifest.

    The manifest is ``manifest`` (the builder's own fields) plus ``files`` (path -> SHA-256 of every image and
    certificate already written, sorted by path) and the SHA-256 of the two JSONL files, the fields
    :func:`manifest_problems` checks.
    """
    write_jsonl(folder / "views.jsonl", views)
    write_jsonl(folder / "groups.jsonl", groups)
    full = {
        **manifest,
        "files": dict(sorted(files.items())),
        "views_sha256": sha256_bytes((folder / "views.jsonl").read_bytes()),
        "groups_sha256": sha256_bytes((folder / "groups.jsonl").read_bytes()),
    }
    write_json(folder / "manifest.json", full)
    return full


@dataclass(frozen=True)
class Benchmark:
    """A loaded benchmark folder: its views and groups (in file order) and its manifest."""

    root: Path
    views: Sequence[View]
    groups: Sequence[Group]
    manifest: dict[str, Any]

    def image_path(self, view: View) -> Path:
        """Absolute path of a view's image."""
        return self.root / view.image


def image_fault(root: Path, view: View) -> str | None:
    """``"missing"`` when a view's image file is absent, ``"hash"`` when its bytes do not match ``image_sha256``.

    Raises:
        VqauditError: the image is a symbolic link, not a regular file, or a path leaving the folder
            (:func:`contained_file`); :func:`load_benchmark` refuses such a folder before any image is read.
    """
    path = require_regular(root, view.image)
    if not path.is_file():
        return "missing"
    return "hash" if sha256_file(path) != view.image_sha256 else None


def load_benchmark(root: Path, check_images: bool = True) -> Benchmark:
    """Load a benchmark folder and check its internal consistency.

    Args:
        root: folder with ``views.jsonl``, ``groups.jsonl`` and ``manifest.json``.
        check_images: also check that every image exists and matches its recorded SHA-256.

    Raises:
        VqauditError: a missing file, a malformed row, a view naming an unknown group, a group naming an unknown
            view, a duplicate id, or an image that is missing or whose bytes do not match ``image_sha256``.
    """
    if not root.is_dir():
        raise VqauditError(f"{root}: benchmark folder not found")
    views = read_jsonl(require_regular(root, VIEWS_FILE), View)
    groups = read_jsonl(require_regular(root, GROUPS_FILE), Group)
    manifest = read_json(require_regular(root, MANIFEST_FILE))
    if not isinstance(manifest, dict):  # a JSON list: one line naming the file, not a traceback
        raise VqauditError(f"{root / 'manifest.json'}: expected a JSON object, got a JSON {type(manifest).__name__}")
    view_ids: set[str] = set()
    for row, view in enumerate(views, start=1):
        if view.view_id in view_ids:
            raise VqauditError(f"{root / 'views.jsonl'}: row {row}, field 'view_id': duplicate {view.view_id!r}")
        view_ids.add(view.view_id)
    group_ids = {g.group_id for g in groups}
    for row, view in enumerate(views, start=1):
        check_view_row(root, row, view, group_ids, check_images=check_images)
    for row, group in enumerate(groups, start=1):
        missing = [v for v in group.view_ids if v not in view_ids]
        if missing:
            raise VqauditError(f"{root / 'groups.jsonl'}: row {row}, field 'view_ids': unknown view {missing[0]!r}")
    check_manifest_files(root, manifest)
    return Benchmark(root=root, views=views, groups=groups, manifest=manifest)


def check_view_row(root: Path, row: int, view: View, group_ids: Container[str], *, check_images: bool) -> None:
    """:func:`load_benchmark`'s checks of one view (``row``: its 1-based position among the views).

    Raises:
        VqauditError: its image path is absolute, leaves the folder or is not a regular file, its group is not
            in ``group_ids``, or (with ``check_images``) its image is missing or does not match its hash.
    """
    image = Path(view.image)
    if image.is_absolute() or ".." in image.parts:
        raise VqauditError(
            f"{root / 'views.jsonl'}: row {row}, field 'image': {view.image!r} must be a path "
            "inside the benchmark folder"
        )
    _, problem = contained_file(root, image)
    if problem is not None and problem != "missing":
        raise VqauditError(
            f"{root / 'views.jsonl'}: row {row}, field 'image': {view.image} {problem}{folder_hint(problem)}"
        )
    if view.group_id not in group_ids:
        raise VqauditError(f"{root / 'views.jsonl'}: row {row}, field 'group_id': unknown group {view.group_id!r}")
    fault = image_fault(root, view) if check_images else None
    if fault == "missing":
        raise VqauditError(f"{root / 'views.jsonl'}: row {row}, field 'image': {root / view.image} not found")
    if fault == "hash":
        raise VqauditError(
            f"{root / 'views.jsonl'}: row {row}, field 'image_sha256': {view.image} does not match its hash"
        )


def check_manifest_files(root: Path, manifest: dict[str, Any]) -> None:
    """:func:`load_benchmark`'s check of ``manifest.json``'s ``files``: every path stays inside the folder.

    Raises:
        VqauditError: a listed path leaves the folder or is not a regular file (naming the manifest and field).
    """
    files = manifest.get("files")
    for rel in files if isinstance(files, dict) else ():
        _, problem = contained_file(root, str(rel))
        if problem is not None and problem != "missing":
            raise VqauditError(f"{root / MANIFEST_FILE}: field 'files': {rel} {problem}{folder_hint(problem)}")


def manifest_problems(bench: Benchmark) -> list[str]:
    """Where the files of a benchmark folder differ from the hashes its manifest records (empty = intact).

    Checks ``views_sha256``, ``groups_sha256`` and every entry of ``files`` (images, certificates) when present.
    """
    problems: list[str] = []
    for key, name in (("views_sha256", "views.jsonl"), ("groups_sha256", "groups.jsonl")):
        recorded = bench.manifest.get(key)
        if recorded is not None and sha256_file(bench.root / name) != recorded:
            problems.append(f"{name} does not match its hash in manifest.json")
    files = bench.manifest.get("files") or {}
    if not isinstance(files, dict):  # "files": "x" must not skip the check
        problems.append(f"manifest.json field 'files' is a JSON {type(files).__name__}, not an object")
        files = {}
    for rel, digest in files.items():
        path, problem = contained_file(bench.root, str(rel))
        if problem == "missing":
            problems.append(f"{rel} (listed in manifest.json) is missing")
        elif problem is not None:
            problems.append(f"{rel} (listed in manifest.json) {problem}")
        elif sha256_file(path) != digest:
            problems.append(f"{rel} does not match its hash in manifest.json")
    return problems


# --- typed folders: the only place that knows the file names of a benchmark and of a run -----------------------

VIEWS_FILE = "views.jsonl"
GROUPS_FILE = "groups.jsonl"
MANIFEST_FILE = "manifest.json"
RUN_FILE = "run.json"
RESPONSES_FILE = "responses.sqlite"
OUTCOMES_FILE = "outcomes.jsonl"
METRICS_FILE = "metrics.json"
DIAGNOSTICS_FILE = "diagnostics.json"
SCORED_FILE = "scored.json"
JUDGE_FILE = "judge.sqlite"


class Manifest(BaseModel):
    """``manifest.json`` of a benchmark folder: the fields every source writes; a source's own fields are kept.

    Attributes:
        format: :data:`BENCHMARK_FORMAT`.
        source: the source's name (a row of :mod:`vqaudit.suites.registry`).
        seed: the build seed (None for sources built from files without a seed).
        n_groups: groups built.
        n_views: views built.
        files: relative path -> SHA-256 of every image and certificate.
        views_sha256: SHA-256 of ``views.jsonl``.
        groups_sha256: SHA-256 of ``groups.jsonl``.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    format: str
    source: str
    seed: int | None = None
    n_groups: int
    n_views: int
    files: dict[str, str] = {}
    views_sha256: str
    groups_sha256: str


@dataclass(frozen=True)
class BenchmarkFolder:
    """A benchmark folder's file layout (the files :func:`write_benchmark` writes)."""

    root: Path

    @property
    def views(self) -> Path:
        """``views.jsonl``."""
        return self.root / VIEWS_FILE

    @property
    def groups(self) -> Path:
        """``groups.jsonl``."""
        return self.root / GROUPS_FILE

    @property
    def manifest(self) -> Path:
        """``manifest.json``."""
        return self.root / MANIFEST_FILE

    def exists(self) -> bool:
        """Whether the folder holds a manifest (a finished build)."""
        return self.manifest.is_file()

    def read_manifest(self) -> Manifest:
        """The typed manifest. Raises VqauditError naming the file and field when it is missing or malformed."""
        return _validated(self.manifest, Manifest, read_json(self.manifest))


@dataclass(frozen=True)
class RunFolder:
    """A run folder's file layout: what ``run`` writes and what ``score`` and ``report`` read and write."""

    root: Path

    @property
    def info(self) -> Path:
        """``run.json`` (:class:`RunInfo`)."""
        return self.root / RUN_FILE

    @property
    def responses(self) -> Path:
        """``responses.sqlite``, the response cache."""
        return self.root / RESPONSES_FILE

    @property
    def outcomes(self) -> Path:
        """``outcomes.jsonl``."""
        return self.root / OUTCOMES_FILE

    @property
    def metrics(self) -> Path:
        """``metrics.json``."""
        return self.root / METRICS_FILE

    @property
    def diagnostics(self) -> Path:
        """``diagnostics.json``."""
        return self.root / DIAGNOSTICS_FILE

    @property
    def scored(self) -> Path:
        """``scored.json``: the state of the response cache that ``score`` scored (:mod:`vqaudit.scored_state`)."""
        return self.root / SCORED_FILE

    @property
    def judge_cache(self) -> Path:
        """``judge.sqlite``, the judge's verdict cache."""
        return self.root / JUDGE_FILE

    def read_info(self) -> RunInfo:
        """The typed ``run.json``. Raises VqauditError naming the file and field when it is missing or malformed."""
        self.check_files()
        if not self.info.is_file():
            raise VqauditError(f"{self.info}: file not found (is {self.root} a run folder made by `vqaudit run`?)")
        return _validated(self.info, RunInfo, read_json(self.info))

    def check_files(self) -> None:
        """Refuse a run folder whose files are not its own: every file it holds is a regular file inside it.

        Raises:
            VqauditError: naming the first of ``run.json``, ``responses.sqlite``, ``outcomes.jsonl``,
                ``metrics.json``, ``diagnostics.json``, ``scored.json``, ``judge.sqlite`` that is a symbolic link
                or not a regular file (:func:`contained_file`); absent files are left to their readers.
        """
        for name in (RUN_FILE, RESPONSES_FILE, OUTCOMES_FILE, METRICS_FILE, DIAGNOSTICS_FILE, SCORED_FILE, JUDGE_FILE):
            require_regular(self.root, name)

    def write_info(self, info: RunInfo) -> None:
        """Write ``run.json`` atomically; fields added later are left out at their empty value, as before they existed.

        No ``usage`` when None, no ``blind`` when False, no ``replicas_lost`` when empty.
        """
        data = info.model_dump(mode="json")
        if data.get("usage") is None:
            data.pop("usage", None)
        if not data.get("blind"):
            data.pop("blind", None)
        if not data.get("replicas_lost"):
            data.pop("replicas_lost", None)
        write_json(self.info, data)

    def benchmark(self, override: Path | None = None) -> Path:
        """The benchmark folder the run was made on, checked by its manifest hash.

        Looked for at ``override`` (``--bench``) when given, else at the recorded relative path (so a run moved
        or copied together with its benchmark still works), else at the recorded absolute path.

        Raises:
            VqauditError: no candidate folder has a manifest, or the one found has another manifest hash (it is
                not the benchmark the run asked about); the message names the paths tried and ``--bench``.
        """
        info = self.read_info()
        if override is not None:
            candidates = [override]
        else:
            candidates = [self.root / info.benchmark_relative] if info.benchmark_relative else []
            candidates.append(Path(info.benchmark))
        for folder in candidates:
            manifest = folder / MANIFEST_FILE
            if manifest.is_file():
                if sha256_file(manifest) != info.benchmark_manifest_sha256:
                    raise VqauditError(
                        f"{folder}: its manifest.json is not the one run {self.root} was made on "
                        f"(sha256 {info.benchmark_manifest_sha256}); pass the right folder with --bench"
                    )
                return folder
        tried = ", ".join(str(c) for c in candidates)
        raise VqauditError(
            f"{self.info}: the run's benchmark is not found (tried {tried}); pass its folder with --bench"
        )


def parse_shard(text: str) -> tuple[int, int]:
    """Parse a shard ``I/N`` (``vqaudit run --shard``): shard ``I`` of ``N``, ``1 <= I <= N <= 10000``.

    Returns:
        ``(I, N)``.

    Raises:
        VqauditError: not two decimal integers ``I/N`` in range (the message quotes the text).
    """
    index, sep, count = text.strip().partition("/")
    if sep and index.isdecimal() and count.isdecimal() and 1 <= int(index) <= int(count) <= 10_000:
        return int(index), int(count)
    raise VqauditError(f"--shard {text!r}: expected I/N with 1 <= I <= N <= 10000 (e.g. 2/4: the second of four)")


def shard_of(key: str, count: int) -> int:
    """The shard (1-based, of ``count``) a cache key belongs to: its first 60 bits modulo ``count``, plus one.

    Sharding by cache key (not by view) puts views with identical inputs, which share one key and one call, in
    one shard, so no two shards ask the same call and their merged caches never overlap. SHA-256 keys spread
    evenly: each shard holds ``1/count`` of the keys up to sampling noise.

    Args:
        key: a cache key, 64 hex characters (``vqaudit.backends.cache.cache_key``).
        count: the number of shards, at least 1.
    """
    return int(key[:15], 16) % count + 1


def relative_path(target: Path, start: Path) -> str:
    """``target`` relative to ``start`` (both resolved), with ``..`` where needed, as a POSIX string."""
    return Path(os.path.relpath(target.resolve(), start.resolve())).as_posix()


def _validated(path: Path, model: type[M], data: Any) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "(record)"
        raise VqauditError(f"{path}: field '{field}': {err['msg']}") from None
