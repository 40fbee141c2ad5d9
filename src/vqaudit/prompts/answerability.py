"""The answerability JSON prompt (docs/papers.md, vocabulary; seed 000, appendix A).

One image and one question per call. The instructions define *answerable* as "this image alone supports one
answer", say that hard-to-read evidence is still answerable, and forbid inferring missing information from
trends, world knowledge or other images. The reply contract is a JSON object with a boolean ``answerable``, an
``answer`` (a value, or null) and a nonempty ``reason``; ``answerable: false`` requires ``answer: null``.
"""

from __future__ import annotations

ANSWERABILITY_PROMPT_ID = "answerability-json-v1"

_TEMPLATE = """You are shown one image and one question about it.

Decide whether the image alone supports exactly one answer to the question.
- Answerable: the information needed is visible in this image, even if it is hard to read precisely.
- Unanswerable: the information needed is hidden, missing, or the question refers to something that is not in
  the image. Do not guess from trends or patterns, from world knowledge, or from other images.

Question: {question}

Reply with a single JSON object and nothing else, with exactly these keys:
{{"answerable": true or false, "answer": the answer (a number or a short text) or null, "reason": "one short sentence"}}
If "answerable" is false, "answer" must be null. Give numbers without units."""


def answerability_prompt(question: str) -> str:
    """Return the user text of the answerability prompt for ``question``.

    Args:
        question: the fixed question of the view's group (non-empty).

    Returns:
        The full prompt text; the image is sent beside it as the only other content of the message.

    Raises:
        ValueError: if ``question`` is empty.
    """
    if not question.strip():
        raise ValueError("question must be non-empty")
    return _TEMPLATE.format(question=question.strip())


def question_from_prompt(prompt: str) -> str | None:
    """Inverse of :func:`answerability_prompt`: the question inside an answerability prompt, or None.

    A backend that sees only the request (the chart reader) recovers the question this way; any other text
    (another prompt template, a perturbed prompt) gives None.
    """
    head, _, tail = _TEMPLATE.partition("{question}")
    head, tail = head.replace("{{", "{").replace("}}", "}"), tail.replace("{{", "{").replace("}}", "}")
    if len(prompt) <= len(head) + len(tail) or not prompt.startswith(head) or not prompt.endswith(tail):
        return None
    question = prompt[len(head) : len(prompt) - len(tail)]
    return question if question.strip() == question and question else None
