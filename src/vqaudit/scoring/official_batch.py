"""Official short-answer scores of a whole column of rows at once (speed of the target pass: docs/shortanswer.md).

:func:`official_scores` gives, row for row, the float ``official_scorer(metric, variant)(prediction, answers)``
(:mod:`vqaudit.scoring.registry`) gives, with fewer Python calls: each distinct string of the column is normalized
once (:func:`evalai_many` for TextVQA's ``mmf_textvqa``), and the per-row rule runs inline in one loop, with no
memo to fill. Rows the fast loops do not take (a non-tuple gold, a wrong number of answers, a non-string) are
scored by the per-row scorer itself, so errors are the per-row ones. Equality with the per-row scorers is tested
on every fixture row and on random hostile strings (``tests/scoring/test_target_pass_batch.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import chain

from rapidfuzz.distance import Levenshtein

from vqaudit.scoring.columns import gc_paused, repeated_rows
from vqaudit.scoring.leave_one_out import hit_pattern_score
from vqaudit.scoring.registry import official_scorer
from vqaudit.scoring.vqa_normalize import _WORD_MAP, ARTICLES, fast_evalai_process

# m4c_evaluators.py ``TextVQAAccuracyEvaluator``: exactly 10 answers per question.
_TEN = 10


def evalai_many(texts: Iterable[str], into: dict[str, str] | None = None) -> dict[str, str]:
    """``evalai_process(t)`` (mmf ``EvalAIAnswerProcessor`` at 2dc099a) of every distinct text not yet in ``into``.

    Each text goes through ``fast_evalai_process``'s rule without its memo (a text holding a punctuation mark or
    period through :func:`evalai_process`, the others through its digit/article step alone); one ASCII
    alphanumeric word is only lower-cased and looked up in the word tables (number words, contractions,
    articles), all the digit/article step does to it. (Measured: word-tokenizing all the texts joined by
    newlines in three C calls, then splitting them back, was slower than the per-text calls, which take the ASCII
    fast paths of ``str.lower``.)

    Args:
        texts: strings (any order, repeats allowed).
        into: a dict to add to (returned), or None for a new one.

    Returns:
        ``into`` (or a new dict) holding ``text -> evalai_process(text)`` for every text of ``texts``.

    Raises:
        AttributeError: a text is not a string.
    """
    out: dict[str, str] = {} if into is None else into
    one = _evalai_one
    word = _ONE_WORD.get
    for t in texts:
        if t not in out:
            if t.isalnum() and t.isascii():  # one ASCII word: no mark to tokenize, only the word tables apply
                low = t.lower()
                out[t] = word(low, low)
            else:
                out[t] = one(t)
    return out


# ``process_digit_article`` of one lower-case word: its digit, its contraction, or "" for an article.
_ONE_WORD: dict[str, str] = {**_WORD_MAP, **dict.fromkeys(ARTICLES, "")}


_evalai_one = fast_evalai_process.__wrapped__


def official_scores(
    predictions: Sequence[str], answers: Sequence[Sequence[str]], metric: str, variant: str
) -> list[float]:
    """``official_scorer(metric, variant)(p, a)`` of every row ``(p, a)``, in row order (the same floats).

    Rules: those of :func:`vqaudit.scoring.registry.official_scorer` (sources in :mod:`vqaudit.scoring.official`).
    ``vqa_accuracy``/``mmf_textvqa`` normalizes each distinct string once (:func:`evalai_many`) and scores the
    leave-one-out rule inline; ``anls``/``paper`` runs its per-row rule inline; the other metrics call the
    per-row scorer. Rows made of the same objects as an earlier row (a resampled pool) are scored once. The
    cyclic garbage collector is paused meanwhile (the pass makes no reference cycle).

    Args:
        predictions: one model output per row.
        answers: the gold answers of each row (same length as ``predictions``).
        metric: an official metric name (:data:`vqaudit.scoring.registry.METRICS`).
        variant: one of its variants.

    Returns:
        One score in [0, 1] per row.

    Raises:
        VqauditError: an unknown metric or variant.
        ValueError, TypeError: a row the per-row scorer refuses (the first such row's error), or columns of
            different lengths.
    """
    scorer = official_scorer(metric, variant, memo=0)
    if len(predictions) != len(answers):
        raise ValueError(f"{len(predictions)} predictions but {len(answers)} gold rows")
    shared = repeated_rows(answers, predictions)
    if shared is not None:  # the same row objects again (a resampled pool): each is scored once
        firsts, where = shared
        values = official_scores([predictions[k] for k in firsts], [answers[k] for k in firsts], metric, variant)
        by_first = dict(zip(firsts, values, strict=True))
        return [by_first[k] for k in where]
    with gc_paused():
        if metric == "vqa_accuracy" and variant == "mmf_textvqa":
            strings = set(predictions)
            strings.update(chain.from_iterable(a for a in answers if type(a) is tuple))
            if set(map(type, strings)) <= {str}:
                return _mmf_textvqa(predictions, answers, evalai_many(strings), scorer)
        elif metric == "anls" and variant == "paper":
            types = set(map(type, predictions))
            types.update(map(type, chain.from_iterable(a for a in answers if type(a) is tuple)))
            if types <= {str}:  # then only the tuple test is left per row
                return _anls_paper(predictions, answers, scorer)
        return [scorer(p, a) for p, a in zip(predictions, answers, strict=True)]


Scorer = Callable[[str, Sequence[str]], float]


def _mmf_textvqa(
    predictions: Sequence[str], answers: Sequence[Sequence[str]], norm: dict[str, str], score: Scorer
) -> list[float]:
    """The registry's ``mmf_textvqa`` scorer (``leave_one_out_score`` of the EvalAI forms), row by row, inline."""
    get = norm.__getitem__
    pattern = hit_pattern_score
    out: list[float] = []
    append = out.append
    for p, a in zip(predictions, answers, strict=True):
        if type(a) is not tuple or len(a) != _TEN:
            append(score(p, a))
            continue
        pn = get(p)
        refs = list(map(get, a))
        m = refs.count(pn)
        append(0.0 if m == 0 else 1.0 if m > 3 else pattern(tuple([r == pn for r in refs])))
    return out


def _anls_paper(predictions: Sequence[str], answers: Sequence[Sequence[str]], score: Scorer) -> list[float]:
    """The registry's ``anls``/``paper`` scorer row by row, inline (same rapidfuzz calls, same floats).

    The caller checked that every prediction and every reference of a tuple gold is a ``str``; a row whose gold is
    not a nonempty tuple goes to the per-row scorer.

    A prediction (lower-cased, stripped) more than twice as long as every ASCII reference scores 0.0 without a
    distance: the reference's compared form is at most as long (``lower`` keeps an ASCII text's length, ``strip``
    only shortens it), and the distance is at least the length difference, so NL > 0.5, which scores 0.0.
    """
    nd = Levenshtein.normalized_distance
    out: list[float] = []
    append = out.append
    for p, a in zip(predictions, answers, strict=True):
        if type(a) is tuple and a:
            pred = p.lower().strip()
            if len(a) == 1:
                ref = a[0]
                if len(pred) > 2 * len(ref) and ref.isascii():
                    append(0.0)
                    continue
                nl = nd(ref.lower().strip(), pred, score_cutoff=0.5)
                append(1.0 - nl if nl < 0.5 else 0.0)
                continue
            if len(pred) > 2 * max(map(len, a)) and all(map(str.isascii, a)):
                append(0.0)
                continue
            nl = min([nd(r.lower().strip(), pred, score_cutoff=0.5) for r in a])
            append(1.0 - nl if nl < 0.5 else 0.0)
            continue
        append(score(p, a))
    return out
