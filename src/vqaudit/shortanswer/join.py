"""Join predictions with gold, reporting what does not join instead of dropping it (seed 002).

Gold comes from a gold file when one is given, else from the gold embedded in the prediction file (VLMEvalKit
``answer``, lmms-eval ``target``, MultimodalOCR ``gt_answers``). Joining is by question id, by (image, question
text) as LLaVA's ``eval_textvqa.py`` joins its answers (``question_id`` there is the image id), or by question
text (whitespace-collapsed, lower-cased) for layouts whose ids differ between harnesses (ChartQA); a question
text that occurs twice in the gold, or twice in the predictions, is ambiguous: it is reported in the notes and
its rows stay unjoined, never guessed. :func:`gold_shape_notes` then checks that the joined gold has the shape
of the benchmark's own gold (split names, answers per question).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from vqaudit.errors import VqauditError
from vqaudit.parsing.reasoning import AUTO, OPEN_SUFFIX, ReasoningSplit, effective_format, split_reasoning
from vqaudit.shortanswer.benchmarks import BENCHMARKS, get_benchmark
from vqaudit.shortanswer.join_checks import (
    check_chartqa_numbering,
    check_positions,
    no_id_joins,
    no_question_joins,
    question_key,
    vlmevalkit_chartqa_ids,
)
from vqaudit.shortanswer.loaders import CHARTQA_SPLITS
from vqaudit.shortanswer.packed import field_values, packed_records
from vqaudit.shortanswer.records import AuditRow, GoldItem, JoinReport, Prediction

JOIN_KEYS = ("id", "question", "image-question")


def _gold_key(item: GoldItem, on: str) -> str:
    q = question_key(item.question)
    return f"{item.image}\n{q}" if on == "image-question" else q


def _pred_key(pred: Prediction, on: str) -> str:
    q = question_key(pred.question)
    return f"{pred.image}\n{q}" if on == "image-question" else q


TAG_STARTS = ("<", "\u25c1")
"""The first character of every span and answer-box tag :mod:`vqaudit.parsing.reasoning` knows (``<think>``,
``<|begin_of_box|>``, ``◁think▷``, ...): a prediction holding neither holds no reasoning."""


def split_predictions(predictions: Sequence[Prediction], reasoning_format: str = AUTO) -> list[ReasoningSplit | None]:
    """Split every prediction into reasoning and final answer, once, in order (:mod:`vqaudit.parsing.reasoning`).

    Every layer of the audit reads only the final answer; the raw prediction is kept byte-exact beside it.

    Returns:
        One entry per prediction: its :class:`~vqaudit.parsing.reasoning.ReasoningSplit`, or None for a
        prediction holding no tag at all (no character of :data:`TAG_STARTS`; the split would return it whole),
        so the pools of ~170k plain answers build no split record per row.

    Raises:
        ValueError: an unknown ``reasoning_format`` (the CLI offers only known ones).
    """
    fmt = effective_format(reasoning_format, field_values(predictions, "prediction"))  # auto: template-opened?
    if fmt.endswith(OPEN_SUFFIX):  # every prediction starts inside the span: each one is split
        return [split_reasoning(text, fmt) for text in field_values(predictions, "prediction")]
    return [
        split_reasoning(text, fmt) if "<" in text or "\u25c1" in text else None
        for text in field_values(predictions, "prediction")
    ]


def final_text(split: ReasoningSplit | None, raw: str) -> str:
    """The text every layer reads of a prediction ``raw`` split into ``split``: "" when never finished."""
    if split is None:
        return raw
    return "" if split.final is None else split.final


def scored_text(split: ReasoningSplit | None, raw: str) -> tuple[str, str | None, int | None, bool]:
    """What an audit row holds of one split prediction: ``(prediction, raw, reasoning_chars, finished)``.

    ``prediction`` is the final answer, or "" when the reasoning never finished (scored as an empty answer);
    ``raw`` is the prediction as read when it differs from that, else None (see :class:`AuditRow`).
    """
    if split is None:
        return raw, None, None, True
    final = final_text(split, raw)
    # compared by value: the split may have been made from another read of the same packed prediction, so the
    # final text of a reply the split left whole is an equal string, not the same object (a split that removed
    # anything leaves a shorter text: split_reasoning returns the reply itself or a strict part of it)
    return final, (raw if final != raw else None), split.reasoning_chars, split.finished


def _row(p: Prediction, split: ReasoningSplit | None, benchmark: str, item: GoldItem | None = None) -> AuditRow:
    """The audit row of prediction ``p`` (split into ``split``), joined to ``item`` (None: its embedded gold)."""
    final, raw, chars, finished = scored_text(split, p.prediction)
    if item is None:
        return AuditRow(
            p.qid,
            p.question,
            final,
            p.gold,
            benchmark,
            p.split,
            image=p.image,
            raw=raw,
            reasoning_chars=chars,
            finished=finished,
            answerable_score=p.answerable_score,
        )
    return AuditRow(
        p.qid,
        item.question or p.question,
        final,
        item.answers,
        benchmark,
        p.split,
        item.answer_type,
        item.ocr_tokens,
        item.image or p.image,
        raw,
        chars,
        finished,
        item.answerable,
        p.answerable_score,
    )


def join_predictions(
    predictions: Sequence[Prediction],
    gold: Sequence[GoldItem] | None,
    *,
    benchmark: str,
    on: str = "id",
    splits: Sequence[ReasoningSplit | None] | None = None,
    reasoning_format: str = AUTO,
) -> JoinReport:
    """Join predictions with gold items.

    Each row's ``prediction`` is the prediction's final answer after the reasoning split; the prediction as read
    stays on the row as ``raw`` when the two differ (:class:`AuditRow`).

    Args:
        predictions: the imported predictions (unique ids).
        gold: the gold items, or None to use the gold embedded in the predictions.
        benchmark: benchmark name recorded on the rows.
        on: ``"id"``, ``"question"`` or ``"image-question"``.
        splits: :func:`split_predictions` of ``predictions`` (same order), when the caller already split them;
            else they are split here under ``reasoning_format``.
        reasoning_format: ``auto``, ``none`` or a format name of :data:`vqaudit.parsing.reasoning.FORMATS`.

    Returns:
        A :class:`JoinReport`: joined rows in prediction order, the ids of predictions without gold and of gold
        without predictions (gold order), the gold source, and notes (ambiguous question keys).

    Raises:
        VqauditError: ``on`` is not one of :data:`JOIN_KEYS`, a ChartQA id join whose predictions number the
            rows of a split from 0 (:func:`check_chartqa_numbering`), or a gold file to which no prediction
            joins (the message shows one prediction id and one gold id, :func:`no_id_joins`, or one question
            of each, :func:`no_question_joins`).
        ValueError: ``splits`` not one per prediction, or an unknown ``reasoning_format``.
    """
    if on not in JOIN_KEYS:
        raise VqauditError(f"join key must be one of {', '.join(JOIN_KEYS)}, got {on!r}")
    if splits is None:
        splits = split_predictions(predictions, reasoning_format)
    elif len(splits) != len(predictions):
        raise ValueError("splits and predictions differ in length")
    if gold is not None and on == "id":
        check_chartqa_numbering(predictions, gold)
    if gold is None:
        rows = packed_records(
            AuditRow, (_row(p, s, benchmark) for p, s in zip(predictions, splits, strict=True) if p.gold)
        )
        missing = tuple(p.qid for p in predictions if not p.gold)
        return JoinReport(rows, missing, (), "embedded" if rows else "none")
    notes: list[str] = []
    skipped = 0  # question keys left unjoined as ambiguous
    if on == "id":
        predictions, mapped = vlmevalkit_chartqa_ids(predictions, gold)
        if mapped:
            notes.append(mapped)
        index = {g.qid: g for g in gold}
        key_of_pred = {p.qid: p.qid for p in predictions}
        key_of_gold = {g.qid: g.qid for g in gold}
    else:
        counts = Counter(_gold_key(g, on) for g in gold)
        ambiguous = {k for k, n in counts.items() if n > 1}
        if ambiguous:
            notes.append(f"{len(ambiguous)} question keys occur more than once in the gold and were not joined")
        pred_counts = Counter(_pred_key(p, on) for p in predictions)
        shared = {k for k, n in pred_counts.items() if n > 1 and k in counts}
        if shared:
            notes.append(f"{len(shared)} question keys occur more than once in the predictions and were not joined")
        skipped = len(ambiguous | shared)
        index = {_gold_key(g, on): g for g in gold if _gold_key(g, on) not in ambiguous | shared}
        key_of_pred = {p.qid: _pred_key(p, on) for p in predictions}
        key_of_gold = {g.qid: _gold_key(g, on) for g in gold}
    rows_list = packed_records(AuditRow)  # held compressed: the rows of the whole file, read a chunk at a time
    without_gold: list[str] = []
    used: set[str] = set()
    for p, split in zip(predictions, splits, strict=True):  # re-keyed predictions keep their order
        item = index.get(key_of_pred[p.qid])
        if item is None:
            without_gold.append(p.qid)
            continue
        used.add(item.qid)
        rows_list.append(_row(p, split, benchmark, item))
    if predictions and not rows_list:
        raise VqauditError(
            no_id_joins(predictions, gold) if on == "id" else no_question_joins(predictions, gold, on, skipped)
        )
    if on == "id":
        notes.extend(check_positions(predictions, index, bool(mapped)))
    without_pred = tuple(g.qid for g in gold if g.qid not in used and key_of_gold[g.qid] is not None)
    if without_pred:
        notes.append(
            f"the scores average the {len(rows_list)} joined rows only: the gold has {len(gold)} questions, "
            f"{len(without_pred)} of them without a prediction (ids in report.json, "
            "join.gold_without_predictions)"
        )
    return JoinReport(rows_list, tuple(without_gold), without_pred, "file", tuple(notes))


def gold_shape_notes(rows: Sequence[AuditRow], benchmark: str, metric: str) -> list[str]:
    """Check that the joined gold has the shape of the benchmark's own gold; return notes for the report.

    Rules (the official layouts, :mod:`.loaders`): ChartQA's split names (``test_human``, ``test_augmented``)
    belong to ChartQA only; 10 annotator answers per question belong to the benchmarks whose row says so
    (:attr:`.benchmarks.BenchmarkSpec.answers`: TextVQA, VizWiz, ST-VQA): on most rows of a ChartQA, DocVQA or
    InfographicVQA audit they mean the wrong ``--benchmark`` was given. VQA accuracy with fewer than 4 answers
    can never reach 1 (min(#matches / 3, 1) over leave-one-out subsets) and a single answer always scores 0, as
    in the official script: reported as a note.

    Raises:
        VqauditError: the gold clearly belongs to another benchmark (the message names the benchmark asked for
            and what the rows look like).
    """
    if not rows:
        return []
    splits = set(field_values(rows, "split")) & set(CHARTQA_SPLITS)
    if splits and not benchmark.startswith("chartqa"):
        names = ", ".join(sorted(splits))
        raise VqauditError(
            f"--benchmark {benchmark}: the rows carry ChartQA's split names ({names}); audit them "
            "with --benchmark chartqa"
        )
    ten = sum(1 for answers in field_values(rows, "answers") if len(answers) == 10)
    if (get_benchmark(benchmark).answers or 0) < 10 and ten >= 0.9 * len(rows):
        many = list(
            dict.fromkeys(s.layout.title if s.layout else s.name for s in BENCHMARKS.values() if s.answers == 10)
        )
        named = " or ".join([", ".join(many[:-1]), many[-1]] if len(many) > 1 else many)
        raise VqauditError(
            f"--benchmark {benchmark}: {ten} of {len(rows)} rows have exactly 10 gold answers, the "
            f"10-annotator gold of {named}; give the benchmark the predictions belong to"
        )
    notes = []
    if metric == "vqa_accuracy":
        few = sum(1 for answers in field_values(rows, "answers") if len(answers) < 4)
        if few:
            notes.append(
                f"{few} of {len(rows)} rows have fewer than 4 gold answers: VQA accuracy (min(#matches / 3, "
                "1) over leave-one-out subsets) cannot reach 1 there, and a single answer always scores 0, "
                "as in the official script"
            )
    return notes
