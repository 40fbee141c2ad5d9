"""Which prompt a view is asked with: one function, dispatching on the view's source."""

from __future__ import annotations

from vqaudit.prompts.answerability import ANSWERABILITY_PROMPT_ID, answerability_prompt
from vqaudit.schema import View

ANSWERABILITY_SOURCES = frozenset({"charts", "scenes", "photos"})


def prompt_for(view: View) -> tuple[str, str]:
    """Return ``(prompt_id, prompt_text)`` for a view.

    Answerability sources (charts, scenes, photos) use the answerability JSON prompt. Multiple-choice UPD views
    use the setting recorded in the view (``vqaudit.prompts.upd``).

    Raises:
        ValueError: for a source without a prompt.
    """
    if view.source in ANSWERABILITY_SOURCES:
        return ANSWERABILITY_PROMPT_ID, answerability_prompt(view.question)
    if view.source == "upd":
        from vqaudit.prompts.upd import upd_prompt

        return upd_prompt(view)
    raise ValueError(f"no prompt for source {view.source!r}")
