"""``vqaudit audit`` and ``audit-summary``: the short-answer score audit (seed 002) and its multiple-choice branch.

Plain typer command functions; :mod:`vqaudit.cli` registers them, e.g. ``app.command("audit")(audit_cmd)``. The
output folder's guard and report set are :mod:`vqaudit.cli.audit_output`; ``vqaudit perturb`` is
:mod:`vqaudit.cli.perturb`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from vqaudit.cli.audit_options import (
    JoinOn,
    MathVistaRead,
    MetricName,
    PredictionFormat,
    audit_benchmark_name,
    audit_benchmark_names,
)
from vqaudit.cli.audit_output import ready_folder, refuse_other_audit, refuse_other_mc_audit, write_report_set
from vqaudit.cli.options import (
    MAX_DRAWS,
    ApiKeyEnv,
    JudgeArg,
    ReasoningFormatName,
    ReasoningFormatOpt,
    model_options,
    out_folder,
)
from vqaudit.errors import VqauditError
from vqaudit.shortanswer.record_files import GOLD_KEYS, ID_KEYS, PRED_KEYS

if TYPE_CHECKING:
    from vqaudit.backends import ModelOptions


_ID_COLUMNS = ", ".join(ID_KEYS)
_PREDICTION_COLUMNS = ", ".join(PRED_KEYS) + " (answer when a gold column is present too)"
_GOLD_COLUMNS = ", ".join((*GOLD_KEYS, "answer"))
_BENCHMARKS = ", ".join(audit_benchmark_names())
_METRICS = ", ".join(m.value for m in MetricName)


def audit_cmd(
    predictions: Annotated[
        Path,
        typer.Argument(
            help="Prediction file: JSONL, JSON, CSV/TSV or a VLMEvalKit "
            ".xlsx (each optionally .gz), or an lmms-eval sample log. "
            "Columns looked for: id "
            f"{_ID_COLUMNS} (else the row number); prediction "
            f"{_PREDICTION_COLUMNS}; embedded gold {_GOLD_COLUMNS} "
            "(docs/shortanswer.md)."
        ),
    ],
    benchmark: Annotated[
        str,
        typer.Option(
            "--benchmark",
            parser=audit_benchmark_name,
            metavar="<name>",
            help="Benchmark name (decides the official metric): "
            f"{_BENCHMARKS}; mmbench, mmmu, mathvista or mc "
            "audit multiple-choice predictions.",
        ),
    ],
    gold: Annotated[
        Path | None,
        typer.Option(help="Gold file in the benchmark's layout (default: the gold embedded in the prediction file)."),
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option(help="Judge model spec for the semantic audit of the official error pool (text-only, cached)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            parser=out_folder,
            metavar="PATH",
            help="Report folder (default: PREDICTIONS.audit/ beside the "
            "prediction file, e.g. preds.jsonl.audit/). It may hold only "
            "an earlier audit of the same model, benchmark and file.",
        ),
    ] = None,
    metric: Annotated[
        MetricName | None,  # type: ignore[valid-type]
        typer.Option(
            metavar="<metric>",
            help=f"Official metric override: {_METRICS}.",
        ),
    ] = None,
    variant: Annotated[
        str | None, typer.Option("--metric-variant", help="Metric variant, e.g. vlmevalkit, mmf_textvqa, pix2struct.")
    ] = None,
    fmt: Annotated[PredictionFormat, typer.Option("--format", help="Prediction file layout.")] = PredictionFormat.auto,
    join_on: Annotated[
        JoinOn, typer.Option(help="Join predictions to gold by id, question or image-question.")
    ] = JoinOn.id,
    id_field: Annotated[str | None, typer.Option(help="Prediction id column to use ('row': row numbers).")] = None,
    image_field: Annotated[str | None, typer.Option(help="Prediction column naming the image.")] = None,
    labels: Annotated[
        Path | None,
        typer.Option(
            help="Human labels (JSONL, CSV or TSV: question_id or qid, label yes/no) of official errors, to "
            "validate the judge (needs --judge): precision with its 95% Wilson interval, recall, Cohen's kappa and "
            "precision per contract bucket (seed 002 Table 2)."
        ),
    ] = None,
    second_judge: Annotated[
        str | None,
        typer.Option(
            help="A second judge spec (needs --judge): its agreement and kappa with the first on the error pool "
            "(seed 002 Table 2 cross-judge line)."
        ),
    ] = None,
    draws: Annotated[
        int,
        typer.Option(min=0, max=MAX_DRAWS, help="Bootstrap draws for the judge - official interval (at most 10^6)."),
    ] = 2000,
    model_name: Annotated[
        str | None,
        typer.Option(
            help="Name of the model that made the predictions, for `audit-summary` tables (default: the file name)."
        ),
    ] = None,
    judge_arg: JudgeArg = None,
    api_key_env: ApiKeyEnv = None,
    reasoning_format: ReasoningFormatOpt = ReasoningFormatName.auto,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Multiple-choice audits: refuse a file with a defective "
            "row (an empty or missing gold option, a gold text that "
            "several options repeat) instead of leaving the row out "
            "of the score and listing it.",
        ),
    ] = False,
    read: Annotated[
        MathVistaRead | None,
        typer.Option(
            "--read",
            case_sensitive=False,
            help="--benchmark mathvista: the field of MathVista's output "
            "read: response (the raw reply, default) or extraction "
            "(MathVista's own extracted answer, scored as its "
            "calculate_score.py does).",
        ),
    ] = None,
) -> None:
    """Audit a short-answer prediction file: benchmark score, contract mix, semantic audit, failure notes.

    Writes report.md (the layout of seed 002 Table 13), report.json and rows.jsonl, and prints report.md. Scores
    are in points: the mean per-row score (0 to 1) x 100, so an ANLS of 0.41 is a mean per-row ANLS of 0.0041.
    A reasoning model's thinking is split off every prediction before any layer reads it (--reasoning-format).
    """
    from vqaudit.folder_lock import folder_lock
    from vqaudit.shortanswer.input_files import check_input_file

    target = out if out is not None else predictions.with_name(predictions.name + ".audit")
    check_input_file(predictions, "prediction file")  # missing, a folder, a pipe: named as what it is
    # One writer per output folder, from the overwrite guard to the last rename: two audits started together
    # into one --out both passed the guard and the later one replaced the other (seen by a new user).
    with folder_lock(target, f"vqaudit audit {predictions}", kind="audit folder"):
        _audit_locked(
            predictions,
            benchmark,
            target,
            gold,
            fmt.value,
            join_on.value,
            id_field,
            image_field,
            model_name,
            metric.value if metric is not None else None,
            variant,
            judge,
            labels,
            second_judge,
            draws,
            api_key_env,
            judge_arg,
            reasoning_format.value,
            strict,
            read.value if read is not None else None,
        )


def _audit_locked(
    predictions: Path,
    benchmark: str,
    target: Path,
    gold: Path | None,
    fmt: str,
    join_on: str,
    id_field: str | None,
    image_field: str | None,
    model_name: str | None,
    metric: str | None,
    variant: str | None,
    judge: str | None,
    labels: Path | None,
    second_judge: str | None,
    draws: int,
    api_key_env: str | None,
    judge_arg: list[str] | None,
    reasoning_format: str = "auto",
    strict: bool = False,
    read: str | None = None,
) -> None:
    """The body of ``vqaudit audit`` once its output folder is locked."""
    from vqaudit.report.shortanswer import write_audit_report
    from vqaudit.shortanswer.audit import run_audit
    from vqaudit.shortanswer.benchmarks import MC_BENCHMARKS

    if benchmark.lower() in MC_BENCHMARKS:
        given = {
            "--gold": gold,
            "--metric": metric,
            "--metric-variant": variant,
            "--labels": labels,
            "--second-judge": second_judge,
            "--id-field": id_field,
            "--image-field": image_field,
        }
        wrong = [name for name, value in given.items() if value is not None]
        if wrong:
            raise VqauditError(f"{wrong[0]} does not apply to a multiple-choice audit (--benchmark {benchmark})")
        if read is not None and benchmark.lower() != "mathvista":
            raise VqauditError(f"--read applies only to --benchmark mathvista (not --benchmark {benchmark})")
        judge_options = model_options(api_key_env=api_key_env, args=judge_arg, args_option="--judge-arg")
        _mc_audit(predictions, benchmark.lower(), target, judge, judge_options, reasoning_format, strict, read)
        return
    for name, value in (("--strict", strict), ("--read", read)):
        if value:
            raise VqauditError(
                f"{name} applies only to a multiple-choice audit (--benchmark mmbench, mmmu, mathvista or mc)"
            )
    refuse_other_audit(target, benchmark, predictions, model_name)
    ready_folder(target)
    result = run_audit(
        predictions,
        benchmark,
        gold=gold,
        fmt=fmt,
        join_on=join_on,
        id_field=id_field,
        image_field=image_field,
        model=model_name,
        metric=metric,
        variant=variant,
        judge=judge,
        cache_dir=target,
        labels=labels,
        second_judge=second_judge,
        n_draws=draws,
        reasoning_format=reasoning_format,
        judge_options=model_options(api_key_env=api_key_env, args=judge_arg, args_option="--judge-arg"),
    )
    try:
        path = write_report_set(target, lambda: write_audit_report(result, target, predictions=predictions.resolve()))
    except OSError as exc:
        raise VqauditError(f"{target}: cannot write the report: {exc}") from None
    typer.echo(path.read_text(encoding="utf-8"))
    missing = len(result.join.gold_without_predictions)
    if missing:  # exit 0 all the same: LLaVA's eval_textvqa.py also averages over the predictions it has
        source = gold if gold is not None else "the gold"
        typer.echo(
            f"warning: {missing} gold question{'s' if missing != 1 else ''} of {source} "
            f"{'have' if missing != 1 else 'has'} no prediction in {predictions}; the scores average the "
            f"{len(result.join.rows)} joined rows only",
            err=True,
        )
    typer.echo(f"report written to {path}", err=True)


def _mc_audit(
    predictions: Path,
    benchmark: str,
    target: Path,
    judge: str | None,
    options: ModelOptions,
    reasoning_format: str = "auto",
    strict: bool = False,
    read: str | None = None,
) -> None:
    """The multiple-choice branch of ``vqaudit audit`` (:mod:`vqaudit.shortanswer.multichoice`).

    Defective rows (:mod:`vqaudit.shortanswer.mc_read`) are left out and listed in the report, with one warning
    line on stderr and exit 0; ``strict`` refuses the file at the first one (exit 2).
    """
    from vqaudit.backends import require_free_text_model
    from vqaudit.report.multichoice import write_mc_report
    from vqaudit.shortanswer.multichoice import run_mc_audit

    if judge is not None:
        require_free_text_model(judge, "--judge")
    refuse_other_mc_audit(target, benchmark, predictions)
    summary, records = run_mc_audit(
        predictions,
        benchmark,
        judge=judge,
        cache_dir=ready_folder(target),
        judge_options=options,
        reasoning_format=reasoning_format,
        strict=strict,
        read=read,
    )
    path = write_report_set(target, lambda: write_mc_report(summary, records, target))
    typer.echo(path.read_text(encoding="utf-8"))
    defects = summary.get("defects")
    if defects:  # exit 0 all the same: the benchmark's data is broken, not the file as a whole
        first = defects["rows"][0]
        typer.echo(
            f"warning: {defects['excluded']} of {defects['of']} rows of {predictions} excluded as defective "
            f"(first: row {first['row']}, field '{first['field']}': {first['reason']}); listed in {path}; "
            "--strict refuses the file instead",
            err=True,
        )
    typer.echo(f"report written to {path}", err=True)


def audit_summary_cmd(
    audits: Annotated[list[Path], typer.Argument(help="Audit folders written by `vqaudit audit` (report.json).")],
    out: Annotated[
        Path, typer.Option(parser=out_folder, metavar="PATH", help="Folder for summary.md and summary.json.")
    ],
    perturb: Annotated[
        list[Path] | None,
        typer.Option(help="A folder written by `vqaudit perturb` (perturbations.json); repeat for several."),
    ] = None,
) -> None:
    """Combine audits of several models and benchmarks into the seed 002 tables (Tables 2-7 layouts).

    Writes summary.md (Table 3 official vs judge, Table 5 contract counts, Table 4 bucket profile, Table 7
    repair, Table 2 cross-judge line, Table 6 with --perturb, appendix A raw split per benchmark, appendix B eta
    squared of judge false negatives and of benign flips by dataset, numeric/text and contract bucket, and notes
    on everything skipped) and summary.json, and prints summary.md.
    """
    from vqaudit.folder_lock import folder_lock
    from vqaudit.report.audit_summary_render import write_audit_summary

    # one writer per folder: summary.md and summary.json of two summaries started together could otherwise mix
    with folder_lock(ready_folder(out), "vqaudit audit-summary", kind="summary folder"):
        path = write_audit_summary(audits, perturb or [], out)
    typer.echo(path.read_text(encoding="utf-8"))
    typer.echo(f"summary written to {path}", err=True)
