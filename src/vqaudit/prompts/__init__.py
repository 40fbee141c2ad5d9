"""Prompt templates: the answerability JSON prompt (seed 000, appendix A)."""

from vqaudit.prompts.answerability import ANSWERABILITY_PROMPT_ID, answerability_prompt

__all__ = ["ANSWERABILITY_PROMPT_ID", "answerability_prompt"]
