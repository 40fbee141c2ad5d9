"""``vqaudit eval``: build (or reuse) a benchmark, run each model, score and report, in one command.

With ``--budgets``, a token-budget sweep of one model: one run per budget and ``sweep.json``.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from vqaudit.cli.build import build_source
from vqaudit.cli.options import (
    MAX_GROUPS,
    ApiKeyEnv,
    Concurrency,
    Draws,
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
    model_executor,
    model_options,
)
from vqaudit.errors import VqauditError

if TYPE_CHECKING:
    from vqaudit.backends import ModelOptions


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
    from vqaudit.report.html import write_html_report
    from vqaudit.staging import staged_update

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
