"""The run stage: ask one model about every view of a benchmark, caching each reply as it arrives.

A run folder holds ``responses.sqlite`` (the response cache, see ``vqaudit.backends.cache``) and ``run.json``
(model spec, benchmark path and manifest hash, prompt id, generation parameters, vqaudit version, timestamps,
counts; never an API key). A run killed at any point and started again asks only for the views whose reply is
missing; no reply is ever stored twice. One run folder holds one model on one benchmark.

Views with identical inputs (same image bytes, same question) share one cache key: they are asked once and get
the same reply, as a temperature-0 model would give; a backend that answers by id (``replay:``) is asked once
per view (see :mod:`vqaudit.backends.runner`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from vqaudit import __version__
from vqaudit.backends import (
    Backend,
    GenerationParams,
    ModelOptions,
    ResponseCache,
    backend_kind,
    check_request_ids,
)
from vqaudit.backends.distributed import load_backend_on
from vqaudit.backends.runner import Job, ask_cached, request_key
from vqaudit.errors import VqauditError
from vqaudit.executors import Executor, LocalExecutor
from vqaudit.files import sha256_file
from vqaudit.folder_lock import folder_lock
from vqaudit.progress import Reporter, step
from vqaudit.run_settings import RunSettings as RunSettings
from vqaudit.run_settings import RunSummary as RunSummary
from vqaudit.run_settings import _check_previous_run, _request
from vqaudit.run_settings import image_mime as image_mime
from vqaudit.schema import Response
from vqaudit.signals import run_async
from vqaudit.store import (
    GROUPS_FILE,
    VIEWS_FILE,
    Benchmark,
    BenchmarkFolder,
    RunFolder,
    RunInfo,
    load_benchmark,
    manifest_problems,
    relative_path,
    shard_of,
    sum_usage,
)
from vqaudit.suites.registry import prompt_for, sources_in_order


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def run_benchmark(
    bench_dir: Path,
    model_spec: str,
    out_dir: Path,
    *,
    concurrency: int = 8,
    retry_errors: bool = False,
    progress: bool = True,
    options: ModelOptions | None = None,
    executor: Executor | None = None,
    replicas: int | None = None,
    shard: tuple[int, int] | None = None,
    blind: bool = False,
) -> RunSummary:
    """Ask ``model_spec`` about every view of the benchmark at ``bench_dir``; store replies under ``out_dir``.

    Synchronous wrapper of ``run_benchmark_async`` (starts its own event loop).

    Args:
        bench_dir: benchmark folder (``views.jsonl``, ``groups.jsonl``, ``manifest.json``, images).
        model_spec: model spec string (see ``vqaudit.backends.base``).
        out_dir: run folder; created if needed. Rerunning into it resumes.
        concurrency: maximum concurrent backend calls (at least 1).
        retry_errors: ask again the views whose stored response records an error (the error row is replaced).
        progress: report the calls' progress on stderr (:mod:`vqaudit.progress`: a bar on a terminal, plain
            lines in a log, nothing with ``--quiet``); False: never.
        options: generic model options and ``--model-arg`` pairs (see :class:`~vqaudit.backends.ModelOptions`);
            its ``concurrency`` is replaced by ``concurrency``.
        executor: where the model runs (:mod:`vqaudit.executors`; default ``local``, in this process). With
            ``ray`` the model is loaded in ``replicas`` Ray actors (:mod:`vqaudit.backends.distributed`) and this
            process stores their replies in the one cache as they arrive, so everything below holds unchanged.
        replicas: Ray replicas (None: as many as the cluster holds, at most ``concurrency``).
        shard: ``(I, N)``: ask only the views whose cache key is in shard ``I`` of ``N``
            (:func:`vqaudit.store.shard_of`), for running one benchmark on ``N`` machines; the run folder records
            it and ``vqaudit merge`` joins the ``N`` run folders into one run.
        blind: ask every view with its prompt alone and no image (a text-only request, as a judge's): the
            questions a blind run answers correctly are image-agnostic (seed 001 App. 0.B.1, "Exclusion of some
            image-agnostic questions"; ``vqaudit build upd --drop-image-agnostic``). Recorded in ``run.json``
            (``blind``) and in every cache key (the image's hash is replaced by ``text-only``), so a blind and a
            sighted reply never share a key.

    Returns:
        A RunSummary of this invocation.

    Raises:
        VqauditError: a bad benchmark folder or model spec, ``out_dir`` holding a run of another model or
            benchmark, ``out_dir`` being written by another run (its lock is held: ``vqaudit.folder_lock``), or
            ``out_dir`` not a folder, or a fatal backend error (e.g. HTTP 401): replies received before it stay stored.
    """
    settings = RunSettings(
        concurrency=concurrency,
        retry_errors=retry_errors,
        progress=progress,
        options=options,
        executor=executor,
        replicas=replicas,
        shard=shard,
        blind=blind,
    )
    return run_async(run_benchmark_async(bench_dir, model_spec, out_dir, settings))


async def run_benchmark_async(
    bench_dir: Path, model_spec: str, out_dir: Path, settings: RunSettings | None = None
) -> RunSummary:
    """Async form of ``run_benchmark`` (its keywords as one :class:`RunSettings`; same result and errors).

    Cancelling it at any point loses only the calls in flight; every reply received before is in
    ``responses.sqlite``. Killing the process outright also loses the replies of its last
    ``runner.FLUSH_S`` seconds (committed in batches, :class:`~vqaudit.backends.runner.StoreBatch`), asked again
    on resume.
    """
    run = settings if settings is not None else RunSettings()
    concurrency, retry_errors, progress, options = run.concurrency, run.retry_errors, run.progress, run.options
    executor, replicas, shard, blind = run.executor, run.replicas, run.shard, run.blind
    if concurrency < 1:
        raise VqauditError(f"concurrency must be at least 1, got {concurrency}")
    if shard is not None and not 1 <= shard[0] <= shard[1]:
        raise VqauditError(f"shard {shard[0]}/{shard[1]}: expected I/N with 1 <= I <= N")
    bench = load_benchmark(bench_dir)
    tampered = [p for p in manifest_problems(bench) if VIEWS_FILE in p or GROUPS_FILE in p]
    if tampered:
        raise VqauditError(
            f"{bench_dir}: {tampered[0]}; the benchmark was edited after it was built (rebuild it, "
            "or check it with `vqaudit verify`)"
        )
    bench_root = bench_dir.resolve()
    manifest_sha256 = sha256_file(BenchmarkFolder(bench_root).manifest)
    base = options if options is not None else ModelOptions()
    params = base.generation(GenerationParams())  # --model-arg max_tokens=N, enable_thinking=..., ...
    out_root = out_dir.resolve()
    if out_root == bench_root or bench_root in out_root.parents:  # a run must not write into its benchmark folder
        raise VqauditError(
            f"{out_dir}: the run folder would be inside the benchmark folder {bench_root}; choose an --out outside it"
        )
    served = backend_kind(model_spec).sources
    if served is not None and (other := sorted({v.source for v in bench.views} - set(served))):
        raise VqauditError(
            f"model spec {model_spec!r} answers only {', '.join(served)} views; {bench_dir} holds "
            f"{', '.join(other)} views"
        )
    # a saved reply for a view the benchmark lacks (replay:) was meant for another benchmark: refused, as
    # import-predictions refuses such rows, whatever the shard
    check_request_ids(model_spec, {v.view_id for v in bench.views}, f"the benchmark {bench_dir}")
    backend = load_backend_on(
        executor or LocalExecutor(), model_spec, dataclasses.replace(base, concurrency=concurrency), replicas=replicas
    )
    # one writer per run folder, from the one-model check to the final run.json (see folder_lock)
    try:
        with folder_lock(out_dir, f"vqaudit run --model {model_spec}"):
            return await _run_locked(
                bench,
                bench_root,
                manifest_sha256,
                model_spec,
                out_dir,
                backend,
                params,
                concurrency,
                retry_errors,
                progress,
                shard,
                blind,
            )
    finally:
        await backend.aclose()  # also when the folder is refused (another model, another run holding it)


async def _run_locked(
    bench: Benchmark,
    bench_root: Path,
    manifest_sha256: str,
    model_spec: str,
    out_dir: Path,
    backend: Backend,
    params: GenerationParams,
    concurrency: int,
    retry_errors: bool,
    progress: bool,
    shard: tuple[int, int] | None,
    blind: bool,
) -> RunSummary:
    folder = RunFolder(out_dir)
    shard_text = f"{shard[0]}/{shard[1]}" if shard is not None else None
    _check_previous_run(folder, model_spec, manifest_sha256, shard_text, blind)
    run_info = RunInfo(
        model=model_spec,
        model_identity=str(getattr(backend, "identity", None) or backend.spec),  # hf/vllm: pinned weights
        benchmark=str(bench_root),
        benchmark_relative=relative_path(bench_root, out_dir),
        benchmark_manifest_sha256=manifest_sha256,
        sources=sources_in_order({v.source for v in bench.views}),
        prompt_ids=sorted({prompt_for(v)[0] for v in bench.views}),
        params=params.as_dict(),
        vqaudit_version=__version__,
        started=_now(),
        shard=shard_text,
        blind=blind,
    )
    folder.write_info(run_info)

    cache = ResponseCache(folder.responses)
    try:
        jobs: list[Job] = []
        view_keys: dict[str, str] = {}
        for view in bench.views:
            prompt_id, prompt = prompt_for(view)
            # a blind call is keyed as text-only (runner.TEXT_ONLY), never under the image it does not send
            key = request_key(backend, prompt_id, prompt, None if blind else view.image_sha256, params, view.view_id)
            if shard is not None and shard_of(key, shard[1]) != shard[0]:
                continue
            view_keys[view.view_id] = key
            jobs.append(
                Job(
                    key=key,
                    request_id=view.view_id,
                    build=functools.partial(
                        _request, view, prompt_id, prompt, None if blind else bench.image_path(view), params
                    ),
                )
            )
        cache.set_view_keys(view_keys)
        stored = cache.keys()
        redo = cache.error_keys() if retry_errors else set()
        todo_keys = {key for key in view_keys.values() if key not in stored or key in redo}
        n_cached = sum(1 for key in view_keys.values() if key not in todo_keys)
        n_replied = len(stored.intersection(view_keys.values()) - cache.error_keys())
        retried = bool(todo_keys) and todo_keys <= redo  # only views whose earlier call failed are asked
        with step(f"run {model_spec}", len(todo_keys)) if progress else _silent() as bar:
            n_asked = await ask_cached(
                backend,
                jobs,
                cache,
                concurrency=concurrency,
                reask_errors=retry_errors,
                give_up=lambda _n: max(concurrency, 4),
                unreachable=lambda n_done, response: _unreachable(
                    model_spec, n_done, response, n_replied=n_replied, retried=retried, out_dir=out_dir
                ),
                fatal_label=backend.spec,
                on_done=bar.advance,
            )
        errors = cache.error_keys()
        n_errors = sum(1 for key in view_keys.values() if key in errors)
        run_keys = set(view_keys.values())
        usage = sum_usage(r for r in cache.responses() if r.cache_key in run_keys)  # each row once
    finally:
        cache.close()

    endpoints_out = dict(getattr(backend, "endpoints_out", None) or {})  # KIND:MODEL@URL1,URL2,... (HTTP backends)
    summary = RunSummary(
        n_views=len(view_keys),
        n_cached=n_cached,
        n_asked=n_asked,
        n_errors=n_errors,
        out_dir=out_dir,
        endpoints_out=endpoints_out,
        usage=usage,
    )
    folder.write_info(
        run_info.model_copy(
            update={
                "finished": _now(),
                "n_views": summary.n_views,
                "n_cached": n_cached,
                "n_asked": n_asked,
                "n_errors": n_errors,
                "endpoints_out": endpoints_out,
                "usage": usage,
                "replicas_lost": list(getattr(backend, "losses", None) or []),
            }
        )
    )
    return summary


@contextlib.contextmanager
def _silent() -> Iterator[Reporter]:
    yield Reporter("", 0)


def _unreachable(
    spec: str,
    n_done: int,
    response: Response,
    *,
    n_replied: int = 0,
    retried: bool = False,
    out_dir: Path | None = None,
) -> VqauditError:
    """The error stopping a run whose first ``n_done`` calls all failed.

    With no reply of this model cached, the server (or the spec) is the likely cause. With ``n_replied`` replies
    cached (the server answered others), or when only views that failed before were asked (``retried``, a
    ``--retry-errors``), the cause is probably in these requests; the message says so and where the recorded
    errors are (``responses.sqlite``; after ``score``, ``outcomes.jsonl`` and the report's sample browser).
    """
    if n_replied or retried:
        which = "the views that failed before (asked again by --retry-errors)" if retried else "views not asked before"
        where = out_dir if out_dir is not None else "RUN"
        return VqauditError(
            f"{spec}: the first {n_done} requests all failed after their retries (last: {response.error}); "
            f"stopped. They are {which}, and the server answered others ({n_replied} cached replies), so the "
            "cause is probably in these requests (an image or prompt it refuses, a size or context limit, a reply "
            f"longer than --timeout), not a server down. Each view's error is recorded in {where}/responses.sqlite; "
            f"`vqaudit score {where}` counts them as invalid and `vqaudit report {where}` shows each one in the "
            "sample browser (samples.html)"
        )
    return VqauditError(
        f"{spec}: the first {n_done} requests all failed after their retries (last: "
        f"{response.error}); stopped instead of failing every view. Check the cause in that error (a server "
        "down, a wrong model name or URL, a replay file made for another benchmark); the failures are recorded, "
        "rerun with --retry-errors once it is fixed"
    )


def load_responses(run_dir: Path) -> dict[str, Response]:
    """Load the responses of a run folder, keyed by view id (for the scoring stage).

    Each view of the latest run maps to the response under its cache key (a view whose reply is missing, e.g.
    after an interrupted run, is absent). Without a recorded view map, every stored response counts for its
    ``view_id`` and the latest stored wins. A recorded error is a Response with ``error`` set and ``text`` None.

    Args:
        run_dir: a run folder written by ``run_benchmark``.

    Returns:
        ``{view_id: Response}``.

    Raises:
        VqauditError: ``run_dir`` has no ``responses.sqlite``.
    """
    path = RunFolder(run_dir).responses
    if not path.is_file():
        raise VqauditError(f"{path}: file not found (run the benchmark into {run_dir} first)")
    with ResponseCache(path) as cache:
        responses = cache.responses()
        view_keys = cache.view_keys()
    if not view_keys:
        return {r.view_id: r for r in responses}
    by_key = {r.cache_key: r for r in responses}
    out: dict[str, Response] = {}
    for view_id, key in view_keys.items():
        found = by_key.get(key)
        if found is not None:
            out[view_id] = found if found.view_id == view_id else found.model_copy(update={"view_id": view_id})
    return out
