"""VizWiz's answerability metrics: precision, recall and F1 of "unanswerable", average precision of a score.

Source: VizWiz's evaluation as read in TRI-ML/vlm-evaluation ``vlm_eval/util/evaluation/vizwiz/eval.py`` at
``7292fd6727dbc40c1ad6051bf090d925f26f3b3a`` (based on Qing Li's VizWiz Python API; the API's ``vqaEval.py``
read in the search index has the same ``evaluate_unanswerability``). The positive class is *unanswerable*: the
gold label is ``1 - answerable`` (the annotation's ``answerable`` field), the prediction's unanswerable score is
``1 - answerable`` of the result row, and

* F1 is ``f1_score(gold, score > 0.5)``: a question is predicted unanswerable when its answerability score is
  below 0.5;
* average precision is scikit-learn's ``average_precision_score(gold, score)``: the sum over the distinct
  score thresholds, from high to low, of (recall step) x (precision at that threshold).

A prediction file without an answerability score is read as the harness reads its answers
(``get_answerable_preds``): a prediction is "unanswerable" when its answer, normalized as vqaEval.py normalizes
a prediction (:func:`vqaudit.scoring.vqa_normalize.vqaeval_process`: "Unanswerable." becomes
"unanswerable"), is exactly "unanswerable"; average precision is then not reported (a 0/1 score ranks
nothing). The scripts report percentages rounded to 2 digits; these functions return the unrounded fractions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from vqaudit.scoring.vqa_normalize import fast_vqaeval_process

UNANSWERABLE = "unanswerable"
"""The answer VizWiz annotators (and the harness's reading of a prediction) give to an unanswerable question."""


@dataclass(frozen=True)
class UnanswerableMetrics:
    """Answerability metrics of one audit, positive class "unanswerable".

    Attributes:
        n: rows scored.
        unanswerable: rows whose gold says unanswerable (``answerable`` 0).
        predicted: rows predicted unanswerable.
        tp: predicted unanswerable and unanswerable; ``fp``, ``fn`` likewise.
        precision: ``tp / (tp + fp)`` in [0, 1]; NaN when nothing is predicted unanswerable.
        recall: ``tp / (tp + fn)``; NaN when no gold row is unanswerable.
        f1: ``2 tp / (2 tp + fp + fn)`` (scikit-learn's F1; 0 when tp is 0); NaN when no row is positive on
            either side.
        average_precision: of the unanswerable score ``1 - answerable_score``; None when the predictions carry
            no score, NaN when no gold row is unanswerable.
        decided_by: ``"score"`` (answerability score below 0.5) or ``"answer"`` (the normalized answer is
            "unanswerable").
    """

    n: int
    unanswerable: int
    predicted: int
    tp: int
    fp: int
    fn: int
    precision: float
    recall: float
    f1: float
    average_precision: float | None
    decided_by: str


def predicts_unanswerable(answer: str) -> bool:
    """Whether a prediction says "unanswerable": its vqaEval-normalized text is exactly that word."""
    return fast_vqaeval_process(answer) == UNANSWERABLE


def average_precision(positive: Sequence[bool], scores: Sequence[float]) -> float:
    """scikit-learn's ``average_precision_score`` of binary labels and scores (higher: more likely positive).

    ``sum_k (R_k - R_{k-1}) P_k`` over the distinct scores taken as thresholds from high to low (tied scores
    enter together), with ``R_0 = 0``. NaN when there is no positive.

    Raises:
        ValueError: the two sequences differ in length.
    """
    if len(positive) != len(scores):
        raise ValueError("labels and scores differ in length")
    total = sum(positive)
    if not total:
        return math.nan
    ranked = sorted(zip(scores, positive, strict=True), key=lambda pair: -pair[0])
    ap, tp, fp, prev_recall, k = 0.0, 0, 0, 0.0, 0
    while k < len(ranked):
        threshold = ranked[k][0]
        while k < len(ranked) and ranked[k][0] == threshold:
            tp += ranked[k][1]
            fp += not ranked[k][1]
            k += 1
        recall = tp / total
        ap += (recall - prev_recall) * (tp / (tp + fp))
        prev_recall = recall
    return ap


def unanswerable_metrics(
    answerable: Sequence[bool], answers: Sequence[str], scores: Sequence[float | None] | None = None
) -> UnanswerableMetrics:
    """VizWiz's answerability metrics of joined rows (module docstring).

    Args:
        answerable: the gold label of each row (VizWiz ``answerable``: False = unanswerable).
        answers: each row's predicted answer (the final answer, after any reasoning split).
        scores: each row's answerability score in [0, 1] (VizWiz result ``answerable``), or None. Only when every
            row has one are the decisions taken from the scores and average precision computed.

    Raises:
        ValueError: the sequences differ in length.
    """
    if len(answerable) != len(answers) or (scores is not None and len(scores) != len(answers)):
        raise ValueError("answerable, answers and scores differ in length")
    gold = [not a for a in answerable]
    given = [s for s in scores or () if s is not None]
    if scores is not None and given and len(given) == len(answers):
        unanswerable_score = [1.0 - s for s in given]
        predicted = [s > 0.5 for s in unanswerable_score]
        ap: float | None = average_precision(gold, unanswerable_score)
        decided_by = "score"
    else:
        predicted = [predicts_unanswerable(a) for a in answers]
        ap, decided_by = None, "answer"
    tp = sum(g and p for g, p in zip(gold, predicted, strict=True))
    fp = sum(p and not g for g, p in zip(gold, predicted, strict=True))
    fn = sum(g and not p for g, p in zip(gold, predicted, strict=True))
    return UnanswerableMetrics(
        n=len(gold),
        unanswerable=sum(gold),
        predicted=sum(predicted),
        tp=tp,
        fp=fp,
        fn=fn,
        precision=tp / (tp + fp) if tp + fp else math.nan,
        recall=tp / (tp + fn) if tp + fn else math.nan,
        f1=2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn else math.nan,
        average_precision=ap,
        decided_by=decided_by,
    )
