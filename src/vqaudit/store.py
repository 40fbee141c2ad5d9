"""Typed benchmark and run folders: the one module that knows the file names between stages.

A benchmark folder holds ``views.jsonl``, ``groups.jsonl``, ``images/``, ``certificates/`` and ``manifest.json``;
a run folder holds ``run.json``, ``responses.sqlite``, ``outcomes.jsonl``, ``metrics.json``,
``diagnostics.json`` and ``scored.json``. Every file is written with the atomic primitives of
:mod:`vqaudit.files`, so a killed process never leaves a half-written file and never destroys the previous version.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

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
from vqaudit.schema import Group, Response, View

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


def contained_file(root: Path, rel: str | Path) -> tuple[Path, str | None]:
    """Where ``rel`` lies inside the folder ``root``, and why it may not be read from there (None = a regular file).

    Every file a benchmark or run folder holds must be a regular file reached from ``root`` through real folders:
    no component may be a symbolic link (even one to an identical copy, which ``verify`` could not tell apart and
    ``run`` would send), a device, a FIFO or a socket, and ``rel`` may not be absolute or hold ``..``. ``root``
    itself may be a link (it is the folder the user named). Each component is checked with ``lstat``, which never
    follows a link.

    Args:
        root: the folder.
        rel: a path relative to it (POSIX or native separators).

    Returns:
        ``(root / rel, problem)``: ``problem`` is None for a regular file, ``"missing"`` when nothing is there, else
        a phrase completing "``rel`` ..." (``"is a symbolic link"``, ``"is not a regular file"``,
        ``"leaves the folder"``).
    """
    parts = Path(rel).parts
    path = root / rel
    if Path(rel).is_absolute() or ".." in parts or not parts:
        return path, "leaves the folder"
    current = root
    for index, part in enumerate(parts):
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return path, "missing"
        except NotADirectoryError:
            return path, "is not a regular file"
        if stat.S_ISLNK(mode):
            where = "" if index == len(parts) - 1 else f" (its folder {Path(*parts[: index + 1]).as_posix()} is one)"
            return path, f"is a symbolic link{where}"
        if index < len(parts) - 1 and not stat.S_ISDIR(mode):
            return path, "is not a regular file"
        if index == len(parts) - 1 and not stat.S_ISREG(mode):
            return path, "is not a regular file"
    return path, None


def _hint(problem: str) -> str:
    """What to do about a :func:`contained_file` problem."""
    if problem.startswith("is a symbolic link"):
        return "; every file of the folder must be a regular file inside it (copy the file in instead of linking it)"
    if problem == "leaves the folder":
        return "; every file of the folder must be inside it"
    return "; every file of the folder must be a regular file (move this one away and rerun)"


def require_regular(root: Path, rel: str | Path, *, missing_ok: bool = True) -> Path:
    """``root / rel`` when it is a regular file inside ``root`` (:func:`contained_file`); refuse anything else.

    Args:
        root: the folder.
        rel: a path relative to it.
        missing_ok: return the path of an absent file (the caller reports it) instead of refusing it.

    Raises:
        VqauditError: naming the file: a symbolic link, not a regular file, a path leaving the folder, or (with
            ``missing_ok`` False) an absent file.
    """
    path, problem = contained_file(root, rel)
    if problem is None or (problem == "missing" and missing_ok):
        return path
    if problem == "missing":
        raise VqauditError(f"{path}: file not found")
    raise VqauditError(f"{path}: {problem}{_hint(problem)}")


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
        image = Path(view.image)
        if image.is_absolute() or ".." in image.parts:
            raise VqauditError(
                f"{root / 'views.jsonl'}: row {row}, field 'image': {view.image!r} must be a path "
                "inside the benchmark folder"
            )
        _, problem = contained_file(root, image)
        if problem is not None and problem != "missing":
            raise VqauditError(
                f"{root / 'views.jsonl'}: row {row}, field 'image': {view.image} {problem}{_hint(problem)}"
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
    for row, group in enumerate(groups, start=1):
        missing = [v for v in group.view_ids if v not in view_ids]
        if missing:
            raise VqauditError(f"{root / 'groups.jsonl'}: row {row}, field 'view_ids': unknown view {missing[0]!r}")
    files = manifest.get("files")
    for rel in files if isinstance(files, dict) else ():
        _, problem = contained_file(root, str(rel))
        if problem is not None and problem != "missing":
            raise VqauditError(f"{root / MANIFEST_FILE}: field 'files': {rel} {problem}{_hint(problem)}")
    return Benchmark(root=root, views=views, groups=groups, manifest=manifest)


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


class RunUsage(BaseModel):
    """Token counts summed over a run's replies that reported them (``run.json`` ``usage``).

    Each count is the sum of that field over the replies that carried it (the server's ``usage``: OpenAI API
    reference, Chat Completions, ``usage.prompt_tokens``, ``completion_tokens``,
    ``completion_tokens_details.reasoning_tokens``), or None when no reply reported that field (Anthropic's API,
    or a server without ``completion_tokens_details``, reports no reasoning tokens apart: not 0); ``replies`` is
    how many replies reported any count. A reply shared by several views (identical inputs, asked once) counts
    once.
    """

    prompt_tokens: int | None = 0
    completion_tokens: int | None = 0
    reasoning_tokens: int | None = 0
    replies: int = 0


def sum_usage(responses: Iterable[Response]) -> RunUsage | None:
    """The token counts of ``responses`` summed (:class:`RunUsage`), or None when none reported usage.

    Each response counts once (pass each cache row once); only ``prompt_tokens``, ``completion_tokens`` and
    ``reasoning_tokens`` are summed, a count that is not a non-negative integer is skipped, and a field no reply
    reported is None.
    """
    totals: dict[str, int | None] = {"prompt_tokens": None, "completion_tokens": None, "reasoning_tokens": None}
    replies = 0
    for response in responses:
        counted = False
        for key, value in (response.usage or {}).items():
            if key in totals and isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                totals[key] = (totals[key] or 0) + value
                counted = True
        replies += counted
    return RunUsage(**totals, replies=replies) if replies else None


class ReplicaLoss(BaseModel):
    """One Ray replica lost during ``vqaudit run --executor ray`` (``run.json`` ``replicas_lost``, in order)."""

    replica: int
    """The replica's slot, 0 to ``replicas - 1``."""
    at: str
    """When the driver saw the loss (UTC, ISO 8601, seconds)."""
    error: str
    """The first line of Ray's error (``ActorDiedError``: the worker process or its node died)."""
    replaced: bool
    """True when a new replica took the slot over; False when the replacement limit was reached, the new one failed
    to start, or the run ended before it started (the other replicas took its calls)."""


