"""The short-answer audit pipeline behind ``vqaudit audit`` (seed 002; report layout of Table 13).

Layers, kept apart as §4 "Metric layers" asks:

1. **Official**: the benchmark's own metric and variant (:mod:`.benchmarks`), per split and pooled;
2. **Canonical**: the same rows on the canonical layer (:mod:`vqaudit.scoring.canonical`), with the fault kind
   that decided each changed row;
3. **Contract mix**: bucket and Table 8 subtype per item (:mod:`vqaudit.scoring.contracts`), with official and
   canonical scores per bucket (Tables 4/5);
4. **Semantic audit** on the official error pool (rows scoring below 1): RA-Eval recoveries
   (:mod:`vqaudit.scoring.ra_eval`), and with ``--judge`` the judge verdicts, its acceptance share ("Acc. Err."
   of Table 3), the judge-corrected score and a paired-bootstrap interval of judge - official (appendix G),
   validation against human labels and agreement with a second judge (Table 2);
5. **Contract repair**: output-only, reference-only, bidirectional (Table 7), overall and per bucket;
6. **Failure notes**: empty, truncated, formatting, abstentions (:mod:`.failures`).

Every layer reads only a prediction's final answer: a reasoning model's thinking is split off once, where the
predictions are joined to the gold (:func:`vqaudit.shortanswer.join.split_predictions`, rules in
:mod:`vqaudit.parsing.reasoning`), and never scored, so no layer (RA-Eval included) can credit an answer that
appears only in the thinking. A prediction whose reasoning never finished is scored as an empty answer and
counted apart (:class:`ReasoningNotes`); ``rows.jsonl`` keeps the raw prediction beside the final text.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from operator import attrgetter
from pathlib import Path
from typing import Any

from vqaudit.backends import Backend, ModelOptions, load_backend, require_free_text_model
from vqaudit.errors import VqauditError
from vqaudit.progress import step
from vqaudit.scoring import memos
from vqaudit.scoring.contracts import subtype_counts
from vqaudit.scoring.official_batch import official_scores
from vqaudit.scoring.registry import harness_variants, official_scorer
from vqaudit.scoring.repair import VARIANTS
from vqaudit.scoring.repair_counts import summarize_repair
from vqaudit.scoring.unanswerable import UnanswerableMetrics, unanswerable_metrics
from vqaudit.shortanswer import audit_layers
from vqaudit.shortanswer.audit_columns import OVERALL as OVERALL
from vqaudit.shortanswer.audit_columns import RowResult as RowResult
from vqaudit.shortanswer.audit_columns import (
    RowResults,
    bucket_tables,
    by_split,
    canonical_change_labels,
    count_changes,
    ra_eval_info,
)
from vqaudit.shortanswer.audit_judge import judge_layer
from vqaudit.shortanswer.audit_layers import N_PASSES, gc_paused, layers_in_chunks
from vqaudit.shortanswer.audit_result import AuditResult, JudgeAudit
from vqaudit.shortanswer.benchmarks import get_benchmark, load_gold, resolve_metric
from vqaudit.shortanswer.failures import failure_notes_in_chunks
from vqaudit.shortanswer.importers import read_predictions_layout
from vqaudit.shortanswer.join import (
    final_text,
    gold_shape_notes,
    join_predictions,
    split_predictions,
)
from vqaudit.shortanswer.join_locations import gold_locations
from vqaudit.shortanswer.packed import field_values, packed_strings
from vqaudit.shortanswer.raw_split import raw_split
from vqaudit.shortanswer.records import AuditRow, JoinReport


@memos.scoped()  # the scoring memos hold this audit's strings: emptied when it ends
def audit_rows(
    join: JoinReport,
    benchmark: str,
    *,
    model: str = "",
    metric: str | None = None,
    variant: str | None = None,
    n_predictions: int | None = None,
    all_outputs: Sequence[str] = (),
    judge: str | None = None,
    cache_dir: Path | None = None,
    judge_backend: Backend | None = None,
    labels: Path | None = None,
    second_judge: str | None = None,
    second_backend: Backend | None = None,
    n_draws: int = 2000,
    judge_options: ModelOptions | None = None,
    seed: int = 0,
    gold_where: Mapping[str, str] | None = None,
) -> AuditResult:
    """Run every audit layer over joined rows (module docstring).

    Args:
        join: the join report (its rows are scored; unjoined ids are reported).
        benchmark: benchmark name (decides the default metric and variant).
        model: the name of the model whose predictions these are (labels multi-audit summaries).
        metric: official metric override (e.g. ``containment``).
        variant: metric variant override (e.g. ``vlmevalkit``).
        n_predictions: predictions read (default: joined rows).
        all_outputs: every prediction's final text (after the reasoning split; "" for a prediction whose
            reasoning never finished), joined or not, for the failure notes (default: the joined rows').
        judge: judge model spec, or None for no judge layer.
        cache_dir: folder of the judge caches (required with ``judge``).
        judge_backend: a ready judge backend (tests).
        labels: human labels file for judge validation.
        second_judge: a second judge spec for agreement/kappa.
        second_backend: a ready second judge backend (tests).
        n_draws: bootstrap draws for the judge - official interval.
        judge_options: generic model options of both judges (``--judge-arg``, ``--api-key-env``).
        seed: bootstrap seed.
        gold_where: ``qid -> "FILE: row N"``, where each row's gold was read
            (:func:`vqaudit.shortanswer.join.gold_locations`), for the message of a gold the metric refuses;
            rows not in it are named by their joined row number.

    Returns:
        The :class:`AuditResult`.

    Raises:
        VqauditError: an unknown benchmark/metric/variant, a judge without ``cache_dir``, bad labels.
    """
    spec = get_benchmark(benchmark)
    if judge is None and (labels is not None or second_judge is not None):
        raise VqauditError(
            f"{'--labels' if labels is not None else '--second-judge'} needs --judge: the labels "
            "validate, and the second judge is compared with, the first judge's verdicts"
        )
    built: list[Backend | None] = []
    for option, judge_spec, ready in (
        ("--judge", judge, judge_backend),
        ("--second-judge", second_judge, second_backend),
    ):
        if judge_spec is not None and ready is None:
            require_free_text_model(judge_spec, option)
            ready = load_backend(judge_spec, judge_options)  # a bad spec fails before any scoring (no connection)
        built.append(ready)
    judge_backend, second_backend = built
    metric, variant = resolve_metric(spec.name, metric, variant)
    scorer = official_scorer(metric, variant)
    rows = join.rows
    if spec.gold_required and join.gold_source == "none":
        raise VqauditError(f"{benchmark}: the predictions carry no gold answers; pass the gold file with --gold")
    if not rows and spec.gold_required:
        raise VqauditError(
            f"{benchmark}: no prediction could be joined to a gold answer (check the ids, --gold, "
            "--join-on and --format); nothing to audit"
        )
    notes = gold_shape_notes(rows, spec.name, metric)
    chunks = range(0, len(rows), audit_layers.LAYER_CHUNK_ROWS)
    with (
        gc_paused(),
        step(f"audit {benchmark}: layer passes over {len(rows)} rows", N_PASSES * max(1, len(chunks))) as shown,
    ):
        layers = layers_in_chunks(rows, scorer, metric, variant, gold_where, shown)
    official, contracts, repaired = layers.official, layers.contracts, layers.repaired
    memos.clear()  # the passes over every row are done: what follows reads few strings again
    judge_audit: JudgeAudit | None = None
    verdicts: list[bool | None] = [None] * len(rows)
    if judge is not None:
        if cache_dir is None:
            raise VqauditError("the judge layer needs a folder for its response cache")
        judge_audit, verdicts = judge_layer(
            rows,
            official,
            contracts,
            judge,
            cache_dir,
            judge_backend,
            labels,
            second_judge,
            second_backend,
            n_draws,
            seed,
        )
    with gc_paused():
        canonical = layers.canonical
        mix, by_bucket = bucket_tables(list(map(attrgetter("bucket"), contracts)), official, canonical, repaired)
        # The report's counts are counts of the row labels, so rows.jsonl holds the rows behind each count.
        gained, lost_causes = canonical_change_labels(rows, official, canonical, layers.kinds, metric)
        kinds, lost, causes = count_changes(gained, lost_causes)
        ra_info = ra_eval_info(official, layers.ra)
        accepts = verdicts if judge is not None else None
        repair = tuple(summarize_repair(v, official, repaired[v], accepts) for v in VARIANTS)
        results = RowResults(
            rows,
            official,
            layers.canon(),
            contracts,
            layers.overlays,
            layers.repaired_rows(),
            layers.ra,
            verdicts,
            gained,
            lost_causes,
        )  # records built when read: one held per row cost ~430 bytes a row
        failures = failure_notes_in_chunks(
            all_outputs if all_outputs else packed_strings(r.prediction for r in rows), audit_layers.LAYER_CHUNK_ROWS
        )
        splits = list(field_values(rows, "split"))
        scores = by_split(splits, official) if rows else {}
        canonical_by_split = by_split(splits, canonical) if rows else {}
    return AuditResult(
        benchmark,
        model,
        metric,
        variant,
        n_predictions if n_predictions is not None else len(rows),
        join,
        scores,
        canonical_by_split,
        mix,
        subtype_counts(contracts),
        kinds,
        lost,
        ra_info,
        repair,
        by_bucket,
        failures,
        judge_audit,
        tuple(notes),
        results,
        {k: v for k, v in causes.items() if v},
        answerability=_answerability(spec.answerability, rows),
    )


def _answerability(applies: bool, rows: Sequence[AuditRow]) -> UnanswerableMetrics | None:
    """The answerability metrics of the rows (:mod:`vqaudit.scoring.unanswerable`), or None.

    None unless the benchmark's row has ``answerability`` and every joined row's gold carries its label (a gold
    embedded in predictions has none).
    """
    labels = list(field_values(rows, "answerable"))
    if not applies or not rows or any(label is None for label in labels):
        return None
    return unanswerable_metrics(
        [bool(label) for label in labels], [r.prediction for r in rows], [r.answerable_score for r in rows]
    )


DATA_SUFFIXES = (".gz", ".json", ".jsonl", ".csv", ".tsv", ".xlsx", ".txt")
"""File-name endings that are not part of a model's name."""


def model_name_of(predictions: Path) -> str:
    """The default model name of a prediction file: its name without data suffixes.

    ``llava-v1.5-13b.jsonl`` -> ``llava-v1.5-13b`` (cutting at the first dot gave ``llava-v1``, so the v1.5 and
    v1.6 audits collided); ``preds.json.gz`` -> ``preds``; a name that is all suffix keeps its name.
    """
    name = predictions.name
    while suffix := next((s for s in DATA_SUFFIXES if name.lower().endswith(s) and len(name) > len(s)), None):
        name = name[: -len(suffix)]
    return name


def run_audit(
    predictions: Path,
    benchmark: str,
    *,
    gold: Path | None = None,
    fmt: str = "auto",
    join_on: str = "id",
    id_field: str | None = None,
    image_field: str | None = None,
    model: str | None = None,
    reasoning_format: str = "auto",
    **options: Any,
) -> AuditResult:
    """Read a prediction file (and a gold file), join them and run :func:`audit_rows`.

    Args:
        predictions: the prediction file (any format of :mod:`.importers`).
        benchmark: benchmark name.
        gold: a gold file in the benchmark's layout (default: the gold embedded in the predictions).
        fmt: prediction format (``auto``, ``generic``, ``vlmevalkit``, ``lmms-eval``).
        join_on: ``id``, ``question`` or ``image-question``.
        id_field: the prediction id column to use (``row``: row numbers).
        image_field: the prediction column naming the image (for ``image-question`` joins).
        model: the model's name for summaries (default: the prediction file's name without its suffixes).
        reasoning_format: which reasoning spans are split off before any layer reads a prediction (``auto``,
            ``none`` or a name of :data:`vqaudit.parsing.reasoning.FORMATS`).
        **options: passed to :func:`audit_rows` (metric, variant, judge, cache_dir, ...).

    Returns:
        The :class:`AuditResult`.

    Raises:
        VqauditError: from any stage, naming the file, row and field where known.
    """
    spec = get_benchmark(benchmark)
    preds, layout = read_predictions_layout(predictions, fmt, id_field=id_field, image_field=image_field)
    gold_items = load_gold(gold, spec.name) if gold is not None else None
    splits = split_predictions(preds, reasoning_format)  # once: every layer reads the final answers only
    join = join_predictions(preds, gold_items, benchmark=spec.name, on=join_on, splits=splits)
    where = gold_locations(preds, gold_items, predictions_path=predictions, gold_path=gold, join_on=join_on)
    name = model if model is not None else model_name_of(predictions)
    n_predictions = len(preds)
    all_outputs = packed_strings(
        final_text(s, text) for s, text in zip(splits, field_values(preds, "prediction"), strict=True)
    )
    split = raw_split(gold_items)  # appendix A: counters over the gold file's own metadata, every question
    del preds, gold_items, splits  # the joined rows (packed) hold what the audit reads; ``where`` reads preds
    result = audit_rows(
        join, spec.name, model=name, n_predictions=n_predictions, all_outputs=all_outputs, gold_where=where, **options
    )
    result = dataclasses.replace(result, raw_split=split)
    if options.get("variant") is None:  # audited under the default variant: the harness's own numbers beside it
        others = harness_scores(result, layout)
        if others is not None:
            result = dataclasses.replace(result, harness_scores=others)
    return result


def harness_scores(result: AuditResult, harness: str) -> dict[str, Any] | None:
    """The official scores of ``harness``'s own variants where they differ from ``result``'s (2 decimals).

    A file read as VLMEvalKit's or lmms-eval's output (:func:`vqaudit.shortanswer.importers.read_predictions_layout`)
    audited under the default variant: each variant of :data:`vqaudit.scoring.registry.HARNESS_VARIANTS` for the
    metric scores the same joined rows, by split as ``result.scores``. E.g. the VILA1.5-13B ChartQA sheet: default
    ``pix2struct`` 42.56, ``vlmevalkit`` 42.88 (the number VLMEvalKit's own result file gives).

    Returns:
        ``{"harness", "default_variant", "variants": {variant: {split: score}}}`` holding only the variants that
        give another number for some split, or None when none does (or the file is no harness's).
    """
    rows = result.join.rows
    if not rows or not result.scores:
        return None
    splits = list(field_values(rows, "split"))
    differing: dict[str, dict[str, float]] = {}
    for variant in harness_variants(harness, result.metric):
        if variant == result.variant:
            continue
        values: list[float] = []
        for start in range(
            0, len(rows), audit_layers.LAYER_CHUNK_ROWS
        ):  # each row's score is its own: chunks bound memory
            chunk = rows[start : start + audit_layers.LAYER_CHUNK_ROWS]
            values += official_scores([r.prediction for r in chunk], [r.answers for r in chunk], result.metric, variant)
        scores = by_split(splits, values)
        if any(round(scores[k], 2) != round(result.scores.get(k, math.nan), 2) for k in scores):
            differing[variant] = scores
    if not differing:
        return None
    return {"harness": harness, "default_variant": result.variant, "variants": differing}
