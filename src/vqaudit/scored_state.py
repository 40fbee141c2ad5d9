"""What ``vqaudit score`` scored, and whether anything it wrote or read changed since: ``RUN/scored.json``, the seal.

``score`` records the state of the response cache it read (rows, rows recording an error, the cache's write
counter, a hash of the view -> key map, a hash of every stored reply's content), the benchmark's manifest hash,
the bootstrap settings, and the SHA-256 of every file of the run it scored or wrote (``run.json``,
``outcomes.jsonl``, ``metrics.json``, ``diagnostics.json``), with a SHA-256 over the whole record (the seal).
Every reader of ``metrics.json`` and ``outcomes.jsonl`` (``report``, the HTML report, ``compare``, ``eval``'s
tables) calls :func:`check_scored` first, which refuses, naming the file, a run where any of these changed after
``score``: a ``run`` that adds replies (``--retry-errors``, a resumed run), a reply edited in
``responses.sqlite`` (an SQL ``UPDATE`` included), ``metrics.json`` copied from another run, an edited
``outcomes.jsonl`` or ``run.json``. It then checks the invariants of ``metrics.json`` (:func:`metric_problems`).

The seal detects changes made without recomputing it; it is not a signature (whoever can rewrite the files can
rewrite ``scored.json`` too). A run scored before the seal existed (``vqaudit-scored/1``, or no ``scored.json``)
still reports, with a note saying what was not checked.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from vqaudit.backends.cache import ResponseCache
from vqaudit.errors import VqauditError
from vqaudit.files import read_json, sha256_file, write_json
from vqaudit.metrics.bootstrap import DEFAULT_DRAWS
from vqaudit.store import RunFolder

SCORED_FORMAT = "vqaudit-scored/2"
UNSEALED_FORMAT = "vqaudit-scored/1"
"""The first format: the cache state only, no seal (read, with a note)."""
SEALED_FILES = ("run.json", "outcomes.jsonl", "metrics.json", "diagnostics.json")
"""The run's files the seal covers, by name (``store.RunFolder`` knows where they are)."""


class Bootstrap(BaseModel):
    """The group-bootstrap settings of a scored run (``vqaudit score --draws --bootstrap-seed``).

    Attributes:
        draws: resamples of the groups per 95% interval (seed 000 §4: 10,000).
        seed: seed of the draws (runs scored with the same seed share their draws).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    draws: int
    seed: int


class ScoredState(BaseModel):
    """``scored.json``: the response cache and benchmark a run's ``metrics.json`` was computed from.

    Attributes:
        format: :data:`SCORED_FORMAT`.
        n_responses: rows of ``responses.sqlite`` (replies and recorded errors).
        n_errors: rows recording an error.
        last_write: the cache's write counter (largest ``created``; it grows on every insert or replaced error).
        view_keys_sha256: SHA-256 of the view -> cache key map (sorted JSON).
        benchmark_manifest_sha256: SHA-256 of the benchmark's ``manifest.json`` (as in ``run.json``).
        replies_sha256: SHA-256 of every stored reply's content and the view map
            (:meth:`vqaudit.backends.cache.ResponseCache.content_sha256`); None in the unsealed format.
        bootstrap: the bootstrap settings the metrics were computed with; None in the unsealed format.
        files: SHA-256 of each of :data:`SEALED_FILES` as ``score`` left them; None in the unsealed format.
        seal_sha256: SHA-256 of this record without this field (:func:`seal_digest`); None in the unsealed format.
        reasoning_format: the reasoning format the replies were split by (``--reasoning-format``, with ``auto``
            resolved to ``NAME-open`` when the run showed a template-opened span; :mod:`vqaudit.parsing.reasoning`);
            None for runs scored before it was recorded.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: str = SCORED_FORMAT
    n_responses: int
    n_errors: int
    last_write: int
    view_keys_sha256: str
    benchmark_manifest_sha256: str
    replies_sha256: str | None = None
    bootstrap: Bootstrap | None = None
    files: dict[str, str] | None = None
    seal_sha256: str | None = None
    reasoning_format: str | None = None


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
        replies = cache.content_sha256()
    digest = hashlib.sha256(json.dumps(sorted(view_keys.items())).encode()).hexdigest()
    return ScoredState(
        n_responses=n_rows,
        n_errors=n_errors,
        last_write=last,
        view_keys_sha256=digest,
        benchmark_manifest_sha256=info.benchmark_manifest_sha256,
        replies_sha256=replies,
    )


