"""Answer matching, official short-answer metrics, and per-view outcomes.

The names below are imported from their modules on first use (PEP 562), so importing one module of this
package (the metric table, :mod:`vqaudit.scoring.registry`, which ``vqaudit --help`` reads for ``--metric``)
does not load them all.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vqaudit.scoring.answers import answer_matches, normalize_text, parse_number
    from vqaudit.scoring.official import (
        ANLS_VARIANTS,
        EXACT_MATCH_VARIANTS,
        RELAXED_VARIANTS,
        VQA_VARIANTS,
        AnlsVariant,
        ExactMatchVariant,
        RelaxedVariant,
        VqaVariant,
        anls,
        exact_match,
        relaxed_accuracy,
        vqa_accuracy,
    )
    from vqaudit.scoring.outcomes import score_view

_WHERE = {
    **dict.fromkeys(("answer_matches", "normalize_text", "parse_number"), "answers"),
    **dict.fromkeys(
        (
            "ANLS_VARIANTS",
            "EXACT_MATCH_VARIANTS",
            "RELAXED_VARIANTS",
            "VQA_VARIANTS",
            "AnlsVariant",
            "ExactMatchVariant",
            "RelaxedVariant",
            "VqaVariant",
            "anls",
            "exact_match",
            "relaxed_accuracy",
            "vqa_accuracy",
        ),
        "official",
    ),
    "score_view": "outcomes",
}

__all__ = [
    "ANLS_VARIANTS",
    "EXACT_MATCH_VARIANTS",
    "RELAXED_VARIANTS",
    "VQA_VARIANTS",
    "AnlsVariant",
    "ExactMatchVariant",
    "RelaxedVariant",
    "VqaVariant",
    "anls",
    "answer_matches",
    "exact_match",
    "normalize_text",
    "parse_number",
    "relaxed_accuracy",
    "score_view",
    "vqa_accuracy",
]


def __getattr__(name: str) -> Any:
    """A name of :data:`__all__`, from its module (imported now); else AttributeError (a submodule then loads)."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'vqaudit.scoring' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"vqaudit.scoring.{module}"), name)
    globals()[name] = value
    return value
