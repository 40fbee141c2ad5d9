"""The raw-split support of seed 002 appendix A: what the gold file's own metadata says about its answers.

Appendix A: "In TextVQA, 2,670/5,000 questions have OCR-extractable gold answers, versus 2,330 that require
non-extractive or canonicalized forms. In InfographicVQA, the raw answer-type metadata contains 1,968 single-span,
180 multi-span, 100 question span, and 553 non-extractive items." §3.2 names the two fields: "OCR spans for
TextVQA; answer type for InfographicVQA". The split is computed from the gold file alone (every question it holds,
answered by the model or not), one pass over its items holding a few counters.

**OCR-extractable** (the definition used here, :func:`vqaudit.scoring.contracts.ocr_extractable`): *some* gold
answer of the question, normalized with the official VQA normalization
(:func:`vqaudit.scoring.vqa_normalize.fast_vqaeval_process`), equals one normalized OCR token of the image or a
run of consecutive normalized tokens joined by single spaces.
Appendix A says the questions "have OCR-extractable gold answers": a property of the question's gold answers,
any of which the VQA metric credits. Measured on the bundled TextVQA val gold (the 5,000 val questions of
TextVQA 0.5.1, question ids 34602-39601, with the Rosetta OCR tokens LLaVA put in its prompts), the candidate
readings give (paper: 2,670):

============================================================================ =======
reading                                                                      count
============================================================================ =======
any gold answer, normalized, is a token or a run of consecutive tokens         2,661
any gold answer is a normalized substring of the joined tokens                 2,921
an answer given by >= 3 annotators (VQA accuracy 1) is a token or a run        2,211
the most frequent answer is a token or a run of tokens                         2,110
any gold answer is one normalized token (no runs)                              2,236
the most frequent answer is one normalized token                               1,642
============================================================================ =======

The first is the one implemented: 9 questions short of the paper's 2,670, the difference plausibly the OCR
tokens themselves (the paper's pipeline may read another OCR file than LLaVA's prompts). A question whose image
has no OCR token is not extractable. The contract classifier's OCR rule
(:mod:`vqaudit.scoring.contracts`, ``readout:ocr-token``) reads the same definition but after the scalar
rule: it anchors a bucket, this counts the metadata.

**Answer types** (InfographicVQA ``answer_type``, a list per question; the loaders keep it as the labels joined
with ``|``). The official InfographicVQA evaluation script (the RRC ``evaluate_method``, copied in
QwenLM/Qwen-VL ``eval_mm/infographicsvqa_eval.py``) reads the labels ``image span``, ``question span``,
``multiple spans`` and ``non span`` (printed as Image-Span, Question-Span, Multi-Span, None span): the paper's
single-span, question span, multi-span and non-extractive. Each question is counted once, under the first type it
lists (``first``: the counts sum to the questions with a type, as the paper's 1,968 + 180 + 100 + 553 = 2,801
sum to the val set), and under every type it lists (``listed``, as the official script counts its per-type
scores), with the number of questions listing several (``several``). Labels are kept as the file spells them.

A gold file with neither field gives the reason instead of zeros (:data:`NO_OCR`, :data:`NO_TYPES`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vqaudit.scoring.contracts import ocr_extractable
from vqaudit.shortanswer.records import GoldItem

OCR_DEFINITION = (
    "some gold answer, after the official VQA normalization, equals one normalized OCR token or a run of "
    "consecutive normalized OCR tokens joined by single spaces"
)
"""The definition of an OCR-extractable question, as the report states it."""

NO_OCR = "not available (the gold file has no OCR tokens)"
NO_TYPES = "not available (the gold file has no answer types)"
"""Why the answer-type split is missing: no InfographicVQA ``answer_type`` in the file (other benchmarks' fields of
that name, such as VizWiz's, are not appendix A's types)."""
NO_GOLD = "not available (no gold file: the gold embedded in the predictions has no OCR tokens or answer types)"

INFOVQA_TYPES: tuple[str, ...] = (
    "image span",
    "single span",
    "multiple spans",
    "multi-span",
    "question span",
    "non span",
    "non-extractive",
)
"""InfographicVQA's answer types in the order appendix A lists them, each in the official script's spelling and
the paper's (module docstring); other labels follow in first-seen order."""


