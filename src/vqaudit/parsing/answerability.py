"""Tolerant extraction of the answerability JSON object and the strict validity rules (SPEC section 1).

Extraction is tolerant: the whole reply, then fenced code blocks, then the first ``{...}`` that decodes as a
JSON object anywhere in the text. Validity is strict (seed 000, appendix A): the object must have a boolean
``answerable``, an ``answer`` that is a string, a number or null, and a nonempty string ``reason``;
``answerable: false`` with a non-null answer is invalid. ``answerable: true`` with a null answer is a valid
*answer* decision whose answer is missing (it passes the decision and fails the answer). Invalid replies fail
everywhere and are counted separately. Parsing never raises on model output.
"""

from __future__ import annotations

import json
import re
from typing import Any

from vqaudit.schema import Parsed

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()


def extract_json_object(text: str) -> dict[str, Any] | None:
    """Find the JSON object in a reply: the whole text, a fenced block, or the first decodable ``{...}``.

    Args:
        text: the raw reply.

    Returns:
        The first JSON object found (a dict), or None when there is none. Never raises.
    """
    candidates = [text.strip(), *(m.strip() for m in _FENCE.findall(text))]
    for candidate in candidates:
        try:
            obj = json.loads(candidate)
        except (ValueError, RecursionError):  # JSONDecodeError, or an integer literal over 4300 digits
            continue
        if isinstance(obj, dict):
            return obj
    for match in re.finditer(r"\{", text):
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
        A :class:`Parsed` with decision ``answer``, ``abstain`` or ``invalid`` (with ``invalid_reason``), the
        answer as text (numbers keep their exact decimal text), the reason, and the raw text. Never raises.
    """
    if error is not None or text is None:
        return Parsed(decision="invalid", invalid_reason=f"no reply: {error or 'missing'}", raw=text)
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
