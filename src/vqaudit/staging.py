"""Folders built whole: a staging folder beside the output, renamed or moved into place when the build succeeds.

A whole folder is built in a temporary sibling folder (:func:`staged_folder`) renamed into place when the build
succeeds, so a build that fails part-way leaves nothing that blocks or poisons a rerun; a folder that may hold an
earlier version (a report folder) is updated entry by entry from one (:func:`staged_update`). The file-level
writes are :mod:`vqaudit.files`.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vqaudit.errors import VqauditError
from vqaudit.files import _DIR_MODE, _signals_held
from vqaudit.signals import sigterm_raises

_HOST = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
"""This machine in a staging folder's name: a process id means something only on the machine that made it."""


def _staging_prefix(out: Path) -> str:
    """``.NAME.`` + the owner tag ``HOST-PID.``: a staging folder names the machine and process building it."""
    return f".{out.name}.{_HOST}-{os.getpid()}."


def _staging_owner(out: Path, entry: Path) -> tuple[str, int] | None:
    """``(host, pid)`` of a sibling ``.NAME.HOST-PID.XXXX.building`` folder of ``out`` (None: not one of its own)."""
    prefix = f".{out.name}."
    if not (entry.name.startswith(prefix) and entry.name.endswith(".building")):
        return None
    tag = entry.name[len(prefix) : -len(".building")].split(".", 1)[0]
    host, sep, pid = tag.partition("-")
    if not sep or len(host) != 8 or not pid.isdecimal():
        return None  # a folder of an older version (no owner tag), or another name's
    return host, int(pid)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this machine (``kill(pid, 0)``; another user's process counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _clear_stale_staging(out: Path) -> None:
    """Remove the staging folders of ``out`` whose process is gone; refuse while a live one stages into ``out``.

    Only folders made on this machine are judged (a process id means nothing elsewhere); one made by a live
    process means two builds into one folder.

    Raises:
        VqauditError: another live process is building ``out`` now.
    """
    if not out.parent.is_dir():
        return
    for entry in out.parent.iterdir():
        owner = _staging_owner(out, entry)
        if owner is None or owner[0] != _HOST or owner[1] == os.getpid() or not entry.is_dir():
            continue
        if _alive(owner[1]):
            raise VqauditError(
                f"{out}: another process (pid {owner[1]}) is writing this folder now "
                f"({entry.name}); wait for it to finish, or choose another folder"
            )
        shutil.rmtree(entry, ignore_errors=True)  # left by a build killed outright (SIGKILL, a lost machine)


@contextmanager
def staged_folder(out: Path) -> Iterator[Path]:
    """Yield a new temporary folder beside ``out`` to build into; rename it to ``out`` when the block succeeds.

    The temporary folder is ``.NAME.HOST-PID.XXXX.building`` in ``out``'s parent (same file system, so the final
    rename is atomic; ``HOST`` is a hash of this machine's name and ``PID`` the building process). When the block
    raises (any exception, Ctrl-C included) the temporary folder is deleted and ``out`` is left as it was: a failed
    build never leaves a partial benchmark that blocks or poisons a rerun. SIGTERM raises ``SystemExit(143)``
    meanwhile (``vqaudit.signals``), so it cleans up too. Only a process killed outright (SIGKILL) can leave a
    hidden ``.building`` folder behind: the next build of ``out`` on this machine removes it once its process is
    gone, and refuses to start while that process still runs (two builds into one folder).

    Args:
        out: the folder to create; it must not exist, or be an empty folder (replaced at the end).

    Raises:
        VqauditError: ``out`` exists and is not an empty folder (checked before the block runs), another live
            process is building it, or it was filled while this build ran (the build is discarded).
    """
    if out.exists() and not out.is_dir():
        raise VqauditError(f"{out}: output path exists and is not a folder; choose a new folder")
    if out.is_dir() and any(out.iterdir()):
        raise VqauditError(f"{out}: output folder exists and is not empty; choose a new folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    _clear_stale_staging(out)
    tmp = Path(tempfile.mkdtemp(prefix=_staging_prefix(out), suffix=".building", dir=out.parent))
    with sigterm_raises():  # a SIGTERM (a batch scheduler's stop) cleans up like Ctrl-C
        try:
            os.chmod(tmp, _DIR_MODE)
            yield tmp
            try:
                if out.is_dir():
                    out.rmdir()  # empty when checked; fails if another process filled it meanwhile
                os.rename(tmp, out)
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
                    raise
                raise VqauditError(
                    f"{out}: another process wrote this folder while this build ran (two builds "
                    "into one folder?); this build was discarded: choose a new folder"
                ) from None
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise


@contextmanager
def staged_update(out: Path) -> Iterator[Path]:
    """Yield a new temporary folder beside ``out``; when the block succeeds, move what it wrote into ``out``.

    For outputs written into a folder that may already hold an earlier version (a report folder): everything is
    written in the temporary folder first, so a block that fails (a full disk, a truncated input, Ctrl-C) leaves
    ``out`` exactly as it was, or absent, never a partial report. On success each top-level entry replaces the
    entry of the same name in ``out`` (a folder is swapped as a whole: the old one is moved aside and deleted
    after), with SIGINT and SIGTERM held back; other entries of ``out`` are left alone. A new ``out`` is the
    temporary folder renamed. Relative links computed from the temporary folder hold in ``out``: it is a sibling.

    Raises:
        VqauditError: ``out`` exists and is not a folder, or holds a folder where the block wrote a file (or the
            reverse), checked before anything is moved; another live process is writing it.
    """
    if out.exists() and not out.is_dir():
        raise VqauditError(f"{out}: output path exists and is not a folder; choose a new folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    _clear_stale_staging(out)
    tmp = Path(tempfile.mkdtemp(prefix=_staging_prefix(out), suffix=".building", dir=out.parent))
    with sigterm_raises():
        try:
            os.chmod(tmp, _DIR_MODE)
            yield tmp
            if not out.exists():
                os.rename(tmp, out)
                return
            entries = sorted(tmp.iterdir())
            for entry in entries:
                dest = out / entry.name
                if dest.is_symlink() or (dest.exists() and dest.is_dir() != entry.is_dir()):
                    kind = "a link" if dest.is_symlink() else "a folder" if dest.is_dir() else "a file"
                    raise VqauditError(
                        f"{dest}: {kind} where this command writes "
                        f"{'a folder' if entry.is_dir() else 'a file'}; move it away and rerun"
                    )
            with _signals_held():
                for entry in entries:
                    dest = out / entry.name
                    if entry.is_dir() and dest.is_dir():
                        old = Path(tempfile.mkdtemp(prefix=f".{entry.name}.", suffix=".old", dir=out))
                        os.rename(dest, old / entry.name)
                        os.rename(entry, dest)
                        shutil.rmtree(old, ignore_errors=True)
                    else:
                        os.replace(entry, dest)
            tmp.rmdir()
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
