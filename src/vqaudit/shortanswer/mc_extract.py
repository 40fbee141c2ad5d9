r"""Extracting and scoring the answer of each multiple-choice row (``vqaudit audit``; docs/shortanswer.md).

Every reply is split first (:func:`vqaudit.parsing.reasoning.split_reasoning`, ``--reasoning-format``): only the
final answer is read, never a reasoning model's thinking; a reply whose reasoning never finished is ``unparsed``
with the reason ``reasoning not finished`` and never credited (nor sent to a judge).

Choice rows are read by the one reader UPD scoring uses, :func:`vqaudit.scoring.upd.match_reply` (the strict
matcher of :mod:`vqaudit.parsing.choice`, then the final-answer declarations, abstention phrases and an option's
text in a short reply), so ``vqaudit score`` on a UPD run and this audit read a reply alike. ``extracted_by``
names the deciding rule:

==============================  ============================================================================
``extracted_by``                rule
==============================  ============================================================================
``strict``                      ``matcher:letter``, ``matcher:letter-prefix``, ``matcher:option-text``: a bare
                                letter, a lettered prefix naming no other option, an option's whole text
``final-answer``                ``matcher:final-declaration``: the last declaration naming one letter ("The
                                answer is (B)", "Answer: **D**", ``\boxed{C}``, a last line that is a letter)
``matcher:RULE``                any other rule of ``match_reply`` (``matcher:option-text-in-reply``,
                                ``matcher:json-letter``, ...), named as ``vqaudit score`` names it
``judge:SPEC``                  the optional judge (text only, cached in ``OUT/judge.sqlite``, the judge of
                                :mod:`vqaudit.scoring.upd`)
``unparsed``                    nothing decided; an abstention or refusal is counted as a ``refusal`` too
==============================  ============================================================================

No other reader decides a choice row. :func:`final_answer_letter`, this audit's own reader before, is no longer
consulted: with and without it as a fallback the LLaVA-1.5-13B MMBench sheet gives 796 of 1,176 questions (67.69,
every one of its 4,377 replies read by the strict matcher), each of its forms is a declaration of
:mod:`vqaudit.parsing.choice` (``\\boxed{X}`` included), and where ``match_reply`` declines on purpose ("the
answer is not A", "A or B") it would guess, so the audit and ``vqaudit score`` would read one reply two ways.

Open (non-choice) rows are scored apart (:func:`score_open`): MMMU's and MathVista's by their own rules
(:mod:`vqaudit.shortanswer.mc_open`), any other by exact or numeric match (:func:`open_answer`,
:func:`open_correct`). A MathVista file read with ``--read extraction`` has its choice rows scored as MathVista's
``calculate_score.py`` scores its extraction (``extracted_by`` ``extraction:letter`` when a letter names the
choice, ``extraction:nearest`` for the choice nearest in edit distance), never by the choice reader.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from vqaudit.backends import Backend, ModelOptions
from vqaudit.parsing.choice import normalize_text
from vqaudit.parsing.reasoning import AUTO, NONE, NOT_FINISHED, ReasoningSplit, effective_format, split_reasoning
from vqaudit.schema import Obligation, Response, UPDViewMeta, View
from vqaudit.scoring.upd import ABSTAIN_PHRASES, match_reply, score_upd_views
from vqaudit.shortanswer.mc_open import (
    mathvista_choice,
    mathvista_from_extraction,
    mathvista_from_reply,
    mmmu_eval_open,
    mmmu_parse_open,
)
from vqaudit.shortanswer.mc_records import MC_LETTERS, MCRow

__all__ = [
    "RowVerdict",
    "extract_choices",
    "extracted_by",
    "final_answer_letter",
    "is_refusal",
    "open_answer",
    "open_correct",
    "read_choice",
    "score_open",
]


@dataclass(frozen=True)
class RowVerdict:
    """The audit of one row: the extracted letter (or open answer), how, and whether it is right.

    ``reason``: why an unparsed row is unparsed when the rules know (``reasoning not finished``), else None.
    ``split``: the reply's reasoning split (its ``final`` is the text read).
    """

    qid: str
    group: str
    extracted: str | None
    extracted_by: str
    refusal: bool
    correct: bool
    reason: str | None = None
    split: ReasoningSplit | None = None


_FINAL_PATTERNS = (
    re.compile(r"\\boxed\{\s*\(?([A-I])\)?\s*\}"),
    re.compile(
        r"(?i:\b(?:final answer|correct answer|the answer|answer|correct option|option))(?:\s+is)?\s*[:：]?"
        r"\s*(?:option\s+)?[(\[*]*([A-I])(?![A-Za-z0-9])"
    ),
)
_LAST_LINE = re.compile(r"^[(\[*\s]*([A-I])[)\].*\s]*$")
_REFUSAL = re.compile(
    r"(?i)\b(?:i\s+(?:cannot|can't|can not|am unable to|am not able to|do not know|don't know)"
    r"|unable to (?:determine|answer|tell|see|identify)|cannot be determined|can't be determined"
    r"|not possible to (?:determine|tell|answer)|impossible to (?:determine|tell)|sorry|as an ai\b)"
)
_NUMBER = re.compile(r"[-+]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)")


def final_answer_letter(reply: str, letters: str) -> str | None:
    r"""The letter a reasoning reply states as its final answer, or None (not used by :func:`extract_choices`).

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