def _sealed_paths(run_dir: Path) -> dict[str, Path]:
    folder = RunFolder(run_dir)
    paths = {
        "run.json": folder.info,
        "outcomes.jsonl": folder.outcomes,
        "metrics.json": folder.metrics,
        "diagnostics.json": folder.diagnostics,
    }
    assert tuple(paths) == SEALED_FILES
    return paths


def seal_digest(state: ScoredState) -> str:
    """SHA-256 of a record's canonical JSON (sorted keys, no spaces) without ``seal_sha256``."""
    # reasoning_format joined the record later: left out while None, so earlier seals still verify
    body = state.model_dump(
        mode="json", exclude={"seal_sha256"} | ({"reasoning_format"} if state.reasoning_format is None else set())
    )
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def write_scored(
    run_dir: Path, state: ScoredState, *, draws: int, seed: int, reasoning_format: str | None = None
) -> ScoredState:
    """Seal a scored run: write ``RUN/scored.json`` atomically, last, after ``score`` wrote its files.

    Args:
        run_dir: the run folder.
        state: :func:`reply_state` as read before scoring (replies added meanwhile make the run stale).
        draws: group-bootstrap draws the metrics were computed with.
        seed: their seed.
        reasoning_format: the reasoning format the replies were split by (recorded, and sealed).

    Returns:
        The sealed record written.

    Raises:
        VqauditError: a file of :data:`SEALED_FILES` is missing.
    """
    files = {}
    for name, path in _sealed_paths(run_dir).items():
        if not path.is_file():
            raise VqauditError(f"{path}: file not found; cannot seal the scored run")
        files[name] = sha256_file(path)
    sealed = state.model_copy(
        update={"bootstrap": Bootstrap(draws=draws, seed=seed), "files": files, "reasoning_format": reasoning_format}
    )
    sealed = sealed.model_copy(update={"seal_sha256": seal_digest(sealed)})
    write_json(RunFolder(run_dir).scored, sealed.model_dump(mode="json"))
    return sealed


def check_scored(run_dir: Path) -> str | None:
    """Refuse a scored run where anything changed since ``vqaudit score``; note an unsealed old run.

    Checks, in order: ``scored.json`` itself (its seal digest), the benchmark's manifest hash, the replies
    (write counter, view map, stored content), each sealed file (``run.json``, ``outcomes.jsonl``,
    ``metrics.json``, ``diagnostics.json``), then the invariants of ``metrics.json`` (:func:`metric_problems`).

    Returns:
        None when the seal matches the files on disk; a one-line note when the run was scored before the seal
        existed (no ``scored.json``, or the unsealed ``vqaudit-scored/1``: its numbers are checked less or not
        at all).

    Raises:
        VqauditError: one line naming the file that changed (``RUN/metrics.json: changed since `vqaudit score`
            ...``), ``RUN: replies changed since `vqaudit score` (N new)`` for rows written to the cache since,
            a changed view map, benchmark or reply content; a malformed ``scored.json`` (naming the field); a
            ``metrics.json`` breaking an invariant (naming the run, source and metric).
    """
    folder = RunFolder(run_dir)
    rescore = f"run `vqaudit score {run_dir}` first"
    if not folder.scored.is_file():
        note = (
            f"{run_dir}: scored before vqaudit recorded what it scored (no {folder.scored.name}); its numbers "
            f"are not checked against the replies on disk (run `vqaudit score {run_dir}` to seal them)"
        )
        _check_metric_file(run_dir)
        return note
    try:
        recorded = ScoredState.model_validate(read_json(folder.scored))
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "(record)"
        raise VqauditError(f"{folder.scored}: field '{field}': {err['msg']}") from None
    sealed = recorded.format != UNSEALED_FORMAT
    if sealed:
        _check_record(run_dir, recorded, rescore)
    now = reply_state(run_dir, read_only=True)  # a report may read a run folder on a read-only disk
    if now.benchmark_manifest_sha256 != recorded.benchmark_manifest_sha256:
        raise VqauditError(f"{run_dir}: the run's benchmark changed since `vqaudit score`; {rescore}")
    if (now.n_responses, now.n_errors, now.last_write) != (
        recorded.n_responses,
        recorded.n_errors,
        recorded.last_write,
    ):
        with ResponseCache(folder.responses, read_only=True) as cache:
            n_new = cache.written_after(recorded.last_write)
        raise VqauditError(f"{run_dir}: replies changed since `vqaudit score` ({n_new} new); {rescore}")
    if now.view_keys_sha256 != recorded.view_keys_sha256:
        raise VqauditError(
            f"{run_dir}: the views' replies were remapped since `vqaudit score` (another run into "
            f"this folder); {rescore}"
        )
    if sealed and now.replies_sha256 != recorded.replies_sha256:
        raise VqauditError(
            f"{folder.responses}: a stored reply was edited since `vqaudit score` (its content "
            f"differs from the seal in {folder.scored.name}); {rescore}"
        )
    if sealed:
        _check_files(run_dir, recorded, rescore)
    _check_metric_file(run_dir)
    if not sealed:
        return (
            f"{run_dir}: scored before vqaudit sealed its scored runs ({folder.scored.name} is "
            f"{UNSEALED_FORMAT}); its replies are checked, its files are not (run `vqaudit score {run_dir}` "
            "to seal them)"
        )
    return None


