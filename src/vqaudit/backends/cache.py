"""SQLite response cache: every reply is stored as it arrives (batched by the runner), keyed by what produced it.

The key (``cache_key``) is the SHA-256 of the canonical JSON of model spec, prompt id, prompt text, image SHA-256
and generation parameters, so a changed model, prompt, image or parameter never reuses an old reply, and a run
killed at any point re-asks only what is missing. The key is the table's primary key: a reply is never stored
twice. A recorded error is replaced only on an explicit retry (``put(..., replace_error=True)``).

Views with identical inputs share one key and one reply; the ``view_keys`` table maps each view of the latest
run to its key, so every view finds its reply.

The database runs in WAL mode with ``synchronous=NORMAL``: a committed row survives the process being killed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from vqaudit.backends.base import GenerationParams
from vqaudit.errors import VqauditError
from vqaudit.schema import Response
from vqaudit.textsafe import encode_utf8, from_storage, to_storage

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    view_id TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_id TEXT NOT NULL,
    params TEXT NOT NULL,
    text TEXT,
    error TEXT,
    latency_s REAL NOT NULL,
    created INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    reasoning TEXT,
    finish_reason TEXT,
    usage TEXT
);
CREATE INDEX IF NOT EXISTS responses_created ON responses (created);
CREATE TABLE IF NOT EXISTS view_keys (
    view_id TEXT PRIMARY KEY,
    key TEXT NOT NULL
);
"""

_COLUMNS = "key, view_id, model, prompt_id, params, text, error, latency_s, reasoning, finish_reason, usage"
_ADDED = (("reasoning", "TEXT"), ("finish_reason", "TEXT"), ("usage", "TEXT"))
"""Columns added after the first cache format (a reasoning model's reply): an older cache gets them, as NULL,
when opened read-write, and reads them as NULL when opened read-only."""


def cache_key(
    model_spec: str,
    prompt_id: str,
    prompt: str,
    image_sha256: str,
    params: GenerationParams | Mapping[str, Any],
) -> str:
    """Return the cache key of one call: SHA-256 (hex) of the canonical JSON of its inputs.

    Args:
        model_spec: model spec string, e.g. ``openai:NAME@URL``.
        prompt_id: prompt template id.
        prompt: the full prompt text.
        image_sha256: SHA-256 (hex) of the image bytes.
        params: generation parameters (a GenerationParams or its ``as_dict()``).

    Returns:
        64 lowercase hex characters; equal inputs give equal keys, in any process.
    """
    params_dict = params.as_dict() if isinstance(params, GenerationParams) else dict(params)
    material = {
        "image_sha256": image_sha256,
        "model": model_spec,
        "params": params_dict,
        "prompt": prompt,
        "prompt_id": prompt_id,
    }
    canonical = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(encode_utf8(canonical)).hexdigest()  # a lone surrogate hashes as its JSON escape


def _blob_hex(value: object) -> str:
    """A BLOB (bytes) written into a text column by hand, as hex for :meth:`ResponseCache.content_sha256`."""
    if isinstance(value, bytes):
        return value.hex()
    raise TypeError(f"unexpected column value of type {type(value).__name__}")


def _row_to_response(row: tuple[Any, ...]) -> Response:
    key, view_id, model, prompt_id, params, text, error, latency_s, reasoning, finish_reason, usage = row
    return Response(
        view_id=view_id,
        model=model,
        prompt_id=prompt_id,
        params=json.loads(params),
        text=from_storage(text),
        error=from_storage(error),
        latency_s=latency_s,
        cache_key=key,
        reasoning=from_storage(reasoning),
        finish_reason=finish_reason,
        usage=None if usage is None else json.loads(usage),
    )


def _open(path: Path, read_only: bool) -> sqlite3.Connection:
    """A connection to ``path``: read-write (created if missing), or read-only (``mode=ro``, else immutable)."""
    if not read_only:
        return sqlite3.connect(path, timeout=30.0)
    uri = path.resolve().as_uri()
    try:
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=30.0)
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return conn
    except sqlite3.OperationalError:  # a WAL database on a read-only disk: no -shm index can be made there
        conn.close()
        if os.access(path.parent, os.W_OK):
            raise
        return sqlite3.connect(f"{uri}?immutable=1", uri=True, timeout=30.0)


_LOW_SPACE_BYTES = 4 * 2**20
"""Free space under which an SQLite I/O error is read as a full disk (SQLite reports a failed WAL or shared-memory
file extension as SQLITE_IOERR, not SQLITE_FULL)."""


