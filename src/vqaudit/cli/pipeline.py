"""The pipeline commands ``verify``, ``run``, ``merge`` and ``score``.

``report`` is :mod:`vqaudit.cli.report`; ``eval`` (all four stages and the report in one) is
:mod:`vqaudit.cli.evaluate`.

Every stage reads and writes folders, so any stage can be rerun alone. Sources are looked up in the source
table (:mod:`vqaudit.suites.registry`) and models in the backend table (:mod:`vqaudit.backends.registry`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vqaudit.cli.options import (
    ApiKeyEnv,
    BootSeed,
    Concurrency,
    Draws,
    EndpointOpt,
    ExecutorName,
    ExecutorOpt,
    JudgeArg,
    MaxRetries,
    ModelArg,
    RayAddress,
    RayReplicas,
    ReasoningFormatName,
    ReasoningFormatOpt,
    Timeout,
    console,
    error,
    executor,
    model_executor,
    model_options,
    warning,
    with_endpoints,
)

if TYPE_CHECKING:
    from vqaudit.store import RunUsage


def verify(
    bench: Annotated[Path, typer.Argument(help="Benchmark folder.")],
    workers: Annotated[int, typer.Option(min=1, help="Re-rendering processes.")] = 2,
    executor_name: ExecutorOpt = ExecutorName.local,
    ray_address: RayAddress = None,
    rebuild: Annotated[
        bool,
        typer.Option(
            help="Also rebuild the benchmark from its manifest's source, seed and "
            "options into a temporary folder and compare every file's bytes."
        ),
    ] = False,
) -> None:
    """Re-derive every view (gold, images, labels) from what the benchmark declares; exit 1 listing every fault."""
    from vqaudit.executors import using
    from vqaudit.verify import count_checked, rebuild_problems, verify_benchmark

    with using(executor(executor_name, ray_address)):
        faults = verify_benchmark(bench, workers=workers)
        if rebuild:
            faults += rebuild_problems(bench, workers=workers)
    if faults:
        for view_id, problem in faults:
            typer.echo(f"FAIL {view_id}: {problem}")
        raise typer.Exit(1)
    counts = ", ".join(f"{n} {what}" for what, n in count_checked(bench).items())
    rebuilt = "; a rebuild from its manifest is byte-identical" if rebuild else ""
    typer.echo(f"{bench}: every image matches views.jsonl; verified {counts}{rebuilt}")


def run(
    bench: Annotated[Path, typer.Argument(help="Benchmark folder.")],
    model: Annotated[str, typer.Option(help="Model spec, e.g. reference:gold or openai:NAME@http://HOST:PORT/v1.")],
    out: Annotated[Path, typer.Option(help="Run folder (rerunning into it resumes).")],
    concurrency: Concurrency = 8,
    retry_errors: Annotated[bool, typer.Option(help="Ask again views whose recorded reply is an error.")] = False,
    api_key_env: ApiKeyEnv = None,
    model_arg: ModelArg = None,
    timeout: Timeout = 120.0,
    max_retries: MaxRetries = 5,
    executor_name: ExecutorOpt = ExecutorName.local,
    ray_address: RayAddress = None,
    ray_replicas: RayReplicas = None,
    shard: Annotated[
        str | None,
        typer.Option(
            help="Ask only shard I of N (e.g. 2/4), to run one benchmark on N "
            "machines; join the N run folders with `vqaudit merge`."
        ),
    ] = None,
    endpoint: EndpointOpt = None,
    blind: Annotated[
        bool,
        typer.Option(
            help="Ask every view with its prompt alone, no image (a text-only request): "
            "what a blind run answers right needs no image (`vqaudit build upd "
            "--drop-image-agnostic`)."
        ),
    ] = False,
) -> None:
    """Ask a model about every view of a benchmark; each reply is cached before anything is scored.

    ``KIND:MODEL@URL1,URL2,...`` (an HTTP backend, or ``--endpoint URL``) spreads the calls over several servers
    of one model (least-loaded first; a server that keeps failing is taken out of rotation and named in run.json).
    """
    from vqaudit.run import run_benchmark
    from vqaudit.store import parse_shard

    options = model_options(
        api_key_env=api_key_env, concurrency=concurrency, timeout=timeout, max_retries=max_retries, args=model_arg
    )
    on = model_executor(executor_name, ray_address, ray_replicas)
    model = with_endpoints(model, endpoint)
    summary = run_benchmark(
        bench,
        model,
        out,
        concurrency=concurrency,
        retry_errors=retry_errors,
        options=options,
        executor=on,
        replicas=ray_replicas,
        shard=parse_shard(shard) if shard is not None else None,
        blind=blind,
    )
    which = (f" of shard {shard}" if shard is not None else "") + (" (blind: no images sent)" if blind else "")
    console.print(
        f"{summary.n_views} views{which}: {summary.n_cached} already cached, {summary.n_asked} requests "
        f"sent (views with identical inputs share one request), {summary.n_errors} with a recorded "
        f"error; run folder {out}"
    )
    if summary.usage is not None:
        console.print(usage_line(summary.usage))
    for url, why in summary.endpoints_out.items():
        warning(f"endpoint {url} {why}")
    if summary.n_errors:
        error(
            f"{summary.n_errors} views have no reply, only a recorded error; fix the cause and rerun with "
            "--retry-errors (scoring would count them as invalid)"
        )
        raise typer.Exit(1)


def usage_line(usage: RunUsage) -> str:
    """The one line of a run's token sums (``run.json`` ``usage``), as the server reported them."""

    def shown(count: int | None) -> str:
        return "not reported" if count is None else str(count)

    return (
        f"tokens reported by the server over {usage.replies} replies: {shown(usage.prompt_tokens)} prompt, "
        f"{shown(usage.completion_tokens)} completion (of which {shown(usage.reasoning_tokens)} reasoning); in "
        "run.json usage"
    )