def _check_record(run_dir: Path, recorded: ScoredState, rescore: str) -> None:
    """Refuse a sealed record that is incomplete or altered (its digest)."""
    scored = RunFolder(run_dir).scored
    for field in ("replies_sha256", "bootstrap", "files", "seal_sha256"):
        if getattr(recorded, field) is None:
            raise VqauditError(f"{scored}: field '{field}': missing from a sealed ({recorded.format}) record")
    if seal_digest(recorded) != recorded.seal_sha256:
        raise VqauditError(f"{scored}: edited after `vqaudit score` (its seal digest does not match); {rescore}")


def _check_files(run_dir: Path, recorded: ScoredState, rescore: str) -> None:
    """Refuse a sealed run whose files changed since ``score``, naming the first file that did."""
    scored = RunFolder(run_dir).scored
    files = recorded.files or {}
    for name, path in _sealed_paths(run_dir).items():
        if name not in files:
            raise VqauditError(f"{scored}: field 'files.{name}': missing")
        if not path.is_file():
            raise VqauditError(f"{path}: missing since `vqaudit score`; {rescore}")
        if sha256_file(path) != files[name]:
            raise VqauditError(
                f"{path}: changed since `vqaudit score` (its SHA-256 is not the one sealed in {scored.name}); {rescore}"
            )


def bootstrap_of(run_dir: Path) -> Bootstrap | None:
    """The bootstrap settings a run was scored with: from its seal, else from ``metrics.json`` (None: unknown)."""
    folder = RunFolder(run_dir)
    if folder.scored.is_file():
        try:
            state = ScoredState.model_validate(read_json(folder.scored))
        except (ValidationError, VqauditError):
            state = None
        if state is not None and state.bootstrap is not None:
            return state.bootstrap
    if folder.metrics.is_file():
        metrics = read_json(folder.metrics)
        entries = (
            [e.get("bootstrap") for e in metrics.values() if isinstance(e, dict)] if isinstance(metrics, dict) else []
        )
        for entry in entries:
            if isinstance(entry, dict):
                try:
                    return Bootstrap.model_validate(entry)
                except ValidationError:
                    return None
    return None


def paired_bootstrap(base_dir: Path, other_dir: Path) -> Bootstrap:
    """The draws of a paired difference between two runs: the base run's recorded settings, else the other's.

    Seed 000 §4: paired comparisons reuse the same draws; drawn with a run's recorded ``score --draws
    --bootstrap-seed`` they are the draws of that run's own intervals. Runs scored before the settings were
    recorded get the defaults of ``vqaudit score`` (10,000 draws, bootstrap seed 0).
    """
    return bootstrap_of(base_dir) or bootstrap_of(other_dir) or Bootstrap(draws=DEFAULT_DRAWS, seed=0)


