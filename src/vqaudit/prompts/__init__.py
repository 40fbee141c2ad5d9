"""Prompt templates and settings: data, no model calls.

The answerability JSON prompt (seed 000, appendix A), the UPD settings and the short-answer perturbations. Which
prompt a view gets is its source's ``prompt`` hook (:func:`vqaudit.suites.registry.prompt_for`).
"""

from vqaudit.prompts.answerability import ANSWERABILITY_PROMPT_ID, answerability_prompt

__all__ = ["ANSWERABILITY_PROMPT_ID", "answerability_prompt"]
