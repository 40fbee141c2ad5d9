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
import gc
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter
from pathlib import Path
from typing import Any

from vqaudit.backends import Backend, ModelOptions, load_backend, require_free_text_model
from vqaudit.errors import VqauditError
from vqaudit.metrics.flips import judge_delta_interval
from vqaudit.progress import Reporter, step
from vqaudit.scoring import memos
from vqaudit.scoring.canonical import canonical_scores
from vqaudit.scoring.contracts import BUCKETS, Contract, classify_many, subtype_counts
from vqaudit.scoring.official_batch import official_scores
from vqaudit.scoring.ra_eval import ra_eval_layer
from vqaudit.scoring.registry import harness_variants, official_scorer
from vqaudit.scoring.repair import VARIANTS, Overlay, RepairResult, reference_overlays, repair_scores, summarize_repair
from vqaudit.scoring.unanswerable import UnanswerableMetrics, unanswerable_metrics
from vqaudit.scoring.vqa_normalize import fast_vqaeval_process
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
from vqaudit.shortanswer.audit_columns import mean100 as _mean100
from vqaudit.shortanswer.benchmarks import get_benchmark, load_gold, resolve_metric
from vqaudit.shortanswer.failures import FailureNotes, failure_notes_in_chunks
from vqaudit.shortanswer.importers import read_predictions_layout
from vqaudit.shortanswer.join import (
    final_text,
    gold_locations,
    gold_shape_notes,
    join_predictions,
    split_predictions,
)
from vqaudit.shortanswer.judge import binary_agreement, judge_rows, read_labels, run_judge
from vqaudit.shortanswer.judge_validation import validate_judge
from vqaudit.shortanswer.layer_columns import LayerColumns
from vqaudit.shortanswer.packed import field_values, packed_strings
from vqaudit.shortanswer.raw_split import RawSplit, raw_split
from vqaudit.shortanswer.records import AuditRow, JoinReport


@dataclass(frozen=True)
class JudgeAudit:
    """The judge layer (seed 002 §3.3, Table 2, Table 3, appendix G)."""

    spec: str
    pool: int
    accepted: int
    undecided: int
    accepted_share: float
    judged_score: float
    delta: tuple[float, float, float]
    fn_rate_by_bucket: dict[str, float]
    accepted_by_bucket: dict[str, int]
    validation: dict[str, Any] | None = None  # judge_validation.validate_judge
    second: dict[str, Any] | None = None
    unfinished: int = 0  # of the undecided verdicts, judge replies whose reasoning never finished (token budget)


@dataclass(frozen=True)
class ReasoningNotes:
    """Joined predictions of a reasoning model: what the reasoning split did (:mod:`vqaudit.parsing.reasoning`).

    Attributes:
        with_reasoning: rows whose prediction held reasoning (split off, never scored).
        not_finished: rows whose reasoning never finished ("reasoning not finished"): scored as empty answers
            (the failure notes count them as empty), marked ``reasoning_not_finished`` in ``rows.jsonl``.
    """

    with_reasoning: int
    not_finished: int


def reasoning_notes(rows: Sequence[AuditRow]) -> ReasoningNotes | None:
    """The :class:`ReasoningNotes` of joined rows, or None when no prediction held reasoning.

    None keeps the report of predictions without reasoning exactly as it was before the split existed.
    """
    with_reasoning = sum(1 for chars in field_values(rows, "reasoning_chars") if chars is not None)
    if not with_reasoning:
        return None
    return ReasoningNotes(with_reasoning, sum(1 for finished in field_values(rows, "finished") if not finished))


