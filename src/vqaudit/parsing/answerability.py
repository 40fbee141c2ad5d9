"""Tolerant extraction of the answerability JSON object and the strict validity rules (docs/papers.md, vocabulary).

Extraction is tolerant: the whole reply, then fenced code blocks, then the first ``{...}`` that decodes as a
JSON object anywhere in the text (of the first :data:`MAX_OBJECT_STARTS` places where an object can start).
Time is linear in the reply's length: a reply over :data:`MAX_REPLY_CHARS` characters is invalid with the reason
``too long`` without being searched, fences are found with one scan, and at most :data:`MAX_OBJECT_STARTS`
decodes (each one linear, deep nesting stopped by the decoder's recursion limit) are tried.

When no candidate decodes strictly, a repair pass (:func:`vqaudit.parsing.json_repair.repair_json`) rewrites the whole
reply, each fenced block and the first :data:`MAX_REPAIR_STARTS` object starts: trailing commas, Python
literals (``True``/``False``/``None``, single-quoted strings) and typographic double quotes, never changing the
content of a string; a reply read only after repair is marked ``decided_by = "json-repair"``.

Validity is strict (seed 000, appendix A): the object must have a boolean ``answerable``, an ``answer`` that is
a string, a number or null (the literals ``NaN`` and ``Infinity``, which Python's decoder accepts, are invalid, and
so is a number that overflows the float range, such as ``1e400``, which Python decodes as infinity), and a
``reason`` that holds a visible character (one made only of spaces and invisible characters such as U+200B is
empty);
``answerable: false`` with a non-null answer is invalid. ``answerable: true`` with a null answer is a valid
*answer* decision whose answer is missing (it passes the decision and fails the answer). Invalid replies fail
everywhere and are counted separately. Parsing never raises on model output.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from vqaudit.parsing.json_repair import repair_json
from vqaudit.parsing.reasoning import AUTO, NOT_FINISHED, ReasoningSplit, split_reasoning
from vqaudit.schema import Decision, Parsed

_FENCE_TAG = re.compile(r"[a-zA-Z0-9_-]*")
_OBJECT_START = re.compile(r"\{\s*[\"}]")


@dataclass(frozen=True)
class NonFinite:
    """A non-finite number of a reply (``NaN``, ``Infinity``, ``-Infinity``, ``1e400``), decoded as this marker.

    The constants are JavaScript's, which Python's decoder accepts; an overflowing number Python decodes as
    ``inf`` (``-1E999``: ``-inf``). An answer that is either is invalid (``'answer' is not a finite number``),
    wherever the object is read (answerability, the UPD matcher, the judges). ``name`` is the literal as written.
    """

    name: str


def _constant(name: str) -> NonFinite:
    return NonFinite(name)


def _float(literal: str) -> float | NonFinite:
    value = float(literal)
    return value if math.isfinite(value) else NonFinite(literal)


_DECODER = json.JSONDecoder(parse_constant=_constant, parse_float=_float)

MAX_REPLY_CHARS = 16_384
"""Longest reply parsed, in characters (code points): 512 tokens (the ``max_tokens`` budget of every call, see
``GenerationParams``) times 32 characters, more than a token of common vocabularies averages even in degenerate
output (long runs of one character). A longer reply cannot come from a server that honours the budget; it comes
from a replay file, or a server that ignores ``max_tokens``, and is invalid with the reason ``too long``."""
MAX_OBJECT_STARTS = 16
"""How many places where a JSON object can start (``{`` then ``"`` or ``}``) the search decodes from, at most."""
MAX_REPAIR_STARTS = 4
"""How many object starts (``{``) the repair pass rewrites from, at most; each rewrite is one linear scan."""
REPAIRED = "json-repair"
"""The ``decided_by`` of a reply whose object decoded only after :func:`repair_json`."""
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


def _repaired_candidates(text: str) -> list[tuple[str, int]]:
    starts: list[tuple[str, int]] = []
    stripped = text.strip()
    if stripped.startswith("{"):
        starts.append((stripped, 0))
    starts += [(b, 0) for b in fenced_blocks(text) if b.startswith("{")]
    for n, m in enumerate(re.finditer(r"\{", text)):
        if n == MAX_REPAIR_STARTS:
            break
        starts.append((text, m.start()))
    return starts


def extract_json_object_repaired(text: str) -> tuple[dict[str, Any] | None, bool]:
    """:func:`extract_json_object`, then, if it finds nothing, the repair pass of :func:`repair_json`.

    Returns:
        ``(object, repaired)``: the object (or None) and whether it needed the repair pass. Never raises.
    """
    obj = extract_json_object(text)
    if obj is not None:
        return obj, False
    for candidate, start in _repaired_candidates(text):
        fixed = repair_json(candidate, start)
        if fixed is None:
            continue
        try:
            value = json.loads(fixed, parse_constant=_constant, parse_float=_float)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value, True
    return None, False


def visible(text: str) -> bool:
    """Whether ``text`` holds a visible character.

    Spaces, controls and format characters (categories ``Z*``, ``Cc``, ``Cf``: U+200B, U+FEFF, U+2060, ...) and
    the blank fillers U+115F, U+1160, U+2800, U+3164, U+FFA0 are not visible; a lone surrogate, a private-use or
    an unassigned code point counts as visible (the reply carries something, see :mod:`vqaudit.textsafe`).
    """
    return any(c not in _BLANK_FILLERS and unicodedata.category(c) not in _INVISIBLE for c in text)


_BLANK_FILLERS = frozenset("\u115f\u1160\u2800\u3164\uffa0")
_INVISIBLE = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf"})


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
            obj = json.loads(candidate, parse_constant=_constant, parse_float=_float)
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


def parse_answerability(
    text: str | None,
    error: str | None = None,
    *,
    reasoning_format: str = AUTO,
    server_reasoning: str | None = None,
    finish_reason: str | None = None,
) -> Parsed:
    """Parse one reply under the answerability contract, reading only its final answer.

    The reply is first split by :func:`vqaudit.parsing.reasoning.split_reasoning`: a reasoning model's thinking
    (``<think>...</think>`` and the other formats there, or reasoning the server sent apart) is never read, so a
    draft object inside it can neither decide the view nor make it invalid; a reply whose thinking never closed
    (or empty content cut off by the token budget, ``finish_reason == "length"``) is invalid with the reason
    ``reasoning not finished``. A reply without reasoning is parsed exactly as it always was.

    Args:
        text: the raw reply (its content), or None when the backend returned none.
        error: the backend error recorded for the view, if any (the view is then invalid).
        reasoning_format: ``auto``, ``none`` or a format name of :mod:`vqaudit.parsing.reasoning`.
        server_reasoning: reasoning the server sent apart from the content (``Response.reasoning``), or None.
        finish_reason: why generation stopped, as the server said (``Response.finish_reason``), or None.

    Returns:
        A :class:`Parsed` with decision ``answer``, ``abstain`` or ``invalid`` (with ``invalid_reason``; a final
        answer over :data:`MAX_REPLY_CHARS` characters is ``too long``), the answer as text (a JSON number as the
        shortest text of its float value, Python's repr: ``12.50`` -> ``"12.5"``, ``1e2`` -> ``"100.0"``; the raw
        text keeps what was written), the reason, the raw text, the final text read and the reasoning's length in
        characters. Never raises on model output; time linear in the reply's length.
    """
    if error is not None:
        return Parsed(decision="invalid", invalid_reason=f"no reply: {error}", raw=text)
    return parse_split(
        text, split_reasoning(text, reasoning_format, server_reasoning=server_reasoning, finish_reason=finish_reason)
    )


def parse_split(text: str | None, split: ReasoningSplit) -> Parsed:
    """:func:`parse_answerability` of a reply already split (``split`` of ``text``; no recorded error).

    For a caller that also reads the reasoning (the draft decision), so the reply is split once.
    """
    if text is None and split.reasoning is None:
        return Parsed(decision="invalid", invalid_reason="no reply: missing", raw=text)
    chars = split.reasoning_chars
    if split.final is None:
        return Parsed(decision="invalid", invalid_reason=NOT_FINISHED, raw=text, reasoning_chars=chars)
    final = split.final
    return _parse_final(final).model_copy(update={"raw": text, "final": final, "reasoning_chars": chars})


def _parse_final(text: str) -> Parsed:
    """The contract's rules (module docstring) on the final text of a reply."""
    if too_long(text):
        return Parsed(decision="invalid", invalid_reason=TOO_LONG)
    obj, repaired = extract_json_object_repaired(text)
    if obj is None:
        return Parsed(decision="invalid", invalid_reason="no JSON object in the reply")
    return _decide(obj, REPAIRED if repaired else None)


def _decide(obj: dict[str, Any], by: str | None) -> Parsed:
    """The decision of one decoded object under the strict validity rules (seed 000, appendix A)."""
    missing = [k for k in ("answerable", "answer", "reason") if k not in obj]
    if missing:
        return Parsed(decision="invalid", invalid_reason=f"missing key(s): {', '.join(missing)}")
    answerable, answer, reason = obj["answerable"], obj["answer"], obj["reason"]
    if not isinstance(answerable, bool):
        return Parsed(decision="invalid", invalid_reason="'answerable' is not a boolean")
    if not isinstance(reason, str) or not visible(reason):
        return Parsed(decision="invalid", invalid_reason="'reason' is not a nonempty string", decided_by=by)
    if (
        answer is not None
        and not isinstance(answer, NonFinite)
        and (isinstance(answer, bool) or not isinstance(answer, str | int | float))
    ):
        return Parsed(decision="invalid", invalid_reason="'answer' is not a string, number or null", decided_by=by)
    if isinstance(answer, NonFinite):
        return Parsed(
            decision="invalid", invalid_reason="'answer' is not a finite number (NaN or Infinity)", decided_by=by
        )
    if not answerable:
        if answer is not None:
            return Parsed(
                decision="invalid", invalid_reason="'answerable' is false but 'answer' is not null", decided_by=by
            )
        return Parsed(decision="abstain", reason=reason, decided_by=by)
    return Parsed(
        decision="answer", answer=None if answer is None else _answer_text(answer), reason=reason, decided_by=by
    )


MAX_DRAFT_STARTS = 64
"""How many object starts, counted back from the end of the reasoning, :func:`draft_decision` decodes from."""


def draft_decision(reasoning: str | None) -> Decision | None:
    """The decision of the last complete, valid answerability object inside a reply's reasoning (its draft).

    A reasoning model often writes a draft of its answer while thinking and then changes its mind; the report
    counts views whose draft decision differs from the final one ("drafts overruled"). Only an object that is
    valid under the contract counts (an invalid draft decides nothing).

    Args:
        reasoning: the reasoning text (:attr:`vqaudit.parsing.reasoning.ReasoningSplit.reasoning`), or None.

    Returns:
        ``answer`` or ``abstain``, or None when the reasoning holds no valid object. Never raises; at most
        :data:`MAX_DRAFT_STARTS` decodes, each linear.
    """
    if not reasoning or "{" not in reasoning:
        return None
    starts = [m.start() for m in _OBJECT_START.finditer(reasoning)][-MAX_DRAFT_STARTS:]
    for start in reversed(starts):
        try:
            obj, _ = _DECODER.raw_decode(reasoning, start)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict) and "answerable" in obj:
            parsed = _decide(obj, None)
            if parsed.decision != "invalid":
                return parsed.decision
    return None
