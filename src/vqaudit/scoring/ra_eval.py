"""RA-Eval: the heuristic recovery of officially rejected answers (seed 002 §3.3 "Heuristic (RA-Eval)").

An official error is *recovered* when some normalized gold ``g_norm`` with ``|g_norm| > 3`` characters occurs
in the normalized output ``o_norm`` at word boundaries. Normalization is the vqaEval.py answer processing
(:func:`vqaudit.scoring.vqa_normalize.vqaeval_process`: punctuation, articles, number words, lower case) on both
sides. The length floor keeps short golds ("no", "3", "red") from matching inside long sentences; the paper
calls the result "a conservative lower bound on non-canonical but acceptable answers".

The audit reports rows that already had partial official credit (VQA accuracy 0.3, an ANLS
of 0.6) apart from the recovered errors (official score 0), and does not apply RA-Eval to multiple-choice rows
(:func:`is_multiple_choice`).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import accumulate, chain, compress, repeat
from operator import contains

from vqaudit.scoring.vqa_normalize import contains_at_word_boundaries, vqaeval_many
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
    """Whether a row is a multiple-choice item, where RA-Eval does not apply (a letter is no free-form answer).

    A question that lists options: at least two distinct labels ``A.``/``A)``/``(A)`` followed by text, or an
    "Options:"/"Choices:" block. Containment would credit an output that merely repeats the listed options, or
    names a wrong option whose text contains the gold. A single-letter gold alone does not make a row multiple
    choice (TextVQA's "what letter is under the clock?"); such golds are too short for RA-Eval anyway.

    Both patterns need a ``.``, ``)`` or ``:`` after the label or the word, so a question without any of the three
    is not multiple choice without running them (tested against the patterns alone).
    """
    if "." not in question and ")" not in question and ":" not in question:
        return False
    if _OPTIONS_WORD.search(question):
        return True
    return len({m.group(1) for m in _OPTION_MARK.finditer(question)}) >= 2


def ra_eval_layer(
    predictions: Sequence[str],
    answers: Sequence[Sequence[str]],
    questions: Sequence[str],
    official: Sequence[float],
    *,
    vqaeval: Callable[[str], str] | None = None,
    forms: dict[str, str] | None = None,
) -> list[bool | None]:
    """The RA-Eval layer of an audit: :func:`ra_eval_recovered` of every official error, None elsewhere.

    A row gets None when its official score is 1 or more (not an error) or it is multiple choice
    (:func:`is_multiple_choice`); otherwise whether it is recovered. Each distinct question is
    tested once; the outputs and golds of the tested rows are normalized in one batch
    (:func:`vqaudit.scoring.vqa_normalize.vqaeval_many`), and a gold is searched for at word boundaries only where
    it occurs in the output at all.

    Args:
        predictions: model outputs, one per row.
        answers: gold answers per row.
        questions: question texts per row.
        official: official scores per row (in [0, 1]).
        vqaeval: the vqaEval normalization as a function, e.g. a memo shared with other layers; it must equal
            :func:`vqaudit.scoring.vqa_normalize.fast_vqaeval_process`. Default: the batch normalization into
            ``forms``.
        forms: a memo ``text -> vqaEval form`` shared with other layers (see ``vqaeval_many``): read, and
            extended with the texts this layer normalizes (ignored when ``vqaeval`` is given).

    Returns:
        Per row: True (recovered), False (not recovered) or None (not tested).

    Raises:
        ValueError: the four sequences differ in length.
    """
    if not len(predictions) == len(answers) == len(questions) == len(official):
        raise ValueError("predictions, answers, questions and official scores differ in length")
    # NaN scores are tested too, as ``score >= 1.0`` fails for them.
    tested = [not score >= 1.0 for score in official]
    choice = {q: is_multiple_choice(q) for q in set(compress(questions, tested))}
    if any(choice.values()):
        tested = [t and not choice[q] for t, q in zip(tested, questions, strict=True)]
    outputs = list(compress(predictions, tested))
    refs = list(compress(answers, tested))
    flat = list(chain.from_iterable(refs))  # every (tested row, gold) pair, row by row
    texts = set(flat)
    texts.update(outputs)
    norm = vqaeval_many(texts, forms) if vqaeval is None else {t: vqaeval(t) for t in texts}
    # One C-level pass tests "gold form in output form" for every pair; only the pairs that pass are checked for
    # the length floor and the word boundaries (rare), and mark their row.
    pair_golds = list(map(norm.__getitem__, flat))
    pair_outputs = list(chain.from_iterable(map(repeat, map(norm.__getitem__, outputs), map(len, refs))))
    row_ends = list(accumulate(map(len, refs)))  # pair k belongs to the first row whose end exceeds k
    found = [False] * len(outputs)
    for k in compress(range(len(flat)), map(contains, pair_outputs, pair_golds)):
        g = pair_golds[k]
        if len(g) > MIN_GOLD_CHARS and contains_at_word_boundaries(pair_outputs[k], g):
            found[bisect_right(row_ends, k)] = True
    recovered = iter(found)
    out: list[bool | None] = [next(recovered) if t else None for t in tested]
    return out