class RunInfo(BaseModel):
    """``run.json`` of a run folder: which model was asked about which benchmark, how, and how far it got.

    The benchmark is recorded three ways: its manifest's SHA-256 (what it is), its path relative to the run
    folder and its absolute path (where it was). :meth:`RunFolder.benchmark` finds it by the relative path
    first, so a run and its benchmark moved or copied together still score; a benchmark found anywhere must
    have the recorded manifest hash. Never holds an API key.
    """

    model_config = ConfigDict(extra="allow")

    model: str
    model_identity: str | None = None
    benchmark: str
    benchmark_relative: str | None = None
    benchmark_manifest_sha256: str
    sources: list[str] = []
    prompt_ids: list[str] = []
    params: dict[str, Any] = {}
    vqaudit_version: str = ""
    started: str | None = None
    finished: str | None = None
    n_views: int | None = None
    n_cached: int | None = None
    n_asked: int | None = None
    n_errors: int | None = None
    shard: str | None = None
    """``I/N`` for a run of one shard of the benchmark (``vqaudit run --shard``), None for all of it."""
    endpoints_out: dict[str, str] = {}
    """Endpoints of a ``KIND:MODEL@URL1,URL2,...`` spec taken out of rotation: URL -> the error that did it."""
    merged_from: list[str] = []
    """The run folders ``vqaudit merge`` made this run from (absolute paths), empty for a run asked directly."""
    usage: RunUsage | None = None
    """Token counts summed over the cache rows of the run's views (:func:`sum_usage`); None (and absent from
    ``run.json``) when no reply reported usage."""
    replicas_lost: list[ReplicaLoss] = []
    """Every Ray replica lost during this invocation of ``vqaudit run --executor ray``, in order (empty otherwise)."""
    blind: bool = False
    """True for a ``vqaudit run --blind``: every view asked with its prompt alone, no image (seed 001 App. 0.B.1:
    the questions a text-only model answers are image-agnostic); absent from ``run.json`` when False."""


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
