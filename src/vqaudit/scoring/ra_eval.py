"""RA-Eval: the heuristic recovery of officially rejected answers (seed 002 §3.3 "Heuristic (RA-Eval)").

An official error is *recovered* when some normalized gold ``g_norm`` with ``|g_norm| > 3`` characters occurs
in the normalized output ``o_norm`` at word boundaries. Normalization is the vqaEval.py answer processing
(:func:`vqaudit.scoring.vqa_normalize.vqaeval_process`: punctuation, articles, number words, lower case) on both
sides. The length floor keeps short golds ("no", "3", "red") from matching inside long sentences; the paper
calls the result "a conservative lower bound on non-canonical but acceptable answers".

Issue 17 item 5: the audit reports rows that already had partial official credit (VQA accuracy 0.3, an ANLS
of 0.6) apart from the recovered errors (official score 0), and does not apply RA-Eval to multiple-choice rows
(:func:`is_multiple_choice`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from vqaudit.scoring.vqa_normalize import contains_at_word_boundaries
from vqaudit.scoring.vqa_normalize import fast_vqaeval_process as vqaeval_process

MIN_GOLD_CHARS = 3
"""A gold must be *longer* than this many characters after normalization (seed 002 §3.3: |g_norm| > 3)."""


@lru_cache(maxsize=1 << 18)
def _long_gold(gold: str) -> str | None:
    g = vqaeval_process(gold)
    return g if len(g) > MIN_GOLD_CHARS else None


def ra_eval_recovered(prediction: str, answers: Sequence[str]) -> bool:
    """True when a normalized gold longer than 3 characters occurs at word boundaries in the normalized output.

    Word boundaries are "no word character immediately before/after" (so a gold ending in ``%`` still counts).

    Args:
        prediction: the model output (an official error; the caller decides which rows to test).
        answers: the gold answers (TextVQA: all 10 annotator answers).

    Returns:
        True if the row is recovered.
    """
    output = vqaeval_process(prediction)
    for gold in set(answers):
        g = _long_gold(gold)
        if g is not None and contains_at_word_boundaries(output, g):
            return True
    return False


_OPTION_MARK = re.compile(r"(?:^|[\s(\[])([A-H])(?:[.):]|\s*\))\s+\S")
_OPTIONS_WORD = re.compile(r"\b(?:options|choices)\s*:", re.IGNORECASE)


def is_multiple_choice(question: str, answers: Sequence[str] = ()) -> bool:
    """Whether a row is a multiple-choice item, where RA-Eval does not apply (issue 17 item 5).

    A question that lists options: at least two distinct labels ``A.``/``A)``/``(A)`` followed by text, or an
    "Options:"/"Choices:" block. Containment would credit an output that merely repeats the listed options, or
    names a wrong option whose text contains the gold. A single-letter gold alone does not make a row multiple
    choice (TextVQA's "what letter is under the clock?"); such golds are too short for RA-Eval anyway.
    """
    if _OPTIONS_WORD.search(question):
        return True
    return len({m.group(1) for m in _OPTION_MARK.finditer(question)}) >= 2


def ra_eval_layer(predictions: Sequence[str], answers: Sequence[Sequence[str]], questions: Sequence[str],
                  official: Sequence[float], *, vqaeval: Callable[[str], str] | None = None) -> list[bool | None]:
    """The RA-Eval layer of an audit: :func:`ra_eval_recovered` of every official error, None elsewhere.

    A row gets None when its official score is 1 or more (not an error) or it is multiple choice
    (:func:`is_multiple_choice`, issue 17 item 5); otherwise whether it is recovered. Each distinct question,
    output and gold is read once (memos local to the call).

    Args:
        predictions: model outputs, one per row.
        answers: gold answers per row.
        questions: question texts per row.
        official: official scores per row (in [0, 1]).
        vqaeval: the vqaEval normalization, e.g. a memo shared with other layers; it must equal
            :func:`vqaudit.scoring.vqa_normalize.fast_vqaeval_process` (the default).

    Returns:
        Per row: True (recovered), False (not recovered) or None (not tested).

    Raises:
        ValueError: the four sequences differ in length.
    """
    if not len(predictions) == len(answers) == len(questions) == len(official):
        raise ValueError("predictions, answers, questions and official scores differ in length")
    norm = vqaeval_process if vqaeval is None else vqaeval
    choice: dict[str, bool] = {}
    golds: dict[str, str | None] = {}
    out: list[bool | None] = []
    for prediction, refs, question, score in zip(predictions, answers, questions, official, strict=True):
        if score >= 1.0:
            out.append(None)
            continue
        mc = choice.get(question)
        if mc is None:
            mc = choice[question] = is_multiple_choice(question)
        if mc:
            out.append(None)
            continue
        output = norm(prediction)
        found = False
        for gold in set(refs):
            if gold in golds:
                g = golds[gold]
            else:
                g = norm(gold)
                g = golds[gold] = g if len(g) > MIN_GOLD_CHARS else None
            if g is not None and contains_at_word_boundaries(output, g):
                found = True
                break
        out.append(found)
    return out
