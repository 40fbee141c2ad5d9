"""Records of the short-answer audit: gold items, predictions, joined rows and the join report.

Plain frozen dataclasses (not pydantic): the audit handles pools of ~170k rows (seed 002 §5.4) and these are
built and read in tight loops.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class GoldItem:
    """One benchmark question with its accepted answers.

    Attributes:
        qid: question id, unique within the gold file (as a string).
        question: the question text ("" when the layout has none).
        answers: the reference answers, in file order (TextVQA: the 10 annotator answers; ChartQA: one label).
        benchmark: benchmark name (see :mod:`vqaudit.shortanswer.benchmarks`).
        answer_type: benchmark-native answer type when the layout has one (InfographicVQA ``answer_type``,
            e.g. ``"multi-span"``), else None.
        ocr_tokens: OCR tokens of the image when the layout has them (TextVQA), else empty.
        source: where the item came from, ``"file:row"``.
        image: the image file name or id the layout gives (TextVQA ``image_id``, DocVQA ``image``, ChartQA
            ``imgname``, ...), "" when none.
        answerable: the gold's answerability label where the layout has one (VizWiz ``answerable``: False when
            the question was judged unanswerable), else None.
    """

    qid: str
    question: str
    answers: tuple[str, ...]
    benchmark: str
    answer_type: str | None = None
    ocr_tokens: tuple[str, ...] = ()
    source: str = ""
    image: str = ""
    answerable: bool | None = None


@dataclass(frozen=True)
class Prediction:
    """One model output read from a prediction file.

    Attributes:
        qid: question id (as a string) used for the join.
        prediction: the raw output text, unmodified.
        question: the question text when the file has it, else "".
        gold: gold answers embedded in the prediction file (VLMEvalKit ``answer``, lmms-eval ``target``,
            MultimodalOCR ``gt_answers``), else empty.
        split: split name when the file has one (ChartQA ``test_human`` / ``test_augmented``), else "".
        source: ``"file:row"`` of the row.
        image: the image name, path or id when the file has one, else "".
        row_id: the id is the row's number (the file has no id column, or ``--id-field row``), not an id the
            file wrote.
        answerable_score: the model's score that the question is answerable, in [0, 1], when the file has an
            ``answerable`` column (VizWiz's result format), else None.
    """

    qid: str
    prediction: str
    question: str = ""
    gold: tuple[str, ...] = ()
    split: str = ""
    source: str = ""
    image: str = ""
    row_id: bool = False
    answerable_score: float | None = None


@dataclass(frozen=True, slots=True)  # held for every row of an audit: no attribute dict per row
class AuditRow:
    """A prediction joined with its gold item: the unit every audit layer scores.

    Attributes:
        prediction: the text every layer reads: the prediction's final answer after the reasoning split
            (:func:`vqaudit.parsing.reasoning.split_reasoning`), which is the prediction itself when it holds no
            reasoning; "" for a prediction whose reasoning never finished (scored as an empty answer).
        raw: the prediction exactly as read, when it differs from ``prediction`` (it held reasoning or an answer
            box); None otherwise.
        reasoning_chars: characters of reasoning split off, or None when the prediction held none.
        finished: False for a prediction whose reasoning never closed (:data:`vqaudit.parsing.reasoning.NOT_FINISHED`).
        answerable: the gold's answerability label (:attr:`GoldItem.answerable`), None when the gold has none.
        answerable_score: the prediction's answerability score (:attr:`Prediction.answerable_score`), or None.
    """

    qid: str
    question: str
    prediction: str
    answers: tuple[str, ...]
    benchmark: str
    split: str = ""
    answer_type: str | None = None
    ocr_tokens: tuple[str, ...] = ()
    image: str = ""
    raw: str | None = None
    reasoning_chars: int | None = None
    finished: bool = True
    answerable: bool | None = None
    answerable_score: float | None = None


@dataclass(frozen=True)
class JoinReport:
    """The result of joining predictions with gold: joined rows plus everything that did not join.

    Attributes:
        rows: joined rows, in prediction-file order (a tuple, or as :func:`join_predictions` gives them a
            :class:`vqaudit.shortanswer.packed.Packed` sequence, which compares equal to the tuple).
        predictions_without_gold: qids of predictions whose question is not in the gold.
        gold_without_predictions: qids of gold items no prediction answers.
        gold_source: ``"file"`` (a gold file), ``"embedded"`` (gold fields of the prediction file) or ``"none"``.
    """

    rows: Sequence[AuditRow]
    predictions_without_gold: tuple[str, ...] = ()
    gold_without_predictions: tuple[str, ...] = ()
    gold_source: str = "file"
    notes: tuple[str, ...] = field(default_factory=tuple)
