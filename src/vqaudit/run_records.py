"""The records of ``run.json`` beyond the folder layout: the run itself, its token usage, its lost Ray replicas.

:class:`RunInfo` is what a run folder's ``run.json`` holds (:class:`vqaudit.store.RunFolder` reads and writes it;
``docs/architecture.md``, "Folder formats"); :class:`RunUsage` (with :func:`sum_usage`) and :class:`ReplicaLoss`
are two of its fields. Imported from :mod:`vqaudit.store` too, the module that knows the run folder's files.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict

from vqaudit.schema import Response


class RunUsage(BaseModel):
    """Token counts summed over a run's replies that reported them (``run.json`` ``usage``).

    Each count is the sum of that field over the replies that carried it (the server's ``usage``: OpenAI API
    reference, Chat Completions, ``usage.prompt_tokens``, ``completion_tokens``,
    ``completion_tokens_details.reasoning_tokens``), or None when no reply reported that field (Anthropic's API,
    or a server without ``completion_tokens_details``, reports no reasoning tokens apart: not 0); ``replies`` is
    how many replies reported any count. A reply shared by several views (identical inputs, asked once) counts
    once.
    """

    prompt_tokens: int | None = 0
    completion_tokens: int | None = 0
    reasoning_tokens: int | None = 0
    replies: int = 0


def sum_usage(responses: Iterable[Response]) -> RunUsage | None:
    """The token counts of ``responses`` summed (:class:`RunUsage`), or None when none reported usage.

    Each response counts once (pass each cache row once); only ``prompt_tokens``, ``completion_tokens`` and
    ``reasoning_tokens`` are summed, a count that is not a non-negative integer is skipped, and a field no reply
    reported is None.
    """
    totals: dict[str, int | None] = {"prompt_tokens": None, "completion_tokens": None, "reasoning_tokens": None}
    replies = 0
    for response in responses:
        counted = False
        for key, value in (response.usage or {}).items():
            if key in totals and isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                totals[key] = (totals[key] or 0) + value
                counted = True
        replies += counted
    return RunUsage(**totals, replies=replies) if replies else None


class ReplicaLoss(BaseModel):
    """One Ray replica lost during ``vqaudit run --executor ray`` (``run.json`` ``replicas_lost``, in order)."""

    replica: int
    """The replica's slot, 0 to ``replicas - 1``."""
    at: str
    """When the driver saw the loss (UTC, ISO 8601, seconds)."""
    error: str
    """The first line of Ray's error (``ActorDiedError``: the worker process or its node died)."""
    replaced: bool
    """True when a new replica took the slot over; False when the replacement limit was reached, the new one failed
    to start, or the run ended before it started (the other replicas took its calls)."""


class RunInfo(BaseModel):
    """``run.json`` of a run folder: which model was asked about which benchmark, how, and how far it got.

    The benchmark is recorded three ways: its manifest's SHA-256 (what it is), its path relative to the run
    folder and its absolute path (where it was). :meth:`vqaudit.store.RunFolder.benchmark` finds it by the relative path
    first, so a run and its benchmark moved or copied together still score; a benchmark found anywhere must
    have the recorded manifest hash. Never holds an API key.
    """

    model_config = ConfigDict(extra="allow")

    model: str
    model_identity: str | None = None
    benchmark: str
    benchmark_relative: str | None = None
    benchmark_manifest_sha256: str
    sources: list[str] = []
    prompt_ids: list[str] = []
    params: dict[str, Any] = {}
    vqaudit_version: str = ""
    started: str | None = None
    finished: str | None = None
    n_views: int | None = None
    n_cached: int | None = None
    n_asked: int | None = None
    n_errors: int | None = None
    shard: str | None = None
    """``I/N`` for a run of one shard of the benchmark (``vqaudit run --shard``), None for all of it."""
    endpoints_out: dict[str, str] = {}
    """Endpoints of a ``KIND:MODEL@URL1,URL2,...`` spec taken out of rotation: URL -> the error that did it."""
    merged_from: list[str] = []
    """The run folders ``vqaudit merge`` made this run from (absolute paths), empty for a run asked directly."""
    usage: RunUsage | None = None
    """Token counts summed over the cache rows of the run's views (:func:`sum_usage`); None (and absent from
    ``run.json``) when no reply reported usage."""
    replicas_lost: list[ReplicaLoss] = []
    """Every Ray replica lost during this invocation of ``vqaudit run --executor ray``, in order (empty otherwise)."""
    blind: bool = False
    """True for a ``vqaudit run --blind``: every view asked with its prompt alone, no image (seed 001 App. 0.B.1:
    the questions a text-only model answers are image-agnostic); absent from ``run.json`` when False."""