def _check_metric_file(run_dir: Path) -> None:
    path = RunFolder(run_dir).metrics
    if not path.is_file():
        return  # the readers say the run is not scored
    problems = metric_problems(read_json(path))
    if problems:
        raise VqauditError(f"{path}: run {run_dir}, {problems[0]}; not reported (run `vqaudit score {run_dir}` again)")


_TOLERANCE = 1e-9
"""Slack for float rounding in the interval and ordering checks (metrics are fractions in [0, 1])."""

MIN_DRAWS_FOR_INTERVALS = 40
"""Fewest recorded draws whose intervals are checked to hold their estimate: a 95% percentile interval of D draws
takes its ends from the 2.5% tails, about D/40 draws each, so below 40 draws an interval is a single draw's range
and a true estimate often lies outside it (measured: 94 of 100 random 20-group runs with 1 draw, 24 with 5, none
with 20 or more)."""


def metric_problems(metrics: object) -> list[str]:
    """The invariants a ``metrics.json`` breaks, each as ``source S, metric K: ...`` (empty = none).

    - every number is finite (JSON ``NaN`` and ``Infinity`` are refused; a metric without a value is null);
    - ``Jk <= Bk`` wherever both are given (a group fully task-correct is fully decision-correct; seed 000 §4);
    - every estimate lies inside its own 95% interval (``ci[K] = [lo, hi]``, ``lo <= K <= hi``), unless the
      entry records fewer than :data:`MIN_DRAWS_FOR_INTERVALS` bootstrap draws (``score --draws``).
    """
    problems: list[str] = []
    if not isinstance(metrics, dict):
        return ["metrics.json: not a JSON object of sources"]
    for source, entry in metrics.items():
        boot = entry.get("bootstrap") if isinstance(entry, dict) else None
        draws = boot.get("draws") if isinstance(boot, dict) else None
        coarse = _number(draws) and draws < MIN_DRAWS_FOR_INTERVALS  # type: ignore[operator]
        _walk(entry, f"source {source}", problems, intervals=not coarse)
    return problems


def _number(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _walk(node: object, where: str, problems: list[str], *, intervals: bool) -> None:
    if isinstance(node, list):
        for i, item in enumerate(node):
            _walk(item, f"{where}[{i}]", problems, intervals=intervals)
        return
    if _number(node):
        if not math.isfinite(float(node)):  # type: ignore[arg-type]
            problems.append(f"{where}: not a finite number ({node})")
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        _walk(
            value,
            f"{where}, metric {key}" if "metric" not in where else f"{where}.{key}",
            problems,
            intervals=intervals,
        )
    jk, bk = node.get("Jk"), node.get("Bk")
    if _number(jk) and _number(bk) and jk > bk + _TOLERANCE:  # type: ignore[operator]
        problems.append(f"{where}, metric Jk: {jk} is above Bk {bk} (Jk <= Bk)")
    ci = node.get("ci") if intervals else None
    if isinstance(ci, dict):
        for key, interval in ci.items():
            point = node.get(key)
            if not (
                _number(point)
                and isinstance(interval, list)
                and len(interval) == 2
                and all(_number(x) for x in interval)
            ):
                continue
            lo, hi = interval
            if not lo - _TOLERANCE <= point <= hi + _TOLERANCE:
                problems.append(f"{where}, metric {key}: {point} is outside its interval [{lo}, {hi}]")


def bootstrap_phrase(run_dirs: list[Path]) -> str:
    """How the runs' intervals were drawn, for a report's legend: ``200 group-bootstrap draws (seed 7)``.

    One phrase when every run was scored with the same settings; otherwise each run's, by folder name; a run
    scored before the settings were recorded says so.
    """
    settings = {d.name: bootstrap_of(d) for d in run_dirs}
    known = set(settings.values())
    if len(known) == 1 and None not in known:
        [b] = known
        assert b is not None
        return f"{b.draws:,} group-bootstrap draws (bootstrap seed {b.seed})"
    parts = [
        f"{name}: "
        + ("not recorded, scored before vqaudit recorded them" if b is None else f"{b.draws:,} draws, seed {b.seed}")
        for name, b in settings.items()
    ]
    return f"group-bootstrap draws ({'; '.join(parts)})"
