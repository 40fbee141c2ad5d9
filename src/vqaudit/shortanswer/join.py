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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from vqaudit.errors import VqauditError
from vqaudit.parsing.reasoning import AUTO, OPEN_SUFFIX, ReasoningSplit, effective_format, split_reasoning
from vqaudit.shortanswer.benchmarks import BENCHMARKS, get_benchmark
from vqaudit.shortanswer.loaders import CHARTQA_SPLITS
from vqaudit.shortanswer.packed import field_values, packed_records
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
            raise VqauditError(
                f"{place}, id {zero!r}: ChartQA ids are 1-based ({split}:N is row N of the "
                "split, counting from 1); these predictions number from 0 and would join shifted "
                "by one: renumber them from 1"
            )


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
            rows of a split from 0 (:func:`_check_chartqa_numbering`), or a gold file to which no prediction
            joins (the message shows one prediction id and one gold id, :func:`_no_id_joins`, or one question
            of each, :func:`_no_question_joins`).
        ValueError: ``splits`` not one per prediction, or an unknown ``reasoning_format``.
    """
    if on not in JOIN_KEYS:
        raise VqauditError(f"join key must be one of {', '.join(JOIN_KEYS)}, got {on!r}")
    if splits is None:
        splits = split_predictions(predictions, reasoning_format)
    elif len(splits) != len(predictions):
        raise ValueError("splits and predictions differ in length")
    if gold is not None and on == "id":
        _check_chartqa_numbering(predictions, gold)
    if gold is None:
        rows = packed_records(
            AuditRow, (_row(p, s, benchmark) for p, s in zip(predictions, splits, strict=True) if p.gold)
        )
        missing = tuple(p.qid for p in predictions if not p.gold)
        return JoinReport(rows, missing, (), "embedded" if rows else "none")
    notes: list[str] = []
    skipped = 0  # question keys left unjoined as ambiguous
    if on == "id":
        predictions, mapped = _vlmevalkit_chartqa_ids(predictions, gold)
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
            _no_id_joins(predictions, gold) if on == "id" else _no_question_joins(predictions, gold, on, skipped)
        )
    if on == "id":
        notes.extend(_check_positions(predictions, index, bool(mapped)))
    without_pred = tuple(g.qid for g in gold if g.qid not in used and key_of_gold[g.qid] is not None)
    if without_pred:
        notes.append(
            f"the scores average the {len(rows_list)} joined rows only: the gold has {len(gold)} questions, "
            f"{len(without_pred)} of them without a prediction (ids in report.json, "
            "join.gold_without_predictions)"
        )
    return JoinReport(rows_list, tuple(without_gold), without_pred, "file", tuple(notes))


CHARTQA_TEST_HUMAN_ROWS = 1250
"""Rows of ChartQA's ``test_human.json``. VLMEvalKit's ``ChartQA_TEST`` numbers its ``index`` over both splits:
``test_human`` rows 1-1250, then ``test_augmented`` rows 1251-2500, each split in its file's order (the
VILA1.5-13B sheet in tests/fixtures/shortanswer: index N of test_augmented holds row N - 1250 of
``test_augmented.json``)."""


def _vlmevalkit_chartqa_ids(
    predictions: Sequence[Prediction], gold: Sequence[GoldItem]
) -> tuple[Sequence[Prediction], str]:
    """VLMEvalKit ChartQA ids (a bare ``index`` and a ``split`` column) as the gold's ``<split>:<row>`` ids.

    Applies only when the gold has ChartQA split ids and every prediction has a bare integer id and a ChartQA
    split: ``test_human`` index N is ``test_human:N``, ``test_augmented`` index N is ``test_augmented:N-1250``
    (:data:`CHARTQA_TEST_HUMAN_ROWS`). The rows' question texts are then checked (:func:`_check_positions`).

    Returns:
        The predictions (re-keyed, or as given) and a note for the report ("" when nothing was re-keyed).

    Raises:
        VqauditError: an index that cannot belong to its split (naming the file and row).
    """
    if not predictions or not any(g.qid.split(":", 1)[0] in CHARTQA_SPLITS for g in gold[:1]):
        return predictions, ""
    if not all(p.qid.isdigit() and p.split in CHARTQA_SPLITS and not p.row_id for p in predictions):
        return predictions, ""
    offset = {"test_human": 0, "test_augmented": CHARTQA_TEST_HUMAN_ROWS}
    out = []
    for p in predictions:
        number = int(p.qid) - offset[p.split]
        if not 1 <= number <= CHARTQA_TEST_HUMAN_ROWS:
            place = _location(p.source, Path("the prediction file"))
            raise VqauditError(
                f"{place}, field 'index': index {p.qid} cannot be a {p.split} row of VLMEvalKit's "
                f"ChartQA_TEST (test_human is index 1-{CHARTQA_TEST_HUMAN_ROWS}, test_augmented "
                f"{CHARTQA_TEST_HUMAN_ROWS + 1}-{2 * CHARTQA_TEST_HUMAN_ROWS}); join with "
                "--join-on question"
            )
        out.append(replace(p, qid=f"{p.split}:{number}"))
    return out, (
        f"VLMEvalKit ChartQA_TEST index mapped to the split's rows: test_human:N = index N, "
        f"test_augmented:N = index N + {CHARTQA_TEST_HUMAN_ROWS} (checked against the question texts "
        "the sheet holds)"
    )


def _same_question(a: str, b: str) -> bool:
    """Whether two question texts are the same question.

    Whitespace and case aside; one may hold the other, as a prompt holds the question with an instruction.
    """
    x, y = _question_key(a), _question_key(b)
    return not x or not y or x == y or x in y or y in x


def _check_positions(predictions: Sequence[Prediction], index: dict[str, GoldItem], mapped: bool) -> list[str]:
    """Check row-number (and VLMEvalKit-index) joins against the question texts; a note for the report.

    A prediction whose id is its row number (no id column) joins the gold question with that id by position
    only; when the prediction carries its question text, the texts must agree.

    Raises:
        VqauditError: the first row whose question differs from the gold question it was joined to.
    """
    positional = [p for p in predictions if p.row_id or mapped]
    checked = 0
    for p in positional:
        item = index.get(p.qid)
        if item is None or not p.question or not item.question:
            continue
        if not _same_question(p.question, item.question):
            how = "its row number" if p.row_id else "its VLMEvalKit index"
            gold_at = _location(item.source, Path("the gold file"))
            raise VqauditError(
                f"{_location(p.source, Path('the prediction file'))}, field 'question': joined by "
                f"{how} to gold id {item.qid!r} ({gold_at}), but the questions differ ({p.question!r} "
                f"vs {item.question!r}): the rows are not in the gold's order; give the predictions "
                "an id column, or --join-on question"
            )
        checked += 1
    rows = [p for p in positional if p.row_id]
    if not rows:
        return []
    check = (
        f"the question texts agree on the {checked} joined rows that carry one"
        if checked
        else "no question text to check the order against"
    )
    return [
        f"{len(rows)} predictions have no id in the file: their row numbers were used as ids and joined to the "
        f"gold ids of the same number ({check})"
    ]


def _no_id_joins(predictions: Sequence[Prediction], gold: Sequence[GoldItem]) -> str:
    """The message for an id join where no prediction id is a gold id: one id of each, and what they suggest."""
    p, g = predictions[0], gold[0] if gold else None
    pred_at = _location(p.source, Path("the prediction file"))
    if g is None:
        return f"{pred_at}: the gold file has no questions to join the predictions to"
    shown = (
        f"no prediction id is a gold id: prediction ids look like {p.qid!r} ({pred_at}), gold ids like "
        f"{g.qid!r} ({_location(g.source, Path('the gold file'))})"
    )
    gold_split = g.qid.split(":", 1)[0] if g.qid.split(":", 1)[0] in CHARTQA_SPLITS else ""
    pred_split = p.qid.split(":", 1)[0] if p.qid.split(":", 1)[0] in CHARTQA_SPLITS else p.split
    if p.qid.endswith(".0") and p.qid[:-2].lstrip("-").isdigit() and g.qid.lstrip("-").isdigit():
        hint = (
            "the prediction ids are written as decimals (as pandas writes an integer column with gaps): write "
            "them as integers"
        )
    elif gold_split and pred_split in CHARTQA_SPLITS and pred_split != gold_split:
        hint = (
            f"the predictions are ChartQA's {pred_split} split and the gold file holds {gold_split} (read from "
            f"its name, or from --benchmark): give the {pred_split} gold file"
        )
    elif gold_split and p.qid.isdigit():
        hint = (
            "ChartQA gold ids are <split>:<row> (test_human:1, ...): give ids of that form, a 'split' column "
            "beside VLMEvalKit's index, or --join-on question"
        )
    else:
        hint = "check the id column (--id-field), the gold file and --join-on"
    return f"{shown}; {hint}"


def _shown(text: str, limit: int = 77) -> str:
    """``repr(text)``, its text cut after ``limit`` characters and then marked ``...`` (about 80 in all)."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


