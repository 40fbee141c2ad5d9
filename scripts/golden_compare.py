#!/usr/bin/env python3
"""Compare two golden-output recordings of ``scripts/golden_outputs.py``.

Usage::

    python scripts/golden_compare.py BEFORE AFTER

Prints a unified diff of ``MANIFEST.txt`` (commands, exit codes, normalised stdout/stderr, file hashes) and of
every text file (UTF-8 decodable) whose bytes differ, and one line for every binary file that differs or exists on
one side only. Exit 0 when the two recordings are identical, 1 otherwise.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path


def _text(path: Path) -> list[str] | None:
    try:
        return path.read_bytes().decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return None


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def main() -> int:
    """Print the differences between BEFORE and AFTER; return 0 if there are none, else 1."""
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    before, after = Path(sys.argv[1]), Path(sys.argv[2])
    for root in (before, after):
        if not (root / "MANIFEST.txt").is_file():
            print(f"{root}: no MANIFEST.txt (not a golden_outputs.py recording)", file=sys.stderr)
            return 2
    a, b = _files(before), _files(after)
    names = sorted(a | b, key=lambda n: (n != "MANIFEST.txt", n))
    differ = 0
    for name in names:
        if name not in b or name not in a:
            print(f"only in {before if name in a else after}: {name}")
            differ += 1
            continue
        old, new = (before / name).read_bytes(), (after / name).read_bytes()
        if old == new:
            continue
        differ += 1
        old_lines, new_lines = _text(before / name), _text(after / name)
        if old_lines is None or new_lines is None:
            print(f"binary files differ: {name}")
            continue
        sys.stdout.writelines(difflib.unified_diff(old_lines, new_lines, f"before/{name}", f"after/{name}"))
        if old_lines and not old_lines[-1].endswith("\n") or new_lines and not new_lines[-1].endswith("\n"):
            print()
    print(f"{differ} of {len(names)} files differ", file=sys.stderr)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
