"""One writer per run folder: an exclusive OS lock (``fcntl.flock``) held while a run writes the folder.

Two ``vqaudit run`` processes started together on one ``--out`` with different models used to both pass the
one-model check (each read ``run.json`` before the other wrote it) and fill one folder with both models' replies.
Now a run takes ``FOLDER/.vqaudit.lock`` before it reads ``run.json`` and holds it until it has written the
final ``run.json``; a second run on the folder fails at once with one line naming the holder (a VqauditError:
the CLI prints it and exits 2).

The lock is the kernel's, not the file's existence: it is released when the holder closes it or dies in any way
(SIGKILL included), so a stale lock file of a dead process is simply taken over, and there is nothing to clean
up. The file itself stays (removing it would race with a process that has just opened it); it holds the
holder's pid, host, command and start time, for the message. ``flock`` is advisory and works between processes
on one machine's local file systems (and on NFS where the client maps it to POSIX locks).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from vqaudit.errors import VqauditError

LOCK_FILE = ".vqaudit.lock"
"""Name of the lock file inside a locked folder."""


def ensure_folder(folder: Path) -> None:
    """Create ``folder`` (and its parents) if needed.

    Raises:
        VqauditError: ``folder`` (or a parent) exists and is not a folder, or cannot be created; one line.
    """
    if folder.exists() and not folder.is_dir():
        raise VqauditError(f"{folder}: exists and is not a folder; choose another --out")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise VqauditError(f"{folder}: cannot create the folder ({exc.strerror or type(exc).__name__})") from None


def _holder(fd: int) -> str:
    try:
        data = json.loads(os.pread(fd, 4096, 0).decode("utf-8", "replace") or "{}")
    except ValueError:
        data = {}
    if not isinstance(data, dict) or "pid" not in data:
        return "another vqaudit process"
    return (
        f"{data.get('command', 'vqaudit')} (pid {data.get('pid')} on {data.get('host', '?')}, "
        f"since {data.get('started', '?')})"
    )


@contextmanager
def folder_lock(folder: Path, command: str, kind: str = "run folder", *, busy: str | None = None) -> Iterator[Path]:
    """Hold the exclusive lock of ``folder`` for the block (creating the folder and lock file if needed).

    Never waits: when another process holds the lock, it raises at once.

    Args:
        folder: the folder to lock (a run folder).
        command: what holds the lock, shown to a process that finds it taken (e.g. ``"vqaudit run --model X"``).
        kind: what the folder is, for that message (``"run folder"``, ``"audit folder"``).
        busy: what to do when the lock is taken, for that message (default: wait, or use another ``--out``).

    Yields:
        The path of the lock file.

    Raises:
        VqauditError: another process (or another open of the same file in this process) holds the lock; or
            ``folder`` cannot be created or the lock file opened.
    """
    ensure_folder(folder)
    path = folder / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        raise VqauditError(f"{path}: cannot open the lock file ({exc.strerror or type(exc).__name__})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            advice = busy or "wait for it to finish, or use another --out"
            raise VqauditError(
                f"{folder}: {_holder(fd)} is writing this {kind}; {advice} (one {kind} is written by one process "
                "at a time)"
            ) from None
        record = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "command": command,
            "started": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(record, ensure_ascii=True).encode("ascii") + b"\n", 0)
        yield path
    finally:
        os.close(fd)  # releases the lock
