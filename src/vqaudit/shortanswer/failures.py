"""Failure notes of Table 13 (seed 002 appendix I): empty, truncated and formatting failures, counted apart.

Table 13 asks for "empty outputs, partial answers, and formatting failures, reported separately from semantic
mismatch". The rules here are deterministic heuristics on the output text alone (no gold):

- ``empty``: nothing but whitespace;
- ``truncated`` (a partial answer): ends with ``...`` / ``…``, has unbalanced brackets or an odd number of
  double quotes, or is longer than :data:`LONG_WORDS` words and stops without final punctuation (the shape of
  an output cut at the token limit);
- formatting, one count per kind (a row may have several): ``sentence`` (more than :data:`SENTENCE_WORDS`
  words), ``wrapper`` (a leading answer wrapper such as "The answer is"), ``trailing-punctuation``,
  ``markdown`` (``**``, backticks, a leading ``#`` or bullet), ``multi-line``, ``quoted``;
- ``abstention``: an explicit refusal or "Unanswerable" (VizWiz's instruction asks for it); ``unanswerable``
  counts only outputs that *are* the VizWiz abstention answer ("unanswerable" after vqaEval normalization).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from vqaudit.scoring.canonical import strip_wrapper
from vqaudit.scoring.vqa_normalize import PUNCTUATION, fast_vqaeval_process

LONG_WORDS = 20
SENTENCE_WORDS = 5
FORMAT_KINDS: tuple[str, ...] = ("sentence", "wrapper", "trailing-punctuation", "markdown", "multi-line", "quoted")

_ABSTAIN = re.compile(
    r"^\s*(?:unanswerable|unknown|not answerable|cannot be determined|can ?not be determined|"
    r"it is not possible|not possible to (?:determine|tell|answer)|i (?:cannot|can't|can not|am unable to)\b|"
    r"there is no (?:way|information)|n/a\b)",
    re.IGNORECASE,
)
_MARKDOWN = re.compile(r"\*\*|`|^\s*(?:#|[-*] )", re.MULTILINE)
_DROP_PUNCT = dict.fromkeys(map(ord, "".join(PUNCTUATION) + "."))
_TRAILING_NUMBER_PERIOD = re.compile(r"\d\.$")


def is_unanswerable(text: str) -> bool:
    """True when the vqaEval-normalized output is exactly "unanswerable" (VizWiz's abstention answer).

    vqaEval normalization only deletes punctuation and periods, replaces them with spaces, drops articles and
    maps number words, so its result can be the one word "unanswerable" only if the lower-cased text holds
    those letters once punctuation is deleted; that cheap test runs first.
    """
    low = text.lower()
    if "w" not in low or "b" not in low or "unanswerable" not in low.translate(_DROP_PUNCT):
        return False
    return fast_vqaeval_process(text) == "unanswerable"


@dataclass(frozen=True)
class FailureNotes:
    """Counts over ``n`` outputs; ``formatting`` maps each of :data:`FORMAT_KINDS` to a count."""

    n: int
    empty: int
    truncated: int
    abstention: int
    unanswerable: int
    formatting: dict[str, int]
    any_formatting: int


def is_truncated(text: str) -> bool:
    """The truncation heuristic of the module docstring."""
    return _truncated(text.strip())


def _truncated(t: str) -> bool:
    """:func:`is_truncated` of a stripped text."""
    if not t:
        return False
    if t.endswith("...") or t.endswith("\u2026"):
        return True
    if t.count("(") != t.count(")") or t.count("[") != t.count("]") or t.count('"') % 2 == 1:
        return True
    return t[-1].isalnum() and len(t.split(maxsplit=LONG_WORDS)) > LONG_WORDS


def formatting_kinds(text: str) -> tuple[str, ...]:
    """The formatting kinds of one output (module docstring), in :data:`FORMAT_KINDS` order."""
    return _formatting(text.strip())


def _formatting(t: str) -> tuple[str, ...]:
    """:func:`formatting_kinds` of a stripped text."""
    if not t:
        return ()
    kinds = []
    sentence = len(t.split(maxsplit=SENTENCE_WORDS)) > SENTENCE_WORDS  # more words; splits 5 times at most
    if sentence:
        kinds.append("sentence")
    if strip_wrapper(t) != t:
        kinds.append("wrapper")
    if t[-1] in ".,;:!?" and not _TRAILING_NUMBER_PERIOD.search(t[-3:]) and not sentence:
        kinds.append("trailing-punctuation")
    if ("*" in t or "`" in t or "#" in t or "-" in t) and _MARKDOWN.search(t):  # each branch needs one of them
        kinds.append("markdown")
    if "\n" in t:
        kinds.append("multi-line")
    if len(t) >= 2 and t[0] in "\"'\u201c" and t[-1] in "\"'\u201d":
        kinds.append("quoted")
    return tuple(kinds)


def failure_notes(outputs: Sequence[str]) -> FailureNotes:
    """Count empty, truncated, abstaining and badly formatted outputs.

    Args:
        outputs: raw model outputs.

    Returns:
        The :class:`FailureNotes`.
    """
    fmt = dict.fromkeys(FORMAT_KINDS, 0)
    any_fmt = 0
    empty = truncated = abstain = unanswerable = 0
    for text in outputs:
        t = text.strip()
        if not t:
            empty += 1
            continue
        truncated += _truncated(t)
        abstain += bool(_ABSTAIN.match(text))
        unanswerable += is_unanswerable(text)
        kinds = _formatting(t)
        if kinds:
            any_fmt += 1
            for k in kinds:
                fmt[k] += 1
    return FailureNotes(len(outputs), empty, truncated, abstain, unanswerable, fmt, any_fmt)
