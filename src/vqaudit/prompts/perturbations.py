"""Benign prompt perturbations Base, A1-A5, B1-B3 as protocol data (seed 002 §4 "Perturbation protocol").

Source: seed 002 §4, which quotes the wording. "Base and A1-A5 all share the suffix 'Question: {question}
Answer:'; only the instruction prefix changes" - the paper does not say what separates prefix and suffix; a
newline is used here (:data:`PREFIX_SEPARATOR`). B1-B2 change only the surrounding context; B3 is the
adversarial control, kept out of the flip-rate mean (§4, §5.3).

:func:`ask_perturbations` sends every variant of every question,
with its image, through any backend; replies are cached in a SQLite :class:`~vqaudit.backends.ResponseCache` (same
key rule as every other model call). When the first ``min(EARLY_STOP_CALLS, calls to ask)`` calls all fail after
their retries, the model is taken to be unreachable and the rest are not asked (the rule of ``vqaudit run`` and the
judges); ``replay:`` models are exempt, as a replay file answers every call at once and the perturbation audit then
names the ids its replies must carry. :func:`check_variants` checks a ``--variants`` list.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vqaudit.backends import Backend, GenerationParams, Request, ResponseCache, cache_key
from vqaudit.backends import load_backend as _load_backend
from vqaudit.backends.calls import ask_all, call_once
from vqaudit.backends.judge import EARLY_STOP_CALLS
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


@dataclass(frozen=True)
class _Job:
    row: AuditRow
    variant: PromptVariant
    image: bytes
    mime: str
    key: str


@dataclass(frozen=True)
class PerturbationReplies:
    """What :func:`ask_perturbations` got back.

    Attributes:
        replies: ``variant id -> qid -> reply text`` (None when the call failed after its retries).
        errors: ``variant id -> qid -> error`` of the calls that failed in this invocation.
        last_error: the error of the last call that failed, or None when none failed.
    """

    replies: dict[str, dict[str, str | None]]
    errors: dict[str, dict[str, str]]
    last_error: str | None


def _job(spec: str, row: AuditRow, variant: PromptVariant, image: bytes, mime: str) -> _Job:
    key = cache_key(spec, f"shortanswer-perturb-{variant.variant_id}", variant.render(row.question),
                    sha256_bytes(image), PARAMS)
    return _Job(row, variant, image, mime, key)


async def _ask(backend: Backend, spec: str, job: _Job) -> Response:
    row, variant = job.row, job.variant
    view = View(view_id=f"{variant.variant_id}:{row.qid}", group_id=row.qid, source="shortanswer",
                state=variant.variant_id, image=f"{row.qid}", image_sha256=sha256_bytes(job.image),
                question=row.question, obligation=Obligation(kind="answer", gold=row.answers or ("?",),
                                                             answer_type="text"))
    request = Request(view=view, prompt_id=f"shortanswer-perturb-{variant.variant_id}",
                      prompt=variant.render(row.question), image=job.image, image_mime=job.mime, params=PARAMS)
    return await call_once(backend, request, model=spec, response_id=view.view_id, key=job.key,
                           fatal_label=f"model {spec}")


async def _ask_all(backend: Backend, spec: str, cache: ResponseCache, jobs: Sequence[_Job],
                   concurrency: int) -> tuple[dict[int, Response], str | None]:
    """Ask every job without a cached reply (at most ``concurrency`` at once).

    Returns ``job index -> Response`` (cached or asked) and the error of the last call that failed (None: none).

    Jobs with a cached reply text are not asked (a cached error is asked again). The early stop of
    :data:`EARLY_STOP_CALLS` applies except to ``replay:`` models, whose replies are read from a file at once.
    """
    answers: dict[int, Response] = {}
    todo: list[int] = []
    for i, job in enumerate(jobs):
        cached = cache.get(job.key)
        if cached is not None and cached.text is not None:
            answers[i] = cached
        else:
            todo.append(i)
    last_error: str | None = None

    def store(i: int, response: Response) -> None:
        nonlocal last_error
        cache.put(response, replace_error=True)
        answers[i] = response
        last_error = response.error or last_error

    def unreachable(n_done: int, response: Response) -> VqauditError:
        return VqauditError(
            f"model {spec}: its first {n_done} calls all failed after their retries (last: "
            f"{response.error}); stopped instead of asking the other {len(todo) - n_done}. Is the server "
            f"up? Replies received so far are cached in {cache.path}; rerun the same command once the "
            "model answers")

    give_up = min(EARLY_STOP_CALLS, len(todo)) if spec.partition(":")[0] != "replay" else len(todo) + 1
    try:
        await ask_all(todo, lambda i: _ask(backend, spec, jobs[i]), store, concurrency=concurrency,
                      give_up=give_up, unreachable=unreachable)
    finally:
        await backend.aclose()
    return answers, last_error


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
        raise VqauditError(f"--variants {given}: no variant besides Base, so there is nothing to compare; add "
                           f"some of {', '.join(VARIANT_IDS[1:])}")
    return tuple(variants)


def ask_perturbations(
    rows: Sequence[AuditRow],
    image_for: ImageFor,
    spec: str,
    cache_path: Path,
    *,
    variants: Sequence[str] = VARIANT_IDS,
    backend: Backend | None = None,
    concurrency: int = 8,
    backend_options: Mapping[str, Any] | None = None,
) -> PerturbationReplies:
    """Ask a model every question of ``rows`` under each perturbation; keep the errors of the failed calls.

    Every image is loaded before the first call. Replies already cached are not asked again; every reply is
    cached the moment it arrives. When the first ``min(EARLY_STOP_CALLS, calls to ask)`` calls all fail after
    their retries, the model is taken to be unreachable and the rest are not asked (not for ``replay:``).

    Args:
        rows: the prediction set's rows (question, gold, qid).
        image_for: returns a row's image bytes and MIME type.
        spec: model spec (any backend).
        cache_path: SQLite cache file.
        variants: perturbation ids to run (default: all nine).
        backend: a ready backend instead of ``load_backend(spec)`` (tests); it is closed at the end.
        concurrency: calls in flight.
        backend_options: extra keyword options of ``load_backend`` (``max_retries``, ``backoff_base_s``, ...).

    Returns:
        The replies, the errors and the last error (:class:`PerturbationReplies`).

    Raises:
        VqauditError: an unknown variant, a missing image (from ``image_for``), a bad spec, a fatal backend error,
            or the first calls all failed (naming the spec and the last error; replies so far stay cached).
    """
    chosen = [get_variant(v) for v in variants]
    jobs: list[_Job] = []
    for row in rows:
        image, mime = image_for(row)
        jobs.extend(_job(spec, row, v, image, mime) for v in chosen)
    replies: dict[str, dict[str, str | None]] = {v.variant_id: {} for v in chosen}
    errors: dict[str, dict[str, str]] = {v.variant_id: {} for v in chosen}
    if not jobs:
        return PerturbationReplies(replies, errors, None)
    model = backend if backend is not None else _load_backend(spec, concurrency=concurrency,
                                                              **dict(backend_options or {}))
    cache_path.parent.mkdir(parents=True, exist_ok=True)
    with ResponseCache(cache_path) as cache:
        answers, last_error = asyncio.run(_ask_all(model, spec, cache, jobs, concurrency))
    for i, job in enumerate(jobs):
        response = answers[i]
        replies[job.variant.variant_id][job.row.qid] = response.text
        if response.error is not None:
            errors[job.variant.variant_id][job.row.qid] = response.error
    return PerturbationReplies(replies, errors, last_error)
