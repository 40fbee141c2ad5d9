"""Prompt templates: the answerability JSON prompt (seed 000, appendix A) and the per-source dispatch."""

from vqaudit.prompts.answerability import ANSWERABILITY_PROMPT_ID, answerability_prompt
from vqaudit.prompts.dispatch import prompt_for

__all__ = ["ANSWERABILITY_PROMPT_ID", "answerability_prompt", "prompt_for"]
