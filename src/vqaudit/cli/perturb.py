"""``vqaudit perturb``: the benign prompt perturbations of the short-answer audit (seed 002 §3.4, Table 6).

A plain typer command function; :mod:`vqaudit.cli` registers it, ``app.command("perturb")(perturb_cmd)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from vqaudit.cli.audit_options import JoinOn, MetricName, PredictionFormat, benchmark_name
from vqaudit.cli.audit_output import ready_folder
from vqaudit.cli.options import (
    ApiKeyEnv,
    Concurrency,
    MaxRetries,
    ModelArg,
    ReasoningFormatName,
    ReasoningFormatOpt,
    Timeout,
    model_options,
    out_folder,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from vqaudit.backends import ModelOptions
    from vqaudit.shortanswer.records import JoinReport


def perturb_cmd(
    predictions: Annotated[Path, typer.Argument(help="Prediction file whose questions (and gold) are re-asked.")],
    benchmark: Annotated[
        str,
        typer.Option(
            "--benchmark", parser=benchmark_name, metavar="<name>", help="Benchmark name (decides the official metric)."
        ),
    ],
    model: Annotated[str, typer.Option(help="Model spec to ask, e.g. openai:NAME@http://127.0.0.1:8000/v1.")],
    images: Annotated[Path, typer.Option(help="Folder holding the images the rows name (searched recursively).")],
    gold: Annotated[Path | None, typer.Option(help="Gold file in the benchmark's layout.")] = None,
    out: Annotated[
        Path | None,
        typer.Option(parser=out_folder, metavar="PATH", help="Output folder (default: <predictions>.perturb/)."),
    ] = None,
    variants: Annotated[str, typer.Option(help="Comma list of Base,A1..A5,B1..B3.")] = "Base,A1,A2,A3,A4,A5,B1,B2,B3",
    fmt: Annotated[PredictionFormat, typer.Option("--format", help="Prediction file layout.")] = PredictionFormat.auto,
    join_on: Annotated[
        JoinOn, typer.Option(help="Join predictions to gold by id, question or image-question.")
    ] = JoinOn.id,
    id_field: Annotated[str | None, typer.Option(help="Prediction id column to use ('row': row numbers).")] = None,
    image_field: Annotated[str | None, typer.Option(help="Prediction column naming the image.")] = None,
    concurrency: Concurrency = 8,
    metric: Annotated[MetricName | None, typer.Option(help="Official metric override.")] = None,  # type: ignore[valid-type]
    variant: Annotated[
        str | None,
        typer.Option(
            "--metric-variant",
            help="Official metric variant, e.g. vlmevalkit (not the perturbation list: that is --variants).",
        ),
    ] = None,
    model_name: Annotated[
        str | None, typer.Option(help="Model name for `audit-summary` tables (default: the model spec).")
    ] = None,
    model_arg: ModelArg = None,
    api_key_env: ApiKeyEnv = None,
    timeout: Timeout = 120.0,
    max_retries: MaxRetries = 5,
    reasoning_format: ReasoningFormatOpt = ReasoningFormatName.auto,
) -> None:
    """Re-ask every question under the benign prompt perturbations; report flip rates and family deltas.

    Writes perturbations.md, perturbations.json (the summary as data, per-bucket deltas included) and
    replies.json. Every flip rate and delta of a variant is paired with Base: computed over the questions both
    answered (their n per variant in the table; the notes name the sets when replies are missing). Before any
    model call it refuses (exit 2) a reference policy as --model, a bad --variants list, an unknown metric or
    variant, and gold the metric cannot score (naming the file, row and field). It stops (exit 2) when the first
    calls all fail, and fails when no reply arrived for any question (with the last backend error; for replay:
    models, the ids replies must carry). A reasoning model's thinking is split off every reply before it is
    scored (--reasoning-format); a reply whose reasoning never finished scores as an empty answer.
    """
    from vqaudit.backends import require_free_text_model
    from vqaudit.folder_lock import folder_lock
    from vqaudit.prompts.perturbations import check_variants
    from vqaudit.shortanswer.benchmarks import load_gold, resolve_metric
    from vqaudit.shortanswer.importers import read_predictions
    from vqaudit.shortanswer.join import join_predictions
    from vqaudit.shortanswer.join_locations import gold_locations
    from vqaudit.shortanswer.perturb_folder import refuse_foreign_files

    require_free_text_model(model, "--model")  # before anything else: a reference policy cannot play this role
    chosen = check_variants(tuple(v.strip() for v in variants.split(",") if v.strip()))
    options = model_options(
        api_key_env=api_key_env, concurrency=concurrency, timeout=timeout, max_retries=max_retries, args=model_arg
    )
    metric_name, metric_variant = resolve_metric(benchmark, metric.value if metric is not None else None, variant)
    preds = read_predictions(predictions, fmt.value, id_field=id_field, image_field=image_field)
    gold_items = load_gold(gold, benchmark) if gold else None
    join = join_predictions(preds, gold_items, benchmark=benchmark, on=join_on.value)
    where = gold_locations(preds, gold_items, predictions_path=predictions, gold_path=gold, join_on=join_on.value)
    target = ready_folder(out if out is not None else predictions.with_name(predictions.name + ".perturb"))
    name = model_name if model_name is not None else model
    # One writer per folder, from the guard to the last write (as `vqaudit audit`): the user's own files and
    # another model's run are never overwritten (a new user's run silently replaced another model's).
    with folder_lock(target, f"vqaudit perturb {predictions}", kind="perturbation folder"):
        refuse_foreign_files(target, benchmark, name)
        _perturb_locked(
            target,
            join,
            where,
            benchmark,
            model,
            name,
            images,
            chosen,
            metric_name,
            metric_variant,
            concurrency,
            options,
            reasoning_format.value,
        )


def _perturb_locked(
    target: Path,
    join: JoinReport,
    where: Mapping[str, str],
    benchmark: str,
    model: str,
    name: str,
    images: Path,
    chosen: tuple[str, ...],
    metric_name: str,
    metric_variant: str,
    concurrency: int,
    options: ModelOptions,
    reasoning_format: str,
) -> None:
    """The body of ``vqaudit perturb`` once its output folder is locked and checked: ask, score, write."""
    from vqaudit.files import atomic_write_text, write_json
    from vqaudit.shortanswer.perturb import perturbation_json, run_perturbation_audit, summary_markdown
    from vqaudit.shortanswer.perturb_folder import HEADING
    from vqaudit.store import RESPONSES_FILE

    summary, replies = run_perturbation_audit(
        join.rows,
        benchmark,
        model,
        images,
        target / RESPONSES_FILE,
        variants=chosen,
        metric=metric_name,
        variant=metric_variant,
        concurrency=concurrency,
        gold_where=where,
        options=options,
        reasoning_format=reasoning_format,
    )
    text = summary_markdown(summary)
    write_json(target / "replies.json", replies)
    write_json(
        target / "perturbations.json",
        perturbation_json(
            summary,
            benchmark=benchmark,
            model=name,
            model_spec=model,
            metric=metric_name,
            variant=metric_variant,
            variants=chosen,
            n_questions=sum(1 for r in join.rows if r.answers),
        ),
    )
    atomic_write_text(target / "perturbations.md", f"{HEADING}{benchmark}, {name}\n\n{text}")
    typer.echo(text)
