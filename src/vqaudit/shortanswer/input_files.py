"""Reading an input file the user named: a regular file (not a folder or a pipe), UTF-8 text, readable gzip.

Each refusal is one line naming the file (and the line where known); shared by the gold loaders
(:mod:`.loaders`) and the prediction readers (:mod:`.importers`, :mod:`.mc_read`).
"""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError


def check_input_file(path: Path, what: str) -> None:
    """Refuse an input path that is not a regular file, saying what it is (missing, a folder, a pipe or device).

    Args:
        path: the path given on the command line.
        what: what the file is for ("gold file", "prediction file").

    Raises:
        VqauditError: naming the path and what it is instead of a file.
    """
    if path.is_file():
        return
    if path.is_dir():
        raise VqauditError(f"{path}: is a folder, not a {what} (give the file inside it)")
    if path.exists():
        raise VqauditError(
            f"{path}: not a regular file (a pipe or device, such as /dev/stdin or <(...)); save the "
            f"{what} to a file and give that"
        )
    raise VqauditError(f"{path}: {what} not found")


def undecodable_line(path: Path) -> int | None:
    """The 1-based line of ``path`` (decompressed when ``.gz``) holding its first byte that is not UTF-8, or None."""
    try:
        if path.suffix.lower() == ".gz":
            with gzip.open(path, "rb") as handle:
                data = handle.read()
        else:
            data = path.read_bytes()
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return data.count(b"\n", 0, exc.start) + 1
    except (OSError, EOFError, zlib.error):
        return None
    return None


def read_json_file(path: Path) -> Any:
    """The JSON value of a gold file (``.gz`` decompressed; UTF-8 with an optional byte order mark).

    Raises:
        VqauditError: not a regular file, not JSON, not UTF-8 or not readable gzip (naming the file, and the line
            where known).
    """
    check_input_file(path, "gold file")
    try:
        if path.suffix.lower() == ".gz":
            with gzip.open(path, "rt", encoding="utf-8-sig") as handle:
                return json.loads(handle.read())
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise VqauditError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}") from None
    except UnicodeDecodeError as exc:
        line = undecodable_line(path)
        at = f"line {line}: " if line is not None else ""
        raise VqauditError(f"{path}: {at}not UTF-8 text ({exc.reason}); save the file as UTF-8") from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise VqauditError(f"{path}: not a readable gzip file ({gzip_reason(exc)})") from None


def gzip_reason(exc: BaseException) -> str:
    """What is wrong with a gzip file, from the exception of reading it (truncated, not gzip, corrupt)."""
    if isinstance(exc, EOFError):
        return "it ends before the end of the compressed data: the file is truncated"
    if isinstance(exc, gzip.BadGzipFile):
        return f"it is not gzip data: {exc}"
    return f"the compressed data is corrupt: {exc}"