def _no_question_joins(predictions: Sequence[Prediction], gold: Sequence[GoldItem], on: str, skipped: int) -> str:
    """The message for a question join where no prediction joined: one question of each side, and a hint.

    ``skipped``: the gold question keys left out of the join as ambiguous (in the gold or in the predictions).
    """
    p = next((x for x in predictions if x.question.strip()), predictions[0])
    pred_at = _location(p.source, Path("the prediction file"))
    if not gold:
        return f"{pred_at}: the gold file has no questions to join the predictions to"
    g = next((x for x in gold if x.question.strip()), gold[0])
    gold_at = _location(g.source, Path("the gold file"))
    if not p.question.strip():
        return (
            f"--join-on {on}: the predictions carry no question text ({pred_at} has none), so none can be "
            "joined by question; give the file a question column, or join by id"
        )
    if on == "image-question":
        shown = (
            f"no prediction's (image, question) is a gold (image, question): predictions look like image "
            f"{_shown(p.image)}, question {_shown(p.question)} ({pred_at}), the gold like image "
            f"{_shown(g.image)}, question {_shown(g.question)} ({gold_at})"
        )
        questions = {_question_key(x.question) for x in gold}
        if any(_question_key(x.question) in questions for x in predictions):
            return f"{shown}; the questions match but the images do not: check --image-field"
    else:
        shown = (
            f"no prediction question is a gold question (compared lower-cased, whitespace collapsed): "
            f"prediction questions look like {_shown(p.question)} ({pred_at}), gold questions like "
            f"{_shown(g.question)} ({gold_at})"
        )
    if skipped:
        many = (
            f"{skipped} question keys occurring more than once were"
            if skipped != 1
            else "1 question key occurring more than once was"
        )
        return f"{shown}; {many} left unjoined (ambiguous)"
    return f"{shown}; check the gold file (the benchmark and split of the predictions), or join by id"


