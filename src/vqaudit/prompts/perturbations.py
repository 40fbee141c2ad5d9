"""Benign prompt perturbations Base, A1-A5, B1-B3 as protocol data (seed 002 §4 "Perturbation protocol").

Source: seed 002 §4, which quotes the wording. "Base and A1-A5 all share the suffix 'Question: {question}
Answer:'; only the instruction prefix changes" - the paper does not say what separates prefix and suffix; a
newline is used here (:data:`PREFIX_SEPARATOR`). B1-B2 change only the surrounding context; B3 is the
adversarial control, kept out of the flip-rate mean (§4, §5.3).

:func:`run_perturbations` sends every variant of every question, with its image, through any backend; replies
are cached in a SQLite :class:`~vqaudit.backends.ResponseCache` (same key rule as every other model call).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from vqaudit.backends import Backend, BackendCallError, GenerationParams, Request, ResponseCache, cache_key
from vqaudit.backends import load_backend as _load_backend
from vqaudit.errors import VqauditError
from vqaudit.schema import Obligation, Response, View
from vqaudit.store import sha256_bytes
from vqaudit.suites.shortanswer.records import AuditRow

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


ImageFor = Callable[[AuditRow], tuple[bytes, str]]
"""Returns ``(image bytes, MIME type)`` of a row's image."""


async def _ask(backend: Backend, spec: str, cache: ResponseCache, row: AuditRow, variant: PromptVariant,
               image: bytes, mime: str, gate: asyncio.Semaphore) -> str | None:
    prompt = variant.render(row.question)
    image_sha = sha256_bytes(image)
    prompt_id = f"shortanswer-perturb-{variant.variant_id}"
    key = cache_key(spec, prompt_id, prompt, image_sha, PARAMS)
    cached = cache.get(key)
    if cached is None or cached.text is None:
        view = View(view_id=f"{variant.variant_id}:{row.qid}", group_id=row.qid, source="shortanswer",
                    state=variant.variant_id, image=f"{row.qid}", image_sha256=image_sha, question=row.question,
                    obligation=Obligation(kind="answer", gold=row.answers or ("?",), answer_type="text"))
        async with gate:
            started = time.perf_counter()
            reply: str | None = None
            error: str | None = None
            try:
                reply = await backend.complete(Request(view=view, prompt_id=prompt_id, prompt=prompt, image=image,
                                                       image_mime=mime, params=PARAMS))
            except BackendCallError as exc:
                if exc.fatal:
                    raise VqauditError(f"model {spec}: {exc}") from None
                error = str(exc) or type(exc).__name__
            cached = Response(view_id=view.view_id, model=spec, prompt_id=prompt_id, params=PARAMS.as_dict(),
                              text=reply, error=error, latency_s=time.perf_counter() - started, cache_key=key)
            cache.put(cached, replace_error=True)
    return cached.text


async def _ask_all(backend: Backend, spec: str, cache: ResponseCache,
                   jobs: list[tuple[AuditRow, PromptVariant, bytes, str]], concurrency: int) -> list[str | None]:
    gate = asyncio.Semaphore(concurrency)
    try:
        return list(await asyncio.gather(*(_ask(backend, spec, cache, r, v, i, m, gate) for r, v, i, m in jobs)))
    finally:
        await backend.aclose()


def run_perturbations(
    rows: Sequence[AuditRow],
    image_for: ImageFor,
    spec: str,
    cache_path: Path,
    *,
    variants: Sequence[str] = VARIANT_IDS,
    backend: Backend | None = None,
    concurrency: int = 8,
) -> dict[str, dict[str, str | None]]:
    """Ask a model every question of ``rows`` under each perturbation.

    Args:
        rows: the prediction set's rows (question, gold, qid).
        image_for: returns a row's image bytes and MIME type.
        spec: model spec (any backend).
        cache_path: SQLite cache file.
        variants: perturbation ids to run (default: all nine).
        backend: a ready backend instead of ``load_backend(spec)`` (tests).
        concurrency: calls in flight.

    Returns:
        ``variant id -> qid -> reply text`` (None when the call failed).

    Raises:
        VqauditError: an unknown variant, a bad spec or a fatal backend error.
    """
    chosen = [get_variant(v) for v in variants]
    jobs: list[tuple[AuditRow, PromptVariant, bytes, str]] = []
    for row in rows:
        image, mime = image_for(row)
        jobs.extend((row, v, image, mime) for v in chosen)
    if not jobs:
        return {v.variant_id: {} for v in chosen}
    model = backend if backend is not None else _load_backend(spec, concurrency=concurrency)
    cache_path.parent.mkdir(parents=True, exist_ok=True)
    with ResponseCache(cache_path) as cache:
        replies = asyncio.run(_ask_all(model, spec, cache, jobs, concurrency))
    out: dict[str, dict[str, str | None]] = {v.variant_id: {} for v in chosen}
    for (row, variant, _, _), reply in zip(jobs, replies, strict=True):
        out[variant.variant_id][row.qid] = reply
    return out