def disk_problem(path: Path, exc: sqlite3.Error) -> str | None:
    """The one-line message for a cache that could not be written for lack of disk space or a disk error, or None.

    A full disk (``SQLITE_FULL``, or an I/O error with under 4 MiB free) and other I/O errors (``SQLITE_IOERR``
    and its extended codes) are not a damaged file: the message keeps the cache, whose replies are paid for, and
    says how to carry it to a disk with room; a rerun asks only the views still missing (the cache key).
    Other errors (not a database, a damaged file) give None.

    Args:
        path: the cache file.
        exc: what SQLite raised (``sqlite_errorcode``: the SQLite result code, extended codes included).
    """
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None or code & 0xFF not in (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR):
        return None
    try:
        free = shutil.disk_usage(path.parent).free
    except OSError:
        free = 0
    folder = path.parent
    if code & 0xFF == sqlite3.SQLITE_FULL or free < _LOW_SPACE_BYTES:
        return (
            f"{path}: the disk is full ({exc}; {free // 1024} KiB free). The replies stored so far are kept in "
            f"this file: free space and rerun the same command, or copy the run folder to a disk with room "
            f"(cp -a {folder} NEW_FOLDER) and rerun with --out NEW_FOLDER: a rerun asks only the views still "
            "missing. Do not delete responses.sqlite: it holds every reply already paid for"
        )
    return (
        f"{path}: the disk reported an error ({exc}). The file is kept: check the disk, then rerun the same "
        f"command (or copy the run folder elsewhere with cp -a {folder} NEW_FOLDER and rerun with --out "
        "NEW_FOLDER): a rerun asks only the views still missing. Do not delete responses.sqlite: it holds "
        "every reply already paid for"
    )


