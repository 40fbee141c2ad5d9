"""One row of an official MM-UPD release file, read and checked (seed 001, §4).

A release file (parquet, or the TSV/CSV/.xlsx export) is read into records (:func:`read_rows`), each parsed into a
:class:`ReleaseRow` (:func:`parse_row`: index, type, question, options, answer, category; the image read as bytes
or as the digit text of an index reference), and a file whose every row ends with the option setting's added
option under a base or instruction name is refused (:func:`check_setting`). Pairing the rows into items and
checking their circular passes is :mod:`vqaudit.suites.upd.release`. Every problem raises a
:class:`VqauditError` naming the file, the 1-based row and the field.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.parsing.choice import normalize_text
from vqaudit.prompts.upd import EXTRA_OPTION, LETTERS
from vqaudit.suites.upd.table_files import cell_text, read_records
from vqaudit.suites.upd.table_files import row_error as _err
from vqaudit.textsafe import hidden_characters

_REQUIRED = ("index", "question", "A", "B", "answer", "category", "image", "type")
_OPTION_LETTERS = "ABCDE"


@dataclass(frozen=True)
class ReleaseRow:
    """One row of a release file (one pass of one side of one item)."""

    row: int
    index: int
    kind: str
    question: str
    hint: str
    options: tuple[str, ...]
    answer: str
    masked_answer: str
    category: str
    l2_category: str
    image: bytes
    source: str


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The records of a release file: a parquet's rows as pyarrow gives them, or a table file's rows as text.

    Raises:
        VqauditError: a missing or unreadable file, pyarrow missing for a parquet, or a required column missing.
    """
    if path.suffix.lower() == ".parquet":
        if not path.is_file():
            raise VqauditError(f"{path}: file not found")
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise VqauditError("reading parquet needs pyarrow: pip install 'vqaudit[parquet]'") from None
        try:
            rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
        except Exception as exc:  # noqa: BLE001 - pyarrow raises many types for a damaged file
            raise VqauditError(f"{path}: not a readable parquet file: {exc}") from None
        return rows
    header, records = read_records(path)
    missing = [c for c in _REQUIRED if c not in header]
    if missing:
        raise VqauditError(f"{path}: row 0 (header), field '{missing[0]}': required column is missing")
    return [dict(r) for r in records]


def _image(path: Path, row: int, value: Any) -> bytes | str:
    """Raw image bytes, or the digit text of an index reference."""
    if isinstance(value, dict):
        value = value.get("bytes")
    if isinstance(value, (bytes, bytearray)):
        data = bytes(value)
    else:
        text = cell_text(value)
        if text.isdigit():
            return text
        if not text:
            raise _err(path, row, "image", "missing image")
        try:
            data = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise _err(path, row, "image", "not valid base64") from None
    return data


def _check_answer(
    path: Path, row: int, kind: str, options: tuple[str, ...], answer: str, variant: str, setting: str
) -> None:
    letters = LETTERS[: len(options)]
    if (kind == "standard" or setting == "option") and (len(answer) != 1 or answer not in letters):
        raise _err(path, row, "answer", f"{answer!r} is not one of the options {', '.join(letters)}")
    if kind == "upd" and setting == "option":
        extra = EXTRA_OPTION[variant]
        named = options[letters.index(answer)]
        if normalize_text(named) != normalize_text(extra):
            raise _err(
                path,
                row,
                "answer",
                f"a UPD row of the option setting must answer the added option "
                f"{extra!r} (seed 001 §4), but {answer} is {named!r}",
            )


def parse_row(path: Path, row: int, rec: dict[str, Any], variant: str, setting: str) -> tuple[ReleaseRow, bytes | str]:
    """Record ``rec`` (row ``row``, 1-based) of a ``variant``/``setting`` file, and its image.

    Returns:
        The row (its ``image`` still empty) and the image: raw bytes, or the digit text of an index reference.

    Raises:
        VqauditError: a missing or malformed field (index, type, question, options, answer, category, image),
            naming the file, the row and the field.
    """
    for name in _REQUIRED:
        if name not in rec:
            raise _err(path, row, name, "missing")
    try:
        index = int(cell_text(rec["index"]))
    except ValueError:
        raise _err(path, row, "index", f"not an integer: {rec['index']!r}") from None
    if index < 0:
        raise _err(path, row, "index", f"negative index {index}")
    kind = cell_text(rec["type"]).lower()
    if kind not in ("standard", "upd"):
        raise _err(path, row, "type", f"expected 'standard' or 'upd', got {rec['type']!r}")
    question = cell_text(rec["question"])
    if not question:
        raise _err(path, row, "question", "empty question")
    values = [cell_text(rec.get(c)) for c in _OPTION_LETTERS]
    last = max((i for i, v in enumerate(values) if v), default=-1)
    for i in range(last + 1):
        if not values[i]:
            raise _err(path, row, _OPTION_LETTERS[i], f"option {_OPTION_LETTERS[i]} is empty but a later one is set")
        hidden = hidden_characters(values[i])  # the rule of the MMBench loader (suites/upd/tsv.py)
        if hidden:
            raise _err(
                path,
                row,
                _OPTION_LETTERS[i],
                f"option {_OPTION_LETTERS[i]} {values[i]!r} holds an invisible "
                f"or direction-changing character ({', '.join(hidden)}); "
                "remove it from the input",
            )
    options = tuple(values[: last + 1])
    if len(options) < 1 or (kind == "standard" and len(options) < 2):
        raise _err(path, row, "B", "too few options")
    answer = cell_text(rec["answer"])
    _check_answer(path, row, kind, options, answer, variant, setting)
    category = cell_text(rec["category"])
    if not category:
        raise _err(path, row, "category", "empty category")
    parsed = ReleaseRow(
        row=row,
        index=index,
        kind=kind,
        question=question,
        hint=cell_text(rec.get("hint")),
        options=options,
        answer=answer,
        masked_answer=cell_text(rec.get("masked_answer")),
        category=category,
        l2_category=cell_text(rec.get("l2-category")),
        image=b"",
        source=cell_text(rec.get("source")),
    )
    return parsed, _image(path, row, rec["image"])


ADDED_OPTIONS = frozenset(normalize_text(text) for text in EXTRA_OPTION.values())
"""The option setting's added options (seed 001 §4), normalised: "None of the above", "The image and question
are irrelevant."."""


def check_setting(path: Path, rows: list[ReleaseRow], variant: str, setting: str) -> None:
    """Refuse a base or instruction file whose every row ends with the option setting's added option.

    The setting comes from the file name (:func:`vqaudit.suites.upd.release.config_of`); in the option setting
    every question, standard and UPD, gets "None of the above" (AAD, IASD) or "The image and question are
    irrelevant." (IVQD) as its last option (seed 001 §4), which the base and instruction settings never add. One
    such option can be a real MMBench option; all rows ending with one is an option-setting file under another
    name (new-user trial: a copy of ``mmaad_option`` named ``mmiasd_base`` built as IASD/base).
    """
    if setting == "option" or not all(normalize_text(r.options[-1]) in ADDED_OPTIONS for r in rows):
        return
    first = rows[0]
    raise _err(
        path,
        first.row,
        _OPTION_LETTERS[len(first.options) - 1],
        f"every row's last option is the option setting's added option ({first.options[-1]!r}), but the "
        f"file name says {variant}/{setting}: an option-setting file under another name? (name it "
        f"mm{variant}_option_..., or give --variant and --setting with a name that says neither)",
    )
