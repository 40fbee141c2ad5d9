"""``vqaudit audit``, ``perturb`` and ``audit-summary``: the short-answer score audit (seed 002).

Plain typer command functions; ``cli.py`` registers them, e.g. ``app.command("audit")(audit_cmd)``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vqaudit.cli.options import (
    MAX_DRAWS,
    ApiKeyEnv,
    Concurrency,
    JoinOn,
    JudgeArg,
    MathVistaRead,
    MaxRetries,
    MetricName,
    ModelArg,
    PredictionFormat,
    ReasoningFormatName,
    ReasoningFormatOpt,
    Timeout,
    audit_benchmark_name,
    audit_benchmark_names,
    benchmark_name,
    model_options,
    out_folder,
)
from vqaudit.errors import VqauditError
from vqaudit.shortanswer.record_files import GOLD_KEYS, ID_KEYS, PRED_KEYS
from vqaudit.signals import Completed, TerminatedAfterWrite, completes_on_write, output_complete

if TYPE_CHECKING:
    from collections.abc import Mapping

    from vqaudit.backends import ModelOptions
    from vqaudit.shortanswer.records import JoinReport


def _ready(folder: Path) -> Path:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise VqauditError(f"{folder}: cannot create the output folder: {exc}") from None
    return folder


_AUDIT_HEADINGS = ("# Short-answer score audit:", "# Multiple-choice audit:")
"""The first line of every ``report.md`` of ``vqaudit audit`` (:mod:`vqaudit.report.shortanswer`, ``.multichoice``)."""


def _first_line(path: Path) -> str:
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.strip():
                    return line.strip()
    except OSError:
        return ""
    return ""


def _ours(path: Path) -> bool:
    """Whether ``report.md`` / ``rows.jsonl`` at ``path`` looks written by ``vqaudit audit`` (first line only)."""
    first = _first_line(path)
    if path.name == "report.md":
        return first.startswith(_AUDIT_HEADINGS)
    if not first:
        return True  # an audit with no joined rows writes an empty rows.jsonl
    try:
        rec = json.loads(first)
    except ValueError:
        return False
    return isinstance(rec, dict) and ("qid" in rec or {"id", "group", "kind"} <= rec.keys())  # short-answer, MC


def _old_report(target: Path) -> dict[str, Any] | None:
    """The ``report.json`` of the audit in ``target`` (None: there is none); refuse files the audit did not write.

    Refused: a ``report.md`` or ``rows.jsonl`` not written by ``vqaudit audit`` (the user's own files), a
    ``report.json`` that is not a JSON object with a ``benchmark`` field.
    """
    from vqaudit.files import read_json

    for mine in ("report.md", "rows.jsonl"):
        if (target / mine).is_file() and not _ours(target / mine):
            raise VqauditError(
                f"{target / mine}: exists and was not written by `vqaudit audit`; the audit would "
                "overwrite it: choose another --out"
            )
    report = target / "report.json"
    if not report.exists():
        return None
    try:
        old = read_json(report) if report.is_file() else None
    except VqauditError:
        old = None
    if not isinstance(old, dict) or not isinstance(old.get("benchmark"), str):
        raise VqauditError(
            f"{report}: exists and is not the report.json of a `vqaudit audit` (no benchmark and "
            "model fields); the audit would overwrite it: choose another --out"
        )
    return old


def _refuse_other_mc_audit(target: Path, benchmark: str, predictions: Path) -> None:
    """The guard of the multiple-choice branch: the user's own files, or another audit, are never overwritten.

    Its ``report.json`` names the prediction file by its name (``predictions``) and resolved path
    (``predictions_file``; an audit written before it was recorded has only the name): the same benchmark and
    file may rewrite the folder, another file of the same name may not (re-trial: ``mcb/preds.tsv`` silently
    replaced the audit of ``mca/preds.tsv``).
    """
    old = _old_report(target)
    if old is None:
        return
    if "choice" not in old:
        raise VqauditError(
            f"{target}: holds the audit of {old.get('model')!r} on {old['benchmark']!r}; this "
            "multiple-choice audit would overwrite it: choose another --out"
        )
    if (old["benchmark"], old.get("predictions")) != (benchmark, predictions.name):
        raise VqauditError(
            f"{target}: holds the multiple-choice audit of {old.get('predictions')!r} on "
            f"{old['benchmark']!r}; this one ({predictions.name!r} on {benchmark!r}) would "
            "overwrite it: choose another --out"
        )
    stored, current = old.get("predictions_file"), str(predictions.resolve())
    if isinstance(stored, str) and stored != current:
        raise VqauditError(
            f"{target}: holds the multiple-choice audit of {stored} on {old['benchmark']!r}; this "
            f"one reads another file of the same name ({current}) and would overwrite it: choose "
            "another --out"
        )


def _refuse_other_audit(target: Path, benchmark: str, predictions: Path, model_name: str | None) -> None:
    """Refuse an output folder whose files the audit would overwrite and that the user may still need.

    Refused: a ``report.md`` or ``rows.jsonl`` not written by ``vqaudit audit``; a ``report.json`` that is not an
    audit report; the audit of another model or benchmark; the audit of the same model name made from another
    prediction file (``predictions_file`` in ``report.json``: ``runs/step1000/predictions.jsonl`` and
    ``runs/step2000/predictions.jsonl`` are both model ``predictions``) unless ``--model-name`` names the model
    explicitly. Rerunning the same audit into its own folder is allowed: it rewrites the report and reuses the
    judge cache.
    """
    from vqaudit.shortanswer.audit import model_name_of
    from vqaudit.shortanswer.benchmarks import get_benchmark

    old = _old_report(target)
    if old is None:
        return
    if "choice" in old:
        raise VqauditError(
            f"{target}: holds the multiple-choice audit of {old.get('predictions')!r} on "
            f"{old['benchmark']!r}; this one would overwrite it: choose another --out"
        )
    if not isinstance(old.get("model"), str):
        raise VqauditError(
            f"{target / 'report.json'}: exists and is not the report.json of a `vqaudit audit` (no "
            "benchmark and model fields); the audit would overwrite it: choose another --out"
        )
    model = model_name if model_name is not None else model_name_of(predictions)
    name = get_benchmark(benchmark).name
    if (old["benchmark"], old["model"]) != (name, model):
        raise VqauditError(
            f"{target}: holds the audit of {old['model']!r} on {old['benchmark']!r}; this "
            f"one ({model!r} on {name!r}) would overwrite it: choose another --out (or "
            "--model-name)"
        )
    stored, current = old.get("predictions_file"), str(predictions.resolve())
    if isinstance(stored, str) and stored != current and model_name is None:
        raise VqauditError(
            f"{target}: holds the audit of {model!r} on {name!r} made from {stored}; this one reads "
            f"another file under the same model name ({current}) and would overwrite it: choose "
            f"another --out, or give --model-name (--model-name {model} replaces that audit)"
        )


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
    from vqaudit.shortanswer.loaders import check_input_file

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
    _refuse_other_audit(target, benchmark, predictions, model_name)
    _ready(target)
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
        path = _report_set(target, lambda: write_audit_report(result, target, predictions=predictions.resolve()))
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


def _report_set(target: Path, write: Callable[[], Path]) -> Path:
    """Run ``write`` (it renames ``report.md``, ``report.json`` and ``rows.jsonl`` into ``target`` as one set).

    From the last rename on the audit's output is complete, so a SIGTERM no longer makes it look failed
    (new-user trial: an audit that had printed "report written" exited 143): it stops the command with exit 0
    and a line saying the report was completely written (:func:`vqaudit.signals.output_complete`). So does a
    SIGTERM that arrived during the renames, held back until the set was whole.

    Returns:
        What ``write`` returns: the path of ``report.md``.

    Raises:
        Completed: a SIGTERM arrived during the renames (exit 0, the CLI prints the line).
    """
    note = (
        f"stopped by SIGTERM after the audit was completely written to {target} (report.md, report.json, "
        "rows.jsonl): nothing was lost"
    )
    try:
        with completes_on_write(note):  # complete from the last rename on, with no gap before this line
            path = write()
    except TerminatedAfterWrite:
        raise Completed(note) from None
    output_complete(note)
    return path


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
    _refuse_other_mc_audit(target, benchmark, predictions)
    summary, records = run_mc_audit(
        predictions,
        benchmark,
        judge=judge,
        cache_dir=_ready(target),
        judge_options=options,
        reasoning_format=reasoning_format,
        strict=strict,
        read=read,
    )
    path = _report_set(target, lambda: write_mc_report(summary, records, target))
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
    from vqaudit.shortanswer.join import gold_locations, join_predictions
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
    target = _ready(out if out is not None else predictions.with_name(predictions.name + ".perturb"))
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
    with folder_lock(_ready(out), "vqaudit audit-summary", kind="summary folder"):
        path = write_audit_summary(audits, perturb or [], out)
    typer.echo(path.read_text(encoding="utf-8"))
    typer.echo(f"summary written to {path}", err=True)
