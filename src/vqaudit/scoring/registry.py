r"""The one registry of official short-answer metrics: names, variants, default variants and scorers.

Each metric is one row of :data:`SHORT_ANSWER_METRICS`: its variants (the reference scorers, cited in
:mod:`vqaudit.scoring.official`) and the variant used when ``--metric`` is given without ``--metric-variant``.
:func:`official_scorer` returns a memoized ``score(prediction, answers)`` for a metric and variant.

:func:`mocr_containment` is MultimodalOCR's ``VQAEval.evaluate`` (``eval.py`` at
Yuliang-Liu/MultimodalOCR ``9f0ffdf13c82a38b9c6fba9fcf082abc3788b8bc``, the number in its ``result.json``):
vqaEval.py normalization on both sides, then a hit when some normalized gold occurs in the normalized output
between regex word boundaries (``\b`` + escaped gold + ``\b``). It is offered as the metric ``containment``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz.distance import Levenshtein

from vqaudit.errors import VqauditError
from vqaudit.scoring.official import (
    ANLS_VARIANTS,
    EXACT_MATCH_VARIANTS,
    RELAXED_VARIANTS,
    VQA_VARIANTS,
    anls,
    exact_match,
    leave_one_out_score,
    relaxed_accuracy,
    vqa_accuracy,
)
from vqaudit.scoring.vqa_normalize import fast_evalai_process, fast_vqaeval_process


@dataclass(frozen=True)
class ShortAnswerMetric:
    """One official short-answer metric.

    Attributes:
        name: the ``--metric`` name.
        variants: its reference-scorer variants.
        default_variant: the variant used when the metric is chosen without a variant.
    """

    name: str
    variants: tuple[str, ...]
    default_variant: str


SHORT_ANSWER_METRICS: dict[str, ShortAnswerMetric] = {
    m.name: m
    for m in (
        ShortAnswerMetric("vqa_accuracy", VQA_VARIANTS, "vqaeval"),
        ShortAnswerMetric("anls", ANLS_VARIANTS, "paper"),
        ShortAnswerMetric("relaxed_accuracy", RELAXED_VARIANTS, "pix2struct"),
        ShortAnswerMetric("exact_match", EXACT_MATCH_VARIANTS, "pix2struct"),
        ShortAnswerMetric("containment", ("mocr",), "mocr"),
    )
}

METRICS = tuple(SHORT_ANSWER_METRICS)
"""Every metric name, in table order."""
METRIC_VARIANTS: dict[str, tuple[str, ...]] = {m.name: m.variants for m in SHORT_ANSWER_METRICS.values()}
"""Every metric's variants."""


HARNESS_VARIANTS: dict[str, dict[str, tuple[str, ...]]] = {
    # VLMEvalKit's vqa_eval.py before and after its rule changes (commits cited in scoring/official.py)
    "vlmevalkit": {
        "vqa_accuracy": ("vlmevalkit", "vlmevalkit_928a95b0"),
        "anls": ("vlmevalkit",),
        "relaxed_accuracy": ("vlmevalkit", "vlmevalkit_677e30a5"),
        "exact_match": ("vlmevalkit",),
    },
    # no lmms-eval scorer is reproduced as a variant yet: an lmms-eval log shows the default variant only
    "lmms-eval": {},
}
"""Harness -> metric -> the variants that reproduce that harness's own scorer (oldest first).

When a file read as a harness's output is audited under the default variant, the short-answer report shows the
numbers these variants give beside it wherever they differ (:func:`vqaudit.shortanswer.audit.run_audit`)."""


def harness_variants(harness: str, metric: str) -> tuple[str, ...]:
    """The variants of ``metric`` reproducing ``harness``'s own scorer (:data:`HARNESS_VARIANTS`); () if none."""
    return HARNESS_VARIANTS.get(harness, {}).get(metric, ())


def default_variant(metric: str) -> str:
    """The variant of a metric given with ``--metric`` but no variant ("" for an unknown metric)."""
    row = SHORT_ANSWER_METRICS.get(metric)
    return row.default_variant if row is not None else ""


@lru_cache(maxsize=65536)
def _word_pattern(gold: str) -> re.Pattern[str]:
    return re.compile(r"\b" + re.escape(gold) + r"\b")


def mocr_containment(prediction: str, answers: Sequence[str]) -> float:
    r"""MultimodalOCR ``VQAEval.evaluate``: 1.0 if a normalized gold is a whole-word substring of the output.

    Both sides go through :func:`vqaudit.scoring.vqa_normalize.vqaeval_process`. A gold that normalizes to ""
    matches any output containing a word boundary, as the script's ``\b\b`` pattern does.

    Returns:
        1.0 or 0.0.
    """
    output = fast_vqaeval_process(prediction)
    return 1.0 if any(_word_pattern(fast_vqaeval_process(g)).search(output) for g in answers) else 0.0