@dataclass(frozen=True)
class RawSplit:
    """Appendix A's raw split of one gold file (module docstring for the rules).

    Attributes:
        questions: gold questions in the file.
        ocr: ``{"questions_with_tokens", "extractable", "not_extractable", "definition"}`` (``extractable`` +
            ``not_extractable`` = ``questions``), or None when no question has OCR tokens.
        answer_types: ``{"questions_with_type", "first": {label: questions}, "listed": {label: questions},
            "several"}``, or None when no question has an answer type.
        ocr_reason: why ``ocr`` is None (:data:`NO_OCR` or :data:`NO_GOLD`), else None.
        answer_types_reason: why ``answer_types`` is None (:data:`NO_TYPES` or :data:`NO_GOLD`), else None.
    """

    questions: int
    ocr: dict[str, Any] | None
    answer_types: dict[str, Any] | None
    ocr_reason: str | None
    answer_types_reason: str | None


def _type_labels(answer_type: str) -> list[str]:
    """The labels of one question's answer type (the loaders join a list with ``|``), blanks dropped."""
    return [t.strip() for t in answer_type.split("|") if t.strip()]


def _ordered(counts: Mapping[str, int], seen: Sequence[str]) -> dict[str, int]:
    known = [t for t in INFOVQA_TYPES if t in counts]
    return {t: counts[t] for t in [*known, *(t for t in seen if t not in known)]}


def raw_split(gold: Iterable[GoldItem] | None) -> RawSplit:
    """Count appendix A's raw split over every question of a gold file, in one pass.

    Args:
        gold: the gold file's items (:func:`vqaudit.shortanswer.benchmarks.load_gold`), or None when the audit
            read the gold embedded in the predictions (no metadata).

    Returns:
        The :class:`RawSplit`; a field the file lacks is None with its reason.
    """
    if gold is None:
        return RawSplit(0, None, None, NO_GOLD, NO_GOLD)
    n = with_tokens = extractable = with_type = several = 0
    first: Counter[str] = Counter()
    listed: Counter[str] = Counter()
    seen: dict[str, None] = {}
    for item in gold:
        n += 1
        if item.ocr_tokens:
            with_tokens += 1
            extractable += ocr_extractable(item.answers, item.ocr_tokens)
        # Appendix A's answer types are InfographicVQA's; VizWiz's own answer_type ("other", "yes/no", "number",
        # "unanswerable") is another field of the same name, not this split.
        labels = _type_labels(item.answer_type) if item.answer_type and item.benchmark == "infovqa" else []
        if labels:
            with_type += 1
            first[labels[0]] += 1
            distinct = list(dict.fromkeys(labels))
            several += len(distinct) > 1
            listed.update(distinct)
            seen.update(dict.fromkeys(distinct))
    ocr = (
        {
            "questions_with_tokens": with_tokens,
            "extractable": extractable,
            "not_extractable": n - extractable,
            "definition": OCR_DEFINITION,
        }
        if with_tokens
        else None
    )
    types = (
        {
            "questions_with_type": with_type,
            "first": _ordered(first, list(seen)),
            "listed": _ordered(listed, list(seen)),
            "several": several,
        }
        if with_type
        else None
    )
    return RawSplit(n, ocr, types, None if ocr else NO_OCR, None if types else NO_TYPES)


def raw_split_lines(data: Mapping[str, Any] | None) -> list[str]:
    """Markdown bullet lines of a raw split as ``report.json`` holds it (``dataclasses.asdict`` of a RawSplit).

    None (a report written before the split existed) gives one line saying so.
    """
    if data is None:
        return ["- not recorded (report.json written by an older vqaudit: rerun `vqaudit audit`)"]
    n = int(data.get("questions", 0))
    lines = []
    ocr = data.get("ocr")
    if isinstance(ocr, dict):
        k, rest = int(ocr["extractable"]), int(ocr["not_extractable"])
        lines.append(
            f"- OCR-extractable: {k:,} of {n:,} questions ({_share(k, n)}), not extractable: {rest:,} "
            f"({ocr['questions_with_tokens']:,} questions have OCR tokens). OCR-extractable: {ocr['definition']}."
        )
    else:
        lines.append(f"- OCR-extractable: {data.get('ocr_reason') or NO_OCR}")
    types = data.get("answer_types")
    if isinstance(types, dict):
        # the official order (image span, question span, multiple spans, non span): report.json is written with
        # sorted keys, so a report read back (the HTML report, audit-summary) would otherwise list them A-Z
        counts = {str(label): int(count) for label, count in types["first"].items()}
        first = ", ".join(f"{label} {count:,}" for label, count in _ordered(counts, list(counts)).items())
        lines.append(
            f"- Answer types ({types['questions_with_type']:,} of {n:,} questions typed; each counted under its "
            f"first listed type): {first}; {types['several']:,} questions list several types."
        )
    else:
        lines.append(f"- Answer types: {data.get('answer_types_reason') or NO_TYPES}")
    return lines


def _share(k: int, n: int) -> str:
    return f"{100.0 * k / n:.1f}%" if n else "n/a"
