"""The score stage: a run folder's cached responses -> outcomes per view -> metrics per source.

Reads ``run.json`` (which names the benchmark, found by :meth:`vqaudit.store.RunFolder.benchmark`) and the
response cache; writes, atomically, ``outcomes.jsonl`` (one Outcome per view, raw reply kept beside the parse),
``metrics.json`` (one entry per source, from the source's ``metrics`` hook, with the ``bootstrap`` draws and
seed), ``diagnostics.json`` (the sources' ``diagnostics`` hooks: failure accounting, E_lambda curve,
invalid-reply reasons, residual cues) and, last, ``scored.json`` (the seal over the cache state scored and the
files written, :mod:`vqaudit.scored_state`).
Each source is scored by the hooks of its row in the source table (:mod:`vqaudit.suites.registry`). Rerunning
gives identical files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vqaudit.backends import ModelOptions, load_backend, require_free_text_model
from vqaudit.errors import VqauditError
from vqaudit.files import atomic_write_set, json_text, jsonl_chunks, read_jsonl
from vqaudit.folder_lock import folder_lock
from vqaudit.merge import rerun_advice
from vqaudit.metrics.judge_agreement import judge_agreement, read_view_labels
from vqaudit.parsing.reasoning import effective_format
from vqaudit.progress import step
from vqaudit.provenance import check_benchmark_of_run
from vqaudit.run import load_responses
from vqaudit.schema import Outcome, Response
from vqaudit.scored_state import reply_state, write_scored
from vqaudit.store import Benchmark, RunFolder, load_benchmark
from vqaudit.suites.registry import ScoreContext, hooks, sources_in_order

N_DRAWS = 10_000
JUDGE_CONCURRENCY = 8


def score_run(
    run_dir: Path,
    *,
    n_draws: int = N_DRAWS,
    seed: int = 0,
    judge: str | None = None,
    judge_options: ModelOptions | None = None,
    bench: Path | None = None,
    reasoning_format: str = "auto",
    labels: Path | None = None,
) -> dict[str, Any]:
    """Score every view of a run and write outcomes, metrics and diagnostics; return the metrics.

    Args:
        run_dir: a run folder made by ``vqaudit run``.
        n_draws: group-bootstrap draws for the 95% intervals (seed 000, §4: 10,000).
        seed: seed of the bootstrap draws (runs scored with the same seed share draws).
        judge: model spec of a judge for replies the UPD choice matcher cannot decide (None: no judge). It is
            checked before anything is read or scored; a reference policy is refused.
        judge_options: generic model options of the judge (``--judge-arg``, ``--timeout``, ...).
        bench: the benchmark folder, overriding where ``run.json`` says it is (``--bench``).
        reasoning_format: which reasoning spans are split off every reply before it is read (``auto``, ``none``
            or a format of :mod:`vqaudit.parsing.reasoning`); a reasoning model's thinking is never scored.
        labels: a file of human verdicts per UPD view (``view_id``, ``label``): the judge's verdicts are compared
            with them (accuracy, Cohen's kappa; seed 001 App. 0.C.2, Fig. E) into ``metrics.json``
            ``upd.judge_agreement`` (:mod:`vqaudit.metrics.judge_agreement`). Needs ``judge``.

    Raises:
        VqauditError: a bad judge spec (the message lists the valid forms), a reference policy as the judge,
            the run or its benchmark cannot be read or found (or is another benchmark, or was edited since it was
            built: ``provenance``), the run is of one shard (``vqaudit run --shard``: merge the shards first),
            some views have no response yet (the message says how many and that ``vqaudit run`` resumes), or the
            judge fails (fatally, or its first calls all fail: it is unreachable; the verdicts received stay cached in
            ``RUN/judge.sqlite``), or another process (a ``vqaudit run`` still asking) holds the run folder's lock.
    """
    RunFolder(run_dir).read_info()  # a folder that is no run fails here, before a lock file would be made in it
    # one writer per run folder: a run still asking would change the replies under the scorer
    with folder_lock(run_dir, "vqaudit score", busy="wait for it to finish, then score again"):
        return _score_locked(
            run_dir,
            n_draws=n_draws,
            seed=seed,
            judge=judge,
            judge_options=judge_options,
            bench=bench,
            reasoning_format=reasoning_format,
            labels=labels,
        )


def _score_locked(
    run_dir: Path,
    *,
    n_draws: int,
    seed: int,
    judge: str | None,
    judge_options: ModelOptions | None,
    bench: Path | None,
    reasoning_format: str,
    labels: Path | None,
) -> dict[str, Any]:
    if n_draws < 1:
        raise VqauditError(f"--draws must be at least 1, got {n_draws}")
    if labels is not None and judge is None:
        raise VqauditError(
            "--labels compares the judge's verdicts with human ones: give the --judge that decided "
            "the run's undecided replies"
        )
    human = read_view_labels(labels) if labels is not None else None
    options = judge_options if judge_options is not None else ModelOptions(concurrency=JUDGE_CONCURRENCY)
    judge_backend = load_backend(judge, options) if judge is not None else None
    if judge is not None:
        require_free_text_model(judge, "--judge")  # UPD judge replies are free text (a letter or option text)
    folder = RunFolder(run_dir)
    shard = folder.read_info().shard
    if shard is not None:
        raise VqauditError(
            f"{run_dir}: a run of shard {shard} of the benchmark; join the shards' run folders with "
            "`vqaudit merge RUN... --out RUN` and score the merged run"
        )
    benchmark = load_benchmark(folder.benchmark(bench), check_images=False)
    check_benchmark_of_run(benchmark)  # views.jsonl / groups.jsonl still match the manifest (a gold edited is refused)
    state = reply_state(run_dir)  # before reading: a reply added meanwhile makes the run stale, not unseen
    responses = load_responses(run_dir)
    missing = [v.view_id for v in benchmark.views if v.view_id not in responses]
    if missing:
        raise VqauditError(
            f"{run_dir}: {len(missing)} of {len(benchmark.views)} views have no response (first: {missing[0]}); "
            f"{rerun_advice(run_dir, folder.read_info())} to resume, then score again"
        )
    # auto becomes NAME-open when the replies show the chat template opens the span (parsing/reasoning.py rule 5)
    applied = effective_format(reasoning_format, (responses[v.view_id].text for v in benchmark.views))
    ctx = ScoreContext(
        run_dir=run_dir,
        judge=judge,
        judge_backend=judge_backend,
        judge_concurrency=options.concurrency,
        reasoning_format=applied,
    )
    outcomes: list[Outcome] = []
    metrics: dict[str, Any] = {}
    diag: dict[str, Any] = {}
    with step(f"score {run_dir}", len(benchmark.views)) as shown:
        for name in sources_in_order({v.source for v in benchmark.views}):
            shown.advance(_score_source(name, benchmark, responses, ctx, outcomes, metrics, diag, n_draws, seed))
    if labels is not None and human is not None and judge is not None:
        if "upd" not in metrics:
            raise VqauditError(f"--labels: {run_dir} holds no MM-UPD views (the judge decides only UPD replies)")
        metrics["upd"]["judge_agreement"] = judge_agreement(
            [o for o in outcomes if o.source == "upd"], human, labels_path=labels, judge=judge
        )
    # one set, metrics.json (the file every reader checks first) renamed last: a failure part-way (a full disk,
    # a folder in a file's place) leaves the old set, or no metrics.json, never new outcomes beside old metrics
    atomic_write_set(
        [
            (folder.outcomes, jsonl_chunks(outcomes)),
            (folder.diagnostics, [json_text(diag)]),
            (folder.metrics, [json_text(metrics)]),
        ]
    )
    # last: the seal over what was read and written, with the reasoning format the replies were split by
    write_scored(run_dir, state, draws=n_draws, seed=seed, reasoning_format=applied)
    return metrics


def _score_source(
    name: str,
    benchmark: Benchmark,
    responses: dict[str, Response],
    ctx: ScoreContext,
    outcomes: list[Outcome],
    metrics: dict[str, Any],
    diag: dict[str, Any],
    n_draws: int,
    seed: int,
) -> int:
    """Score the views of source ``name`` into ``outcomes``, ``metrics`` and ``diag``; return how many views."""
    source = hooks(name)
    views = [v for v in benchmark.views if v.source == name]
    groups = [g for g in benchmark.groups if g.source == name]
    scored = source.score(views, responses, ctx)
    outcomes += scored
    metrics[name] = source.metrics(scored, views, groups, n_draws=n_draws, seed=seed)
    metrics[name]["bootstrap"] = {"draws": n_draws, "seed": seed}  # every report states them
    extra = source.diagnostics(scored, groups, metrics[name], n_draws=n_draws, seed=seed)
    if extra is not None:
        diag[name] = extra
    return len(views)


def views_without_reply(run_dir: Path) -> tuple[str, ...]:
    """The views of a run whose response is only a recorded error (no reply text), sorted by view id.

    ``score_run`` scores each as a failure: never decision- or task-correct; an invalid reply for the
    answerability sources (``invalid_rate``), undecided with ``decided_by = "no-reply"`` for UPD
    (``undecided.no_reply``). ``vqaudit run ... --retry-errors`` asks them again.
    """
    return tuple(sorted(k for k, r in load_responses(run_dir).items() if r.error is not None))


def load_outcomes(run_dir: Path) -> list[Outcome]:
    """The outcomes of a scored run. Raises VqauditError if the run has not been scored."""
    path = RunFolder(run_dir).outcomes
    if not path.is_file():
        raise VqauditError(f"{run_dir}: not scored yet; run `vqaudit score {run_dir}` first")
    return read_jsonl(path, Outcome, surrogates=True)
