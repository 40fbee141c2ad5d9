"""The one reader of human-label files: a binary verdict per item id, for validating a judge against people.

Two commands read such files, each with its own id column and verdict words (:class:`LabelFormat`):

- ``vqaudit score RUN --judge J --labels FILE`` (MM-UPD, seed 001 App. 0.C.2, Fig. E): ``view_id`` and a label
  saying whether the model's reply to that view is right (:data:`VIEW_LABELS`);
- ``vqaudit audit PREDS --judge J --labels FILE`` (short-answer audit, seed 002 §3.3, Table 2): ``question_id``
  (or ``qid``) and a label saying whether the model's answer is acceptable (:data:`QUESTION_LABELS`).

A file is JSON Lines (``.jsonl``: one object per line) or CSV (``.tsv``: tab-separated; any other suffix:
comma-separated) with a header row, UTF-8 with or without a byte-order mark. Rows are 1-based: a JSONL file's
lines (blank lines skipped but counted), a CSV's records with the header as row 1. Every error is one
:class:`~vqaudit.errors.VqauditError` line naming the file, the row and the field.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from vqaudit.errors import VqauditError


@dataclass(frozen=True)
class LabelFormat:
    """What one command's labels file holds.

    Attributes:
        id_fields: the columns naming the item, in order of preference (the first present and non-empty is
            read); errors name the first.
        true_words: labels read as True (compared after ``strip().lower()``).
        false_words: labels read as False.
        expected: how an unreadable label's error states the accepted words.
    """

    id_fields: tuple[str, ...]
    true_words: frozenset[str]
    false_words: frozenset[str]
    expected: str


VIEW_LABELS = LabelFormat(
    ("view_id",),
    frozenset({"correct", "right", "true", "yes", "1"}),
    frozenset({"incorrect", "wrong", "false", "no", "0"}),
    "correct/incorrect (or true/false, yes/no, 1/0)",
)
"""MM-UPD views (``vqaudit score --labels``): is the model's reply to the view right."""

QUESTION_LABELS = LabelFormat(
    ("question_id", "qid"),
    frozenset({"1", "true", "yes", "y", "acceptable", "correct"}),
    frozenset({"0", "false", "no", "n", "unacceptable", "incorrect"}),
    "yes/no, true/false or 1/0",
)
"""Short-answer questions (``vqaudit audit --labels``): is the model's answer semantically acceptable."""


def _records(path: Path) -> list[tuple[int, Mapping[str, object]]]:
    records: list[tuple[int, Mapping[str, object]]] = []
    if path.suffix.lower() == ".jsonl":
        for row, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise VqauditError(f"{path}: row {row}: not valid JSON: {exc.msg}") from None
            if not isinstance(rec, dict):
                raise VqauditError(f"{path}: row {row}: expected a JSON object")
            records.append((row, rec))
        return records
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle, delimiter=delimiter)
        header: list[str] | None = None
        try:
            header = list(reader.fieldnames or [])
            for row, rec in enumerate(reader, start=2):
                if None in rec:  # DictReader files the fields past the header's under the key None
                    raise VqauditError(
                        f"{path}: row {row}: {len(header) + len(rec[None])} fields, the header has {len(header)} "
                        "(quote a label or id holding the delimiter)"
                    )
                records.append((row, rec))
        except csv.Error as exc:
            # the record being read when the reader failed: the header is row 1, data rows follow it
            row = 1 if header is None else len(records) + 2
            raise VqauditError(f"{path}: row {row}: not valid CSV/TSV: {exc}") from None
    return records


MAX_CELL_CHARS = 1_000
"""The longest id or label a label file may hold: both are short (an item id, a yes/no word), and a longer cell
is a wrong column or a broken file. Checked here, not left to the csv module, whose field limit is one setting
for the whole process (other readers raise it for base64 image cells)."""


def _check_length(path: Path, row: int, field: str, value: object) -> None:
    if isinstance(value, str) and len(value) > MAX_CELL_CHARS:
        raise VqauditError(
            f"{path}: row {row}, field '{field}': {len(value):,} characters, more than {MAX_CELL_CHARS:,} "
            "(an id or label is short: is this the right column?)"
        )


def _present(value: object) -> bool:
    return value is not None and value != ""


def read_label_file(path: Path, fmt: LabelFormat) -> dict[str, bool]:
    """Read a human-label file: one binary verdict per item id.

    Args:
        path: the labels file (module docstring: JSONL, CSV or TSV).
        fmt: its columns and words (:data:`VIEW_LABELS`, :data:`QUESTION_LABELS`).

    Returns:
        ``{item id (as a string): True | False}`` in file order.

    Raises:
        VqauditError: a missing, empty or non-UTF-8 file, invalid JSON or CSV, a row that is not an object, a
            missing or empty id or label, a label outside ``fmt``'s words, or an item labelled twice; the
            message names the file, row and field.
    """
    if not path.is_file():
        raise VqauditError(f"{path}: labels file not found")
    try:
        records = _records(path)
    except UnicodeDecodeError as exc:
        raise VqauditError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    id_field = fmt.id_fields[0]
    out: dict[str, bool] = {}
    first: dict[str, int] = {}
    for row, rec in records:
        item = next((rec[f] for f in fmt.id_fields if _present(rec.get(f))), None)
        if item is None:
            raise VqauditError(f"{path}: row {row}, field '{id_field}': missing")
        _check_length(path, row, id_field, item)
        _check_length(path, row, "label", rec.get("label"))
        if isinstance(item, (bool, list, dict)) or (isinstance(item, float) and not math.isfinite(item)):
            # a JSON true, [..], {..} or NaN is no id (the prediction readers refuse the same ids)
            raise VqauditError(f"{path}: row {row}, field '{id_field}': expected a string or a number, got {item!r}")
        if not _present(rec.get("label")):
            raise VqauditError(f"{path}: row {row}, field 'label': missing (leave unlabelled items out of the file)")
        key = str(item)
        if key in first:
            raise VqauditError(
                f"{path}: row {row}, field '{id_field}': {key!r} is labelled twice (first at row {first[key]})"
            )
        first[key] = row
        word = str(rec["label"]).strip().lower()
        if word not in fmt.true_words and word not in fmt.false_words:
            raise VqauditError(f"{path}: row {row}, field 'label': expected {fmt.expected}, got {rec['label']!r}")
        out[key] = word in fmt.true_words
    if not out:
        raise VqauditError(f"{path}: no labels in the file")
    return out
