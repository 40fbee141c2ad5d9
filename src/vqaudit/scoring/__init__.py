"""Scoring: answer matching and per-view outcomes."""

from vqaudit.scoring.answers import answer_matches, normalize_text, parse_number
from vqaudit.scoring.outcomes import score_view

__all__ = ["answer_matches", "normalize_text", "parse_number", "score_view"]
