"""The pipeline commands: ``verify``, ``run``, ``merge``, ``score``, ``report`` and ``eval`` (all four in one).

Every stage reads and writes folders, so any stage can be rerun alone. Sources are looked up in the source
table (:mod:`vqaudit.suites.registry`) and models in the backend table (:mod:`vqaudit.backends.registry`).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vqaudit.cli.build import build_source
from vqaudit.cli.options import (
    MAX_GROUPS,
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
from vqaudit.errors import VqauditError

if TYPE_CHECKING:
    from vqaudit.backends import ModelOptions
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


def report(
    runs: Annotated[list[Path], typer.Argument(help="Scored run folders to compare (and `vqaudit audit` folders).")],
    out: Annotated[Path | None, typer.Option(help="Report folder (default: the first run's report/).")] = None,
) -> None:
    """Write the HTML report with its sample browser, and for scored run folders the Markdown report too.

    Scored run folders get report.md (Jk/Bk with intervals; MM-UPD runs: upd_report.md with radar charts, in the
    same folder, as `vqaudit eval upd` writes it) and index.html; `vqaudit audit`
    folders appear in index.html only (their own report.md is in the audit folder), with scores as report.md
    shows them. With several runs of one benchmark, each later run is compared with the first on the first's
    recorded bootstrap draws: paired Delta Jk and Delta Bk, and Delta common-state Bk and Jk and Delta conditional
    disagreement (seed 000 appendix B), each with its 95% paired interval. Each run's seal (scored.json) is
    checked first: a run changed since `vqaudit score` is refused.
    """
    from vqaudit.files import staged_update
    from vqaudit.report.html import write_html_report  # HTML report + sample browser beside the Markdown
    from vqaudit.report.html_audit import is_audit_folder  # seed 002 audit folders (docs/report.md)

    target = out or runs[0] / "report"
    scored = [r for r in runs if not is_audit_folder(r)]  # `vqaudit audit` folders go to the HTML only
    # written in a staged sibling and moved into place whole: a failure (a full disk, a truncated outcomes.jsonl)
    # leaves the report folder as it was, never a partial report
    with staged_update(target) as tmp:
        written = write_reports(scored, tmp) if scored else []
        html = write_html_report(runs, tmp, shown_as=target)
    for label, path in written:
        typer.echo(f"{label}: {target / path.relative_to(tmp)}")
    typer.echo(f"HTML report: {target / html.relative_to(tmp)}")


def write_reports(runs: list[Path], target: Path) -> list[tuple[str, Path]]:
    """Write one report per report kind of the runs' sources (the ``report`` hook of each source's row).

    Runs are grouped by the report hook their sources use (the answerability sources share one comparison
    report, ``report.md``; UPD runs get Table 1 and radar charts, ``upd_report.md``), each written into ``target``
    itself, where ``vqaudit eval`` writes it too. Returns ``(label, path)`` pairs.

    Raises:
        VqauditError: a run folder without ``run.json`` or not scored yet, or whose replies changed since it was
            scored (:func:`vqaudit.scored_state.check_scored`; a run scored before ``scored.json`` gets a warning).
    """
    from vqaudit.scored_state import check_scored
    from vqaudit.store import BenchmarkFolder, RunFolder
    from vqaudit.suites.registry import get_source, report_for

    by_writer: dict[str, list[Path]] = {}
    for run_dir in runs:
        folder = RunFolder(run_dir)
        if not folder.info.is_file():
            what = "a benchmark folder, not a run" if BenchmarkFolder(run_dir).exists() else "not a run folder"
            raise VqauditError(f"{run_dir}: {what} (no run.json); give the folders `vqaudit run --out` wrote")
        if not folder.metrics.is_file():
            raise VqauditError(f"{run_dir}: not scored yet; run `vqaudit score {run_dir}` first")
        note = check_scored(run_dir)  # replies changed since `score`: refused before anything is written
        if note is not None:
            warning(note)
        for name in _sources(folder):
            dirs = by_writer.setdefault(get_source(name).report, [])
            if run_dir not in dirs:
                dirs.append(run_dir)
    # every writer writes into target itself, as `vqaudit eval` does (upd_report.md beside report.md and index.html)
    return [("report", report_for(_first_source(dirs[0]), dirs, target)) for dirs in by_writer.values()]


def _sources(folder: Any) -> list[str]:
    """The sources of a run: recorded in run.json, or (runs made before it recorded them) its benchmark's manifest."""
    from vqaudit.store import BenchmarkFolder

    info = folder.read_info()
    return list(info.sources) or [BenchmarkFolder(folder.benchmark()).read_manifest().source]


def _first_source(run_dir: Path) -> str:
    from vqaudit.store import RunFolder

    return _sources(RunFolder(run_dir))[0]


