r"""Extracting and scoring the answer of each multiple-choice row (``vqaudit audit``; issue 14, item 4).

Choice extraction, in order (``extracted_by``): ``strict`` (the matcher of :mod:`vqaudit.parsing.choice`: a bare
letter, a lettered prefix naming no other option, or an option's whole text); ``final-answer``
(:func:`final_answer_letter`: "Answer: B", "the answer is (B)", ``\boxed{B}``, or a last line that is only a
letter; the last such statement counts); ``judge:SPEC`` (optional, text only, cached in ``OUT/judge.sqlite``,
the judge of :mod:`vqaudit.scoring.upd`). A reply none of them decides is ``unparsed``; an unparsed reply that
declines (:func:`is_refusal`) is counted as a ``refusal`` as well. Open (non-choice) rows are scored apart by
exact or numeric match (:func:`open_answer`, :func:`open_correct`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from vqaudit.backends import Backend, ModelOptions
from vqaudit.parsing.choice import match_choice, normalize_text
from vqaudit.schema import Obligation, Response, UPDViewMeta, View
from vqaudit.scoring.upd import ABSTAIN_PHRASES, score_upd_views
from vqaudit.shortanswer.mc_read import MC_LETTERS, MCRow

__all__ = ["RowVerdict", "extract_choices", "final_answer_letter", "is_refusal", "open_answer", "open_correct"]


@dataclass(frozen=True)
class RowVerdict:
    """The audit of one row: the extracted letter (or open answer), how, and whether it is right."""

    qid: str
    group: str
    extracted: str | None
    extracted_by: str
    refusal: bool
    correct: bool

_FINAL_PATTERNS = (
    re.compile(r"\\boxed\{\s*\(?([A-I])\)?\s*\}"),
    re.compile(r"(?i:\b(?:final answer|correct answer|the answer|answer|correct option|option))(?:\s+is)?\s*[:：]?"
               r"\s*(?:option\s+)?[(\[*]*([A-I])(?![A-Za-z0-9])"),
)
_LAST_LINE = re.compile(r"^[(\[*\s]*([A-I])[)\].*\s]*$")
_REFUSAL = re.compile(
    r"(?i)\b(?:i\s+(?:cannot|can't|can not|am unable to|am not able to|do not know|don't know)"
    r"|unable to (?:determine|answer|tell|see|identify)|cannot be determined|can't be determined"
    r"|not possible to (?:determine|tell|answer)|impossible to (?:determine|tell)|sorry|as an ai\b)"
)
_NUMBER = re.compile(r"[-+]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)")


def final_answer_letter(reply: str, letters: str) -> str | None:
    r"""The letter a reasoning reply states as its final answer, or None.

    Rules (the conventions MMMU's and MathVista's prompts ask for): ``\boxed{B}``; "Answer: B", "the answer is
    (B)", "Final answer: **B**", "correct option is B" (the word is case-insensitive, the letter must be an
    upper-case letter not followed by a letter or digit); or a last non-empty line that is only a letter. The
    last statement in the reply counts; a letter outside ``letters`` decides nothing.

    Args:
        reply: the raw reply.
        letters: the valid letters, e.g. ``"ABCD"``.

    Returns:
        The letter, or None.
    """
    found: list[tuple[int, str]] = []
    for pattern in _FINAL_PATTERNS:
        found.extend((m.start(), m.group(1)) for m in pattern.finditer(reply))
    if found:
        letter = max(found)[1]
        return letter if letter in letters else None
    lines = [line for line in reply.strip().splitlines() if line.strip()]
    if len(lines) > 1:
        last = _LAST_LINE.match(lines[-1])
        if last and last.group(1) in letters:
            return last.group(1)
    return None


def is_refusal(reply: str) -> bool:
    """True when a reply declines to answer: an abstention phrase as the whole reply, or a refusal phrase."""
    return normalize_text(reply) in ABSTAIN_PHRASES or _REFUSAL.search(reply) is not None


def _number(text: str) -> Fraction | None:
    try:
        return Fraction(text.replace(",", ""))
    except (ValueError, ZeroDivisionError):
        return None


def open_answer(row: MCRow) -> str | None:
    """The answer an open row's reply gives, or None when it gives none.

    The value after the last "answer:" / "the answer is" statement, else the whole reply; for a numeric gold
    (or MathVista ``integer``/``float``) the last number in that text.
    """
    reply = row.reply.strip()
    if not reply:
        return None
    stated = re.findall(r"(?i:\b(?:final answer|the answer is|answer)\s*[:：]?)\s*([^\n]+)", reply)
    text = stated[-1].strip().rstrip(".") if stated else reply
    if any(_number(g) is not None for g in row.gold.split("\n")) or row.answer_type in ("integer", "float"):
        numbers = _NUMBER.findall(text)
        return numbers[-1] if numbers else None
    return text


def open_correct(row: MCRow, answer: str | None) -> bool:
    """Exact or numeric match of an open answer against any gold form.

    Numbers compare exactly as rationals, or after rounding both to ``row.precision`` decimal places when the
    row has one (MathVista's float answers); text compares after :func:`vqaudit.parsing.choice.normalize_text`.
    """
    if answer is None:
        return False
    for gold in row.gold.split("\n"):
        a, g = _number(answer), _number(gold)
        if a is not None and g is not None:
            if row.precision is not None:
                if round(a, row.precision) == round(g, row.precision):
                    return True
            elif a == g:
                return True
        elif normalize_text(answer) == normalize_text(gold):
            return True
    return False


def _view(row: MCRow) -> View:
    return View(view_id=row.qid, group_id=row.group, source="upd", state="standard", image="none.png",
                image_sha256="0" * 64, question=row.question, options=row.options,
                obligation=Obligation(kind="answer", gold=(row.gold,), answer_type="choice"),
                meta=UPDViewMeta(item_index=0, ability=row.category, ability_index=None, l2_category="",
                                 variant="aad", setting="original", kind="standard", rotation=0,
                                 n_rotations=1).model_dump())


def extract_choices(rows: Sequence[MCRow], *, judge: str | None = None, judge_backend: Backend | None = None,
                    cache_dir: Path | None = None, judge_options: ModelOptions | None = None,
                    concurrency: int = 8) -> list[RowVerdict]:
    """Extract and score every row (module docstring); one verdict per row, in order.

    Raises:
        VqauditError: a bad judge spec or an unreachable judge (see :func:`vqaudit.scoring.upd.score_upd_views`).
    """
    verdicts: dict[str, RowVerdict] = {}
    pending: list[MCRow] = []
    for row in rows:
        if not row.is_choice:
            answer = open_answer(row)
            verdicts[row.qid] = RowVerdict(row.qid, row.group, answer, "open" if answer is not None else "unparsed",
                                           answer is None and is_refusal(row.reply), open_correct(row, answer))
            continue
        letters = MC_LETTERS[: len(row.options)]
        strict = match_choice(row.reply, dict(zip(letters, row.options, strict=True)))
        letter, how = (strict.letter, "strict") if strict is not None else (None, "unparsed")
        if letter is None:
            letter = final_answer_letter(row.reply, letters)
            how = "final-answer" if letter is not None else how
        if letter is None and judge is not None and row.reply.strip():
            pending.append(row)
            continue
        verdicts[row.qid] = RowVerdict(row.qid, row.group, letter, how, letter is None and is_refusal(row.reply),
                                       letter == row.gold)
    if pending:
        views = [_view(r) for r in pending]
        responses = {r.qid: Response(view_id=r.qid, model="predictions", prompt_id="file", text=r.reply)
                     for r in pending}
        options = dataclasses.replace(judge_options or ModelOptions(), concurrency=concurrency)
        outcomes = score_upd_views(views, responses, run_dir=cache_dir or Path("."), judge=judge,
                                   judge_backend=judge_backend, concurrency=concurrency, judge_options=options)
        for row, outcome in zip(pending, outcomes, strict=True):
            decided = outcome.decision == "answer" and outcome.answer is not None
            verdicts[row.qid] = RowVerdict(
                row.qid, row.group, outcome.answer if decided else None,
                (outcome.decided_by or "judge") if decided else "unparsed",
                (not decided) and (outcome.decision == "abstain" or is_refusal(row.reply)),
                bool(outcome.answer_correct))
    return [verdicts[r.qid] for r in rows]