def open_answer(row: MCRow, reply: str | None = None) -> str | None:
    """The answer an open row's reply gives, or None when it gives none.

    The value after the last "answer:" / "the answer is" statement, else the whole reply; for a numeric gold
    (or MathVista ``integer``/``float``) the last number in that text. ``reply``: the text to read (the final
    answer after the reasoning split; default ``row.reply``).
    """
    reply = (row.reply if reply is None else reply).strip()
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


def score_open(row: MCRow, final: str) -> tuple[str | None, str, bool]:
    """``(answer or None, extracted_by, right)`` of an open row's final answer, by the row's rules.

    ``mmmu``: MMMU's ``parse_open_response``/``eval_open`` (the answer shown: its predictions joined by `` | ``);
    ``mathvista``: MathVista's answer-type rules on the raw reply; ``mathvista-extraction``: MathVista's
    extraction normalized as its ``calculate_score.py`` does (:mod:`vqaudit.shortanswer.mc_open`); ``default``:
    :func:`open_answer` and :func:`open_correct`.
    """
    golds = row.gold.split("\n")
    if row.rules == "mmmu":
        preds = mmmu_parse_open(final)
        shown = " | ".join(str(p).strip() for p in preds)
        return (shown or None), "mmmu-open", mmmu_eval_open(golds, preds)
    if row.rules == "mathvista":
        answer = mathvista_from_reply(final, answer_type=row.answer_type, precision=row.precision)
        return answer, "mathvista-free-form", answer is not None and answer in golds
    if row.rules == "mathvista-extraction":
        if not final.strip():
            return None, "unparsed", False
        answer, right = mathvista_from_extraction(
            final, choices=(), gold=row.gold, answer_type=row.answer_type, precision=row.precision
        )
        return answer, "extraction", right
    answer = open_answer(row, final)
    return answer, "open", open_correct(row, answer)


def _view(row: MCRow) -> View:
    return View(
        view_id=row.qid,
        group_id=row.group,
        source="upd",
        state="standard",
        image="none.png",
        image_sha256="0" * 64,
        question=row.question,
        options=row.options,
        obligation=Obligation(kind="answer", gold=(row.gold,), answer_type="choice"),
        meta=UPDViewMeta(
            item_index=0,
            ability=row.category,
            ability_index=None,
            l2_category="",
            variant="aad",
            setting="original",
            kind="standard",
            rotation=0,
            n_rotations=1,
        ).model_dump(),
    )


_STRICT_RULES = frozenset({"matcher:letter", "matcher:letter-prefix", "matcher:option-text"})


def extracted_by(decided_by: str) -> str:
    """The ``extracted_by`` name of a rule of :func:`vqaudit.scoring.upd.match_reply` (module docstring table)."""
    if decided_by in _STRICT_RULES:
        return "strict"
    if decided_by == "matcher:final-declaration":
        return "final-answer"
    return decided_by


def read_choice(row: MCRow, final: str) -> tuple[str | None, str, bool]:
    """Read the final answer of a choice row: ``(letter or None, extracted_by, abstained)``.

    :func:`vqaudit.scoring.upd.match_reply` on the row as a standard view (its options, no abstention option),
    the reader ``vqaudit score`` uses for UPD runs (module docstring). An abstention (``match_reply`` reads
    "abstain") extracts no letter and is reported as a refusal.
    """
    verdict = match_reply(_view(row), final)
    if verdict is None:
        return None, "unparsed", False
    if verdict.meaning.startswith("option:"):
        return verdict.meaning.split(":", 1)[1], extracted_by(verdict.decided_by), False
    return None, "unparsed", verdict.meaning == "abstain"


