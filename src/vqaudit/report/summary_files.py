"""Typed field access into the JSON files ``vqaudit audit-summary`` combines (``report.json``, ``perturbations.json``).

Every failure is one :class:`~vqaudit.errors.VqauditError` naming the file and the field as a dotted path (e.g.
``contract_mix.scalar.errors``); a JSON ``null`` (the audit's NaN) reads as ``math.nan`` where a number is asked.
:mod:`vqaudit.report.audit_inputs` builds its records with it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.files import read_json


class FieldReader:
    """Typed field access into one parsed JSON file; every failure names the file and the dotted field."""

    def __init__(self, path: Path, data: Any) -> None:
        if not isinstance(data, dict):
            raise VqauditError(f"{path}: expected a JSON object")
        self.path = path
        self.data = data

    def get(self, dotted: str, *, optional: bool = False) -> Any:
        """The value at ``dotted`` (keys and list indices joined by dots); None when absent and ``optional``."""
        node: Any = self.data
        keys = dotted.split(".")
        for i, key in enumerate(keys):
            if isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
                continue
            if not isinstance(node, dict):
                raise VqauditError(f"{self.path}: field {'.'.join(keys[:i])!r}: expected an object, got {node!r}")
            if key not in node:
                if optional:
                    return None
                raise VqauditError(
                    f"{self.path}: field {dotted!r}: missing (written by an older vqaudit or "
                    "edited? rerun the command that wrote it)"
                )
            node = node[key]
        return node

    def text(self, dotted: str) -> str:
        """A string."""
        value = self.get(dotted)
        if not isinstance(value, str):
            raise VqauditError(f"{self.path}: field {dotted!r}: expected a string, got {value!r}")
        return value

    def number(self, dotted: str) -> float:
        """A number; null reads as NaN (the audit writes NaN as null)."""
        value = self.get(dotted)
        if value is None:
            return math.nan
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise VqauditError(f"{self.path}: field {dotted!r}: expected a number, got {value!r}")
        return float(value)

    def confusion(self, dotted: str) -> tuple[int, int, int, int] | None:
        """Confusion counts (tp, fp, fn, tn) at ``dotted`` (a 4-list) or its ``tp``..``tn`` fields; None if absent."""
        node = self.get(dotted, optional=True)
        if node is None:
            return None
        if isinstance(node, list):
            if len(node) != 4:
                raise VqauditError(f"{self.path}: field {dotted!r}: expected [tp, fp, fn, tn], got {node!r}")
            values = tuple(self.count(f"{dotted}.{i}") for i in range(4))
        elif isinstance(node, dict) and all(k in node for k in ("tp", "fp", "fn", "tn")):
            values = tuple(self.count(f"{dotted}.{k}") for k in ("tp", "fp", "fn", "tn"))
        else:
            return None  # written before the counts were recorded
        return values[0], values[1], values[2], values[3]

    def maybe_count(self, dotted: str) -> int | None:
        """A count, or None for null."""
        return None if self.get(dotted) is None else self.count(dotted)

    def integer(self, dotted: str) -> int:
        """An integer (not a boolean)."""
        value = self.get(dotted)
        if isinstance(value, bool) or not isinstance(value, int):
            raise VqauditError(f"{self.path}: field {dotted!r}: expected an integer, got {value!r}")
        return value

    def count(self, dotted: str) -> int:
        """An integer >= 0."""
        value = self.get(dotted)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise VqauditError(f"{self.path}: field {dotted!r}: expected a count (integer >= 0), got {value!r}")
        return value


_OTHER_KIND = {
    "report.json": (
        "perturbations.json",
        "it is a `vqaudit perturb` folder: give it after `--perturb`, one `--perturb FOLDER` per folder",
    ),
    "perturbations.json": ("report.json", "it is a `vqaudit audit` folder: give it without `--perturb`"),
}
"""For each file ``audit-summary`` reads, the other kind of folder's file and what to do when that one is found."""


def load_folder_file(folder: Path, name: str, hint: str) -> FieldReader:
    """``folder/name`` parsed and wrapped for typed reads.

    Raises:
        VqauditError: no such folder; no such file (naming the other kind of folder when its file is there, and
            ``hint`` otherwise); invalid JSON.
    """
    path = folder / name
    if not folder.is_dir():
        raise VqauditError(f"{folder}: folder not found")
    if not path.is_file():
        other, fix = _OTHER_KIND.get(name, ("", ""))
        if other and (folder / other).is_file():
            # `--perturb A B` takes only A (one value per option, as click reads options), so B arrives as an
            # audit folder: say which kind of folder it is rather than only "not an audit folder".
            raise VqauditError(f"{folder}: no {name} but a {other} in this folder ({fix})")
        raise VqauditError(f"{folder}: no {name} in this folder ({hint})")
    return FieldReader(path, read_json(path))
