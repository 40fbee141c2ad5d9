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

The metrics themselves (names, variants, default variants, scorers) are the one registry in
:mod:`vqaudit.scoring.registry`; this module maps benchmark names onto it.
"""

from __future__ import annotations

from dataclasses import dataclass

from vqaudit.errors import VqauditError
from vqaudit.scoring.registry import (
    METRIC_VARIANTS,
    METRICS,
    SHORT_ANSWER_METRICS,
    default_variant,
    mocr_containment,
    official_scorer,
)

__all__ = ["BENCHMARKS", "METRICS", "METRIC_VARIANTS", "SHORT_ANSWER_METRICS", "BenchmarkSpec", "get_benchmark",
           "mocr_containment", "official_scorer", "resolve_metric"]


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


MC_BENCHMARKS = ("mmbench", "mmmu", "mathvista", "mc")
"""The multiple-choice layouts ``vqaudit audit`` also takes (:mod:`vqaudit.shortanswer.multichoice`)."""


def get_benchmark(name: str) -> BenchmarkSpec:
    """Return the spec of a benchmark name. Raises VqauditError listing the known names."""
    spec = BENCHMARKS.get(name.lower())
    if spec is None:
        raise VqauditError(f"unknown benchmark {name!r}; known: {', '.join(BENCHMARKS)}")
    return spec


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
        variant = spec.variant if chosen == spec.metric else default_variant(chosen)
    official_scorer(chosen, variant)  # raises on an unknown metric or variant
    return chosen, variant
