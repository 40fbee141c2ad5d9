"""Byte-level file primitives every stage writes with: atomic files and folders, JSON, JSON Lines, hashes.

Every write goes to a temporary file in the same folder and is renamed into place, so a killed process never
leaves a half-written file and never destroys the previous version. A whole folder is built the same way
(:func:`staged_folder`): in a temporary sibling folder renamed into place when the build succeeds, so a build
that fails part-way leaves nothing that blocks or poisons a rerun. This module knows no file names: the typed
benchmark and run folders that do are :mod:`vqaudit.store`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from vqaudit.errors import VqauditError
from vqaudit.signals import Terminated, TerminatedAfterWrite, output_written, sigterm_raises
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


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file in the same folder, fsync, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, _MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def staged_folder(out: Path) -> Iterator[Path]:
    """Yield a new temporary folder beside ``out`` to build into; rename it to ``out`` when the block succeeds.

    The temporary folder is ``.NAME.XXXX.building`` in ``out``'s parent (same file system, so the final rename
    is atomic). When the block raises (any exception, Ctrl-C included) the temporary folder is deleted and
    ``out`` is left as it was: a failed build never leaves a partial benchmark that blocks or poisons a rerun.
    SIGTERM raises ``SystemExit(143)`` meanwhile (``vqaudit.signals``), so it cleans up too.
    Only a process killed outright (SIGKILL) can leave a hidden ``.building`` folder behind; it never blocks a
    rerun and may be deleted.

    Args:
        out: the folder to create; it must not exist, or be an empty folder (replaced at the end).

    Raises:
        VqauditError: ``out`` exists and is not an empty folder (checked before the block runs).
    """
    if out.exists() and not out.is_dir():
        raise VqauditError(f"{out}: output path exists and is not a folder; choose a new folder")
    if out.is_dir() and any(out.iterdir()):
        raise VqauditError(f"{out}: output folder exists and is not empty; choose a new folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".building", dir=out.parent))
    with sigterm_raises():  # a SIGTERM (a batch scheduler's stop) cleans up like Ctrl-C
        try:
            os.chmod(tmp, _DIR_MODE)
            yield tmp
            if out.is_dir():
                out.rmdir()  # empty when checked; OSError (and the build discarded) if filled meanwhile
            os.rename(tmp, out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise


def atomic_write_text(path: Path, text: str) -> None:
    r"""Write UTF-8 ``text`` to ``path`` atomically; a lone surrogate is written as ``\udXXX`` (see textsafe)."""
    atomic_write_bytes(path, encode_utf8(text))


def _temp_file(path: Path, chunks: Iterable[str]) -> Path:
    """Write the UTF-8 ``chunks`` to a new fsynced temporary file beside ``path``; return its path."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in chunks:
                handle.write(encode_utf8(chunk))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, _MODE)
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
        TerminatedAfterWrite: a SIGTERM held back during the renames raised :class:`vqaudit.signals.Terminated`
            (the CLI's handling) once the whole set was in place: the set is complete, and the caller may say so.
        BaseException: whatever writing or renaming raised, or a held signal raised otherwise (the temporary
            files are removed; after an error at a rename the folder is left without its marker).
    """
    if not files:
        return
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


def write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` as indented, key-sorted JSON atomically (byte-stable for equal objects)."""
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def read_json(path: Path) -> Any:
    """Read a JSON file. Raises VqauditError naming the file when it is missing or malformed."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise VqauditError(f"{path}: file not found") from None
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
    if not path.is_file():
        raise VqauditError(f"{path}: file not found")
    out: list[M] = []
    with path.open("rb") as handle:
        for row, data in enumerate(handle, start=1):
            try:
                line = data.decode("utf-8")
            except UnicodeDecodeError as exc:  # one line naming file, row and byte, not a raw UnicodeDecodeError
                raise VqauditError(f"{path}: row {row}: not UTF-8 text (byte {exc.start + 1} of the row is "
                                   f"0x{data[exc.start]:02x})") from None
            if not line.strip():
                continue
            try:
                out.append(validate_json_line(model, line) if surrogates else model.model_validate_json(line))
            except ValidationError as exc:
                err = exc.errors()[0]
                field = ".".join(str(p) for p in err["loc"]) or "(record)"
                raise VqauditError(f"{path}: row {row}, field '{field}': {err['msg']}") from None
    return out


def sha256_bytes(data: bytes) -> str:
    """SHA-256 hex digest of ``data``."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """SHA-256 hex digest of a file's bytes."""
    return sha256_bytes(path.read_bytes())
