"""The sample browser's view of a reasoning model's reasoning: what the run stored beside each reply, and its split.

The reasoning a server sent apart from the content (``reasoning_content``) is kept in ``responses.sqlite`` beside
the reply, never in ``outcomes.jsonl`` (whose ``raw`` is the content exactly as received); the browser reads it
here and splits each reply as ``vqaudit score`` did (:func:`vqaudit.parsing.reasoning.split_reasoning` with the
format recorded in ``scored.json``), so a view card shows in-text spans and the server's reasoning alike, and a
reply cut while thinking (no content) shows what it thought.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from vqaudit.backends.cache import ResponseCache
from vqaudit.errors import VqauditError
from vqaudit.files import read_json
from vqaudit.parsing.reasoning import AUTO, split_reasoning
from vqaudit.schema import Outcome
from vqaudit.scored_state import ScoredState
from vqaudit.store import RunFolder


@dataclass(frozen=True)
class StoredReply:
    """What ``responses.sqlite`` keeps of a view's reply beside its content (``Outcome.raw``).

    Attributes:
        reasoning: the reasoning the server sent apart from the content, or None.
        finish_reason: why generation stopped, as the server said (``length``: cut by the token budget), or None.
    """

    reasoning: str | None
    finish_reason: str | None


def stored_replies(run_dir: Path) -> tuple[dict[str, StoredReply], str]:
    """The server reasoning and finish reason of every view's stored reply, and the format the run was split by.

    Read from ``RUN/responses.sqlite`` (read-only) and ``RUN/scored.json`` (``reasoning_format``; ``auto`` for a run
    scored before it was recorded). Views whose reply stores neither are left out.

    Raises:
        VqauditError: ``responses.sqlite`` is unreadable (the report checked the run's seal before, so it exists).
    """
    folder = RunFolder(run_dir)
    fmt = AUTO
    if folder.scored.is_file():
        try:
            fmt = ScoredState.model_validate(read_json(folder.scored)).reasoning_format or AUTO
        except (ValidationError, VqauditError):
            fmt = AUTO
    if not folder.responses.is_file():
        return {}, fmt
    with ResponseCache(folder.responses, read_only=True) as cache:  # a report may read a run on a read-only disk
        stored = cache.responses()
        view_keys = cache.view_keys()
    if not view_keys:  # a run made before the view map was recorded: the latest reply of a view (run.load_responses)
        view_keys = {r.view_id: r.cache_key for r in stored}
    by_key = {
        r.cache_key: StoredReply(r.reasoning, r.finish_reason)
        for r in stored
        if r.reasoning is not None or r.finish_reason is not None
    }
    return {view: by_key[key] for view, key in view_keys.items() if key in by_key}, fmt


def reasoning_fields(o: Outcome, stored: StoredReply | None, reasoning_format: str) -> dict[str, Any]:
    """The reasoning fields of a view's browser record: the text, its length and where it came from; {} if none.

    Split as ``score`` split it (:func:`vqaudit.parsing.reasoning.split_reasoning`, rules 1-5): the run's recorded
    format, the server's reasoning field (rule 4) and the finish reason (rule 5 under ``auto:NAME-open``).
    """
    stored = stored or StoredReply(None, None)
    if o.raw is None and stored.reasoning is None:
        return {}
    try:
        split = split_reasoning(
            o.raw, reasoning_format, server_reasoning=stored.reasoning, finish_reason=stored.finish_reason
        )
    except ValueError:  # a format this version does not know (scored by another version): the server's part only
        split = split_reasoning(o.raw, AUTO, server_reasoning=stored.reasoning, finish_reason=stored.finish_reason)
    if split.reasoning is None:
        return {}
    origins = []
    if stored.reasoning is not None:
        origins.append("the server's reasoning field")
    if split.format not in (None, "server"):
        origins.append(f"{split.format} tags in the reply")
    return {
        "reasoning": split.reasoning,
        "reasoning_chars": split.reasoning_chars,
        "reasoning_from": " and ".join(origins),
        "finished": split.finished,
    }
