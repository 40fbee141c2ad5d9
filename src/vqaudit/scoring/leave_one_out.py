"""VQA accuracy's leave-one-out average over the annotators' answers (vqaEval.py, GT-Vision-Lab/VQA a013f00).

For each reference answer left out in turn, ``min(#matches among the others / 3, 1)``; the score is the mean,
summed in reference order as vqaEval.py sums ``gtAcc``. The official scorers (:mod:`vqaudit.scoring.official`,
its column passes in :mod:`vqaudit.scoring.official_batch`) and the canonical layer share these functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache


def leave_one_out_score(pred: str, refs: Sequence[str]) -> float:
    """:func:`leave_one_out_accuracy` of the references equal to ``pred``, the same float, mostly without a loop.

    With no match every term is 0.0 and with four or more every term is 1.0 (each left-out subset keeps at least
    three matches), so the mean is exactly 0.0 or 1.0; one to three matches look up the sum of their hit pattern
    (the terms are added in reference order, as vqaEval.py does).

    Args:
        pred: the normalized prediction.
        refs: the normalized references (nonempty).

    Returns:
        A float in [0, 1].
    """
    matches = refs.count(pred)
    if refs and (matches == 0 or matches > 3):
        return 0.0 if matches == 0 else 1.0
    return hit_pattern_score(tuple([ref == pred for ref in refs]))


@lru_cache(maxsize=4096)
def hit_pattern_score(hits: tuple[bool, ...]) -> float:
    """:func:`leave_one_out_accuracy` of a hit pattern, memoized (TextVQA rows have 10 answers: few patterns)."""
    return leave_one_out_accuracy(hits)


def leave_one_out_accuracy(hits: Sequence[bool]) -> float:
    """VQA accuracy from which answers match: the mean over left-out answers of ``min(#other matches / 3, 1)``.

    Sums in reference order, then divides, as vqaEval.py ``float(sum(gtAcc)) / len(gtAcc)`` does (the other
    matches of position j are ``#matches - hits[j]``: the same integers, so the same floats).

    Args:
        hits: one bool per reference answer (nonempty): does it equal the (normalized) prediction.

    Returns:
        A float in [0, 1].
    """
    matches = sum(hits)
    total = 0.0
    for hit in hits:
        total += min(1.0, (matches - hit) / 3)
    return total / len(hits)