def merge(
    runs: Annotated[list[Path], typer.Argument(help="Run folders of one model on one benchmark (e.g. its shards).")],
    out: Annotated[Path, typer.Option(help="The merged run folder (new).")],
    bench: Annotated[
        Path | None,
        typer.Option(
            help="The benchmark folder, if it is not where the first run's "
            "run.json says (checked by its manifest hash)."
        ),
    ] = None,
) -> None:
    """Join the caches of several runs (the shards of `run --shard`) into one run; no reply is stored twice."""
    from vqaudit.merge import merge_runs

    summary = merge_runs(runs, out, bench=bench)
    console.print(
        f"merged {summary.n_runs} runs: {summary.n_rows} responses ({summary.n_duplicates} duplicate rows "
        f"dropped), {summary.n_views} views, {summary.n_errors} with a recorded error; run folder {out}"
    )
    if summary.usage is not None:
        console.print(usage_line(summary.usage))


def score(
    run_dir: Annotated[Path, typer.Argument(help="Run folder.")],
    judge: Annotated[
        str | None, typer.Option(help="Judge model spec for UPD replies the matcher cannot decide.")
    ] = None,
    judge_arg: JudgeArg = None,
    api_key_env: ApiKeyEnv = None,
    bench: Annotated[
        Path | None,
        typer.Option(
            help="The run's benchmark folder, if it is not where run.json says (checked by its manifest hash)."
        ),
    ] = None,
    draws: Draws = 10_000,
    bootstrap_seed: BootSeed = 0,
    reasoning_format: ReasoningFormatOpt = ReasoningFormatName.auto,
    labels: Annotated[
        Path | None,
        typer.Option(
            help="Human verdicts per UPD view (CSV/TSV/JSONL: view_id, label "
            "correct/incorrect): the judge's agreement and Cohen's kappa "
            "with them (seed 001 Fig. E), in metrics.json."
        ),
    ] = None,
) -> None:
    """Parse and score a run; write outcomes.jsonl, metrics.json and diagnostics.json."""
    from vqaudit.score import JUDGE_CONCURRENCY, score_run

    options = model_options(
        api_key_env=api_key_env, concurrency=JUDGE_CONCURRENCY, args=judge_arg, args_option="--judge-arg"
    )
    metrics = score_run(
        run_dir,
        judge=judge,
        judge_options=options,
        bench=bench,
        n_draws=draws,
        seed=bootstrap_seed,
        reasoning_format=reasoning_format.value,
        labels=labels,
    )
    _print_metrics(metrics)
    if (agree := metrics.get("upd", {}).get("judge_agreement")) is not None:
        kappa = "undefined" if agree["kappa"] is None else f"{agree['kappa']:.3f}"
        console.print(
            f"judge versus human labels: {agree['n_compared']} views the judge decided, agreement "
            f"{100 * agree['accuracy']:.1f}%, Cohen's kappa {kappa} ({agree['n_not_judged']} labelled "
            "views decided without the judge, not compared)"
        )
    console.print(f"metrics written to {run_dir / 'metrics.json'}")
    _warn_no_reply(run_dir)


def _warn_no_reply(run_dir: Path) -> None:
    """One ``warning:`` line when views hold only a recorded error: the scores count them as failures."""
    from vqaudit.merge import rerun_advice
    from vqaudit.score import views_without_reply
    from vqaudit.store import RunFolder

    missing = views_without_reply(run_dir)
    if not missing:
        return
    info = RunFolder(run_dir).read_info()
    origin = (info.model_extra or {}).get("origin")
    if isinstance(origin, dict) and origin.get("harness"):
        fix = (
            f"run {origin['harness']} on them and import its complete log again (`vqaudit import-predictions "
            "... --out NEW_RUN`)"
        )
    else:
        fix = f"fix the cause and {rerun_advice(run_dir, info, retry_errors=True)}, then score again"
    warning(
        f"{len(missing)} of {info.n_views} views have no reply, only a recorded error (first: {missing[0]}); "
        "they are scored as failures (an invalid reply; UPD: undecided, counted in undecided.no_reply); " + fix
    )


def _print_metrics(metrics: dict[str, Any]) -> None:
    from vqaudit.suites.registry import hooks

    for source, entry in metrics.items():
        console.print(f"{source}: {hooks(source).summary_line(entry)}")
