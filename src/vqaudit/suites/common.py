"""What every benchmark builder shares: the build loop, parallel group building in a fixed order, the versions."""

from __future__ import annotations

import importlib
import platform
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import vqaudit
from vqaudit.errors import VqauditError
from vqaudit.executors import current
from vqaudit.files import atomic_write_bytes, sha256_bytes, write_json
from vqaudit.schema import Group, View
from vqaudit.staging import staged_folder
from vqaudit.store import BENCHMARK_FORMAT, write_benchmark

T = TypeVar("T")


def map_groups(make: Callable[[int], T], n_groups: int, workers: int, chunksize: int = 4) -> Iterator[T]:
    """Yield ``make(0), make(1), ...`` in group order, on the current executor (:func:`vqaudit.executors.current`).

    ``local`` (the default) uses ``workers`` processes when ``workers > 1``; ``ray`` (``--executor ray``) sends
    chunks of ``chunksize`` groups to the cluster. Each group seeds its own generator from (seed, group index), so
    the output is identical for any executor, worker count and node count.
    """
    yield from current().map(make, range(n_groups), workers=workers, chunksize=chunksize)


def versions(*packages: str) -> dict[str, str]:
    """Versions of vqaudit, Python and the named packages (everything that affects pixels and labels)."""
    out = {"vqaudit": vqaudit.__version__, "python": platform.python_version()}
    for name in packages:
        module = importlib.import_module(name)
        out["pillow" if name == "PIL" else name] = str(getattr(module, "__version__", "unknown"))
    return dict(sorted(out.items()))


@dataclass(frozen=True)
class GroupBuild:
    """Everything one group writes: its record, its views, image files and JSON certificates (path -> content).

    Paths are relative to the benchmark folder. Two groups may carry the same image path only with the same bytes
    (UPD variants share their item's image).
    """

    group: Group
    views: tuple[View, ...]
    images: dict[str, bytes]
    certificates: dict[str, dict[str, Any]] = field(default_factory=dict)


def build_benchmark(
    out: Path,
    source: str,
    builds: Iterable[GroupBuild],
    manifest_fields: Callable[[Sequence[Group], Sequence[View]], dict[str, Any]],
    on_group: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """The one build loop of every source: staged folder, write each group as it arrives, then the manifest.

    Args:
        out: target folder; must not exist or be empty. Nothing appears there unless the whole build succeeds
            (:func:`vqaudit.staging.staged_folder`).
        source: the source's name, recorded in the manifest.
        builds: the groups in order (e.g. from :func:`map_groups`, which builds them in parallel).
        manifest_fields: the source's own manifest fields, computed from all groups and views once written.
        on_group: called with the number of groups written so far (progress bars).

    Returns:
        The manifest written to ``out/manifest.json``: ``format`` (:data:`vqaudit.store.BENCHMARK_FORMAT`),
        ``source``, the source's fields, and the SHA-256 of every file.

    Raises:
        VqauditError: a non-empty output folder, two groups writing different bytes under one image path, or
            whatever the builds raise (the staged folder is then discarded).
    """
    with staged_folder(out) as tmp:  # a build that fails part-way leaves no folder behind
        views: list[View] = []
        groups: list[Group] = []
        files: dict[str, str] = {}
        for built in builds:
            for path, data in built.images.items():
                digest = sha256_bytes(data)
                if files.get(path, digest) != digest:
                    raise VqauditError(f"{path}: two groups write different images under one name")
                if path not in files:
                    atomic_write_bytes(tmp / path, data)
                    files[path] = digest
            for path, cert in built.certificates.items():
                write_json(tmp / path, cert)
                files[path] = sha256_bytes((tmp / path).read_bytes())
            views.extend(built.views)
            groups.append(built.group)
            if on_group is not None:
                on_group(len(groups))
        fields = {"format": BENCHMARK_FORMAT, "source": source, **manifest_fields(groups, views)}
        return write_benchmark(tmp, views, groups, files, fields)


def manifest_field(manifest: dict[str, Any], name: str, kind: type) -> Any:
    """``manifest[name]``, which must be of ``kind`` (for the ``rebuild_options`` hooks of ``verify --rebuild``).

    Raises:
        VqauditError: the field is missing or of another type, naming it.
    """
    value = manifest.get(name)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise VqauditError(f"manifest.json, field {name!r}: expected {kind.__name__} to rebuild the benchmark")
    return value
