"""What ``vqaudit score`` scored, and whether a run's replies changed since: ``RUN/scored.json``.

``score`` records the state of the response cache it read (rows, rows recording an error, the cache's write
counter, a hash of the view -> key map) and the benchmark's manifest hash. Every reader of ``metrics.json`` and
``outcomes.jsonl`` (``report``, the HTML report, ``eval``'s tables) calls :func:`check_scored` first, so a
``run`` that adds replies after ``score`` (``--retry-errors``, a resumed run) cannot leave a report showing the
old numbers: the cache's write counter grows on every insert and every replaced error, whichever command wrote.
A run scored before ``scored.json`` existed still reports, with a note.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from vqaudit.backends.cache import ResponseCache
from vqaudit.errors import VqauditError
from vqaudit.files import read_json, write_json
from vqaudit.store import RunFolder

SCORED_FORMAT = "vqaudit-scored/1"


class ScoredState(BaseModel):
    """``scored.json``: the response cache and benchmark a run's ``metrics.json`` was computed from.

    Attributes:
        format: :data:`SCORED_FORMAT`.
        n_responses: rows of ``responses.sqlite`` (replies and recorded errors).
        n_errors: rows recording an error.
        last_write: the cache's write counter (largest ``created``; it grows on every insert or replaced error).
        view_keys_sha256: SHA-256 of the view -> cache key map (sorted JSON).
        benchmark_manifest_sha256: SHA-256 of the benchmark's ``manifest.json`` (as in ``run.json``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: str = SCORED_FORMAT
    n_responses: int
    n_errors: int
    last_write: int
    view_keys_sha256: str
    benchmark_manifest_sha256: str


def reply_state(run_dir: Path, *, read_only: bool = False) -> ScoredState:
    """The current state of a run's response cache and benchmark hash, as ``score`` records it.

    Raises:
        VqauditError: ``run.json`` or ``responses.sqlite`` is missing or unreadable.
    """
    folder = RunFolder(run_dir)
    info = folder.read_info()
    if not folder.responses.is_file():
        raise VqauditError(f"{folder.responses}: file not found (run the benchmark into {run_dir} first)")
    with ResponseCache(folder.responses, read_only=read_only) as cache:
        n_rows, n_errors, last = cache.write_state()
        view_keys = cache.view_keys()
    digest = hashlib.sha256(json.dumps(sorted(view_keys.items())).encode()).hexdigest()
    return ScoredState(n_responses=n_rows, n_errors=n_errors, last_write=last, view_keys_sha256=digest,
                       benchmark_manifest_sha256=info.benchmark_manifest_sha256)


def write_scored(run_dir: Path, state: ScoredState) -> None:
    """Write ``RUN/scored.json`` atomically (``score`` does, after ``metrics.json``)."""
    write_json(RunFolder(run_dir).scored, state.model_dump(mode="json"))


def check_scored(run_dir: Path) -> str | None:
    """Refuse a scored run whose replies or benchmark changed since ``vqaudit score``; note an unchecked old run.

    Returns:
        None when ``scored.json`` matches the cache on disk; a one-line note when the run has no ``scored.json``
        (scored before it was recorded: its numbers are shown unchecked).

    Raises:
        VqauditError: ``RUN: replies changed since `vqaudit score` (N new); run `vqaudit score RUN` first``, N
            the rows written to the cache since (new replies and replaced errors); likewise for a changed view
            map or benchmark; a malformed ``scored.json`` (naming the field).
    """
    folder = RunFolder(run_dir)
    if not folder.scored.is_file():
        return (f"{run_dir}: scored before vqaudit recorded what it scored (no {folder.scored.name}); its numbers "
                f"are not checked against the replies on disk (run `vqaudit score {run_dir}` to check them)")
    try:
        recorded = ScoredState.model_validate(read_json(folder.scored))
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "(record)"
        raise VqauditError(f"{folder.scored}: field '{field}': {err['msg']}") from None
    now = reply_state(run_dir, read_only=True)  # a report may read a run folder on a read-only disk
    rescore = f"run `vqaudit score {run_dir}` first"
    if now.benchmark_manifest_sha256 != recorded.benchmark_manifest_sha256:
        raise VqauditError(f"{run_dir}: the run's benchmark changed since `vqaudit score`; {rescore}")
    if (now.n_responses, now.n_errors, now.last_write) != (
            recorded.n_responses, recorded.n_errors, recorded.last_write):
        with ResponseCache(folder.responses, read_only=True) as cache:
            n_new = cache.written_after(recorded.last_write)
        raise VqauditError(f"{run_dir}: replies changed since `vqaudit score` ({n_new} new); {rescore}")
    if now.view_keys_sha256 != recorded.view_keys_sha256:
        raise VqauditError(f"{run_dir}: the views' replies were remapped since `vqaudit score` (another run into "
                           f"this folder); {rescore}")
    return None