def extract_choices(
    rows: Sequence[MCRow],
    *,
    judge: str | None = None,
    judge_backend: Backend | None = None,
    cache_dir: Path | None = None,
    judge_options: ModelOptions | None = None,
    concurrency: int = 8,
    reasoning_format: str = AUTO,
) -> list[RowVerdict]:
    """Extract and score every row (module docstring); one verdict per row, in order.

    Args:
        rows: the rows read from the prediction file.
        judge: judge spec for the choice rows no rule decides, or None.
        judge_backend: a ready judge backend (tests).
        cache_dir: folder of the judge's cache (``judge.sqlite``).
        judge_options: generic model options of the judge.
        concurrency: judge calls in flight.
        reasoning_format: which reasoning spans are split off every reply before it is read (``auto``, ``none``
            or a name of :data:`vqaudit.parsing.reasoning.FORMATS`).

    Raises:
        VqauditError: a bad judge spec or an unreachable judge (see :func:`vqaudit.scoring.upd.score_upd_views`).
        ValueError: an unknown ``reasoning_format``.
    """
    verdicts: dict[str, RowVerdict] = {}
    pending: list[tuple[MCRow, ReasoningSplit, str]] = []
    reasoning_format = effective_format(reasoning_format, (r.reply for r in rows))  # auto: template-opened?
    for row in rows:
        split = split_reasoning(row.reply, reasoning_format)
        kept = split if split.final is not row.reply else None  # recorded only for replies the split changed
        if split.final is None:  # thinking only: the model never answered (parsing/reasoning.py rule 2)
            verdicts[row.qid] = RowVerdict(row.qid, row.group, None, "unparsed", False, False, NOT_FINISHED, kept)
            continue
        final = split.final
        if not row.is_choice:
            answer, how, right = score_open(row, final)
            verdicts[row.qid] = RowVerdict(
                row.qid,
                row.group,
                answer,
                how if answer is not None else "unparsed",
                answer is None and is_refusal(final),
                right,
                split=kept,
            )
            continue
        if row.rules == "mathvista-extraction":  # MathVista's own extraction, scored as calculate_score.py does
            index, named = mathvista_choice(final, row.options)
            verdicts[row.qid] = RowVerdict(
                row.qid,
                row.group,
                MC_LETTERS[index],
                "extraction:letter" if named else "extraction:nearest",
                False,
                MC_LETTERS[index] == row.gold,
                split=kept,
            )
            continue
        letter, how, abstained = read_choice(row, final)
        if letter is None and not abstained and judge is not None and final.strip():
            pending.append((row, split, final))
            continue
        verdicts[row.qid] = RowVerdict(
            row.qid,
            row.group,
            letter,
            how,
            letter is None and (abstained or is_refusal(final)),
            letter == row.gold,
            split=kept,
        )
    if pending:
        views = [_view(r) for r, _, _ in pending]
        responses = {
            r.qid: Response(view_id=r.qid, model="predictions", prompt_id="file", text=final) for r, _, final in pending
        }
        options = dataclasses.replace(judge_options or ModelOptions(), concurrency=concurrency)
        # the texts are final answers already: the judge is shown them, never the thinking (no second split)
        outcomes = score_upd_views(
            views,
            responses,
            run_dir=cache_dir or Path("."),
            judge=judge,
            judge_backend=judge_backend,
            concurrency=concurrency,
            judge_options=options,
            reasoning_format=NONE,
        )
        for (row, split, final), outcome in zip(pending, outcomes, strict=True):
            decided = outcome.decision == "answer" and outcome.answer is not None
            verdicts[row.qid] = RowVerdict(
                row.qid,
                row.group,
                outcome.answer if decided else None,
                (outcome.decided_by or "judge") if decided else "unparsed",
                (not decided) and (outcome.decision == "abstain" or is_refusal(final)),
                bool(outcome.answer_correct),
                split=split if split.final is not row.reply else None,
            )
    return [verdicts[r.qid] for r in rows]
