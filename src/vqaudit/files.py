"""Byte-level file primitives every stage writes with: atomic files, JSON, JSON Lines, hashes.

Every write goes to a temporary file in the same folder and is renamed into place, so a killed process never
leaves a half-written file and never destroys the previous version. A whole folder is built the same way
(:func:`vqaudit.staging.staged_folder`): in a temporary sibling folder renamed into place when the build
succeeds, so a build that fails part-way leaves nothing that blocks or poisons a rerun. This module knows no
file names: the typed benchmark and run folders that do are :mod:`vqaudit.store`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import signal
import tempfile
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from vqaudit.errors import VqauditError
from vqaudit.signals import Terminated, TerminatedAfterWrite, output_written
from vqaudit.textsafe import encode_utf8, model_json_line, validate_json_line  # lone surrogates stay writable

M = TypeVar("M", bound=BaseModel)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_MODE = 0o666 & ~_umask()
"""The mode a plainly created file gets under the current umask (mkstemp alone would give 0600)."""
_DIR_MODE = 0o777 & ~_umask()
"""The mode a plainly created folder gets under the current umask (mkdtemp alone would give 0700)."""


def named_os_error(exc: OSError, path: Path) -> OSError:
    """``exc`` naming ``path`` when it names no file (a write failing for a full disk names none), else ``exc``.

    The result is of the same ``OSError`` subclass, with the same ``errno`` and message, so callers and the CLI's
    one-line report (``vqaudit.cli``) can say which file could not be written.
    """
    if exc.filename is not None or exc.errno is None:
        return exc
    return type(exc)(exc.errno, exc.strerror or str(exc), str(path))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file in the same folder, fsync, rename).

    Raises:
        OSError: the file cannot be written (naming ``path`` when the system's error names no file: a full disk).
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise named_os_error(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, _MODE)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise named_os_error(exc, path) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    r"""Write UTF-8 ``text`` to ``path`` atomically; a lone surrogate is written as ``\udXXX`` (see textsafe)."""
    atomic_write_bytes(path, encode_utf8(text))


def _temp_file(path: Path, chunks: Iterable[str]) -> Path:
    """Write the UTF-8 ``chunks`` to a new fsynced temporary file beside ``path``; return its path.

    Raises:
        OSError: naming ``path`` (:func:`named_os_error`).
    """
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise named_os_error(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in chunks:
                handle.write(encode_utf8(chunk))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, _MODE)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise named_os_error(exc, path) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


@contextmanager
def _signals_held() -> Iterator[None]:
    """Within the block SIGINT and SIGTERM are only recorded; once it ends they are raised again, in order.

    Python runs signal handlers in the main thread, between bytecodes, so a recording handler keeps the block
    whole; the handlers in place before (the CLI's Ctrl-C and SIGTERM handling) then act as usual. Outside the
    main thread no handler runs in this thread anyway, and the block runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda signum, frame: pending.append(signum)) for sig in held}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)  # None: not set from Python
        for signum in dict.fromkeys(pending):
            signal.raise_signal(signum)


def atomic_write_set(files: Sequence[tuple[Path, Iterable[str]]]) -> None:
    r"""Write several files of one folder as one set, so a stopped writer never leaves a mix of two versions.

    Every file is first written in full to a temporary file beside it (UTF-8, lone surrogates as ``\udXXX``,
    fsynced), while the old files stay as they were; a failure or a stop (Ctrl-C, SIGTERM) meanwhile removes the
    temporary files and changes nothing. Then the files are renamed into place one after another with SIGINT
    and SIGTERM held back (raised again once the last rename is done: :func:`_signals_held`). The **last** file
    of ``files`` is the set's marker (the file a reader checks first): its old version is removed before the
    others are renamed and the new one is renamed last, so even a process killed outright (SIGKILL) between two
    renames leaves a folder without the marker, visibly incomplete, never the new files beside an old marker.
    Right after the last rename, still with the signals held, a command inside
    :func:`vqaudit.signals.completes_on_write` is marked complete (a SIGTERM from then on exits 0).

    Args:
        files: ``(path, chunks)`` pairs in rename order, the marker last; ``chunks`` are the file's text.

    Raises:
        VqauditError: one of the paths is a folder (checked before anything is written).
        TerminatedAfterWrite: a SIGTERM held back during the renames raised :class:`vqaudit.signals.Terminated`
            (the CLI's handling) once the whole set was in place: the set is complete, and the caller may say so.
        BaseException: whatever writing or renaming raised, or a held signal raised otherwise (the temporary
            files are removed; after an error at a rename the folder is left without its marker).
    """
    if not files:
        return
    for path, _ in files:  # before anything is written: a folder in a file's place would stop the renames half-way
        if path.is_dir() and not path.is_symlink():
            raise VqauditError(f"{path}: a folder where this command writes a file; move it away and rerun")
    staged: list[tuple[Path, Path]] = []
    complete = False
    try:
        for path, chunks in files:
            path.parent.mkdir(parents=True, exist_ok=True)
            staged.append((_temp_file(path, chunks), path))
        with _signals_held():
            staged[-1][1].unlink(missing_ok=True)
            for tmp, path in staged:
                os.replace(tmp, path)
            complete = True
            output_written()  # signals still held: a command waiting for this set says its output is complete
    except Terminated as exc:
        if complete and not isinstance(exc, TerminatedAfterWrite):
            raise TerminatedAfterWrite from None
        _discard(staged)
        raise
    except BaseException:
        _discard(staged)
        raise