def _slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", spec).strip("_")


def run_folder_names(specs: list[str]) -> list[str]:
    """Readable, distinct run-folder names for model specs (a short hash is added where two names would clash)."""
    import hashlib

    slugs = [_slug(s) for s in specs]
    return [
        f"{slug}-{hashlib.sha256(spec.encode()).hexdigest()[:8]}" if slugs.count(slug) > 1 else slug
        for slug, spec in zip(slugs, specs, strict=True)
    ]


def _check_reused_bench(bench_dir: Path, source: str, groups: int | None, seed: int | None) -> None:
    """Refuse to silently reuse an existing benchmark that does not match what the options ask for."""
    from vqaudit.store import BenchmarkFolder

    manifest = BenchmarkFolder(bench_dir).read_manifest()
    if manifest.source != source:
        raise VqauditError(f"{bench_dir}: holds a {manifest.source!r} benchmark, not {source!r}")
    other_groups = groups is not None and manifest.n_groups != groups
    if other_groups or (seed is not None and manifest.seed != seed):
        raise VqauditError(
            f"{bench_dir}: already holds a benchmark with {manifest.n_groups} groups and seed "
            f"{manifest.seed}; choose another --out to build a different one"
        )


def eval_cmd(
    source: Annotated[
        str, typer.Argument(help="What to evaluate: a source of the source table (charts, scenes, photos, upd).")
    ] = "charts",
    out: Annotated[
        Path | None, typer.Option(help="Evaluation folder (default runs/SOURCE): bench/, runs/, report/.")
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            help="Model spec; repeat for several (default: the reference "
            "policies, and for charts the OCR chart reader)."
        ),
    ] = None,
    bench: Annotated[Path | None, typer.Option(help="Existing benchmark folder (default: build one).")] = None,
    groups: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=MAX_GROUPS,
            help="Groups to build when no --bench is given (default: 60 charts, 12 scenes, 40 photos).",
        ),
    ] = None,
    seed: Annotated[int | None, typer.Option(min=0, help="Build seed (default 0).")] = None,
    workers: Annotated[int, typer.Option(min=1, help="Rendering processes.")] = 2,
    concurrency: Concurrency = 8,
    api_key_env: ApiKeyEnv = None,
    model_arg: ModelArg = None,
    timeout: Timeout = 120.0,
    max_retries: MaxRetries = 5,
    judge: Annotated[
        str | None, typer.Option(help="Judge model spec for multiple-choice replies the matcher cannot decide (upd).")
    ] = None,
    judge_arg: JudgeArg = None,
    max_items: Annotated[int | None, typer.Option(min=1, help="upd: bundled input rows to use (default 80).")] = None,
    draws: Draws = 10_000,
    executor_name: ExecutorOpt = ExecutorName.local,
    ray_address: RayAddress = None,
    ray_replicas: RayReplicas = None,
    reasoning_format: ReasoningFormatOpt = ReasoningFormatName.auto,
    budgets: Annotated[
        str | None,
        typer.Option(
            help="Token budgets, e.g. 256,1024,4096: run the one --model once "
            "per budget (--model-arg max_tokens=B) into OUT/budget-B/ "
            "and report the metrics against the budget (OUT/sweep.json)."
        ),
    ] = None,
) -> None:
    """Build (or reuse) a benchmark, run each model, score, and report: the main job in one command.

    ``--executor`` (with ``--ray-address``, ``--ray-replicas``) is where the build's groups and each run's model
    run, as for ``build`` and ``run``; the output does not depend on it. ``--budgets`` makes it a token-budget
    sweep of one model: one run per budget, and ``sweep.json`` with Ebal, EU, EM, Jk and Bk against the budget
    (paired differences to the largest budget).
    """
    from vqaudit.backends import check_backend, require_free_text_model
    from vqaudit.run import run_benchmark
    from vqaudit.score import JUDGE_CONCURRENCY, score_run
    from vqaudit.suites.registry import get_source, report_for, summary_table_for

    row = get_source(source)
    on = model_executor(executor_name, ray_address, ray_replicas)
    options = model_options(
        api_key_env=api_key_env, concurrency=concurrency, timeout=timeout, max_retries=max_retries, args=model_arg
    )
    judge_options = model_options(
        api_key_env=api_key_env, concurrency=JUDGE_CONCURRENCY, args=judge_arg, args_option="--judge-arg"
    )
    specs = model or list(row.eval_models)
    sweep = _sweep_budgets(budgets, row.budget_sweep, source, model, options) if budgets is not None else None
    if judge is not None:  # bad specs fail here, before anything is built or run (no weights are loaded)
        check_backend(judge, judge_options)
        require_free_text_model(judge, "--judge")
    for spec in specs:
        for opts in [options] if sweep is None else [_with_budget(options, b) for b in sweep]:
            check_backend(spec, opts)  # a kind that takes no token budget is refused here, before the build
    out = out or Path("runs") / source
    bench_dir = bench or out / "bench"
    build_options = row.eval_options(groups=groups, seed=seed, max_items=max_items)
    from vqaudit.store import BenchmarkFolder

    if BenchmarkFolder(bench_dir).exists():
        _check_reused_bench(
            bench_dir,
            source,
            build_options.get("groups") if bench is None else None,
            build_options.get("seed") if bench is None else None,
        )
    elif bench is None:
        build_source(source, bench_dir, build_options, workers=workers, on=on)
    else:
        raise VqauditError(f"{bench}: benchmark folder not found (no manifest.json)")
    run_dirs = []
    plan = (
        [(spec, out / "runs" / name, options) for spec, name in zip(specs, run_folder_names(specs), strict=True)]
        if sweep is None
        else [(specs[0], out / f"budget-{b}", _with_budget(options, b)) for b in sweep]
    )
    for spec, run_dir, run_options in plan:
        run_benchmark(
            bench_dir, spec, run_dir, concurrency=concurrency, options=run_options, executor=on, replicas=ray_replicas
        )
        run_dirs.append(run_dir)
    fmt = reasoning_format.value
    if sweep is not None:  # one model at every budget: whether its template opens the span is decided over all
        from vqaudit.parsing.reasoning import effective_format
        from vqaudit.run import load_responses

        fmt = effective_format(fmt, (r.text for d in run_dirs for r in load_responses(d).values()))
    for run_dir in run_dirs:
        score_run(run_dir, judge=judge, judge_options=judge_options, n_draws=draws, reasoning_format=fmt)
    from vqaudit.files import staged_update
    from vqaudit.report.html import write_html_report

    swept = None
    if sweep is not None:
        from vqaudit.report.reasoning import sweep_markdown, write_sweep_json

        swept = sweep_markdown(write_sweep_json(run_dirs, out / "sweep.json", n_draws=draws))
    report_dir = out / "report"
    with staged_update(report_dir) as tmp:  # the report set appears whole or not at all (see `report`)
        path = report_dir / report_for(source, run_dirs, tmp).relative_to(tmp)
        html = report_dir / write_html_report(run_dirs, tmp, shown_as=report_dir).relative_to(tmp)
    typer.echo(summary_table_for(source, run_dirs))
    if swept:
        typer.echo(f"\n{swept}\n\nsweep: {out / 'sweep.json'}")
    typer.echo(f"\nreport: {path}\nHTML report (with the sample browser): {html}")


