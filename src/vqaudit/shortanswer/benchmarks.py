r"""Which official metric each benchmark name uses, and the one harness metric the audit must reproduce.

Benchmark -> metric (seed 002 §4 "Datasets"; the reference scorers are cited in
:mod:`vqaudit.scoring.official`):

============================  ====================  ==================  =======================================
name                          metric                default variant     published number reproduced from
============================  ====================  ==================  =======================================
``textvqa``                   VQA accuracy          ``mmf_textvqa``     LLaVA-1.5-13B val 61.25 / 61.3
``vizwiz``                    VQA accuracy          ``vqaeval``         (test gold not public: failure notes only)
``stvqa``                     ANLS                  ``paper``
``docvqa``, ``infovqa``       ANLS                  ``paper``           mPLUG-Owl DocVQA val ANLS 0.41 (x100)
``chartqa``, ``chartqa-human``  relaxed accuracy    ``pix2struct``      VILA1.5-13B 42.88 / 74.56 (``vlmevalkit``)
``chartqa-machine``
============================  ====================  ==================  =======================================

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

from vqaudit.errors import VqauditError
from vqaudit.scoring.official import (
    ANLS_VARIANTS,
    EXACT_MATCH_VARIANTS,
    RELAXED_VARIANTS,
    VQA_VARIANTS,
    anls,
    exact_match,
    relaxed_accuracy,
    vqa_accuracy,
)
from vqaudit.scoring.vqa_normalize import fast_evalai_process, fast_vqaeval_process

METRICS = ("vqa_accuracy", "anls", "relaxed_accuracy", "exact_match", "containment")
METRIC_VARIANTS: dict[str, tuple[str, ...]] = {
    "vqa_accuracy": VQA_VARIANTS,
    "anls": ANLS_VARIANTS,
    "relaxed_accuracy": RELAXED_VARIANTS,
    "exact_match": EXACT_MATCH_VARIANTS,
    "containment": ("mocr",),
}


@dataclass(frozen=True)
class BenchmarkSpec:
    """A benchmark name and its official metric.

    Attributes:
        name: benchmark name as given to ``--benchmark``.
        metric: one of :data:`METRICS`.
        variant: the metric's default (reference-scorer) variant.
        has_gold: False when gold answers are not public (VizWiz test).
    """

    name: str
    metric: str
    variant: str
    has_gold: bool = True


BENCHMARKS: dict[str, BenchmarkSpec] = {
    "textvqa": BenchmarkSpec("textvqa", "vqa_accuracy", "mmf_textvqa"),
    "vizwiz": BenchmarkSpec("vizwiz", "vqa_accuracy", "vqaeval", has_gold=False),
    "stvqa": BenchmarkSpec("stvqa", "anls", "paper"),
    "docvqa": BenchmarkSpec("docvqa", "anls", "paper"),
    "infovqa": BenchmarkSpec("infovqa", "anls", "paper"),
    "chartqa": BenchmarkSpec("chartqa", "relaxed_accuracy", "pix2struct"),
    "chartqa-human": BenchmarkSpec("chartqa-human", "relaxed_accuracy", "pix2struct"),
    "chartqa-machine": BenchmarkSpec("chartqa-machine", "relaxed_accuracy", "pix2struct"),
}


def get_benchmark(name: str) -> BenchmarkSpec:
    """Return the spec of a benchmark name. Raises VqauditError listing the known names."""
    spec = BENCHMARKS.get(name.lower())
    if spec is None:
        raise VqauditError(f"unknown benchmark {name!r}; known: {', '.join(BENCHMARKS)}")
    return spec


_METRIC_DEFAULT_VARIANT = {"containment": "mocr", "anls": "paper", "relaxed_accuracy": "pix2struct",
                           "vqa_accuracy": "vqaeval", "exact_match": "pix2struct"}
"""The variant of a metric given with ``--metric`` but no variant (``vqaudit audit`` and ``vqaudit perturb``)."""


def resolve_metric(benchmark: str, metric: str | None, variant: str | None) -> tuple[str, str]:
    """The official metric and variant an audit or a perturbation run scores with, checked.

    Without overrides, the benchmark's metric and variant; a ``metric`` other than the benchmark's without a
    ``variant`` gets that metric's reference variant (as ``vqaudit audit`` and ``perturb`` do).

    Raises:
        VqauditError: an unknown benchmark, an unknown metric, or a variant the metric does not have.
    """
    spec = get_benchmark(benchmark)
    chosen = metric or spec.metric
    if variant is None:
        variant = spec.variant if chosen == spec.metric else _METRIC_DEFAULT_VARIANT.get(chosen, "")
    official_scorer(chosen, variant)  # raises on an unknown metric or variant
    return chosen, variant


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
        raise VqauditError(f"metric {metric!r} has no variant {variant!r}; "
                           f"expected one of {', '.join(METRIC_VARIANTS[metric])}")
    base = _raw_scorer(metric, variant)
    if memo <= 0:
        return base
    cached: Callable[[str, tuple[str, ...]], float] = lru_cache(maxsize=memo)(base)

    def score(prediction: str, answers: Sequence[str]) -> float:
        return cached(prediction, answers if type(answers) is tuple else tuple(answers))

    return score


_evalai_memo = fast_evalai_process
_vqaeval_memo = fast_vqaeval_process


def _memo_vqa(norm: Callable[[str], str], need_ten: bool) -> Callable[[str, Sequence[str]], float]:
    """VQA accuracy for the variants that always normalize both sides (``mmf_textvqa``, ``vlmevalkit``).

    Same rule and the same floating-point operations as :func:`vqaudit.scoring.official.vqa_accuracy`
    (sequential sum of ``min(1, matches / 3)`` over the leave-one-out positions, then one division), but each
    distinct string is normalized once (memoized). Equality with the official function is tested on every row of
    the TextVQA fixture.
    """

    def score(prediction: str, answers: Sequence[str]) -> float:
        if isinstance(answers, str) or not answers or (need_ten and len(answers) != 10):
            return vqa_accuracy(prediction, answers, variant="mmf_textvqa" if need_ten else "vlmevalkit")
        pred = norm(prediction)
        hits = [norm(a) == pred for a in answers]
        matches = sum(hits)
        total = 0.0
        for hit in hits:
            total += min(1.0, (matches - hit) / 3)
        return total / len(hits)

    return score


def _raw_scorer(metric: str, variant: str) -> Callable[[str, Sequence[str]], float]:
    if metric == "vqa_accuracy" and variant == "mmf_textvqa":
        return _memo_vqa(_evalai_memo, True)
    if metric == "vqa_accuracy" and variant == "vlmevalkit":
        return _memo_vqa(_vqaeval_memo, False)
    if metric == "vqa_accuracy":
        return lambda p, a: vqa_accuracy(p, a, variant=variant)  # type: ignore[arg-type]
    if metric == "anls":
        return lambda p, a: anls(p, a, variant=variant)  # type: ignore[arg-type]
    if metric == "relaxed_accuracy":
        return lambda p, a: relaxed_accuracy(p, a, variant=variant)  # type: ignore[arg-type]
    if metric == "exact_match":
        return lambda p, a: exact_match(p, a, variant=variant)  # type: ignore[arg-type]
    return mocr_containment
