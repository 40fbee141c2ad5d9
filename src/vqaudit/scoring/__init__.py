"""Answer matching, official short-answer metrics, and per-view outcomes."""

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
