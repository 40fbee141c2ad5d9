"""Reading an HTTP provider's reply body: what every provider's readers share.

JSON with bounded integers (:func:`read_json`), token counts (:func:`count`), text parts joined
(:func:`join_texts`), and the text a non-2xx body shows in a recorded error (:func:`body_text`,
:func:`error_message`, :func:`error_snippet`: the API key masked before the first 300 characters are kept). A 2xx
body a provider's reader refuses raises :class:`MalformedBody`, which the template retries
(:mod:`vqaudit.backends.http_base`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from vqaudit.backends.redact import mask_secret
from vqaudit.textsafe import decode_lenient, join_pairs

_SNIPPET_CHARS = 300
_MASK_SCAN_BYTES = 65_536
"""How much of an error body is decoded and masked before its first 300 characters are kept."""
MAX_USAGE_TOKENS = 2**53 - 1
"""Largest token count kept from a reply's usage (the largest integer a JSON reader of any language holds
exactly); a larger or non-integer count is ignored."""
_MAX_INT_DIGITS = 20
"""Integers in a body longer than this are read as not-a-count (a hostile 5,000-digit number would otherwise make
Python's ``int`` refuse the whole body: the integer string conversion length limit)."""


class MalformedBody(Exception):
    """A 2xx reply whose body is not a reply of the provider's API with text (or a reasoning model's cut reply)."""


def read_json(body: bytes) -> Any:
    """A body parsed as JSON; an integer of over 20 digits reads as NaN (not a count).

    Decoded with :func:`vqaudit.textsafe.decode_lenient`: a raw lone surrogate or other bytes that are not UTF-8
    are kept as lone surrogates, not refused.

    Raises:
        MalformedBody: the body is not JSON (or nested beyond the recursion limit).
    """
    try:
        return json.loads(decode_lenient(body), parse_int=_parse_int)
    except (ValueError, RecursionError):
        raise MalformedBody("body is not JSON") from None


def _parse_int(text: str) -> int | float:
    """A JSON integer, or NaN (not a count) when longer than :data:`_MAX_INT_DIGITS` characters."""
    return int(text) if len(text) <= _MAX_INT_DIGITS else float("nan")


def count(value: object) -> int | None:
    """A token count: an int (not a bool) from 0 to :data:`MAX_USAGE_TOKENS`, else None."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_USAGE_TOKENS:
        return value
    return None


def join_texts(texts: Sequence[str]) -> str:
    """Text parts joined in order (a surrogate pair split across two parts is joined into its character)."""
    return join_pairs("".join(texts))


def error_snippet(text: str, secret: str | None) -> str:
    """The first 300 characters of an error body's text, masked first (the key and any 8-character run of it)."""
    return mask_secret(text[:_MASK_SCAN_BYTES], secret)[:_SNIPPET_CHARS].strip()


def body_text(body: bytes) -> str:
    """The first 64 KiB of a body as text (bytes that are not UTF-8 replaced): what an error shows by default."""
    return body[:_MASK_SCAN_BYTES].decode("utf-8", "replace")


def error_message(body: bytes, label: str) -> str | None:
    """``LABEL: MESSAGE`` from a JSON error body ``{"error": {LABEL: ..., "message": ...}}``, else None.

    The shape both Anthropic (``error.type``) and Google (``error.status``) APIs answer errors in; a body over 64
    KiB, not JSON, or of another shape gives None (the caller shows the raw body).
    """
    if len(body) > _MASK_SCAN_BYTES:
        return None
    try:
        error = read_json(body).get("error")
    except (MalformedBody, AttributeError):
        return None
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        return None
    kind = error.get(label)
    return f"{kind}: {error['message']}" if isinstance(kind, str) else error["message"]
