"""Rule-based answer-contract buckets and the Table 8 subtypes (seed 002 §3.2, Table 1, Table 8, Appendix A).

§3.2: "The split is rule-based and intentionally pragmatic: it uses question prefix, answer shape, and raw
benchmark metadata (OCR spans for TextVQA; answer type for InfographicVQA)"; "The rules are intentionally simple
and applied in priority order using question form, answer shape, and benchmark-native metadata." The paper does
not spell the order out; the buckets are tested in the order in which Table 1 (and Tables 4, 5 and 7) list them,
and the first that fires wins:

1. ``scalar`` (Table 1: "numbers, dates, yes/no"): the representative gold has a scalar shape
   (:func:`vqaudit.scoring.contract_shapes.is_scalar_answer`);
2. ``readout`` (Table 1: "OCR spans, names, written text"; §3.2: "OCR-style span extraction and explicit readout
   questions"), from the benchmark metadata or the question prefix, whatever the gold's shape:
   - ``readout:ocr-token``: some gold answer is one of the image's OCR tokens or a run of consecutive ones
     (TextVQA; Appendix A counts the "questions [that] have OCR-extractable gold answers", 2,670 of 5,000);
   - ``readout:question``: the question asks to read text or a name ("what is the name", "what does ... say",
     "what is written", "what brand", "who", "what word", "title"; §1: "What does the sign say?" is the
     text-reading question, Table 12: "What is the name of the medication?");
3. ``identifier`` (Table 1: "codes, room IDs, alphanumeric strings"): the gold is code shaped, with the Table 8
   subtype (:func:`vqaudit.scoring.contract_shapes.identifier_subtype`);
4. ``multi-span`` (Table 1: "lists, conjunctive answers, multi-span lookups"): the gold is list shaped, with the
   Table 8 subtype (:func:`vqaudit.scoring.contract_shapes.multispan_subtype`), or InfographicVQA marks it
   ``multiple spans`` (the paper's multi-span, Appendix A);
5. ``other-open``: the remainder (§3.2: "a remainder rather than a fifth symmetric bucket").

The benchmark metadata anchors one bucket each (Appendix A: "TextVQA exposes OCR token structure directly, and
InfographicVQA exposes answer-type annotations that distinguish single-span from multi-span answers"; §3.2: "OCR
spans for TextVQA; answer type for InfographicVQA"): OCR spans anchor readout, the answer type multi-span. The
official InfographicVQA labels are ``image span``, ``question span``, ``multiple spans`` and ``non span`` (the RRC
evaluation script; the paper's single-span, question span, multi-span and non-extractive); both spellings of the
multi-span type are read. A single-span type does not make an item readout: Table 5 counts 113 readout items of
InfographicVQA's 2,801, which 1,968 single-span items rule out.

The shapes are decided by the *representative gold*: the most frequent answer, compared case- and
space-insensitively (ties: first in file order), which for a single-reference benchmark is its one answer.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from vqaudit.scoring.columns import gc_paused, repeated_rows
from vqaudit.scoring.contract_shapes import BUCKETS as BUCKETS
from vqaudit.scoring.contract_shapes import MAX_SPAN_WORDS as MAX_SPAN_WORDS
from vqaudit.scoring.contract_shapes import SUBTYPES as SUBTYPES
from vqaudit.scoring.contract_shapes import (
    identifier_subtype,
    is_scalar_answer,
    list_shape,
    multispan_subtype,
    representative_gold,
)
from vqaudit.scoring.vqa_normalize import fast_vqaeval_process

__all__ = [
    "BUCKETS",
    "MAX_SPAN_WORDS",
    "SUBTYPES",
    "Contract",
    "classify",
    "classify_item",
    "classify_many",
    "identifier_subtype",
    "is_scalar_answer",
    "multispan_subtype",
    "ocr_extractable",
    "representative_gold",
    "subtype_counts",
]

_READOUT_Q = re.compile(
    r"^\s*(?:what\s+is\s+(?:the\s+)?(?:\w+\s+)?name|what\s+(?:does|do)\b.*\b(?:say|read)|what\s+is\s+written|"
    r"what\s+(?:word|words|text|letters?|brand|company|title)|which\s+(?:brand|company)|who\b|whose\b|"
    r"what\s+is\s+the\s+(?:title|brand|heading)|name\s+the\b)",
    re.IGNORECASE,
)

_vqaeval = fast_vqaeval_process


@dataclass(frozen=True)
class Contract:
    """The contract of one item: bucket, Table 8 subtype (identifier / multi-span only) and the deciding rule."""

    bucket: str
    subtype: str | None
    rule: str


_SCALAR = Contract("scalar", None, "scalar:gold-shape")
_READOUT_OCR = Contract("readout", None, "readout:ocr-token")
_READOUT_QUESTION = Contract("readout", None, "readout:question")
_OTHER = Contract("other-open", None, "other-open:remainder")


@lru_cache(maxsize=1 << 14)
def _ocr_index(ocr_tokens: tuple[str, ...]) -> tuple[frozenset[str], str]:
    """The normalized OCR tokens of one image as a set, and joined with single spaces (padded with spaces)."""
    tokens = [_vqaeval(t) for t in ocr_tokens]
    return frozenset(tokens), f" {' '.join(tokens)} "


def _in_ocr(gold: str, ocr_tokens: Sequence[str]) -> bool:
    """True when the normalized gold is one normalized OCR token, or a run of consecutive tokens."""
    if not ocr_tokens:
        return False
    g = _vqaeval(gold)
    if not g:
        return False
    tokens, joined = _ocr_index(tuple(ocr_tokens))
    return g in tokens or f" {g} " in joined


def ocr_extractable(answers: Sequence[str], ocr_tokens: Sequence[str]) -> bool:
    """True when some gold answer is OCR-extractable; False without tokens or answers.

    OCR-extractable (seed 002 Appendix A, "questions [that] have OCR-extractable gold answers"): the answer, after
    the official VQA normalization (:func:`vqaudit.scoring.vqa_normalize.fast_vqaeval_process`), equals one
    normalized OCR token or a run of consecutive normalized tokens joined by single spaces. The ``readout:ocr-token``
    rule and the appendix-A raw split (:mod:`vqaudit.shortanswer.raw_split`) both read this one test.

    Args:
        answers: the question's gold answers (TextVQA: the 10 annotator answers).
        ocr_tokens: the image's OCR tokens in reading order (TextVQA ``ocr_tokens``).
    """
    return bool(ocr_tokens) and any(_in_ocr(a, ocr_tokens) for a in dict.fromkeys(answers))


@lru_cache(maxsize=1 << 16)
def _readout_question(question: str) -> bool:
    """The question asks to read text or a name (``_READOUT_Q``); memoized, as questions repeat across models."""
    return _READOUT_Q.match(question) is not None


def classify(
    question: str,
    answers: Sequence[str],
    *,
    answer_type: str | None = None,
    ocr_tokens: Sequence[str] = (),
) -> Contract:
    """Put one item in its contract bucket; memoized wrapper of :func:`classify_item` (same arguments)."""
    return _classify_cached(question, tuple(answers), answer_type, tuple(ocr_tokens))


@lru_cache(maxsize=1 << 18)
def _classify_cached(
    question: str, answers: tuple[str, ...], answer_type: str | None, ocr_tokens: tuple[str, ...]
) -> Contract:
    return _classify(question, answers, answer_type, ocr_tokens)


def classify_item(
    question: str,
    answers: Sequence[str],
    *,
    answer_type: str | None = None,
    ocr_tokens: Sequence[str] = (),
) -> Contract:
    """Put one item in its contract bucket (module docstring rules, in priority order).

    Args:
        question: the question text.
        answers: the gold answers (the representative one decides the shapes; any of them can be the OCR span).
        answer_type: benchmark-native answer type (InfographicVQA ``answer_type``, its list joined with ``|``),
            if any.
        ocr_tokens: OCR tokens of the image (TextVQA), if any.

    Returns:
        The :class:`Contract`; ``rule`` names the rule that fired (``scalar:gold-shape``, ``readout:ocr-token``,
        ``readout:question``, ``identifier:shape``, ``multi-span:shape`` or
        ``other-open:remainder``).
    """
    return _classify(question, answers, answer_type, ocr_tokens)


def _classify(question: str, answers: Sequence[str], answer_type: str | None, ocr_tokens: Sequence[str]) -> Contract:
    gold = representative_gold(answers)  # stripped
    if is_scalar_answer(gold):
        return _SCALAR
    if ocr_extractable(answers, ocr_tokens):
        return _READOUT_OCR
    if _readout_question(question):
        return _READOUT_QUESTION
    ident = identifier_subtype(gold)
    if ident is not None:
        return Contract("identifier", ident, "identifier:shape")
    multi = multispan_subtype(gold, answer_type)
    if multi is not None:
        return Contract("multi-span", multi, "multi-span:shape")
    return _OTHER


def classify_many(
    questions: Sequence[str],
    answers: Sequence[Sequence[str]],
    answer_types: Sequence[str | None] | None = None,
    ocr_tokens: Sequence[Sequence[str]] | None = None,
) -> list[Contract]:
    """``classify(q, a, answer_type=t, ocr_tokens=o)`` of every row, in row order (equal contracts, no memo).

    The rules of :func:`classify_item` (module docstring, in priority order), with what depends on the
    representative gold alone (its scalar, identifier and list shapes) computed once per distinct gold, what
    depends on the question once per distinct question, the normalized OCR index once per OCR token list and the
    normalized form of each gold answer once per distinct answer;
    the rest runs inline, row by row. The representative gold takes the shortcut of
    :func:`representative_gold` inline (the first answer holding at least half of them). Rows made of the same
    objects as an earlier row (a resampled pool) are classified once; the cyclic garbage collector is paused
    meanwhile (:func:`vqaudit.scoring.columns.gc_paused`).

    Args:
        questions: the question of each row.
        answers: the gold answers of each row.
        answer_types: benchmark-native answer types (None: none for every row).
        ocr_tokens: OCR tokens per row (None: none for every row).

    Returns:
        One :class:`Contract` per row.

    Raises:
        ValueError: columns of different lengths.
    """
    n = len(questions)
    types: Sequence[str | None] = [None] * n if answer_types is None else answer_types
    ocrs: Sequence[Sequence[str]] = [()] * n if ocr_tokens is None else ocr_tokens
    if not len(answers) == len(types) == len(ocrs) == n:
        raise ValueError("questions, answers, answer types and OCR tokens must have one entry per row")
    with gc_paused():
        return _classify_rows(questions, answers, types, ocrs)


def _classify_rows(
    questions: Sequence[str],
    answers: Sequence[Sequence[str]],
    types: Sequence[str | None],
    ocrs: Sequence[Sequence[str]],
) -> list[Contract]:
    shared = repeated_rows(answers, questions, types, ocrs)
    if shared is not None:  # the same row objects again (a resampled pool): each is classified once
        firsts, where = shared
        found = _classify_rows(
            [questions[k] for k in firsts],
            [answers[k] for k in firsts],
            [types[k] for k in firsts],
            [ocrs[k] for k in firsts],
        )
        by_first = dict(zip(firsts, found, strict=True))
        return [by_first[k] for k in where]
    golds = [a[0].strip() if len(a) and 2 * a.count(a[0]) >= len(a) else representative_gold(a) for a in answers]
    scalar_of = {g: is_scalar_answer(g) for g in set(golds)}
    readout_q = {q: _READOUT_Q.match(q) is not None for q in set(questions)}
    ocr_index: dict[int, tuple[frozenset[str], str]] = {}  # by id: the input columns keep every list alive
    normalized: dict[str, str] = {}
    shape_of: dict[str, tuple[str | None, str | None]] = {}
    out: list[Contract] = []
    append = out.append
    for gold, golds_row, question, answer_type, ocr in zip(golds, answers, questions, types, ocrs, strict=True):
        if scalar_of[gold]:
            append(_SCALAR)
            continue
        if ocr:
            index = ocr_index.get(id(ocr))
            if index is None:
                index = ocr_index[id(ocr)] = _ocr_index(ocr if type(ocr) is tuple else tuple(ocr))
            tokens, joined = index
            hit = False
            for a in golds_row if len(golds_row) < 2 else dict.fromkeys(golds_row):
                g = normalized.get(a)
                if g is None:
                    g = normalized[a] = _vqaeval(a)
                if g and (g in tokens or f" {g} " in joined):
                    hit = True
                    break
            if hit:
                append(_READOUT_OCR)
                continue
        if readout_q[question]:
            append(_READOUT_QUESTION)
            continue
        shapes = shape_of.get(gold)
        if shapes is None:
            shapes = shape_of[gold] = (identifier_subtype(gold), list_shape(gold))
        ident, shape = shapes
        if ident is not None:
            append(Contract("identifier", ident, "identifier:shape"))
            continue
        multi = shape if shape is not None or answer_type is None else multispan_subtype(gold, answer_type)
        append(_OTHER if multi is None else Contract("multi-span", multi, "multi-span:shape"))
    return out


def subtype_counts(contracts: Sequence[Contract]) -> dict[str, dict[str, int]]:
    """Counts of the Table 8 subtypes within identifier and multi-span (every subtype present)."""
    out: dict[str, dict[str, int]] = {}
    for parent, names in SUBTYPES.items():
        counts = Counter(c.subtype for c in contracts if c.bucket == parent)
        out[parent] = {n: counts.get(n, 0) for n in names}
    return out
