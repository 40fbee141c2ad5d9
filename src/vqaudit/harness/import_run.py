"""The run folder an import writes, from the log's rows as they are read: memory bounded, rows as before.

The rows of a harness's log arrive in the log's order; the run stores one response per view in the benchmark's
order (``responses.created`` counts 1, 2, ... in ``views.jsonl`` order, as when every reply was held first). So
the rows go, in batches of :data:`BATCH` as they are read, into a spool: an SQLite table keyed by the view's
position, in a temporary folder, never in memory. A second row for one view is found there (the key) and refused
once the whole log has read without error, as before (the log's own refusals come first). Then the views are
streamed in file order, each joined with its spooled row (or recorded as "no prediction"), and the responses and
the view -> key map are written to ``responses.sqlite`` in batches of :data:`BATCH`. Held at once: one batch.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vqaudit import __version__
from vqaudit.backends import ResponseCache
from vqaudit.backends.cache import cache_key
from vqaudit.backends.runner import by_id_image_key
from vqaudit.errors import VqauditError
from vqaudit.files import sha256_file
from vqaudit.harness.common import GENERATION, ImportSummary, Prediction
from vqaudit.harness.view_index import ViewIndex, check_unchanged
from vqaudit.progress import track
from vqaudit.schema import Response, View
from vqaudit.staging import staged_folder
from vqaudit.store import RunFolder, RunInfo, relative_path
from vqaudit.suites.registry import prompt_for
from vqaudit.textsafe import from_storage, to_storage

BATCH = 2000
"""Rows spooled, and responses written, per transaction: the most held in memory at once."""


def write_imported_run(
    views: ViewIndex,
    predictions: Iterable[Prediction],
    *,
    pred_path: Path,
    harness: str,
    out: Path,
    origin: dict[str, Any] | None = None,
    batch: int = BATCH,
) -> ImportSummary:
    """Write a run folder holding the replies of ``predictions`` for the views of ``views``.

    Every view gets one response keyed as a ``replay:`` run keys it (model spec, prompt id, prompt, image
    SHA-256 + ``#VIEW_ID``, generation parameters) under the model ``HARNESS:FILE_NAME``; a view without a
    prediction gets an error response. ``run.json`` records the benchmark (absolute path, path relative to
    ``out``, manifest hash) and ``origin``: the harness, the file's absolute path and SHA-256, the rows read
    and the views without a row. ``predictions`` is consumed once, as the log is read.

    Args:
        views: the benchmark's views (:func:`~vqaudit.harness.view_index.open_view_index`).
        predictions: the file's rows, each naming a view of ``views`` (a reader's generator).
        pred_path: the prediction file.
        harness: the format name (``vlmevalkit``, ``lmms-eval``, ``inspect``).
        out: the run folder to create (must not exist, or be empty).
        origin: more fields for ``run.json``'s ``origin`` (e.g. the harness's own model name).
        batch: rows per spool transaction and responses per write (the most held at once); any size writes
            the same rows.

    Raises:
        VqauditError: whatever the reader raises; a view answered twice (naming the file, the second row and
            the view, once the log has read without error); ``out`` exists and is not an empty folder.
    """
    model = f"{harness}:{pred_path.name}"
    with tempfile.TemporaryDirectory(prefix="vqaudit-import-") as spool_dir:
        spool = sqlite3.connect(Path(spool_dir) / "rows.sqlite")
        try:
            spool.execute("PRAGMA journal_mode=OFF")
            spool.execute("PRAGMA synchronous=OFF")
            spool.execute("CREATE TABLE rows (pos INTEGER PRIMARY KEY, row INTEGER NOT NULL, text, error)")
            n_rows, n_errors = _spool(spool, views, predictions, pred_path, batch)
            return _write(spool, views, model, pred_path, harness, out, origin, batch, n_rows, n_errors)
        finally:
            spool.close()


def _spool(
    spool: sqlite3.Connection, views: ViewIndex, predictions: Iterable[Prediction], pred_path: Path, batch: int
) -> tuple[int, int]:
    """Store every row by view position; return (rows, rows recording a harness error).

    Raises:
        VqauditError: the reader's refusal, else the first view answered twice (as a dict keyed by view id did).
    """
    twice: VqauditError | None = None
    n_rows = n_errors = 0
    pending: list[Prediction] = []

    def flush() -> None:
        nonlocal twice
        with spool:
            for pred in pending:
                if twice is not None:
                    break
                cursor = spool.execute(
                    "INSERT OR IGNORE INTO rows (pos, row, text, error) VALUES (?, ?, ?, ?)",
                    (views.position(pred.view_id), pred.row, to_storage(pred.text), to_storage(pred.error)),
                )
                if cursor.rowcount != 1:
                    (first,) = spool.execute(
                        "SELECT row FROM rows WHERE pos = ?", (views.position(pred.view_id),)
                    ).fetchone()
                    twice = VqauditError(
                        f"{pred_path}: row {pred.row}: a second prediction for view {pred.view_id!r} "
                        f"(the first is row {first})"
                    )
        pending.clear()

    for pred in predictions:  # the reader raises its own refusals once the log is read; those come first
        n_rows += 1
        n_errors += pred.text is None
        if twice is None:
            pending.append(pred)
            if len(pending) >= batch:
                flush()
    flush()
    if twice is not None:
        raise twice
    return n_rows, n_errors


def _write(
    spool: sqlite3.Connection,
    views: ViewIndex,
    model: str,
    pred_path: Path,
    harness: str,
    out: Path,
    origin: dict[str, Any] | None,
    batch: int,
    n_rows: int,
    n_errors: int,
) -> ImportSummary:
    bench_root = views.root.resolve()
    started = _now()
    missing: list[str] = []
    with staged_folder(out) as tmp:
        folder = RunFolder(tmp)
        rows = spool.execute("SELECT pos, row, text, error FROM rows ORDER BY pos")
        spooled = rows.fetchone()
        with ResponseCache(folder.responses) as cache:
            responses: list[Response] = []

            def flush() -> None:
                cache.put_many(responses)
                cache.add_view_keys((r.view_id, r.cache_key) for r in responses)
                responses.clear()

            for pos, view in enumerate(track(views.iter_views(), f"import {pred_path.name} into {out}", len(views))):
                pred = None
                if spooled is not None and spooled[0] == pos:
                    _, row, text, error = spooled
                    pred = Prediction(row=row, view_id=view.view_id, text=from_storage(text), error=from_storage(error))
                    spooled = rows.fetchone()
                else:
                    missing.append(view.view_id)
                responses.append(_response(view, pred, model, pred_path, harness))
                if len(responses) >= batch:
                    flush()
            flush()
        file_sha256 = sha256_file(pred_path)
        check_unchanged(views)
        folder.write_info(
            RunInfo(
                model=model,
                model_identity=f"{harness}:sha256:{file_sha256}",
                benchmark=str(bench_root),
                benchmark_relative=relative_path(bench_root, out),
                benchmark_manifest_sha256=views.manifest_sha256,
                sources=views.sources,
                prompt_ids=views.prompt_ids,
                params=GENERATION.as_dict(),
                vqaudit_version=__version__,
                started=started,
                finished=_now(),
                n_views=len(views),
                n_cached=0,
                n_asked=0,
                n_errors=n_errors + len(missing),
                origin={
                    "harness": harness,
                    "file": str(pred_path.resolve()),
                    "file_sha256": file_sha256,
                    "n_rows": n_rows,
                    "missing_view_ids": missing,
                    **(origin or {}),
                },
            )
        )
    return ImportSummary(
        out_dir=out,
        model=model,
        n_views=len(views),
        n_replies=n_rows - n_errors,
        n_errors=n_errors,
        missing=tuple(missing),
    )


def _response(view: View, pred: Prediction | None, model: str, pred_path: Path, harness: str) -> Response:
    prompt_id, prompt = prompt_for(view)
    key = cache_key(model, prompt_id, prompt, by_id_image_key(view.image_sha256, view.view_id), GENERATION)
    text: str | None
    error: str | None
    if pred is None:
        text, error = None, f"no prediction for this view in {pred_path.name} ({harness})"
    else:
        text, error = pred.text, pred.error
        if text is None and not error:
            error = f"{harness} recorded no reply for this view"
    return Response(
        view_id=view.view_id,
        model=model,
        prompt_id=prompt_id,
        params=GENERATION.as_dict(),
        text=text,
        error=error,
        cache_key=key,
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
