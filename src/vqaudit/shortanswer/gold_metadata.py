"""The gold file's own metadata fields, read strictly: TextVQA OCR tokens and InfographicVQA answer types.

Seed 002 appendix A counts the raw split from these fields (:mod:`vqaudit.shortanswer.raw_split`), and the
contract buckets read them (:mod:`vqaudit.scoring.contracts`: readout from OCR spans, multi-span from the answer
type), so a mistyped field would change counts silently; it is refused instead, naming the file, row and field.

- ``ocr_tokens``: a list of strings (TextVQA 0.5.1 and the mmf/LLaVA files: the Rosetta tokens), or absent/null;
  ``ocr_info`` (TextVQA's detailed form): a list of objects whose ``word`` is a string, read when ``ocr_tokens`` is
  absent.
- ``answer_type``: a list of strings (InfographicVQA's official files: ``["image span", "multiple spans"]``), or a
  single string, or absent/null.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError


def _kind(value: Any) -> str:
    """How an error names a JSON value's type."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return "null" if value is None else "a string"


def _strings(path: Path, row: int, field: str, value: list[Any]) -> tuple[str, ...]:
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise VqauditError(
                f"{path}: row {row}, field '{field}': item {i + 1} is {_kind(item)}, expected a list of strings"
            )
    return tuple(value)


def ocr_tokens(path: Path, row: int, rec: dict[str, Any]) -> tuple[str, ...]:
    """The OCR tokens of one TextVQA-style gold record (``()`` when it has none).

    Args:
        path: the gold file, named in errors.
        row: the record's 1-based row in the file.
        rec: the record.

    Returns:
        ``ocr_tokens`` as a tuple of strings; else the ``word`` of each ``ocr_info`` entry; else ``()``.

    Raises:
        VqauditError: ``ocr_tokens`` that is not a list of strings (a string, a number, a list holding null), or
            ``ocr_info`` that is not a list of objects with a string ``word`` (naming the file, row and field).
    """
    tokens = rec.get("ocr_tokens")
    if tokens is not None:
        if not isinstance(tokens, list):
            raise VqauditError(
                f"{path}: row {row}, field 'ocr_tokens': expected a list of strings, got {_kind(tokens)}"
            )
        return _strings(path, row, "ocr_tokens", tokens)
    info = rec.get("ocr_info")
    if info is None:
        return ()
    if not isinstance(info, list):
        raise VqauditError(f"{path}: row {row}, field 'ocr_info': expected a list of objects, got {_kind(info)}")
    words = []
    for i, entry in enumerate(info):
        word = entry.get("word") if isinstance(entry, dict) else None
        if not isinstance(word, str):
            raise VqauditError(
                f"{path}: row {row}, field 'ocr_info': item {i + 1} has no string 'word' "
                '(expected objects such as {"word": "STOP", ...})'
            )
        words.append(word)
    return tuple(words)


def answer_type(path: Path, row: int, rec: dict[str, Any]) -> str | None:
    """The answer type of one InfographicVQA-style gold record, a list joined with ``"|"`` (None when absent).

    Args:
        path: the gold file, named in errors.
        row: the record's 1-based row in the file.
        rec: the record.

    Returns:
        ``"image span|multiple spans"`` for ``["image span", "multiple spans"]``, the string itself for a string,
        None for a missing, null or empty field.

    Raises:
        VqauditError: a number, boolean or object, or a list holding anything but strings (naming the file, row
            and field).
    """
    raw = rec.get("answer_type")
    if raw is None or isinstance(raw, str):
        return raw or None
    if not isinstance(raw, list):
        raise VqauditError(
            f"{path}: row {row}, field 'answer_type': expected a list of strings such as "
            f'["image span"], got {_kind(raw)}'
        )
    return "|".join(_strings(path, row, "answer_type", raw)) or None
