"""A text log read one line at a time, with the lines and text of reading it whole.

The harness readers read a log's bytes with :func:`vqaudit.textsafe.decode_lenient` (never failing, never losing
a byte) and split the text with ``str.splitlines``; :func:`lenient_lines` gives the same lines while holding one
line of the file at a time, so a log of any length is read in memory bounded by its longest line;
:func:`json_lines` reads a JSON Lines log that way wherever the whole-text reader would read it as JSON Lines.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from itertools import chain
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.textsafe import join_pairs


def lenient_decoder(path: Path) -> Callable[[bytes], str]:
    r"""What :func:`~vqaudit.textsafe.decode_lenient` of the whole file does, as a decoder of its lines.

    ``decode_lenient`` picks one decoding for all the bytes (strict UTF-8, else UTF-8 passing surrogates, else
    ``surrogateescape``); the file is read once, a line at a time, to pick the same one. Bytes decode as a whole
    exactly when each of their ``\n``-ended pieces does, and each piece decoded on its own gives the same text as
    its part of the whole: no UTF-8 sequence (surrogates included) holds the byte ``\n``, and a surrogate pair is
    two neighbouring characters of one line.
    """
    for errors in ("strict", "surrogatepass"):
        try:
            with path.open("rb") as handle:
                for piece in handle:
                    piece.decode("utf-8", errors)
        except UnicodeDecodeError:
            continue
        if errors == "strict":
            return lambda data: data.decode("utf-8")
        return lambda data: join_pairs(data.decode("utf-8", "surrogatepass"))
    return lambda data: data.decode("utf-8", "surrogateescape")


def lenient_lines(path: Path, decode: Callable[[bytes], str]) -> Iterator[str]:
    r"""The lines of the decoded file as ``str.splitlines`` of its whole text gives them, one ``\n`` piece at a time.

    ``splitlines`` of the whole text is the concatenation of ``splitlines`` of its pieces that end at ``\n``
    (a ``\r\n`` pair never spans two pieces; every other line end is one character).
    """
    with path.open("rb") as handle:
        for piece in handle:
            yield from decode(piece).splitlines()


def json_lines(path: Path) -> Iterator[tuple[int, Any]] | None:
    """The records of a JSON Lines log read line by line, or None where the whole text must be read.

    The whole-text reader (:func:`vqaudit.harness.lmms_eval.read`) reads a file starting with ``{`` as JSON Lines
    unless the whole text is one JSON object with a ``logs`` key. When the first line starts with ``{``,
    is a complete JSON value and some later line holds a character that is not whitespace, the whole text is
    not one JSON value (the parser stops where the first line's value ends, and what follows is no JSON
    whitespace): it is JSON Lines, and is read one line at a time with the rows and errors of the whole-text
    reader. Any other file (a first line that is not a complete value, a single line, a JSON list) gives None.
    """
    lines = lenient_lines(path, lenient_decoder(path))
    first = next(lines, None)
    if first is None or not first.startswith("{"):
        return None
    try:
        sample = json.loads(first)
    except (ValueError, RecursionError):
        return None
    held: list[str] = []  # blank lines after the first, until a line that is not blank
    for line in lines:
        held.append(line)
        if line.strip():
            return _json_rows(path, sample, held, lines)
    return None


def _json_rows(path: Path, first: Any, held: list[str], lines: Iterator[str]) -> Iterator[tuple[int, Any]]:
    """Row 1's ``first`` record, then the records of ``held`` and ``lines`` (rows 2, 3, ...), blank rows skipped.

    Raises:
        VqauditError: a line is not JSON (naming its row).
    """
    yield 1, first
    for row, line in enumerate(chain(held, lines), start=2):
        if line.strip():
            try:
                sample = json.loads(line)
            except (ValueError, RecursionError) as exc:
                raise VqauditError(f"{path}: row {row}: not valid JSON: {exc}") from None
            yield row, sample
