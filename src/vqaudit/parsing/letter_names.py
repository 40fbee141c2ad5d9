"""When a capital letter in a reply is a name, not an option label: "angle A", "vitamin C", "point B", "Mr. B".

Shared by the strict matcher (:mod:`vqaudit.parsing.choice`, rule 2: a named letter names no other option) and
the final declarations (:mod:`vqaudit.parsing.declarations`: "angle A is the right angle" declares nothing).
vqaudit's rule; the paper's matcher (seed 001, appendix 0.C.1) has no such exception.
"""

from __future__ import annotations

import re

NAME_WORDS = frozenset(
    {
        "angle",
        "angles",
        "point",
        "points",
        "vertex",
        "vertices",
        "corner",
        "side",
        "sides",
        "edge",
        "line",
        "lines",
        "segment",
        "ray",
        "arc",
        "chord",
        "triangle",
        "quadrilateral",
        "polygon",
        "circle",
        "square",
        "rectangle",
        "plane",
        "axis",
        "vitamin",
        "vitamins",
        "type",
        "types",
        "group",
        "groups",
        "class",
        "plan",
        "hepatitis",
        "grade",
        "grades",
        "model",
        "person",
        "persons",
        "player",
        "players",
        "team",
        "company",
        "country",
        "city",
        "town",
        "village",
        "region",
        "zone",
        "area",
        "site",
        "building",
        "block",
        "room",
        "gate",
        "tank",
        "container",
        "box",
        "ball",
        "object",
        "objects",
        "particle",
        "particles",
        "body",
        "bodies",
        "mass",
        "masses",
        "charge",
        "charges",
        "node",
        "nodes",
        "cell",
        "cells",
        "sample",
        "samples",
        "species",
        "population",
        "strain",
        "allele",
        "gene",
        "chromosome",
        "blood",
        "sector",
        "phase",
        "star",
        "planet",
        "island",
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "st",
        "mount",
        "lake",
        "route",
        "highway",
        "interstate",
    }
)
"""Words after which a capital letter is a name, not a label: "angle A", "vitamin C", "point B", "type A",
"Mr. B" (vqaudit's rule; a careful reader of "angle A is the right angle" sees no choice)."""
_LAST_WORD = re.compile(r"(?P<word>[A-Za-z]+)\.?[ \t]+$")


def is_name(text: str, start: int) -> bool:
    """The capital at ``start`` is a name in running text (a word of :data:`NAME_WORDS` right before it).

    Args:
        text: the reply.
        start: the offset of the capital letter in ``text`` (characters).

    Returns:
        True when one of :data:`NAME_WORDS` (any case, an optional ``.`` after it) stands right before it,
        within the 24 characters before ``start``.
    """
    m = _LAST_WORD.search(text, max(0, start - 24), start)
    return m is not None and m.group("word").lower() in NAME_WORDS
