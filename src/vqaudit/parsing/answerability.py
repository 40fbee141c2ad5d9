"""Tolerant extraction of the answerability JSON object and the strict validity rules (docs/papers.md, vocabulary).

Extraction is tolerant: the whole reply, then fenced code blocks, then the first ``{...}`` that decodes as a
JSON object anywhere in the text (of the first :data:`MAX_OBJECT_STARTS` places where an object can start).
Time is linear in the reply's length: a reply over :data:`MAX_REPLY_CHARS` characters is invalid with the reason
``too long`` without being searched, fences are found with one scan, and at most :data:`MAX_OBJECT_STARTS`
decodes (each one linear, deep nesting stopped by the decoder's recursion limit) are tried.

Validity is strict (seed 000, appendix A): the object must have a boolean ``answerable``, an ``answer`` that is
a string, a number or null, and a nonempty string ``reason``;
``answerable: false`` with a non-null answer is invalid. ``answerable: true`` with a null answer is a valid
*answer* decision whose answer is missing (it passes the decision and fails the answer). Invalid replies fail
everywhere and are counted separately. Parsing never raises on model output.
"""

from __future__ import annotations

import json
import re
from typing import Any

from vqaudit.schema import Parsed

_FENCE_TAG = re.compile(r"[a-zA-Z0-9_-]*")
_OBJECT_START = re.compile(r"\{\s*[\"}]")
_DECODER = json.JSONDecoder()

MAX_REPLY_CHARS = 16_384
"""Longest reply parsed, in characters (code points): 512 tokens (the ``max_tokens`` budget of every call, see
``GenerationParams``) times 32 characters, more than a token of common vocabularies averages even in degenerate
output (long runs of one character). A longer reply cannot come from a server that honours the budget; it comes
from a replay file, or a server that ignores ``max_tokens``, and is invalid with the reason ``too long``."""
MAX_OBJECT_STARTS = 16
"""How many places where a JSON object can start (``{`` then ``"`` or ``}``) the search decodes from, at most."""
TOO_LONG = "too long"
"""The ``invalid_reason`` of a reply over :data:`MAX_REPLY_CHARS` characters."""


def too_long(text: str) -> bool:
    """Whether a reply is over :data:`MAX_REPLY_CHARS` characters (and so invalid, reason :data:`TOO_LONG`)."""
    return len(text) > MAX_REPLY_CHARS


def fenced_blocks(text: str) -> list[str]:
    """The contents of the Markdown code fences of ``text``, stripped, in order; one linear scan.

    A fence opens with three backticks and an optional tag (letters, digits, ``_``, ``-``, e.g. ``json``) and
    closes at the next three backticks; an unclosed fence holds nothing (the old regular expression took time
    quadratic in the whitespace after an unclosed fence: 2.4 s for 16 KB).
    """
    blocks: list[str] = []
    pos = 0
    while (start := text.find("```", pos)) >= 0:
        body = _FENCE_TAG.match(text, start + 3)
        begin = body.end() if body else start + 3
        end = text.find("```", begin)
        if end < 0:
            break
        blocks.append(text[begin:end].strip())
        pos = end + 3
    return blocks


def extract_json_object(text: str) -> dict[str, Any] | None:
    """Find the JSON object in a reply: the whole text, a fenced block, or the first decodable ``{...}``.

    The ``{...}`` search decodes from the first :data:`MAX_OBJECT_STARTS` places where an object can start.
    Time is linear in ``len(text)``; callers cap the length first (:func:`too_long`).

    Args:
        text: the raw reply.

    Returns:
        The first JSON object found (a dict), or None when there is none. Never raises.
    """
    candidates = [text.strip(), *fenced_blocks(text)]
    for candidate in candidates:
        if not candidate.startswith("{"):  # only an object is wanted: skip the decode
            continue
        try:
            obj = json.loads(candidate)
        except (ValueError, RecursionError):  # JSONDecodeError, or an integer literal over 4300 digits
            continue
        if isinstance(obj, dict):
            return obj
    for n_tried, match in enumerate(_OBJECT_START.finditer(text)):
        if n_tried == MAX_OBJECT_STARTS:
            break
        try:
            obj, _ = _DECODER.raw_decode(text, match.start())
        except (ValueError, RecursionError):  # JSONDecodeError, or an integer literal over 4300 digits
            continue
        if isinstance(obj, dict):
            return obj
    return None


def _answer_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    return repr(value)  # float: repr round-trips exactly ("12.5", "0.1")


def parse_answerability(text: str | None, error: str | None = None) -> Parsed:
    """Parse one reply under the answerability contract.

    Args:
        text: the raw reply, or None when the backend returned none.
        error: the backend error recorded for the view, if any (the view is then invalid).

    Returns:
        A :class:`Parsed` with decision ``answer``, ``abstain`` or ``invalid`` (with ``invalid_reason``; a reply
        over :data:`MAX_REPLY_CHARS` characters is ``too long``), the answer as text (numbers keep their exact
        decimal text), the reason, and the raw text. Never raises; time linear in the reply's length.
    """
    if error is not None or text is None:
        return Parsed(decision="invalid", invalid_reason=f"no reply: {error or 'missing'}", raw=text)
    if too_long(text):
        return Parsed(decision="invalid", invalid_reason=TOO_LONG, raw=text)
    obj = extract_json_object(text)
    if obj is None:
        return Parsed(decision="invalid", invalid_reason="no JSON object in the reply", raw=text)
    missing = [k for k in ("answerable", "answer", "reason") if k not in obj]
    if missing:
        return Parsed(decision="invalid", invalid_reason=f"missing key(s): {', '.join(missing)}", raw=text)
    answerable, answer, reason = obj["answerable"], obj["answer"], obj["reason"]
    if not isinstance(answerable, bool):
        return Parsed(decision="invalid", invalid_reason="'answerable' is not a boolean", raw=text)
    if not isinstance(reason, str) or not reason.strip():
        return Parsed(decision="invalid", invalid_reason="'reason' is not a nonempty string", raw=text)
    if answer is not None and (isinstance(answer, bool) or not isinstance(answer, str | int | float)):
        return Parsed(decision="invalid", invalid_reason="'answer' is not a string, number or null", raw=text)
    if not answerable:
        if answer is not None:
            return Parsed(decision="invalid", invalid_reason="'answerable' is false but 'answer' is not null",
                          raw=text)
        return Parsed(decision="abstain", reason=reason, raw=text)
    return Parsed(decision="answer", answer=None if answer is None else _answer_text(answer), reason=reason,
                  raw=text)