@dataclass(frozen=True)
class AuditResult:
    """Everything the Table 13 report shows (see :mod:`vqaudit.report.shortanswer`)."""

    benchmark: str
    model: str
    metric: str
    variant: str
    n_predictions: int
    join: JoinReport
    scores: dict[str, float]
    canonical_scores: dict[str, float]
    contract_mix: dict[str, dict[str, float]]
    subtypes: dict[str, dict[str, int]]
    canonical_kinds: dict[str, int]
    canonical_lost: int
    ra_eval: dict[str, float]
    repair: tuple[RepairResult, ...]
    repair_by_bucket: dict[str, dict[str, float]]
    failures: FailureNotes
    judge: JudgeAudit | None
    notes: tuple[str, ...]
    rows: Sequence[RowResult] = field(repr=False)  # a RowResults: records built when read
    canonical_lost_causes: dict[str, int] = field(default_factory=dict)  # cause -> rows (REFUSAL_CAUSES)
    # the file's harness and the official scores (by split) of its own variants where they differ from the
    # default variant's: {"harness", "variants": {variant: {split: score}}}; None when nothing differs
    harness_scores: dict[str, Any] | None = None
    answerability: UnanswerableMetrics | None = None  # benchmarks whose row has answerability, gold labelled
    raw_split: RawSplit | None = None  # appendix A, from the gold file's metadata (run_audit); None: not computed

    @cached_property  # one pass over the joined rows, read by report.md and report.json alike
    def reasoning(self) -> ReasoningNotes | None:
        """:func:`reasoning_notes` of the joined rows (None: no prediction held reasoning)."""
        return reasoning_notes(self.join.rows)


def _share(verdicts: Mapping[str, bool | None]) -> float:
    decided = [v for v in verdicts.values() if v is not None]
    return 100.0 * sum(decided) / len(decided) if decided else math.nan


