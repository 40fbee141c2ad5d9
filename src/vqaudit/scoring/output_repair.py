"""Output-only contract repair: the conservative, gold-blind rewrite of a model output (seed 002 §5.4, Table 7).

The rules are those of :mod:`vqaudit.scoring.repair` (its module docstring): answer wrappers, enclosing quotes /
asterisks and trailing punctuation go, Unicode dashes become ``-``; a *scalar* item whose output is a sentence of
at least :data:`SENTENCE_WORDS` words (and not itself a date) holding exactly one number keeps that number (a
leading "Yes,"/"No," keeps yes/no); an *identifier* item whose output holds exactly one code-shaped token keeps
that token. :func:`repair_output` rewrites one output (memoized); :func:`repair_outputs` a whole column, the same
strings, with the canonical string steps inlined and their no-op cases decided by cheap tests.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from vqaudit.scoring.canonical_text import (
    _BOXED,
    _DASHES,
    _LEAD_CHARS,
    _TAIL_CHARS,
    _WRAPPER,
    _closing,
    strip_trailing,
    strip_wrapper,
    unify_dashes,
)
from vqaudit.scoring.contracts import is_scalar_answer

SENTENCE_WORDS = 4
"""Number/code extraction only touches outputs of at least this many words (a sentence, not a short answer)."""

_DIGIT = re.compile(r"\d")

# The leading lookahead names the only possible first characters; it changes no match but lets the scan skip the
# other positions quickly (about 1.7x faster on long answers).
_NUM_TOKEN = re.compile(r"(?=[-+$\d])(?<![\w.])[-+]?\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\s?%?(?![\w])")
_CODE_TOKEN = re.compile(
    r"(?<![\w-])(?:[A-Za-z0-9]+-[A-Za-z0-9-]*\d[A-Za-z0-9-]*|[A-Za-z]+\d[A-Za-z0-9]*|\d+[A-Za-z]+"
    r"[A-Za-z0-9]*|[A-Za-z0-9]*\d[A-Za-z0-9]*-[A-Za-z0-9]+)(?![\w-])"
)
_YESNO = re.compile(r"^(yes|no)\b[\s,.!]", re.IGNORECASE)


def _basic(text: str) -> str:  # not memoized: repair_output is, and a prediction rarely meets two buckets
    out = strip_trailing(strip_wrapper(unify_dashes(text)))
    return out if out else text.strip()


@lru_cache(maxsize=262144)
def repair_output(prediction: str, bucket: str) -> str:
    """Conservative output rewrite of one prediction for a contract bucket (module docstring rules).

    Args:
        prediction: the raw model output.
        bucket: the item's contract bucket (``scalar``, ``readout``, ``identifier``, ``multi-span``,
            ``other-open``).

    Returns:
        The rewritten output (the input itself when no rule applies).
    """
    out = _basic(prediction)
    if len(out.split(maxsplit=SENTENCE_WORDS - 1)) < SENTENCE_WORDS:  # fewer words; splits 3 times at most
        return out
    if bucket == "scalar":
        return _scalar_sentence(out)
    if bucket == "identifier":
        codes = _CODE_TOKEN.findall(out) if _DIGIT.search(out) else []
        if len(codes) == 1:
            return str(codes[0])
    return out


def repair_outputs(predictions: Sequence[str], buckets: Sequence[str]) -> list[str]:
    """``repair_output(p, b)`` of every row ``(p, b)``, in row order (the same strings), without the memo.

    The steps of :func:`repair_output` (``unify_dashes``, ``strip_wrapper``, ``strip_trailing``, the sentence
    rules) run inline in one loop: an ASCII text is its own ``unify_dashes``; a stripped text whose first
    character is no quote/asterisk and whose last is no trailing mark is its own ``strip_trailing`` (only
    whitespace, quotes, backticks, asterisks and ``.,;:!?`` are ever removed, and the stripped text has no
    surrounding whitespace), and of a text ending in one period after two alphanumerics it removes just that
    period (no single-letter word precedes it, so neither "U.S." rule applies).

    Args:
        predictions: raw model outputs.
        buckets: the contract bucket of each row (same length).

    Returns:
        One rewritten output per row.

    Raises:
        ValueError: columns of different lengths.
    """
    out: list[str] = []
    append = out.append
    wrapper = _WRAPPER.match
    boxed = _BOXED.match
    nfkc = unicodedata.normalize
    lead, tail = _LEAD_CHARS, _TAIL_CHARS
    digit = _DIGIT.search
    for prediction, bucket in zip(predictions, buckets, strict=True):
        t = (prediction if prediction.isascii() else nfkc("NFKC", prediction).translate(_DASHES)).strip()
        m = wrapper(t)
        if m:
            t = t[m.end() :]
        elif "answer is" in t.lower():
            closing = _closing(t)
            if closing is not None:
                t = closing
        if t.startswith("\\boxed{"):
            box = boxed(t)
            if box:
                t = box.group(1).strip()
        if t and (t[-1] in tail or t[0] in lead or t[-1].isspace() or t[0].isspace()):
            if t[-1] == "." and t[-2:-1].isalnum() and t[-3:-2].isalnum() and t[0] not in lead and not t[0].isspace():
                t = t[:-1]  # strip_trailing of "...xy.": the final period alone (two word characters before it)
            else:
                t = strip_trailing(t)
        if not t:
            t = prediction.strip()
        if len(t.split(maxsplit=SENTENCE_WORDS - 1)) < SENTENCE_WORDS or (
            bucket != "scalar" and bucket != "identifier"
        ):
            append(t)
        elif bucket == "scalar":
            append(_scalar_sentence(t))
        else:
            codes = _CODE_TOKEN.findall(t) if digit(t) else []
            append(str(codes[0]) if len(codes) == 1 else t)
    return out


def _scalar_sentence(out: str) -> str:
    """The scalar rule of :func:`repair_output` for a text of at least :data:`SENTENCE_WORDS` words."""
    # A whole scalar answer is kept as it is: a date with a weekday or an ordinal ("Monday 25th july 2011",
    # seed 002 Table 1: "numbers, dates, yes/no") has four or more words, so it is tested whole, not cut to the one
    # number it holds.
    if is_scalar_answer(out):
        return out
    yes_no = _YESNO.match(out)
    if yes_no:
        return str(yes_no.group(1)).lower()
    numbers = _NUM_TOKEN.findall(out) if _DIGIT.search(out) else []
    if len(numbers) == 1:
        return str(numbers[0]).strip()
    return out