def official_scorer(metric: str, variant: str, *, memo: int = 1 << 18) -> Callable[[str, Sequence[str]], float]:
    """Return ``score(prediction, answers) -> float in [0, 1]`` for a metric and variant.

    The scorers are pure functions of ``(prediction, answers)``, so the returned function memoizes them (an LRU
    of ``memo`` entries keyed by the prediction and the answer tuple): the repair variants re-score unchanged
    rows, and real pools repeat answers. ``memo=0`` disables it.

    Raises:
        VqauditError: an unknown metric or a variant the metric does not have.
    """
    if metric not in METRIC_VARIANTS:
        raise VqauditError(f"unknown metric {metric!r}; expected one of {', '.join(METRICS)}")
    if variant not in METRIC_VARIANTS[metric]:
        raise VqauditError(
            f"metric {metric!r} has no variant {variant!r}; expected one of {', '.join(METRIC_VARIANTS[metric])}"
        )
    base = _raw_scorer(metric, variant)
    if memo <= 0:

        def score(prediction: str, answers: Sequence[str]) -> float:
            return base(prediction, answers)

    else:
        cached: Callable[[str, tuple[str, ...]], float] = lru_cache(maxsize=memo)(base)

        def score(prediction: str, answers: Sequence[str]) -> float:
            return cached(prediction, answers if type(answers) is tuple else tuple(answers))

    setattr(score, _IDENTITY, (metric, variant))  # noqa: B010 (a function attribute mypy would not accept)
    return score


_IDENTITY = "_vqaudit_official_scorer"


def scorer_identity(scorer: Callable[[str, Sequence[str]], float]) -> tuple[str, str] | None:
    """``(metric, variant)`` when ``scorer`` came from :func:`official_scorer`, else None.

    Lets a caller that receives a scorer take shortcuts that hold only for the official metric (e.g. the ANLS
    length bound of :mod:`vqaudit.scoring.repair`); an unknown scorer gets no shortcut.
    """
    identity = getattr(scorer, _IDENTITY, None)
    return identity if isinstance(identity, tuple) else None


_evalai_memo = fast_evalai_process
_vqaeval_memo = fast_vqaeval_process


def _memo_vqa(norm: Callable[[str], str], need_ten: bool) -> Callable[[str, Sequence[str]], float]:
    """VQA accuracy for the variants that always normalize both sides (``mmf_textvqa``, ``vlmevalkit``).

    The same leave-one-out rule as :func:`vqaudit.scoring.official.vqa_accuracy`
    (:func:`~vqaudit.scoring.official.leave_one_out_score`), but each distinct string is normalized once
    (memoized). Equality with the official function is tested on every row of
    the TextVQA fixture.
    """

    def score(prediction: str, answers: Sequence[str]) -> float:
        if isinstance(answers, str) or not answers or (need_ten and len(answers) != 10):
            return vqa_accuracy(prediction, answers, variant="mmf_textvqa" if need_ten else "vlmevalkit")
        return leave_one_out_score(norm(prediction), list(map(norm, answers)))

    return score


def _anls_paper(prediction: str, answers: Sequence[str]) -> float:
    """:func:`vqaudit.scoring.official.anls` with ``variant="paper"`` (threshold 0.5): the same float.

    A tuple of strings skips the argument checks, and the distance is asked with ``score_cutoff=0.5``: rapidfuzz
    then returns the same ``lev / max len`` up to 0.5 and 1.0 above it (documented), both of which score as
    ``anls`` scores them (``1 - NL`` below 0.5, else 0), while it can stop early on a hopeless pair. Anything else
    goes to ``anls`` itself. Equality is tested on every row of the DocVQA fixture.
    """
    if type(answers) is tuple and answers and type(prediction) is str:
        pred = prediction.lower().strip()
        if len(answers) == 1:
            ref = answers[0]
            if type(ref) is str:
                nl = _normalized_distance(ref.lower().strip(), pred, score_cutoff=0.5)
                return 1.0 - nl if nl < 0.5 else 0.0
        elif all(type(r) is str for r in answers):
            nl = min([_normalized_distance(r.lower().strip(), pred, score_cutoff=0.5) for r in answers])
            return 1.0 - nl if nl < 0.5 else 0.0
    return anls(prediction, answers, variant="paper")


_normalized_distance = Levenshtein.normalized_distance


def _raw_scorer(metric: str, variant: str) -> Callable[[str, Sequence[str]], float]:
    if metric == "vqa_accuracy" and variant == "mmf_textvqa":
        return _memo_vqa(_evalai_memo, True)
    if metric == "vqa_accuracy" and variant == "vlmevalkit":
        return _memo_vqa(_vqaeval_memo, False)
    if metric == "vqa_accuracy":
        return lambda p, a: vqa_accuracy(p, a, variant=variant)  # type: ignore[arg-type]
    if metric == "anls" and variant == "paper":
        return _anls_paper
    if metric == "anls":
        return lambda p, a: anls(p, a, variant=variant)  # type: ignore[arg-type]
    if metric == "relaxed_accuracy":
        return lambda p, a: relaxed_accuracy(p, a, variant=variant)  # type: ignore[arg-type]
    if metric == "exact_match":
        return lambda p, a: exact_match(p, a, variant=variant)  # type: ignore[arg-type]
    return mocr_containment
