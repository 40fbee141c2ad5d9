"""A text log read one line at a time, with the lines and text of reading it whole.

The harness readers read a log's bytes with :func:`vqaudit.textsafe.decode_lenient` (never failing, never losing
a byte) and split the text with ``str.splitlines``; :func:`lenient_lines` gives the same lines while holding one
line of the file at a time, so a log of any length is read in memory bounded by its longest line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

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
