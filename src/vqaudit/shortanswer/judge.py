"""The text-only judge audit of the official error pool, and its validation (seed 002 §3.3, Table 2, App. F/G).

- The judge sees the question, the gold answer(s) and the model output - never the image: the call carries
  no image at all, so a text-only judge server accepts it - and returns a binary verdict (:data:`JUDGE_PROMPT`).
- It runs on the official error pool only: rows whose official score is below 1 (seed 002 §3.3 "All ... error
  items"). The model output it is shown is the row's final answer (the prediction after its reasoning split,
  :class:`~vqaudit.shortanswer.records.AuditRow`), never the thinking.
- A judge that thinks is read after its thinking (:func:`parse_verdict`): its reply is split first
  (:mod:`vqaudit.parsing.reasoning`, every known format, and reasoning its server sent apart), and a reply whose
  reasoning never finished is undecided.
- Every reply is cached in a SQLite :class:`~vqaudit.backends.ResponseCache` keyed by judge spec, prompt id,
  prompt text and parameters (:func:`vqaudit.backends.judge.request_key`), so reruns ask nothing twice. When the
  first calls all fail (:data:`vqaudit.backends.judge.EARLY_STOP_CALLS`), the audit stops: the judge is
  unreachable.
- Validation against human labels: precision, recall and Cohen's kappa of the judge's "acceptable" verdicts,
  with the human label as reference (Table 2: 97.6% / 95.5% / 0.917; the precision's interval and the precision
  per bucket: :mod:`vqaudit.shortanswer.judge_validation`); agreement and kappa between two judges
  (Table 2: 89.5%, 0.760).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vqaudit.backends import Backend, GenerationParams, ModelOptions, ResponseCache, loaded_generation
from vqaudit.backends import load_backend as _load_backend
from vqaudit.backends.judge import JudgeCall, ask_judge_all
from vqaudit.errors import VqauditError
from vqaudit.labels import QUESTION_LABELS, read_label_file
from vqaudit.parsing.answerability import extract_json_object, fenced_blocks
from vqaudit.parsing.choice import extract_yes_no
from vqaudit.parsing.reasoning import AUTO, split_reasoning
from vqaudit.schema import Response
from vqaudit.scoring.upd import shown_reply
from vqaudit.shortanswer.records import AuditRow
from vqaudit.signals import run_async

JUDGE_PROMPT_ID = "shortanswer-judge-v1"
JUDGE_PARAMS = GenerationParams(temperature=0.0, max_tokens=8)
JUDGE_PROMPT = (
    "You are auditing the score of a short-answer visual question answering benchmark. You cannot see the image. "
    "Decide only whether the model's answer is semantically equivalent to one of the reference answers "
    "(the same value, entity or text, possibly worded or formatted differently).\n"
    "Question: {question}\n"
    "Reference answer(s): {references}\n"
    "Model answer: {output}\n"
    "Reply with exactly one word: yes or no."
)
"""Binary text-only semantic-equivalence prompt (seed 002 §3.3: question, reference answer(s), model output)."""

_YES = frozenset({"true", "correct", "equivalent", "acceptable", "accept", "accepted", "same"})
_NO = frozenset(
    {
        "false",
        "incorrect",
        "wrong",
        "unacceptable",
        "reject",
        "rejected",
        "different",
        "not equivalent",
        "not_equivalent",
        "non-equivalent",
        "inequivalent",
        "not acceptable",
    }
)
_VERDICT_KEYS = (
    "verdict",
    "equivalent",
    "is_equivalent",
    "acceptable",
    "correct",
    "answer",
    "label",
    "judgement",
    "judgment",
    "decision",
)
_PHRASE = re.compile(r"(?i)^\W*(not\s+equivalent|not\s+acceptable|non-equivalent|equivalent|acceptable|inequivalent)\b")
_LABEL_PREFIX = re.compile(
    r"(?i)^[\s*_#]*(?:final\s+)?(?:verdict|judge?ment|decision|answer|label)[\s*_]*[:=\-][\s*_]*"
)
_MAX_VERDICT_CHARS = 4096


def judge_prompt(row: AuditRow) -> str:
    """The judge prompt of one row: references deduplicated in order and joined with `` | ``."""
    refs = " | ".join(dict.fromkeys(a.strip() for a in row.answers))
    return JUDGE_PROMPT.format(question=row.question, references=refs, output=row.prediction.strip())


def _json_verdict(text: str) -> bool | None:
    obj = extract_json_object(text)
    if obj is None:
        return None
    for key in _VERDICT_KEYS:
        if key in obj:
            value = obj[key]
            if isinstance(value, bool):
                return value
            if isinstance(value, str):
                return _word_verdict(value)
            return None
    return None


def _word_verdict(text: str) -> bool | None:
    text = _LABEL_PREFIX.sub("", text, count=1)
    phrase = _PHRASE.match(text)
    if phrase:
        return " ".join(phrase.group(1).lower().split()) in ("equivalent", "acceptable")
    yes_no = extract_yes_no(text)
    if yes_no is not None:
        return yes_no[0]
    words = text.strip().lower().replace("*", " ").split()
    if not words:
        return None
    first = words[0].strip(".,:;!\"'`()[]")
    return True if first in _YES else False if first in _NO else None


def parse_verdict(text: str | None, *, server_reasoning: str | None = None) -> bool | None:
    """Read a judge reply; True (acceptable), False (not acceptable) or None (undecided).

    The reply is split first (:func:`vqaudit.parsing.reasoning.split_reasoning`, every known format, with
    ``server_reasoning`` the reasoning its server sent apart): only the final text is read, so
    ``"<think>yes? no...</think>no"`` is False; a reply whose reasoning never finished (or no text at all) is
    undecided. Then, in order: a JSON object - the whole reply, a fenced code block or an
    inline object (:func:`vqaudit.parsing.extract_json_object`) - with a boolean or word under ``verdict``,
    ``equivalent``, ``acceptable``, ``correct``, ``answer``, ... (``{"verdict": "not equivalent"}``,
    ``{"equivalent": false}``); then a leading "equivalent" / "not equivalent" / "acceptable"; then yes/no by the
    leading token or a final declaration (:func:`vqaudit.parsing.choice.extract_yes_no`: "Yes.", "**No** -
    different", "The answer is no"; "No dog" or "Nothing" never decide); then the first word among the synonyms
    (``correct``, ``wrong``, ``true``, ``false``, ...); a leading "Verdict:" or "Answer:" is skipped; then the
    same on the first fenced block. A final text over 4,096 characters, or one that matches nothing, is
    undecided. Never raises.
    """
    text = split_reasoning(text, AUTO, server_reasoning=server_reasoning).final
    if text is None or len(text) > _MAX_VERDICT_CHARS:
        return None
    if "{" in text:
        verdict = _json_verdict(text)
        if verdict is not None:
            return verdict
    verdict = _word_verdict(text)
    blocks = fenced_blocks(text) if verdict is None else []
    return _word_verdict(blocks[0]) if blocks else verdict


@dataclass(frozen=True)
class JudgeRun:
    """The verdicts of one judge over rows, and what an error about them shows.

    Attributes:
        verdicts: ``qid -> True`` (acceptable), ``False`` or ``None`` (call failed or reply unreadable).
        unreadable: replies received whose verdict could not be read (failed calls excluded).
        unfinished: of those, replies whose reasoning never finished.
        example: one unreadable reply as stored (:func:`vqaudit.scoring.upd.shown_reply`), or None.
    """

    verdicts: dict[str, bool | None]
    unreadable: int = 0
    unfinished: int = 0
    example: str | None = None

    def why_undecided(self) -> str:
        """A clause saying why verdicts are undecided, with one reply; "" when every received reply was read."""
        if not self.unreadable:
            return ""
        why = (
            f"{self.unfinished} of them reasoning never finished (the judge was still thinking when its token "
            "budget ran out)"
            if self.unfinished
            else "neither yes nor no"
        )
        return f"; {self.unreadable} replies unreadable, {why}; one reply, as stored: {self.example}"


def _read(reply: Response) -> tuple[bool | None, bool]:
    """``(verdict, unfinished)`` of one judge reply (a failed call: ``(None, False)``)."""
    if reply.error is not None or (reply.text is None and reply.reasoning is None):
        return None, False
    split = split_reasoning(reply.text, AUTO, server_reasoning=reply.reasoning)
    if split.final is None:
        return None, True
    return parse_verdict(split.final), False


async def _ask_all(
    backend: Backend, spec: str, cache: ResponseCache, rows: Sequence[AuditRow], concurrency: int
) -> JudgeRun:
    calls = [JudgeCall(f"judge:{r.qid}", JUDGE_PROMPT_ID, judge_prompt(r)) for r in rows]
    try:
        replies = await ask_judge_all(
            backend, spec, cache, calls, loaded_generation(backend, JUDGE_PARAMS), concurrency=concurrency
        )
    finally:
        await backend.aclose()
    verdicts: dict[str, bool | None] = {}
    unreadable: list[Response] = []
    unfinished = 0
    for row, reply in zip(rows, replies, strict=True):
        verdict, never_finished = _read(reply)
        verdicts[row.qid] = verdict
        if verdict is None and reply.error is None and (reply.text is not None or reply.reasoning is not None):
            unreadable.append(reply)
            unfinished += never_finished
    shown = next((r for r in unreadable if r.text is None or r.text.strip()), unreadable[0] if unreadable else None)
    return JudgeRun(verdicts, len(unreadable), unfinished, None if shown is None else shown_reply(shown))


def judge_rows(
    rows: Sequence[AuditRow],
    spec: str,
    cache_path: Path,
    *,
    backend: Backend | None = None,
    concurrency: int = 8,
) -> JudgeRun:
    """Ask the judge about each row (the caller passes the official error pool); verdicts and unreadable replies.

    Arguments, caching and raised errors: :func:`run_judge`.

    Returns:
        A :class:`JudgeRun`: the verdicts by qid, and how many received replies gave none (and why, with one).
    """
    if not rows:
        return JudgeRun({})
    judge = backend if backend is not None else _load_backend(spec, ModelOptions(concurrency=concurrency))
    cache_path.parent.mkdir(parents=True, exist_ok=True)
    with ResponseCache(cache_path) as cache:
        return run_async(_ask_all(judge, spec, cache, rows, concurrency))


def run_judge(
    rows: Sequence[AuditRow],
    spec: str,
    cache_path: Path,
    *,
    backend: Backend | None = None,
    concurrency: int = 8,
) -> dict[str, bool | None]:
    """Ask the judge about each row (the caller passes the official error pool) and return verdicts by qid.

    Args:
        rows: the rows to judge (each row's ``prediction``, its final answer, is what the judge is shown).
        spec: judge model spec (any backend, see :func:`vqaudit.backends.load_backend`).
        cache_path: the SQLite cache file (its folder is created).
        backend: a ready backend to use instead of ``load_backend(spec)`` (tests).
        concurrency: judge calls in flight.

    Returns:
        ``qid -> True`` (acceptable), ``False`` (not acceptable) or ``None`` (call failed, reply unreadable or
        its reasoning never finished).

    Raises:
        VqauditError: a bad spec, a fatal backend error, or an unreachable judge (its first calls all failed;
            see :func:`vqaudit.backends.judge.ask_judge_all`); verdicts received before it stay cached.
    """
    return judge_rows(rows, spec, cache_path, backend=backend, concurrency=concurrency).verdicts


@dataclass(frozen=True)
class BinaryAgreement:
    """Agreement of binary verdicts ``a`` with reference verdicts ``b`` (True = acceptable).

    ``precision = tp / (tp + fp)``, ``recall = tp / (tp + fn)``, ``agreement = (tp + tn) / n``, Cohen's
    ``kappa = (p_o - p_e) / (1 - p_e)`` with ``p_e`` from the two marginals (NaN when ``p_e == 1``); values in
    [0, 1] except kappa in [-1, 1]; NaN when undefined (no positives).
    """

    n: int
    tp: int
    fp: int
    fn: int
    tn: int
    precision: float
    recall: float
    agreement: float
    kappa: float


def binary_agreement(a: Sequence[bool], b: Sequence[bool]) -> BinaryAgreement:
    """Precision/recall/agreement/Cohen's kappa of verdicts ``a`` against reference ``b``.

    Raises:
        VqauditError: the sequences differ in length or are empty.
    """
    if len(a) != len(b) or not a:
        raise VqauditError(f"agreement needs two non-empty verdict lists of equal length, got {len(a)} and {len(b)}")
    tp = sum(1 for x, y in zip(a, b, strict=True) if x and y)
    fp = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    fn = sum(1 for x, y in zip(a, b, strict=True) if not x and y)
    return agreement_from_counts(tp, fp, fn, len(a) - tp - fp - fn)


def agreement_from_counts(tp: int, fp: int, fn: int, tn: int) -> BinaryAgreement:
    """:class:`BinaryAgreement` from confusion counts (``a`` = the judge, ``b`` = the reference).

    Pooling several audits means summing their counts and calling this once (never averaging kappas).

    Raises:
        VqauditError: a negative count, or no items at all.
    """
    if min(tp, fp, fn, tn) < 0 or tp + fp + fn + tn == 0:
        raise VqauditError(f"agreement needs non-negative counts and at least one item, got {(tp, fp, fn, tn)}")
    n = tp + fp + fn + tn
    p_o = (tp + tn) / n
    p_e = ((tp + fp) / n) * ((tp + fn) / n) + ((fn + tn) / n) * ((fp + tn) / n)
    kappa = math.nan if p_e == 1.0 else (p_o - p_e) / (1.0 - p_e)
    precision = tp / (tp + fp) if tp + fp else math.nan
    recall = tp / (tp + fn) if tp + fn else math.nan
    return BinaryAgreement(n, tp, fp, fn, tn, precision, recall, p_o, kappa)


def read_labels(path: Path) -> dict[str, bool]:
    """Read human labels: JSONL or CSV/TSV rows with ``question_id`` (or ``qid``) and ``label``.

    ``label``: ``yes``/``no``, ``true``/``false``, ``1``/``0`` (also ``y``/``n``, ``acceptable``/``unacceptable``,
    ``correct``/``incorrect``, any case): whether the model's answer is semantically acceptable. The one label
    reader: :func:`vqaudit.labels.read_label_file` with :data:`vqaudit.labels.QUESTION_LABELS`.

    Raises:
        VqauditError: a missing or non-UTF-8 file, a missing field, an unreadable value, or a question labelled
            twice (naming the file, row and field).
    """
    return read_label_file(path, QUESTION_LABELS)
