"""The join's checks and refusals (seed 002: what does not join is reported, never guessed).

Ids that would join shifted (0-based ChartQA rows, VLMEvalKit's ChartQA index), rows joined by position whose
questions differ, and the message naming one row of each side when nothing joins.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from vqaudit.errors import VqauditError
from vqaudit.shortanswer.join_locations import location
from vqaudit.shortanswer.loaders import CHARTQA_SPLITS
from vqaudit.shortanswer.records import GoldItem, Prediction


def question_key(text: str) -> str:
    """A question text as a join key: lower-cased, whitespace collapsed."""
    return " ".join(text.lower().split())


def check_chartqa_numbering(predictions: Sequence[Prediction], gold: Sequence[GoldItem]) -> None:
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
            place = location(bad.source, Path("the prediction file"))
            raise VqauditError(
                f"{place}, id {zero!r}: ChartQA ids are 1-based ({split}:N is row N of the "
                "split, counting from 1); these predictions number from 0 and would join shifted "
                "by one: renumber them from 1"
            )


CHARTQA_TEST_HUMAN_ROWS = 1250
"""Rows of ChartQA's ``test_human.json``. VLMEvalKit's ``ChartQA_TEST`` numbers its ``index`` over both splits:
``test_human`` rows 1-1250, then ``test_augmented`` rows 1251-2500, each split in its file's order (the
VILA1.5-13B sheet in tests/fixtures/shortanswer: index N of test_augmented holds row N - 1250 of
``test_augmented.json``)."""


def vlmevalkit_chartqa_ids(
    predictions: Sequence[Prediction], gold: Sequence[GoldItem]
) -> tuple[Sequence[Prediction], str]:
    """VLMEvalKit ChartQA ids (a bare ``index`` and a ``split`` column) as the gold's ``<split>:<row>`` ids.

    Applies only when the gold has ChartQA split ids and every prediction has a bare integer id and a ChartQA
    split: ``test_human`` index N is ``test_human:N``, ``test_augmented`` index N is ``test_augmented:N-1250``
    (:data:`CHARTQA_TEST_HUMAN_ROWS`). The rows' question texts are then checked (:func:`check_positions`).

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
            place = location(p.source, Path("the prediction file"))
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
    x, y = question_key(a), question_key(b)
    return not x or not y or x == y or x in y or y in x


def check_positions(predictions: Sequence[Prediction], index: dict[str, GoldItem], mapped: bool) -> list[str]:
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
            gold_at = location(item.source, Path("the gold file"))
            raise VqauditError(
                f"{location(p.source, Path('the prediction file'))}, field 'question': joined by "
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


def no_id_joins(predictions: Sequence[Prediction], gold: Sequence[GoldItem]) -> str:
    """The message for an id join where no prediction id is a gold id: one id of each, and what they suggest."""
    p, g = predictions[0], gold[0] if gold else None
    pred_at = location(p.source, Path("the prediction file"))
    if g is None:
        return f"{pred_at}: the gold file has no questions to join the predictions to"
    shown = (
        f"no prediction id is a gold id: prediction ids look like {p.qid!r} ({pred_at}), gold ids like "
        f"{g.qid!r} ({location(g.source, Path('the gold file'))})"
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


def no_question_joins(predictions: Sequence[Prediction], gold: Sequence[GoldItem], on: str, skipped: int) -> str:
    """The message for a question join where no prediction joined: one question of each side, and a hint.

    ``skipped``: the gold question keys left out of the join as ambiguous (in the gold or in the predictions).
    """
    p = next((x for x in predictions if x.question.strip()), predictions[0])
    pred_at = location(p.source, Path("the prediction file"))
    if not gold:
        return f"{pred_at}: the gold file has no questions to join the predictions to"
    g = next((x for x in gold if x.question.strip()), gold[0])
    gold_at = location(g.source, Path("the gold file"))
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
        questions = {question_key(x.question) for x in gold}
        if any(question_key(x.question) in questions for x in predictions):
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
