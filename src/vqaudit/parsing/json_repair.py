"""The repair pass of the answerability reader: one linear rewrite of a near-JSON object into strict JSON.

Outside strings a trailing comma is dropped and Python's ``True``/``False``/``None`` become JSON literals;
single-quoted and typographic-double-quoted strings become JSON strings holding exactly the same characters; a
double-quoted string is copied unchanged. Nothing is guessed: a string that never closes, a stray quote or an
object that never closes gives None. :mod:`vqaudit.parsing.answerability` marks a reply read only after this
pass ``decided_by = "json-repair"``.
"""

from __future__ import annotations

import json
import re

_REPAIR_TOKEN = re.compile(
    r'(?P<dq>"(?:[^"\\\n]|\\.)*")'
    r"|(?P<sq>'(?:[^'\\\n]|\\.)*')"
    r"|(?P<tq>\u201c[^\u201c\u201d\n]*\u201d)"
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<comma>,(?=[ \t\r\n]*[}\]]))"
    r"|(?P<open>[{\[])|(?P<close>[}\]])"
    r"|(?P<quote>[\"'\u201c\u201d])"
    r"|(?P<other>[^\"'\u201c\u201d{}\[\],A-Za-z_]+|,)"
)
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}


def _json_string(content: str) -> str:
    return json.dumps(content, ensure_ascii=False)


def repair_json(text: str, start: int = 0) -> str | None:
    r"""Rewrite the object starting at ``text[start]`` (a ``{``) into strict JSON; one linear scan.

    Outside strings: a comma before ``}`` or ``]`` is dropped; ``True``, ``False``, ``None`` become ``true``,
    ``false``, ``null``. A single-quoted string (Python's ``'...'``, with ``\'`` for a quote) and a string
    between typographic double quotes (U+201C ... U+201D) become JSON strings holding exactly the same
    characters; a double-quoted string is copied unchanged. The scan stops at the brace that closes the object.

    Args:
        text: the reply.
        start: the offset of the object's ``{``.

    Returns:
        The rewritten object text, or None when a string never closes, a stray quote is met, or the object never
        closes (nothing is guessed). Never raises.
    """
    out: list[str] = []
    depth = 0
    for m in _REPAIR_TOKEN.finditer(text, start):
        kind, tok = m.lastgroup, m.group(0)
        if kind == "quote":
            return None
        if kind == "sq":
            out.append(_py_single(tok))
        elif kind == "tq":
            out.append(_json_string(tok[1:-1]))
        elif kind == "word":
            out.append(_PY_LITERALS.get(tok, tok))
        elif kind == "comma":
            continue
        else:
            out.append(tok)
            if kind == "open":
                depth += 1
            elif kind == "close":
                depth -= 1
                if depth == 0:
                    return "".join(out)
    return None


def _py_single(tok: str) -> str:
    r"""The JSON string of a single-quoted string: the characters Python's ``'...'`` literal means.

    The escapes ``\'``, ``\\``, ``\"``, ``\n``, ``\t``, ``\r`` and ``\uXXXX`` are read; any other
    backslash is kept as written.
    """
    body = tok[1:-1]
    chars: list[str] = []
    i = 0
    simple = {"'": "'", '"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r"}
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in simple:
                chars.append(simple[nxt])
                i += 2
                continue
            if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", body[i + 2 : i + 6]):
                chars.append(chr(int(body[i + 2 : i + 6], 16)))
                i += 6
                continue
        chars.append(c)
        i += 1
    return _json_string("".join(chars))
