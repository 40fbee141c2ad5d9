"""Benign prompt perturbations Base, A1-A5, B1-B3 as protocol data (seed 002 §4 "Perturbation protocol").

Source: seed 002 §4, which quotes the wording. "Base and A1-A5 all share the suffix 'Question: {question}
Answer:'; only the instruction prefix changes" - the paper does not say what separates prefix and suffix; a
newline is used here (:data:`PREFIX_SEPARATOR`). B1-B2 change only the surrounding context; B3 is the
adversarial control, kept out of the flip-rate mean (§4, §5.3).

This module is data (templates and their generation parameters, no model calls);
:func:`vqaudit.shortanswer.perturb_ask.ask_perturbations` asks them. :func:`check_variants` checks a ``--variants``
list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vqaudit.errors import VqauditError
from vqaudit.schema import GenerationParams

SOURCE = "seed 002 (What Does Your Short-Answer VQA Score Actually Measure?), §4 'Perturbation protocol'"
PREFIX_SEPARATOR = "\n"
SUFFIX = "Question: {question} Answer:"


@dataclass(frozen=True)
class PromptVariant:
    """One perturbation: id, family (``base``, ``A``, ``B``, ``control``) and its template with ``{question}``."""

    variant_id: str
    family: str
    template: str

    def render(self, question: str) -> str:
        """The prompt text for one question."""
        return self.template.replace("{question}", question)


def _prefixed(variant_id: str, family: str, prefix: str) -> PromptVariant:
    return PromptVariant(variant_id, family, prefix + PREFIX_SEPARATOR + SUFFIX)


PERTURBATIONS: tuple[PromptVariant, ...] = (
    _prefixed("Base", "base", "Answer the following question based on the image. Give a short exact answer only."),
    _prefixed("A1", "A", "Look at the image and answer the question below. Provide a brief, exact answer."),
    _prefixed("A2", "A", "Using the provided image, answer the following question with a short exact response."),
    _prefixed("A3", "A", "Based on the image, provide the exact answer below in as few words as possible."),
    _prefixed("A4", "A", "Examine the image and answer the question. Reply with only the short exact answer."),
    _prefixed("A5", "A", "Refer to the image to answer the following. Give only the precise short answer."),
    PromptVariant("B1", "B", "{question} Answer in one word or number."),
    PromptVariant("B2", "B", "{question} Give only the final short answer."),
    PromptVariant("B3", "control", "{question}."),
)
"""The nine prompts of §4, Base first."""

VARIANT_IDS: tuple[str, ...] = tuple(p.variant_id for p in PERTURBATIONS)
"""All nine ids in order."""

BENIGN: tuple[str, ...] = ("A1", "A2", "A3", "A4", "A5", "B1", "B2")
"""The seven benign variants whose flip rates are averaged (§5.3); B3 is reported apart."""

PARAMS = GenerationParams(temperature=0.0, max_tokens=64)
"""Greedy decoding (§4 "Models"); short answers need few tokens."""


def get_variant(variant_id: str) -> PromptVariant:
    """Return a perturbation by id. Raises VqauditError listing the ids."""
    for v in PERTURBATIONS:
        if v.variant_id == variant_id:
            return v
    known = ", ".join(p.variant_id for p in PERTURBATIONS)
    raise VqauditError(f"unknown perturbation {variant_id!r}; known: {known}")


def check_variants(variants: Sequence[str]) -> tuple[str, ...]:
    """Check a perturbation list (``--variants``); return it as a tuple.

    Raises:
        VqauditError: an unknown id (listing the known ones), an id given twice, no Base (every flip rate and
            delta compares against it) or no variant besides Base (nothing to compare); each names --variants.
    """
    given = ",".join(variants)
    known = {p.variant_id for p in PERTURBATIONS}
    for v in variants:
        if v not in known:
            raise VqauditError(f"--variants {given}: unknown perturbation {v!r}; known: {', '.join(VARIANT_IDS)}")
    seen: set[str] = set()
    for v in variants:
        if v in seen:
            raise VqauditError(f"--variants {given}: {v} is listed twice")
        seen.add(v)
    if "Base" not in seen:
        raise VqauditError(f"--variants {given}: Base is missing; every flip rate and delta compares against it")
    if seen == {"Base"}:
        raise VqauditError(
            f"--variants {given}: no variant besides Base, so there is nothing to compare; add "
            f"some of {', '.join(VARIANT_IDS[1:])}"
        )
    return tuple(variants)
