"""The views of a benchmark as an import needs them: an index from view id to position, each view read on demand.

``import-predictions`` maps every log row to a view (by view id, or by the view's 0-based position in
``views.jsonl``), checks the row's logged inputs against the view's prompt, and writes one response per view in
file order. None of that needs every :class:`~vqaudit.schema.View` in memory at once: :func:`open_view_index`
streams ``views.jsonl`` and keeps the view ids (a list and a dict id -> position) and each line's byte offset;
a view is parsed again from its line when a row asks for it (:meth:`ViewIndex.view`), and
:meth:`ViewIndex.iter_views` streams the file once more in order. Held per view: the id string, a dict entry, a
list slot and an 8-byte offset (about 0.2 KB), where a loaded :class:`~vqaudit.store.Benchmark` holds the whole
view record (about 2.3 KB).

Every check :func:`~vqaudit.store.load_benchmark` and :func:`~vqaudit.harness.common.open_benchmark` make is
made here with the same message, in the same order (a malformed view row, then a malformed group row, then the
manifest, then a duplicate view id, then each view's image and group, then each group's views, then the
manifest's ``files``, then the manifest hashes), so a benchmark one refuses the other refuses alike.
:meth:`ViewIndex.iter_views` also hashes the file again and refuses it if it changed during the import.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from vqaudit.contained import require_regular
from vqaudit.errors import VqauditError
from vqaudit.files import iter_jsonl, read_json, sha256_file
from vqaudit.schema import Group, View
from vqaudit.store import (
    GROUPS_FILE,
    MANIFEST_FILE,
    VIEWS_FILE,
    Benchmark,
    check_manifest_files,
    check_view_row,
    manifest_problems,
)
from vqaudit.suites.registry import prompt_for, sources_in_order


class ViewIndex:
    """A benchmark's view ids in file order, with each view read on demand.

    Attributes:
        root: the benchmark folder.
        manifest: its ``manifest.json``.
        manifest_sha256: the SHA-256 of ``manifest.json`` as it was read (what ``run.json`` records).
        ids: view ids in ``views.jsonl`` order (position = the 0-based index a harness logs).
        sources: the views' sources, in the registry's order.
        prompt_ids: the views' prompt template ids, sorted.
    """

    def __init__(
        self,
        root: Path,
        manifest: dict[str, Any],
        ids: list[str],
        read: Callable[[int], View],
        stream: Callable[[], Iterator[View]],
        sources: list[str],
        prompt_ids: list[str],
        manifest_sha256: str,
    ) -> None:
        """An index over ``ids``; ``read(position)`` parses one view, ``stream()`` yields every view in order."""
        self.root = root
        self.manifest = manifest
        self.manifest_sha256 = manifest_sha256
        self.ids = ids
        self.sources = sources
        self.prompt_ids = prompt_ids
        self._positions = {view_id: i for i, view_id in enumerate(ids)}
        self._read = read
        self._stream = stream
        self._last: tuple[int, View] | None = None  # a row's checks and its view id ask for the same view

    @classmethod
    def of_benchmark(cls, bench: Benchmark) -> ViewIndex:
        """An index over a loaded benchmark's views (nothing read again).

        ``manifest_sha256`` is the hash of the folder's ``manifest.json``, or ``""`` for a benchmark built in
        memory with no manifest file (the readers' own use: they map rows to views and never write a run).
        """
        views: Sequence[View] = bench.views
        manifest_file = bench.root / MANIFEST_FILE
        return cls(
            bench.root,
            bench.manifest,
            [v.view_id for v in views],
            views.__getitem__,
            lambda: iter(views),
            sources_in_order({v.source for v in views}),
            sorted({prompt_for(v)[0] for v in views}),
            sha256_file(manifest_file) if manifest_file.is_file() else "",
        )

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, view_id: object) -> bool:
        return view_id in self._positions

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def position(self, view_id: str) -> int:
        """The 0-based position of ``view_id`` in ``views.jsonl``. Raises KeyError for an unknown id."""
        return self._positions[view_id]

    def view(self, position: int) -> View:
        """The view at 0-based ``position`` (parsed from its line). Raises IndexError outside the views."""
        if not 0 <= position < len(self.ids):
            raise IndexError(position)
        if self._last is None or self._last[0] != position:
            self._last = (position, self._read(position))
        return self._last[1]

    def view_of(self, view_id: str) -> View:
        """The view with id ``view_id``. Raises KeyError for an unknown id."""
        return self.view(self._positions[view_id])

    def iter_views(self) -> Iterator[View]:
        """Every view in file order.

        Raises:
            VqauditError: ``views.jsonl`` changed since the index was built (checked after its last view).
        """
        return self._stream()


class _ViewsFile:
    """``views.jsonl`` read at recorded line offsets through one open handle, and streamed again with its hash."""

    def __init__(self, path: Path, offsets: array[int], digest: str) -> None:
        self.path = path
        self.offsets = offsets
        self.digest = digest
        self._handle = path.open("rb")

    def read(self, position: int) -> View:
        self._handle.seek(self.offsets[position])
        return View.model_validate_json(self._handle.readline())

    def stream(self) -> Iterator[View]:
        digest = hashlib.sha256()
        with self.path.open("rb") as handle:
            for line in handle:
                digest.update(line)
                if line.strip():
                    yield View.model_validate_json(line)
        if digest.hexdigest() != self.digest:
            raise VqauditError(
                f"{self.path}: changed while the predictions were imported; nothing was written (import again)"
            )

    def close(self) -> None:
        self._handle.close()


class OpenViewIndex:
    """:func:`open_view_index`'s context manager: the index, and the open ``views.jsonl`` closed on exit."""

    def __init__(self, index: ViewIndex, file: _ViewsFile) -> None:
        self.index = index
        self._file = file

    def __enter__(self) -> ViewIndex:
        return self.index

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._file.close()


def open_view_index(bench_dir: Path) -> OpenViewIndex:
    """Check the benchmark folder as ``open_benchmark`` does and index its views, streaming ``views.jsonl``.

    Use as ``with open_view_index(bench_dir) as views: ...`` (the file stays open for :meth:`ViewIndex.view`).

    Raises:
        VqauditError: every refusal of :func:`~vqaudit.store.load_benchmark` (a missing file, a malformed row, a
            duplicate id, a view naming an unknown group, a group naming an unknown view, an image missing or not
            matching its hash, a path leaving the folder) and of ``open_benchmark`` (``views.jsonl`` or
            ``groups.jsonl`` not matching ``manifest.json``), with the same message, in the same order.
    """
    root = bench_dir
    if not root.is_dir():
        raise VqauditError(f"{root}: benchmark folder not found")
    views_path = require_regular(root, VIEWS_FILE)
    ids: list[str] = []
    offsets = array("q")
    seen: set[str] = set()
    duplicate: VqauditError | None = None
    for _, offset, view in iter_jsonl(views_path, View):
        if duplicate is None and view.view_id in seen:
            duplicate = VqauditError(
                f"{root / 'views.jsonl'}: row {len(ids) + 1}, field 'view_id': duplicate {view.view_id!r}"
            )
        seen.add(view.view_id)
        ids.append(view.view_id)
        offsets.append(offset)
    group_ids: set[str] = set()
    unknown: VqauditError | None = None  # a group naming a view the benchmark lacks, raised after the views' checks
    for row, (_, _, group) in enumerate(iter_jsonl(require_regular(root, GROUPS_FILE), Group), start=1):
        group_ids.add(group.group_id)
        missing = [v for v in group.view_ids if v not in seen]
        if missing and unknown is None:  # row: the group's position among the groups, as load_benchmark counts
            unknown = VqauditError(f"{root / 'groups.jsonl'}: row {row}, field 'view_ids': unknown view {missing[0]!r}")
    del seen
    manifest_path = require_regular(root, MANIFEST_FILE)
    # Hashed before it is parsed: an import refuses to finish if the file changed since (check_unchanged), so the
    # hash run.json records is the manifest the views were checked against, never one written during the import.
    manifest_sha256 = sha256_file(manifest_path)
    manifest = read_json(manifest_path)
    if not isinstance(manifest, dict):  # a JSON list: one line naming the file, not a traceback
        raise VqauditError(f"{root / 'manifest.json'}: expected a JSON object, got a JSON {type(manifest).__name__}")
    if duplicate is not None:
        raise duplicate
    sources: set[str] = set()
    prompt_ids: set[str] = set()
    digest = hashlib.sha256()
    changed = VqauditError(f"{views_path}: changed while it was indexed; nothing was written (import again)")
    with views_path.open("rb") as handle:
        position = offset = 0
        for line in handle:
            digest.update(line)
            start, offset = offset, offset + len(line)
            if not line.strip():
                continue
            view = View.model_validate_json(line)
            position += 1
            # The ids and offsets come from the first pass; the digest checked against the manifest from this one:
            # both passes must have read the same lines, or rows would be joined to other views than were checked.
            if position > len(ids) or ids[position - 1] != view.view_id or offsets[position - 1] != start:
                raise changed
            check_view_row(root, position, view, group_ids, check_images=True)
            sources.add(view.source)
            prompt_ids.add(prompt_for(view)[0])
    if position != len(ids):
        raise changed
    if unknown is not None:
        raise unknown
    check_manifest_files(root, manifest)
    refuse_edited(root, manifest_problems(Benchmark(root=root, views=(), groups=(), manifest=manifest)))
    file = _ViewsFile(views_path, offsets, digest.hexdigest())
    index = ViewIndex(
        root, manifest, ids, file.read, file.stream, sources_in_order(sources), sorted(prompt_ids), manifest_sha256
    )
    return OpenViewIndex(index, file)


def check_unchanged(views: ViewIndex) -> None:
    """Refuse to finish an import when the benchmark's ``manifest.json`` changed since ``views`` was opened.

    ``views.jsonl`` itself is checked by :meth:`ViewIndex.iter_views` (its hash again), but a benchmark rebuilt
    or edited in place with its manifest rewritten to match would otherwise be recorded in ``run.json`` by the
    new manifest's hash, and ``score`` would then score the imported replies against views they were not
    checked against.

    Raises:
        VqauditError: naming ``manifest.json``: it changed while the predictions were imported.
    """
    path = views.root / MANIFEST_FILE
    if not path.is_file() or sha256_file(path) != views.manifest_sha256:
        raise VqauditError(f"{path}: changed while the predictions were imported; nothing was written (import again)")


def refuse_edited(bench_dir: Path, problems: Sequence[str]) -> None:
    """Refuse a benchmark whose ``views.jsonl`` or ``groups.jsonl`` does not match ``manifest.json``.

    ``problems``: :func:`~vqaudit.store.manifest_problems` of the benchmark.

    Raises:
        VqauditError: the first such problem, saying the benchmark was edited after it was built.
    """
    tampered = [p for p in problems if "views.jsonl" in p or "groups.jsonl" in p]
    if tampered:
        raise VqauditError(
            f"{bench_dir}: {tampered[0]}; the benchmark was edited after it was built (rebuild it, "
            "or check it with `vqaudit verify`)"
        )