def _judge_layer(
    rows: Sequence[AuditRow],
    official: Sequence[float],
    contracts: Sequence[Contract],
    spec: str,
    cache_dir: Path,
    backend: Backend | None,
    labels: Path | None,
    second: str | None,
    second_backend: Backend | None,
    n_draws: int,
    seed: int,
) -> tuple[JudgeAudit, list[bool | None]]:
    pool = [r for r, s in zip(rows, official, strict=True) if s < 1.0]
    human = read_labels(labels) if labels is not None else None  # a bad labels file is refused before any judge call
    first = judge_rows(pool, spec, cache_dir / "judge.sqlite", backend=backend)
    verdicts = first.verdicts
    per_row = [verdicts.get(r.qid) if s < 1.0 else None for r, s in zip(rows, official, strict=True)]
    # An undecided verdict (a failed call or an unreadable reply) is no verdict: its row leaves the judge-corrected
    # score, the paired interval and the acceptance share's denominator, and is counted apart.
    kept = [s >= 1.0 or v is not None for s, v in zip(official, per_row, strict=True)]
    official_kept = [s for s, k in zip(official, kept, strict=True) if k]
    judged = [1.0 if v else s for s, v, k in zip(official, per_row, kept, strict=True) if k]
    accepted = sum(1 for v in verdicts.values() if v)
    undecided = sum(1 for v in verdicts.values() if v is None)
    n_decided = len(verdicts) - undecided
    if pool and 2 * undecided > len(pool):  # mostly undecided must not read as "0% false negatives"
        raise VqauditError(
            f"judge {spec}: {undecided} of {len(pool)} verdicts are undecided (replies neither yes nor "
            f"no), so its acceptance and false-negative rates would mean nothing; check its replies "
            f"in {cache_dir / 'judge.sqlite'}{first.why_undecided()}"
        )
    fn_rate: dict[str, float] = {}
    fn_count: dict[str, int] = {}
    for bucket in BUCKETS:
        errs = [
            v
            for v, c, s in zip(per_row, contracts, official, strict=True)
            if c.bucket == bucket and s < 1.0 and v is not None
        ]  # decided verdicts only
        fn_count[bucket] = sum(1 for v in errs if v)
        fn_rate[bucket] = 100.0 * fn_count[bucket] / len(errs) if errs else math.nan  # none decided: n/a, not 0%
    validation = None
    if labels is not None and human is not None:
        pool_buckets = {r.qid: c.bucket for r, c, s in zip(rows, contracts, official, strict=True) if s < 1.0}
        joined = [r.qid for r in rows]
        validation = validate_judge(verdicts, human, pool_buckets, labels, joined=joined)
    second_info = None
    if second is not None:
        other = run_judge(pool, second, cache_dir / "judge2.sqlite", backend=second_backend)
        both = [(verdicts[q], other[q]) for q in verdicts if verdicts[q] is not None and other.get(q) is not None]
        agree = binary_agreement([bool(a) for a, _ in both], [bool(b) for _, b in both]) if both else None
        second_info = {
            "spec": second,
            "n": len(both),
            "agreement": agree.agreement if agree else math.nan,
            "kappa": agree.kappa if agree else math.nan,
            "counts": [agree.tp, agree.fp, agree.fn, agree.tn] if agree else None,
            "accepted_share": _share(other),
            "undecided": sum(1 for v in other.values() if v is None),
        }
    delta = judge_delta_interval(official_kept, judged, n_draws=n_draws, seed=seed)
    audit = JudgeAudit(
        spec,
        len(pool),
        accepted,
        undecided,
        100.0 * accepted / n_decided if n_decided else math.nan,
        _mean100(judged),
        delta,
        fn_rate,
        fn_count,
        validation,
        second_info,
        first.unfinished,
    )
    return audit, per_row


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
    chunks = range(0, len(rows), _LAYER_CHUNK_ROWS)
    with (
        _gc_paused(),
        step(f"audit {benchmark}: layer passes over {len(rows)} rows", _N_PASSES * max(1, len(chunks))) as shown,
    ):
        layers = _layers_in_chunks(rows, scorer, metric, variant, gold_where, shown)
    official, contracts, repaired = layers.official, layers.contracts, layers.repaired
    memos.clear()  # the passes over every row are done: what follows reads few strings again
    judge_audit: JudgeAudit | None = None
    verdicts: list[bool | None] = [None] * len(rows)
    if judge is not None:
        if cache_dir is None:
            raise VqauditError("the judge layer needs a folder for its response cache")
        judge_audit, verdicts = _judge_layer(
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
    with _gc_paused():
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
            all_outputs if all_outputs else packed_strings(r.prediction for r in rows), _LAYER_CHUNK_ROWS
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


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while the audit computes its layers (restored afterwards).

    The pass allocates several small objects per row and keeps them alive, so the collector's generational
    passes would rescan every row already done: about 30% of the audit on a 166,731-row pool
    (``benchmarks/bench_audit.py``). At the end, ``freeze()`` + ``unfreeze()`` moves the objects allocated
    meanwhile straight into the oldest generation, so the first collection afterwards does not scan them all
    at once; they stay collectable (only reference cycles need the collector, and the pass makes none).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:  # never unfreeze what a caller froze (e.g. before forking workers)
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()


_LayerColumns = tuple[
    list[float],
    list[tuple[float, str | None]],
    list[Contract],
    list[Overlay],
    list[tuple[float, ...]],
    list[bool | None],
]


_N_PASSES = 6
"""The passes of :func:`_layers` over all rows: official, contract, overlay, repair, RA-Eval, canonical."""


_LAYER_CHUNK_ROWS = 1 << 14
"""Rows per call of :func:`_layers` (:func:`_layers_in_chunks`): its passes hold memos of every distinct string of
the rows they are given (the canonical pass alone about 0.9 KB a row, measured with ``tracemalloc`` at 50,000 rows),
so chunks bound that to the chunk's strings, whatever the file's size. 16,384 rows: 65,536 left about 150 MB of
one chunk's passes on top of the rows at 500,000 rows (``benchmarks/bench_audit_memory.py``: 437 MB peak, against
371 MB with 16,384)."""


def _layers_in_chunks(
    rows: Sequence[AuditRow],
    scorer: Callable[[str, Sequence[str]], float],
    metric: str,
    variant: str,
    where: Mapping[str, str] | None = None,
    shown: Reporter | None = None,
) -> LayerColumns:
    """:func:`_layers` of the rows, :data:`_LAYER_CHUNK_ROWS` rows at a time, its columns joined in row order.

    Every layer of a row depends on that row alone (the memos only save time), so the columns equal those of one
    call over all rows; a refused gold is named by its joined row number over all rows. ``shown`` is advanced
    :data:`_N_PASSES` times per chunk. The columns are held compactly (:class:`LayerColumns`); each chunk's
    lists are let go once added.
    """
    columns = LayerColumns()
    for start in range(0, len(rows), _LAYER_CHUNK_ROWS):  # a slice of a Packed sequence is a list of its records
        part = _layers(rows[start : start + _LAYER_CHUNK_ROWS], scorer, metric, variant, where, shown, offset=start)
        columns.add(*part)
    return columns


def _layers(
    rows: Sequence[AuditRow],
    scorer: Callable[[str, Sequence[str]], float],
    metric: str,
    variant: str,
    where: Mapping[str, str] | None = None,
    shown: Reporter | None = None,
    *,
    offset: int = 0,
) -> _LayerColumns:
    """Every gold-side and output-side layer of the rows before the judge, one pass per layer over all rows.

    Returns the columns official, canonical ``(score, kind)``, contract, overlay, repaired scores (in
    :data:`VARIANTS` order) and RA-Eval. The layers that apply the vqaEval normalization (canonical, RA-Eval)
    share one memo of it, local to this call. ``shown`` is advanced after each of the :data:`_N_PASSES` passes.
    ``offset``: the joined row number of ``rows[0]`` minus 1 (the rows are a chunk of all rows), for the message.

    Raises:
        VqauditError: a gold the metric cannot take (naming the file and row its gold was read from, from
            ``where``, else the joined row, and its question id).
    """
    outputs, golds, questions = [r.prediction for r in rows], [r.answers for r in rows], [r.question for r in rows]
    try:
        official = official_scores(outputs, golds, metric, variant)
    except ValueError:  # the first row the metric refuses, found row by row to name it
        official = []
        try:
            for row in rows:
                official.append(scorer(row.prediction, row.answers))
        except ValueError as exc:
            bad = rows[len(official)]
            place = (where or {}).get(bad.qid, f"joined row {offset + len(official) + 1}")
            raise VqauditError(f"{place} (question id {bad.qid!r}), field 'answers': {exc}") from None
        raise
    shown = shown or Reporter("", 0)
    shown.advance()
    contracts = classify_many(questions, golds, [r.answer_type for r in rows], [r.ocr_tokens for r in rows])
    shown.advance()
    overlays = reference_overlays(golds, contracts, questions)
    shown.advance()
    by_variant = repair_scores(
        outputs,
        golds,
        questions,
        contracts,
        metric,
        variant,
        scorer,
        VARIANTS,
        official=official,
        overlays_given=overlays,
    )
    shown.advance()
    repaired = list(zip(*(by_variant[v] for v in VARIANTS), strict=True))
    forms: dict[str, str] = {}  # vqaEval forms, shared by RA-Eval and the canonical layer
    predictions = [r.prediction for r in rows]
    answers = [r.answers for r in rows]
    ra = ra_eval_layer(predictions, answers, [r.question for r in rows], official, forms=forms)
    shown.advance()
    canon = canonical_scores(predictions, answers, metric, vqaeval=_memo(fast_vqaeval_process, forms))
    shown.advance()
    return official, canon, contracts, overlays, repaired, ra


def _memo(fn: Callable[[str], str], cache: dict[str, str] | None = None) -> Callable[[str], str]:
    """``fn`` memoized in ``cache`` (default: a new dict, living as long as the returned function).

    No global cache to clear; a given ``cache`` may already hold results of ``fn`` (e.g. ``vqaeval_many``'s).
    """
    if cache is None:
        cache = {}

    def memo(text: str) -> str:
        out = cache.get(text)
        if out is None:
            out = cache[text] = fn(text)
        return out

    return memo


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
        for start in range(0, len(rows), _LAYER_CHUNK_ROWS):  # each row's score is its own: chunks bound memory
            chunk = rows[start : start + _LAYER_CHUNK_ROWS]
            values += official_scores([r.prediction for r in chunk], [r.answers for r in chunk], result.metric, variant)
        scores = by_split(splits, values)
        if any(round(scores[k], 2) != round(result.scores.get(k, math.nan), 2) for k in scores):
            differing[variant] = scores
    if not differing:
        return None
    return {"harness": harness, "default_variant": result.variant, "variants": differing}
