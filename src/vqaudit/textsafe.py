r"""Any text a server can return, stored and written losslessly: lone UTF-16 surrogates.

A chat-completions body may hold a lone surrogate escaped (``"\ud800"`` decodes to the one code point U+D800)
or raw (the bytes ``ED A0 80``, which strict UTF-8 rejects). Python strings hold such code points, but UTF-8
cannot encode them, so SQLite, pydantic and ``str.encode`` refuse them. This module keeps them everywhere:

- **bodies** are decoded by :func:`decode_lenient` (strict UTF-8, else UTF-8 with surrogates passed through,
  else ``surrogateescape``: every byte sequence becomes a string, and encoding it back gives the same bytes);
  a high surrogate followed by a low one is the one character the pair encodes (CESU-8, as Java writes it),
  as JSON decoders read ``"\ud83d\ude00"`` (:func:`join_pairs`), so a stored string never holds such a pair;
- **SQLite** stores a string holding a surrogate as a BLOB of its ``surrogatepass`` UTF-8 bytes
  (:func:`to_storage` / :func:`from_storage`): the value reads back identical;
- **files** (JSON, JSONL, text) show each lone surrogate as the six ASCII characters ``\udXXX``
  (:func:`escape_surrogates`). Inside a JSON string that is the JSON escape of the same code point, so JSON and
  JSONL files read back identical (``json.loads``); in text files it is what a reader sees. (A high surrogate
  followed by a low one would read back as the character the pair encodes; :func:`join_pairs` has already
  made it that character.)
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError

M = TypeVar("M", bound=BaseModel)

_SURROGATE = re.compile("[\ud800-\udfff]")
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a code point in U+D800..U+DFFF (which UTF-8 cannot encode)."""
    return _SURROGATE.search(text) is not None


def escape_surrogates(text: str) -> str:
    r"""``text`` with each surrogate code point replaced by its escape ``\udXXX`` (6 ASCII characters).

    Args:
        text: any string.

    Returns:
        A string that UTF-8 can encode; ``text`` itself (same object) when it holds no surrogate. Linear time.
    """
    if not has_surrogate(text):
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def join_pairs(text: str) -> str:
    """``text`` with each high surrogate that is followed by a low surrogate joined with it into one character.

    Returns:
        ``text`` itself when it holds no surrogate; lone surrogates are kept. Linear time.
    """
    if not has_surrogate(text):
        return text
    return _PAIR.sub(lambda m: m.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le"), text)


def encode_utf8(text: str) -> bytes:
    r"""UTF-8 bytes of ``text``, surrogates written as ``\udXXX`` escapes (see :func:`escape_surrogates`)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return escape_surrogates(text).encode("utf-8")


def decode_lenient(data: bytes) -> str:
    """Decode bytes a server (or a replay file) sent, never failing and never losing a byte.

    Args:
        data: the raw bytes.

    Returns:
        The strict UTF-8 decoding when the bytes are UTF-8; else UTF-8 with encoded surrogates (``ED A0 80``)
        passed through as lone surrogates; else the ``surrogateescape`` decoding (each undecodable byte ``0xNN``
        becomes U+DCNN), never holding a surrogate pair (:func:`join_pairs`). ``data`` can be rebuilt from it:
        ``encode("utf-8", "surrogateescape")`` in the last case; in the second, the same with each joined pair
        written as its two 3-byte surrogates.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return join_pairs(data.decode("utf-8", "surrogatepass"))
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape")


def to_storage(text: str | None) -> str | bytes | None:
    """A value SQLite can store for ``text``: the string itself, or its ``surrogatepass`` UTF-8 bytes (a BLOB)."""
    if text is None or not has_surrogate(text):
        return text
    return text.encode("utf-8", "surrogatepass")


def from_storage(value: str | bytes | None) -> str | None:
    """The string :func:`to_storage` stored (a BLOB is decoded with ``surrogatepass``). Inverse of it."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogatepass")
    return value


def model_json_line(record: BaseModel) -> str:
    """One compact JSON line of a pydantic record, whatever strings it holds.

    Pydantic's own ``model_dump_json`` (used whenever it can) refuses a lone surrogate; such a record is dumped
    with ``json.dumps`` instead, and :func:`encode_utf8` (which ``files.atomic_write_text`` applies) writes its
    surrogates as JSON escapes.
    """
    try:
        return record.model_dump_json()
    except PydanticSerializationError:
        return json.dumps(record.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))


def validate_json_line(model: type[M], line: str) -> M:
    r"""Parse one JSON line into ``model``, accepting the ``\udXXX`` escapes :func:`model_json_line` writes.

    Pydantic's JSON parser rejects a lone-surrogate escape; such a line is read with ``json.loads`` and then
    validated, so what was written reads back identical.

    Raises:
        pydantic.ValidationError: the line is not valid JSON (pydantic's own error) or not a valid record.
    """
    try:
        return model.model_validate_json(line)
    except ValidationError as exc:
        if exc.errors()[0]["type"] != "json_invalid" or "\\ud" not in line.lower():
            raise
        try:
            data = json.loads(line)
        except ValueError:
            raise exc from None
        return model.model_validate(data)


_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})
"""Unicode general categories with no glyph of their own: controls, format characters (zero-width spaces and
joiners, the bidirectional embeddings, overrides, isolates and marks), private use, surrogates, unassigned code
points, line and paragraph separators (The Unicode Standard, §4.5 General Category)."""
_HIDDEN_EXTRA = frozenset(
    {
        0x034F,
        0x115F,
        0x1160,
        0x17B4,
        0x17B5,
        0x180E,
        0x2800,
        0x3164,
        0xFFA0,
        *range(0xFE00, 0xFE10),
        *range(0xE0100, 0xE01F0),
    }
)
"""Characters drawn as nothing though another category: the combining grapheme joiner, the Hangul fillers, the
Khmer inherent vowels, the Mongolian vowel separator, the blank Braille pattern and the variation selectors
(Unicode's Default_Ignorable_Code_Point property and the blank characters it leaves out)."""


_UNNAMED = {"Cc": "CONTROL CHARACTER", "Co": "PRIVATE USE CHARACTER", "Cs": "SURROGATE", "Cn": "UNASSIGNED"}


def hidden_characters(text: str) -> list[str]:
    """The characters of ``text`` that draw nothing or change the direction of what follows, as ``U+XXXX NAME``.

    A label holding one can look like another label, or like no label at all (a zero-width space, U+202E
    RIGHT-TO-LEFT OVERRIDE turning ``abc`` into ``cba`` on screen); a text made only of spaces is blank. Tab, line
    feed and carriage return lay text out and are not listed (an option may hold code); emoji are visible
    characters and are not listed either (whether a renderer's font can draw them is its own check).

    Returns:
        One entry per distinct offending character, in order of first appearance; ``["blank"]`` for a text
        that is empty or only whitespace; empty when the text is fine.
    """
    if not text.strip():
        return ["blank"]
    out: dict[str, None] = {}
    for ch in text:
        cp = ord(ch)
        category = unicodedata.category(ch)
        if (category in _HIDDEN_CATEGORIES and ch not in "\t\n\r") or cp in _HIDDEN_EXTRA:
            name = unicodedata.name(ch, "") or _UNNAMED.get(category, "UNNAMED")
            out.setdefault(f"U+{cp:04X} {name}")
    return list(out)
