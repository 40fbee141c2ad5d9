"""Strict choice extraction for multiple-choice replies.

Seed 001, appendix 0.C.1 "Simplification of the matching algorithm" (MMBench's matcher as simplified by MM-UPD).

A reply selects letter ``L`` when, after stripping surrounding whitespace, it

1. is exactly ``L`` (rule ``letter``); or
2. starts with ``L)``, ``L.``, ``L,`` or ``(L)`` and nowhere contains another letter of ``A``-``G`` followed by
   ``.``, ``)`` or ``,`` (rule ``letter-prefix``: "whose text names no other option"); or
3. equals one option's full text, compared after :func:`normalize_text` (rule ``option-text``; MMBench's
   matcher also accepts the option text).

Letters are upper-case only, so "A man is riding a horse" selects nothing. When the rules give no letter, or
more than one, the matcher does not decide (it returns None) and a judge, if any, is asked. The matcher never
guesses and never raises on model output.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

PREFIX_LETTERS = "ABCDEFG"
"""Letters whose ``X.``/``X)``/``X,`` forms count as naming another option (as in the paper's matcher)."""


@dataclass(frozen=True)
class ChoiceMatch:
    """A decided reply.

    Attributes:
        letter: the selected letter (one of the valid letters).
        rule: ``letter``, ``letter-prefix`` or ``option-text``.
    """

    letter: str
    rule: str


def normalize_text(text: str) -> str:
    """The one normalizer of option texts and replies: for matching a reply to an option and for comparing options.

    Case-fold, unify curly apostrophes, collapse whitespace, strip spaces and trailing ``.``, ``!`` and ``。``.
    (Short answers are compared by :func:`vqaudit.scoring.answers.normalize_text`, which also applies NFKC and strips
    surrounding punctuation: a different purpose.)

    Args:
        text: an option text or a reply.

    Returns:
        The normalised text (possibly empty).
    """
    text = text.replace("\u2019", "'").replace("\u2018", "'").casefold()
    text = re.sub(r"\s+", " ", text).strip()
    return text.rstrip(".!。 ").strip()


def _names_other(reply: str, letter: str) -> bool:
    return any(f"{c}{p}" in reply for c in PREFIX_LETTERS if c != letter for p in ".),")


def match_letter(reply: str, letters: str) -> ChoiceMatch | None:
    """Rules 1-2: a bare letter or a lettered prefix that names no other option.

    Args:
        reply: the raw reply.
        letters: the valid letters, e.g. ``"ABCD"`` or ``"ABCDF"``.

    Returns:
        The match, or None when no letter or more than one letter qualifies.
    """
    text = reply.strip()
    if len(text) == 1 and text in letters:
        return ChoiceMatch(text, "letter")
    found = [
        c for c in letters
        if any(text.startswith(p) for p in (f"{c})", f"{c}.", f"{c},", f"({c})")) and not _names_other(text, c)
    ]
    return ChoiceMatch(found[0], "letter-prefix") if len(found) == 1 else None


def match_option_text(reply: str, options: Mapping[str, str]) -> ChoiceMatch | None:
    """Rule 3: the reply is one option's full text (normalised equality), and no other option's.

    Args:
        reply: the raw reply.
        options: ``letter -> option text``.

    Returns:
        The match, or None.
    """
    norm = normalize_text(reply)
    if not norm:
        return None
    hits = [c for c, t in options.items() if normalize_text(t) == norm]
    return ChoiceMatch(hits[0], "option-text") if len(hits) == 1 else None


def match_choice(reply: str, options: Mapping[str, str], extra_letters: str = "") -> ChoiceMatch | None:
    """The strict matcher: rules 1-2 over the option letters plus ``extra_letters``, then rule 3.

    Args:
        reply: the raw reply.
        options: ``letter -> option text`` of the options shown.
        extra_letters: further valid letters with no listed text (e.g. ``"F"`` in the instruction setting).

    Returns:
        The match, or None when the matcher cannot decide.
    """
    letters = "".join(options) + "".join(c for c in extra_letters if c not in options)
    return match_letter(reply, letters) or match_option_text(reply, options)