def _location(source: str, fallback: Path) -> str:
    path, _, row = source.rpartition(":")
    return f"{path}: row {row}" if path and row.isdigit() else str(fallback)


class SourceLocations(Mapping[str, str]):
    """``qid -> "FILE: row N"`` of predictions whose ``source`` is ``"FILE:N"``, each text made only when asked for.

    The locations are read only by error messages, so nothing is held per row beyond the predictions themselves
    (held packed by :func:`vqaudit.shortanswer.importers.read_predictions`): a lookup reads the predictions in
    order until it finds the qid. A dict ``qid -> source`` cost about 200 bytes a row on an audit's peak memory.
    """

    def __init__(self, predictions: Sequence[Prediction], fallback: Path) -> None:
        """``predictions``: their ``source`` is ``"FILE:N"``; ``fallback``: named where a source has no row."""
        self._predictions = predictions
        self._fallback = fallback

    def __getitem__(self, qid: str) -> str:
        """The location of ``qid``'s row (the first prediction with that qid). Raises KeyError for an unknown qid."""
        for p in self._predictions:
            if p.qid == qid:
                return _location(p.source, self._fallback)
        raise KeyError(qid)

    def __iter__(self) -> Iterator[str]:
        """The qids, in row order."""
        return (p.qid for p in self._predictions)

    def __len__(self) -> int:
        """The number of rows."""
        return len(self._predictions)


def gold_locations(
    predictions: Sequence[Prediction],
    gold_items: Sequence[GoldItem] | None,
    *,
    predictions_path: Path,
    gold_path: Path | None,
    join_on: str,
) -> Mapping[str, str]:
    """Where each joined row's gold was read, ``qid -> "FILE: row N"`` (for :func:`check_gold`'s messages).

    Embedded gold: the prediction file's row (a :class:`SourceLocations`). A gold file joined by id: the item's
    row as its loader recorded it (else its 1-based position in the file, the row the loaders' own errors name). A
    gold file joined by question text: the file and the prediction row it was joined to (the gold item is not
    recorded on the joined row).
    """
    if gold_items is None or gold_path is None:
        return SourceLocations(predictions, predictions_path)
    if join_on == "id":
        return {
            g.qid: _location(g.source, gold_path) if g.source else f"{gold_path}: row {i}"
            for i, g in enumerate(gold_items, start=1)
        }
    return {p.qid: f"{gold_path}, the gold item joined to {_location(p.source, predictions_path)}" for p in predictions}


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
