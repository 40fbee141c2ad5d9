"""Preprocessing of MMBench items before any MM-UPD variant is built (seed 001, appendix 0.B.1).

Rules, applied to every item in this order:

1. drop items whose category is not one of the 18 abilities (``image_quality`` and ``spatial_relationship``;
   0.B.1 "Exclusion of Image Quality ability" and Table A);
2. delete options of the "none of these" kind ("None of these options are correct.", "All above are not
   right", "None of the above", ...; 0.B.1 "Exclusion of options related 'None of the above'"); an item whose
   *correct* option is one of them is dropped (the paper says this never happens; we check);
3. rewrite an option "Can't judge" (any case, with or without the apostrophe, "cannot judge") as
   "Can't judge from the image due to the lack of image information" (0.B.1 "Clarification of the meaning");
4. drop items left with fewer than two options.

Not reproduced: the removal of image-agnostic questions (0.B.1), which used GPT-4 answers without the image and
a manual check. :func:`normalize` is the text normalisation every option comparison in this package uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from vqaudit.parsing.choice import normalize_text
from vqaudit.suites.upd.abilities import ABILITIES
from vqaudit.suites.upd.tsv import MCItem

CANT_JUDGE = "Can't judge from the image due to the lack of image information"
"""Replacement text of a "Can't judge" option (appendix 0.B.1)."""

_NONE_OPTION = re.compile(
    r"^(none of (these|the above|them|the options)( options)?( (is|are))?( (correct|right))?"
    r"|all (the )?(above|options) (is|are) not (correct|right)"
    r"|no correct (answer|option))$"
)
_CANT_JUDGE = re.compile(r"^(can'?t|cannot|can not) judge$")


def normalize(text: str) -> str:
    """Option texts are compared with the one option normalizer, :func:`vqaudit.parsing.choice.normalize_text`."""
    return normalize_text(text)


def is_none_option(text: str) -> bool:
    """True for options of the "none of these / all above are not right" kind (rule 2)."""
    return _NONE_OPTION.match(normalize(text)) is not None


def is_cant_judge(text: str) -> bool:
    """True for a bare "Can't judge" option (rule 3) or its rewritten form."""
    norm = normalize(text)
    return _CANT_JUDGE.match(norm) is not None or norm == normalize(CANT_JUDGE)


@dataclass(frozen=True)
class Preprocessed:
    """The result of :func:`preprocess`.

    Attributes:
        items: the kept items, rewritten, in input order.
        dropped: ``(index, reason)`` of every dropped item, in input order.
        edits: ``(index, description)`` of every option deletion or rewrite.
    """

    items: tuple[MCItem, ...]
    dropped: tuple[tuple[int, str], ...]
    edits: tuple[tuple[int, str], ...]


def preprocess(items: list[MCItem]) -> Preprocessed:
    """Apply rules 1-4 of the module docstring.

    Args:
        items: loaded items (any order; the output keeps it).

    Returns:
        The kept items, the dropped ones with reasons, and the option edits.
    """
    kept: list[MCItem] = []
    dropped: list[tuple[int, str]] = []
    edits: list[tuple[int, str]] = []
    for item in items:
        if item.category not in ABILITIES:
            dropped.append((item.index, f"category {item.category!r} is not an MM-UPD ability"))
            continue
        if is_none_option(item.answer_text):
            dropped.append((item.index, "the correct option is a 'none of these' option"))
            continue
        options: list[str] = []
        answer = -1
        for k, text in enumerate(item.options):
            if is_none_option(text):
                edits.append((item.index, f"deleted option {text!r}"))
                continue
            if _CANT_JUDGE.match(normalize(text)):
                edits.append((item.index, f"rewrote option {text!r} as {CANT_JUDGE!r}"))
                text = CANT_JUDGE
            if k == item.answer:
                answer = len(options)
            options.append(text)
        if len(options) < 2:
            dropped.append((item.index, "fewer than two options after preprocessing"))
            continue
        kept.append(replace(item, options=tuple(options), answer=answer))
    return Preprocessed(items=tuple(kept), dropped=tuple(dropped), edits=tuple(edits))
