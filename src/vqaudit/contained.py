"""Files a benchmark or run folder holds must be regular files inside it: the one check (:func:`contained_file`).

No component of such a file's path may be a symbolic link, a device, a FIFO or a socket, and the path may not be
absolute or hold ``..`` (``docs/architecture.md``, "Folder formats"). :mod:`vqaudit.store` checks every file of
a folder it loads with it, and imports these names for its callers.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from vqaudit.errors import VqauditError


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


def folder_hint(problem: str) -> str:
    """What to do about a :func:`contained_file` problem: a clause starting ``"; "`` that ends its error line."""
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
    raise VqauditError(f"{path}: {problem}{folder_hint(problem)}")