TOKEN_KEYS = ("max_tokens", "max_completion_tokens", "max_new_tokens")
"""The ``--model-arg`` keys of the token budget, which ``--budgets`` sets itself."""


def parse_budgets(text: str) -> list[int]:
    """``--budgets 256,1024,4096``: two or more distinct token budgets, in increasing order.

    Raises:
        VqauditError: one line naming ``--budgets`` and the bad value: not comma-separated integers of at least 1,
            a budget given twice, or fewer than two budgets.
    """
    parts = [p.strip() for p in text.split(",")]
    if not all(p.isascii() and p.isdecimal() and int(p) >= 1 for p in parts):
        raise VqauditError(
            f"--budgets {text!r}: expected comma-separated token budgets of at least 1, e.g. 256,1024,4096"
        )
    values = [int(p) for p in parts]
    if len(set(values)) != len(values) or len(values) < 2:
        raise VqauditError(f"--budgets {text!r}: give two or more distinct budgets (a sweep compares them)")
    return sorted(values)


def _sweep_budgets(
    text: str, supported: bool, source: str, model: list[str] | None, options: ModelOptions
) -> list[int]:
    """The budgets of ``eval --budgets``, refusing what a sweep cannot be: several models, a budget given twice."""
    if not supported:
        raise VqauditError(
            f"--budgets: {source} has no answerability groups to sweep (a sweep reports Jk, Bk, Ebal, EU and EM)"
        )
    if not model or len(model) != 1:
        raise VqauditError("--budgets: give exactly one --model (the sweep runs that model once per budget)")
    given = [k for k in options.generation_keys() if k in TOKEN_KEYS]
    if given:
        raise VqauditError(f"--budgets sets the token budget of each run; drop --model-arg {given[0]}=...")
    return parse_budgets(text)


def _with_budget(options: ModelOptions, budget: int) -> ModelOptions:
    """``options`` with ``--model-arg max_tokens=BUDGET`` added (:meth:`ModelOptions.generation` reads it)."""
    return dataclasses.replace(options, args=(*options.args, ("max_tokens", str(budget))))