class ResponseCache:
    """One SQLite file of responses (usually ``<run dir>/responses.sqlite``). Use from one thread."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        """Open (creating if needed) the cache at ``path``.

        Args:
            path: the SQLite file; its folder must exist.
            read_only: open an existing cache for reading only (``report``'s check of a scored run): nothing is
                created or migrated, so a run folder on a read-only disk (a shared copy) can be read. Where
                SQLite cannot even open it read-only (a WAL database on a read-only file system has no room
                for its shared-memory index), it is opened as immutable: a read-only disk cannot be changing.

        Raises:
            VqauditError: the file is not an SQLite database, or is damaged (one line naming it).
        """
        self.path = path
        try:
            self._conn = _open(path, read_only)
            if not read_only:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA synchronous=NORMAL")
                with self._conn:
                    self._conn.executescript(_SCHEMA)
            self._conn.execute("SELECT key, text FROM responses LIMIT 1").fetchall()
            have = {row[1] for row in self._conn.execute("PRAGMA table_info(responses)")}
            missing = [(name, kind) for name, kind in _ADDED if name not in have]
            if missing and not read_only:
                with self._conn:
                    for name, kind in missing:
                        self._conn.execute(f"ALTER TABLE responses ADD COLUMN {name} {kind}")
                missing = []
            self._columns = ", ".join(
                f"NULL AS {c}" if any(c == m for m, _ in missing) else c for c in _COLUMNS.split(", ")
            )
        except sqlite3.DatabaseError as exc:  # not a database, or damaged: one line naming it, not a raw DatabaseError
            if hasattr(self, "_conn"):
                self._conn.close()
            disk = disk_problem(path, exc)
            if disk is not None:
                raise VqauditError(disk) from None
            raise VqauditError(
                f"{path}: not a readable response cache ({exc}); move it away and run again to ask the model afresh"
            ) from None

    def close(self) -> None:
        """Close the database connection."""
        self._conn.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def get(self, key: str) -> Response | None:
        """Return the response stored under ``key``, or None."""
        row = self._conn.execute(f"SELECT {self._columns} FROM responses WHERE key = ?", (key,)).fetchone()
        return None if row is None else _row_to_response(row)

    def put(self, response: Response, *, replace_error: bool = False) -> bool:
        """Store a response under ``response.cache_key`` and commit at once.

        Args:
            response: the response; its ``cache_key`` must be set.
            replace_error: when a row with the key already exists and records an error, replace it (an explicit
                retry). A stored reply (``text`` set) is never replaced.

        Returns:
            True if the row was written, False if an existing row was kept.

        Raises:
            ValueError: ``response.cache_key`` is empty.
        """
        return self.put_many([response], replace_error=replace_error) == 1

    def put_many(self, responses: Sequence[Response], *, replace_error: bool = False) -> int:
        """Store several responses in one transaction (one commit), each as :meth:`put` would.

        One commit per reply cost a WAL append and a commit each; the runner stores what arrived within
        :data:`vqaudit.backends.runner.FLUSH_S` together instead. Rows are written in the order given.

        Args:
            responses: responses with their ``cache_key`` set.
            replace_error: as in :meth:`put`.

        Returns:
            How many rows were written (a key already holding a reply, or an error without ``replace_error``, or
            a key earlier in ``responses``, is kept).

        Raises:
            ValueError: a response has no ``cache_key`` (nothing is written).
            VqauditError: the disk is full or failed (:func:`disk_problem`; this batch is not written, earlier
                ones are kept).
        """
        if any(not r.cache_key for r in responses):
            raise ValueError("response has no cache_key")
        try:
            return self._put_many(responses, replace_error)
        except sqlite3.OperationalError as exc:  # a full disk: the transaction is rolled back, earlier rows kept
            disk = disk_problem(self.path, exc)
            if disk is None:
                raise
            raise VqauditError(disk) from None

    def _put_many(self, responses: Sequence[Response], replace_error: bool) -> int:
        written = 0
        next_created = "(SELECT COALESCE(MAX(created), 0) + 1 FROM responses)"
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
        with self._conn:
            for response in responses:
                values = (
                    response.view_id,
                    response.model,
                    response.prompt_id,
                    json.dumps(response.params, sort_keys=True),
                    to_storage(response.text),  # a string holding a lone surrogate is stored as a lossless BLOB
                    to_storage(response.error),
                    response.latency_s,
                    to_storage(response.reasoning),
                    response.finish_reason,
                    None if response.usage is None else json.dumps(response.usage, sort_keys=True),
                    stamp,
                )
                cursor = self._conn.execute(
                    f"INSERT OR IGNORE INTO responses ({_COLUMNS}, created, created_at) "
                    f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {next_created}, ?)",
                    (response.cache_key, *values),
                )
                if cursor.rowcount != 1 and replace_error:
                    cursor = self._conn.execute(
                        "UPDATE responses SET view_id = ?, model = ?, prompt_id = ?, params = ?, text = ?, "
                        "error = ?, latency_s = ?, reasoning = ?, finish_reason = ?, usage = ?, "
                        f"created_at = ?, created = {next_created} WHERE key = ? AND error IS NOT NULL",
                        (*values, response.cache_key),
                    )
                written += cursor.rowcount == 1
        return written

    def keys(self) -> set[str]:
        """Return the keys of all stored responses."""
        return {row[0] for row in self._conn.execute("SELECT key FROM responses")}

    def error_keys(self) -> set[str]:
        """Return the keys of stored responses that record an error."""
        return {row[0] for row in self._conn.execute("SELECT key FROM responses WHERE error IS NOT NULL")}

    def responses(self) -> list[Response]:
        """Return all stored responses in insertion order (a replaced error counts as inserted when replaced)."""
        rows = self._conn.execute(f"SELECT {self._columns} FROM responses ORDER BY created")
        return [_row_to_response(row) for row in rows]

    def write_state(self) -> tuple[int, int, int]:
        """``(rows, rows recording an error, last write)``: the last write is the largest ``created`` counter.

        Every insert and every replaced error takes the next ``created`` value, so a changed cache has a larger
        last write (``vqaudit score`` records this triple to see later whether the replies changed).
        """
        row = self._conn.execute("SELECT COUNT(*), COUNT(error), COALESCE(MAX(created), 0) FROM responses").fetchone()
        return int(row[0]), int(row[1]), int(row[2])

    def written_after(self, created: int) -> int:
        """How many rows were inserted, or had their error replaced, after write counter ``created``."""
        return int(self._conn.execute("SELECT COUNT(*) FROM responses WHERE created > ?", (created,)).fetchone()[0])

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def set_view_keys(self, view_keys: Mapping[str, str]) -> None:
        """Replace the view -> key map with ``view_keys`` (the views of the current run), in one transaction."""
        with self._conn:
            self._conn.execute("DELETE FROM view_keys")
            self._conn.executemany("INSERT INTO view_keys (view_id, key) VALUES (?, ?)", view_keys.items())

    def add_view_keys(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Add ``(view_id, key)`` rows to the view -> key map, in one transaction (an import writes it in batches).

        Starting from an empty map, adding every view's row in batches leaves the rows :meth:`set_view_keys`
        writes in one (the same order, the same rowids).

        Raises:
            sqlite3.IntegrityError: a view already in the map.
        """
        with self._conn:
            self._conn.executemany("INSERT INTO view_keys (view_id, key) VALUES (?, ?)", pairs)

    def content_sha256(self) -> str:
        """SHA-256 of every stored row's content and of the view -> key map (``vqaudit score`` seals it).

        Rows in key order, each the JSON list of its columns (``key`` ... ``usage``, then the write counter
        ``created``; a column an older cache lacks reads as null), then the map sorted by view id. Any change to a
        stored reply, an ``UPDATE`` included, changes the digest.
        """
        digest = hashlib.sha256()
        for row in self._conn.execute(f"SELECT {self._columns}, created FROM responses ORDER BY key"):
            digest.update(json.dumps(list(row), default=_blob_hex).encode() + b"\n")
        digest.update(json.dumps(sorted(self.view_keys().items())).encode())
        return digest.hexdigest()

    def view_keys(self) -> dict[str, str]:
        """Return the view -> key map of the latest run (empty if none was recorded)."""
        return dict(self._conn.execute("SELECT view_id, key FROM view_keys").fetchall())
