"""``vqaudit merge``: join run folders of one model on one benchmark (the shards of ``run --shard``) into one run.

Every input must hold a run of the same model (spec and identity), benchmark (manifest hash), prompts and
generation parameters. Their caches are joined by cache key, so no reply is stored twice: a key held by
several inputs with the same reply text is one row; a recorded error gives way to a reply; two *different*
replies for one key are a conflict, and the merge stops naming the key and the two runs (a temperature-0 model
asked the same call twice should not disagree; which reply is right is for the user to decide). Sharded inputs
must together cover every shard ``1..N`` (an unsharded input covers all). An input whose run did not finish
(killed mid-run, stopped by a fatal error: ``run.json`` records no ``finished`` time, or a view of its view map
has no row, not even a recorded error) is refused, naming it and the command that finishes it. The view -> key
maps are joined too (a view mapped to two keys is refused). The merged run is written into a new folder all at once
(:func:`vqaudit.staging.staged_folder`): a refused merge leaves nothing behind. It is scored like any run.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from vqaudit.backends import ResponseCache
from vqaudit.errors import VqauditError
from vqaudit.folder_lock import folder_lock
from vqaudit.schema import Response
from vqaudit.staging import staged_folder
from vqaudit.store import RunFolder, RunInfo, RunUsage, parse_shard, relative_path, sum_usage

_SAME = ("model", "model_identity", "benchmark_manifest_sha256", "prompt_ids", "params", "blind")
"""RunInfo fields every merged run must share."""


@dataclass(frozen=True)
class MergeSummary:
    """What a merge wrote.

    Attributes:
        n_runs: input run folders.
        n_rows: responses in the merged cache (one per key).
        n_duplicates: input rows dropped because another input held the same key (same reply, or an error
            where another input held a reply).
        n_views: views in the merged view map.
        n_errors: views whose merged response records an error.
        out_dir: the merged run folder.
        usage: token counts summed over the merged rows of its views (``run.json`` ``usage``), or None.
    """

    n_runs: int
    n_rows: int
    n_duplicates: int
    n_views: int
    n_errors: int
    out_dir: Path
    usage: RunUsage | None = None


def _check_same(infos: list[tuple[Path, RunInfo]]) -> None:
    first_dir, first = infos[0]
    for run_dir, info in infos[1:]:
        for field in _SAME:
            if getattr(info, field) != getattr(first, field):
                raise VqauditError(
                    f"{run_dir / 'run.json'}: field '{field}' is {getattr(info, field)!r}, but "
                    f"{first_dir} has {getattr(first, field)!r}; only runs of one model on one "
                    "benchmark merge"
                )


def _check_shards(infos: list[tuple[Path, RunInfo]]) -> None:
    """Sharded inputs must cover every shard of one N, unless an unsharded input covers everything."""
    if any(info.shard is None for _, info in infos):
        return
    shards = {parse_shard(info.shard): run_dir for run_dir, info in infos if info.shard is not None}
    counts = sorted({n for _, n in shards})
    if len(counts) > 1:
        raise VqauditError(
            f"the runs are shards of different splits (N = {', '.join(map(str, counts))}); "
            "merge the shards of one `--shard I/N` split"
        )
    n = counts[0]
    missing = [f"{i}/{n}" for i in range(1, n + 1) if (i, n) not in shards]
    if missing:
        raise VqauditError(
            f"shard {missing[0]} is missing ({len(missing)} of {n} shards are); give the run folders of every shard"
        )


def _check_finished(run_dir: Path, info: RunInfo, responses: list[Response], view_keys: dict[str, str]) -> None:
    """Refuse an input whose run did not finish: no ``finished`` time in ``run.json``, or views without a row.

    ``vqaudit run`` records ``finished`` only after its last call (a resumed run clears it until it ends), and
    writes its view map before asking, so a run killed or stopped part way has views whose key has no row.
    """
    held = {r.cache_key for r in responses}
    missing = sum(1 for key in view_keys.values() if key not in held)
    if info.finished is None or missing:
        what = f"the run of shard {info.shard}" if info.shard else "its run"
        why = f"{missing} of {len(view_keys)} views have no reply" if missing else "run.json records no finish time"
        shard = f" --shard {info.shard}" if info.shard else ""
        raise VqauditError(
            f"{run_dir}: {what} did not finish ({why}: killed or stopped part way); rerun that "
            f"shard with the same command (`vqaudit run {info.benchmark} --model {info.model} --out "
            f"{run_dir}{shard}` with the options it had: it asks only what is missing), then merge "
            "again"
        )


def rerun_advice(run_dir: Path, info: RunInfo, *, retry_errors: bool = False) -> str:
    """What to run so that the views of ``run_dir`` without a reply get one: a command that works on this folder.

    A run folder asked directly is resumed by ``vqaudit run`` into it (``--retry-errors`` asks the recorded
    errors again). A merged folder (``merged_from``) is never run into (``vqaudit run`` refuses it), so the
    advice is to rerun the shards' own folders and merge them again into a new folder.
    """
    retry = " --retry-errors" if retry_errors else ""
    if not info.merged_from:
        shard = f" --shard {info.shard}" if info.shard else ""
        return f"rerun `vqaudit run {info.benchmark} --model {info.model} --out {run_dir}{shard}{retry}`"
    return (
        f"{run_dir} was made by `vqaudit merge` from {', '.join(info.merged_from)}, and no run goes into a "
        f"merged folder: rerun each of those with its own command (`vqaudit run {info.benchmark} --model "
        f"{info.model} --out SHARD_FOLDER --shard I/N{retry}`), then `vqaudit merge` them again into a new "
        "folder"
    )


def _join(caches: list[tuple[Path, list[Response]]]) -> tuple[dict[str, Response], int]:
    """The rows by key, in input order; an error gives way to a reply. Returns (rows, duplicates dropped).

    Raises:
        VqauditError: two different reply texts for one key (the message names the key and both runs).
    """
    rows: dict[str, Response] = {}
    source: dict[str, Path] = {}
    duplicates = 0
    for run_dir, responses in caches:
        for response in responses:
            key = response.cache_key
            held = rows.get(key)
            if held is None:
                rows[key], source[key] = response, run_dir
                continue
            duplicates += 1
            if held.text is not None and response.text is not None and held.text != response.text:
                raise VqauditError(
                    f"cache key {key}: {source[key]} and {run_dir} hold different replies "
                    f"({held.text[:60]!r} and {response.text[:60]!r}); remove one of the two rows "
                    "(or one run) and merge again"
                )
            if held.error is not None and response.error is None:
                rows[key], source[key] = response, run_dir
    return rows, duplicates


def _join_view_keys(maps: list[tuple[Path, dict[str, str]]]) -> dict[str, str]:
    joined: dict[str, str] = {}
    where: dict[str, Path] = {}
    for run_dir, view_keys in maps:
        for view_id, key in view_keys.items():
            if joined.setdefault(view_id, key) != key:
                raise VqauditError(
                    f"view {view_id}: {where[view_id]} and {run_dir} map it to different cache keys "
                    f"({joined[view_id]} and {key}); were they asked with different prompts?"
                )
            where.setdefault(view_id, run_dir)
    return joined


def merge_runs(runs: list[Path], out: Path, *, bench: Path | None = None) -> MergeSummary:
    """Join the run folders ``runs`` into the new run folder ``out`` (see the module docstring).

    Args:
        runs: run folders made by ``vqaudit run`` (typically with ``--shard I/N``, one per shard), at least one.
        out: the merged run folder; it must not exist (or be an empty folder).
        bench: the benchmark folder, if it is not where the first run's ``run.json`` says (checked by its
            manifest hash), recorded in the merged ``run.json``.

    Returns:
        A MergeSummary.

    Raises:
        VqauditError: no runs, a folder given twice, a run without ``run.json`` or ``responses.sqlite``, runs
            of different models, benchmarks, prompts or parameters, a missing
            shard, a run that did not finish (killed or stopped part way; the message names it and the command
            that finishes it), two different replies for one cache key, a view mapped to two keys, the
            benchmark not found,
            an input still being written by a run (its folder lock is held), or ``out`` existing and not empty.
            Nothing is written then.
    """
    if not runs:
        raise VqauditError("merge: give at least one run folder")
    resolved = [r.resolve() for r in runs]
    twice = [r for i, r in enumerate(resolved) if r in resolved[:i]]
    if twice:
        raise VqauditError(f"merge: {twice[0]} is given twice")
    if out.resolve() in resolved:
        raise VqauditError(f"merge: --out {out} is one of the inputs; merge into a new folder")
    for run_dir in runs:
        RunFolder(run_dir).read_info()  # a folder that is no run fails here, before a lock would create it
    with ExitStack() as locks:  # a run still being written (its lock held) is refused, naming its holder
        for run_dir in runs:
            locks.enter_context(folder_lock(run_dir, f"vqaudit merge --out {out}"))
        infos = [(run_dir, RunFolder(run_dir).read_info()) for run_dir in runs]
        _check_same(infos)
        _check_shards(infos)
        caches: list[tuple[Path, list[Response]]] = []
        maps: list[tuple[Path, dict[str, str]]] = []
        for run_dir in runs:
            path = RunFolder(run_dir).responses
            if not path.is_file():
                raise VqauditError(f"{path}: file not found (is {run_dir} a run folder made by `vqaudit run`?)")
            with ResponseCache(path) as cache:
                caches.append((run_dir, cache.responses()))
                maps.append((run_dir, cache.view_keys()))
            _check_finished(run_dir, infos[len(maps) - 1][1], caches[-1][1], maps[-1][1])
    rows, duplicates = _join(caches)
    view_keys = _join_view_keys(maps)
    bench_dir = RunFolder(runs[0]).benchmark(bench).resolve()
    errors = {key for key, r in rows.items() if r.error is not None}
    first = infos[0][1]
    endpoints_out: dict[str, str] = {}
    for _, info in infos:
        endpoints_out.update(info.endpoints_out)
    started = sorted(info.started for _, info in infos if info.started)
    merged = first.model_copy(
        update={
            "benchmark": str(bench_dir),
            "benchmark_relative": relative_path(bench_dir, out),
            "shard": None,
            "started": started[0] if started else None,
            "finished": datetime.now(UTC).isoformat(timespec="seconds"),
            "n_views": len(view_keys),
            "n_cached": None,
            "n_asked": sum(info.n_asked or 0 for _, info in infos),
            "n_errors": sum(1 for key in view_keys.values() if key in errors),
            "endpoints_out": endpoints_out,
            "merged_from": [str(r) for r in resolved],
            "usage": sum_usage(rows[key] for key in set(view_keys.values()) if key in rows),
        }
    )
    with staged_folder(out) as tmp:
        with ResponseCache(RunFolder(tmp).responses) as cache:
            cache.put_many(list(rows.values()))
            cache.set_view_keys(view_keys)
        RunFolder(tmp).write_info(merged)
    return MergeSummary(
        n_runs=len(runs),
        n_rows=len(rows),
        n_duplicates=duplicates,
        n_views=len(view_keys),
        n_errors=merged.n_errors or 0,
        out_dir=out,
        usage=merged.usage,
    )
