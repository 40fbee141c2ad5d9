"""Join predictions with gold, reporting what does not join instead of dropping it (issue 5, item 1).

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
from pathlib import Path

from vqaudit.errors import VqauditError
from vqaudit.shortanswer.loaders import CHARTQA_SPLITS
from vqaudit.shortanswer.records import AuditRow, GoldItem, JoinReport, Prediction

JOIN_KEYS = ("id", "question", "image-question")


def _question_key(text: str) -> str:
    return " ".join(text.lower().split())


def _gold_key(item: GoldItem, on: str) -> str:
    q = _question_key(item.question)
    return f"{item.image}\n{q}" if on == "image-question" else q


def _pred_key(pred: Prediction, on: str) -> str:
    q = _question_key(pred.question)
    return f"{pred.image}\n{q}" if on == "image-question" else q


def _check_chartqa_numbering(predictions: Sequence[Prediction], gold: Sequence[GoldItem]) -> None:
    """Refuse 0-based ChartQA ids: ``<split>:N`` is row N of the split counting from 1 (:func:`.load_chartqa`).

    A prediction id ``test_human:0`` (or ``test_augmented:0``) can only come from 0-based numbering, which
    would join every other prediction to the next question's gold; it is refused when the gold has that
    split's ids. Nothing is guessed: other ids are left to the join.

    Raises:
        VqauditError: naming the prediction file and row holding the id 0.
    """
    gold_ids = {g.qid for g in gold}
    for split in CHARTQA_SPLITS:
        zero = f"{split}:0"
        if f"{split}:1" not in gold_ids:
            continue
        bad = next((p for p in predictions if p.qid == zero), None)
        if bad is not None:
            place = _location(bad.source, Path("the prediction file"))
            raise VqauditError(f"{place}, id {zero!r}: ChartQA ids are 1-based ({split}:N is row N of the "
                               "split, counting from 1); these predictions number from 0 and would join shifted "
                               "by one: renumber them from 1")


def join_predictions(
    predictions: Sequence[Prediction],
    gold: Sequence[GoldItem] | None,
    *,
    benchmark: str,
    on: str = "id",
) -> JoinReport:
    """Join predictions with gold items.

    Args:
        predictions: the imported predictions (unique ids).
        gold: the gold items, or None to use the gold embedded in the predictions.
        benchmark: benchmark name recorded on the rows.
        on: ``"id"``, ``"question"`` or ``"image-question"``.

    Returns:
        A :class:`JoinReport`: joined rows in prediction order, the ids of predictions without gold and of gold
        without predictions (gold order), the gold source, and notes (ambiguous question keys).

    Raises:
        VqauditError: ``on`` is not one of :data:`JOIN_KEYS`, or a ChartQA id join whose predictions number the
            rows of a split from 0 (:func:`_check_chartqa_numbering`).
    """
    if on not in JOIN_KEYS:
        raise VqauditError(f"join key must be one of {', '.join(JOIN_KEYS)}, got {on!r}")
    if gold is not None and on == "id":
        _check_chartqa_numbering(predictions, gold)
    if gold is None:
        rows = tuple(AuditRow(p.qid, p.question, p.prediction, p.gold, benchmark, p.split, image=p.image)
                     for p in predictions if p.gold)
        missing = tuple(p.qid for p in predictions if not p.gold)
        return JoinReport(rows, missing, (), "embedded" if rows else "none")
    notes: list[str] = []
    if on == "id":
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
        index = {_gold_key(g, on): g for g in gold if _gold_key(g, on) not in ambiguous | shared}
        key_of_pred = {p.qid: _pred_key(p, on) for p in predictions}
        key_of_gold = {g.qid: _gold_key(g, on) for g in gold}
    rows_list: list[AuditRow] = []
    without_gold: list[str] = []
    used: set[str] = set()
    for p in predictions:
        item = index.get(key_of_pred[p.qid])
        if item is None:
            without_gold.append(p.qid)
            continue
        used.add(item.qid)
        rows_list.append(AuditRow(p.qid, item.question or p.question, p.prediction, item.answers, benchmark,
                                  p.split, item.answer_type, item.ocr_tokens, item.image or p.image))
    without_pred = tuple(g.qid for g in gold if g.qid not in used and key_of_gold[g.qid] is not None)
    return JoinReport(tuple(rows_list), tuple(without_gold), without_pred, "file", tuple(notes))


def _location(source: str, fallback: Path) -> str:
    path, _, row = source.rpartition(":")
    return f"{path}: row {row}" if path and row.isdigit() else str(fallback)


def gold_locations(predictions: Sequence[Prediction], gold_items: Sequence[GoldItem] | None, *,
                   predictions_path: Path, gold_path: Path | None, join_on: str) -> dict[str, str]:
    """Where each joined row's gold was read, ``qid -> "FILE: row N"`` (for :func:`check_gold`'s messages).

    Embedded gold: the prediction file's row. A gold file joined by id: the item's row as its loader recorded it
    (else its 1-based position in the file, the row the loaders' own errors name). A gold file joined by question
    text: the file and the prediction row it was joined to (the gold item is not recorded on the joined row).
    """
    if gold_items is None or gold_path is None:
        return {p.qid: _location(p.source, predictions_path) for p in predictions}
    if join_on == "id":
        return {g.qid: _location(g.source, gold_path) if g.source else f"{gold_path}: row {i}"
                for i, g in enumerate(gold_items, start=1)}
    return {p.qid: f"{gold_path}, the gold item joined to {_location(p.source, predictions_path)}"
            for p in predictions}


_MANY_ANSWER_BENCHMARKS = ("textvqa", "vizwiz", "stvqa")
"""Benchmarks whose gold may hold 10 annotator answers per question (VQA-style); the others have a few at most."""


def gold_shape_notes(rows: Sequence[AuditRow], benchmark: str, metric: str) -> list[str]:
    """Check that the joined gold has the shape of the benchmark's own gold; return notes for the report.

    Rules (the official layouts, :mod:`.loaders`): ChartQA's split names (``test_human``, ``test_augmented``)
    belong to ChartQA only; 10 annotator answers per question belong to the VQA-style benchmarks (TextVQA,
    VizWiz): on most rows of a ChartQA, DocVQA or InfographicVQA audit they mean the wrong ``--benchmark`` was
    given. VQA accuracy with fewer than 4 answers can never reach 1 (min(#matches / 3, 1) over leave-one-out
    subsets) and a single answer always scores 0, as in the official script: reported as a note.

    Raises:
        VqauditError: the gold clearly belongs to another benchmark (the message names the benchmark asked for
            and what the rows look like).
    """
    if not rows:
        return []
    splits = {r.split for r in rows} & set(CHARTQA_SPLITS)
    if splits and not benchmark.startswith("chartqa"):
        names = ", ".join(sorted(splits))
        raise VqauditError(f"--benchmark {benchmark}: the rows carry ChartQA's split names ({names}); audit them "
                           "with --benchmark chartqa")
    ten = sum(1 for r in rows if len(r.answers) == 10)
    if benchmark not in _MANY_ANSWER_BENCHMARKS and ten >= 0.9 * len(rows):
        raise VqauditError(f"--benchmark {benchmark}: {ten} of {len(rows)} rows have exactly 10 gold answers, the "
                           "10-annotator gold of TextVQA or VizWiz; give the benchmark the predictions belong to")
    notes = []
    if metric == "vqa_accuracy":
        few = sum(1 for r in rows if len(r.answers) < 4)
        if few:
            notes.append(f"{few} of {len(rows)} rows have fewer than 4 gold answers: VQA accuracy (min(#matches / 3, "
                         "1) over leave-one-out subsets) cannot reach 1 there, and a single answer always scores 0, "
                         "as in the official script")
    return notes
