"""A test oracle: VLMEvalKit's ``can_infer`` multiple-choice matcher, re-stated for comparison only.

Behaviour of ``vlmeval/utils/matching_util.py::can_infer`` at open-compass/VLMEvalKit commit 2cf2a36c (the file's
last change, 2026-06-25), re-written here from reading it (not copied), so that tests and
``benchmarks/bench_choice.py`` can compare vqaudit's extractor with it on every row:

1. ``can_infer_option``: an API failure string is unparsed; one of four refusal strings anywhere gives ``Z``;
   the reply with ``.()[],:;!*#{}`` turned into spaces is split on whitespace; when exactly one valid letter
   occurs as a token and it occurs among the last five tokens, it is the answer (so an article "A" near the end
   of a sentence is read as option A); when no letter occurs and ``Z`` does, ``Z``; else
   ``(?i)(?:correct\\s+)?answer\\s+is\\s+\\**([ABCD])\\**`` (note: case-insensitive, so "the answer is a dog"
   reads as A);
2. ``can_infer_text``: replies longer than twice the total option text are unparsed; else the one option whose
   lower-cased text occurs in the lower-cased reply.

Returns the letter, ``"Z"`` (refusal) or None.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_REFUSALS = (
    "Sorry, I can't help with images of people yet.",
    "I can't process this file.",
    "I'm sorry, but without the image provided",
    "Cannot determine the answer",
)
_VERBOSE = re.compile(r"(?i)(?:correct\s+)?answer\s+is\s+\**([ABCD])\**")


def _option(answer: str, choices: Mapping[str, str]) -> str | None:
    if "Failed to obtain answer via API" in answer:
        return None
    if any(r in answer for r in _REFUSALS):
        return "Z"
    tokens = re.sub(r"[.()\[\],:;!*#{}]", " ", answer).split()
    present = [c for c in choices if c in tokens]
    if len(present) == 1:
        for c in choices:
            if c in tokens and tokens.index(c) > len(tokens) - 5:
                return c
    elif not present and "Z" in tokens:
        return "Z"
    m = _VERBOSE.search(answer)
    if m and m.group(1).upper() in choices:
        return m.group(1).upper()
    return None


def _text(answer: str, choices: Mapping[str, str]) -> str | None:
    low = answer.lower()
    if len(low) > 2 * sum(len(str(v)) for v in choices.values()):
        return None
    hits = [k for k, v in choices.items() if str(v).lower() in low]
    return hits[0] if len(hits) == 1 else None


def can_infer(answer: str, choices: Mapping[str, str]) -> str | None:
    """VLMEvalKit's decision on one reply (module docstring): a letter, ``"Z"`` or None."""
    return _option(str(answer), choices) or _text(str(answer), choices)