def _discard(staged: list[tuple[Path, Path]]) -> None:
    """Remove the temporary files of ``staged`` (those already renamed into place are gone: nothing to do)."""
    for tmp, _ in staged:
        tmp.unlink(missing_ok=True)


def json_ready(value: Any) -> Any:
    """``value`` with every NaN float as None (JSON has no NaN), tuples as lists and mapping keys as strings.

    Nested dicts, lists and tuples are converted recursively; other values are returned as they are.
    """
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    return value


def json_text(obj: Any) -> str:
    """``obj`` as the text :func:`write_json` writes: indented, key-sorted JSON and a final newline."""
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def jsonl_chunks(records: Iterable[BaseModel]) -> Iterator[str]:
    """The lines :func:`write_jsonl` writes (one compact JSON object and a newline per record), for a file set."""
    for record in records:
        yield model_json_line(record) + "\n"


def write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` as indented, key-sorted JSON atomically (byte-stable for equal objects)."""
    atomic_write_text(path, json_text(obj))


def read_json(path: Path) -> Any:
    """Read a JSON file. Raises VqauditError naming the file when it is missing, a folder, not UTF-8 or malformed."""
    try:
        data = path.read_bytes()
        return json.loads(data.decode("utf-8"))
    except FileNotFoundError:
        raise VqauditError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise VqauditError(f"{path}: a folder, not a JSON file") from None
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise VqauditError(
            f"{path}: not UTF-8 text (line {line}: byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start}); is it the JSON file vqaudit wrote?"
        ) from None
    except json.JSONDecodeError as exc:
        raise VqauditError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}") from None


def write_jsonl(path: Path, records: Iterable[BaseModel]) -> None:
    """Write records, one compact JSON object per line, atomically."""
    lines = [model_json_line(r) for r in records]
    atomic_write_text(path, "".join(line + "\n" for line in lines))


def read_jsonl(path: Path, model: type[M], *, surrogates: bool = False) -> list[M]:
    r"""Read a JSONL file of ``model`` records.

    ``surrogates``: accept lone-surrogate escapes (``\ud800``), as in files this package wrote from model
    replies (``outcomes.jsonl``); input files (views, groups) keep refusing them.

    Raises:
        VqauditError: naming the file, the 1-based row and the field of the first bad record.
    """
    return [record for _, _, record in iter_jsonl(path, model, surrogates=surrogates)]


def iter_jsonl(path: Path, model: type[M], *, surrogates: bool = False) -> Iterator[tuple[int, int, M]]:
    r"""``(row, offset, record)`` of every nonblank line of a JSONL file, parsed one line at a time.

    ``row`` is the 1-based line number (blank lines counted), ``offset`` the byte offset of the line's start, so
    ``handle.seek(offset); handle.readline()`` reads the record's line again. Lines are split at ``\n`` only.

    Raises:
        VqauditError: as :func:`read_jsonl` (the file missing; naming the file, row and field of a bad record),
            when the bad line is reached.
    """
    if not path.is_file():
        raise VqauditError(f"{path}: file not found")
    offset = 0
    with path.open("rb") as handle:
        for row, data in enumerate(handle, start=1):
            start, offset = offset, offset + len(data)
            try:
                line = data.decode("utf-8")
            except UnicodeDecodeError as exc:  # one line naming file, row and byte, not a raw UnicodeDecodeError
                raise VqauditError(
                    f"{path}: row {row}: not UTF-8 text (byte {exc.start + 1} of the row is 0x{data[exc.start]:02x})"
                ) from None
            if not line.strip():
                continue
            try:
                record = validate_json_line(model, line) if surrogates else model.model_validate_json(line)
            except ValidationError as exc:
                err = exc.errors()[0]
                field = ".".join(str(p) for p in err["loc"]) or "(record)"
                raise VqauditError(f"{path}: row {row}, field '{field}': {err['msg']}") from None
            yield row, start, record


def sha256_bytes(data: bytes) -> str:
    """SHA-256 hex digest of ``data``."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """SHA-256 hex digest of a file's bytes, read in 1 MiB chunks (a large ``views.jsonl`` is never held whole)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
