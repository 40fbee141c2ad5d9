r"""The short-answer benchmark table: one :class:`BenchmarkSpec` row holds every fact of a benchmark.

A row names the benchmark's gold loader, the layout of its gold file (how it is recognised, for the refusal of
another benchmark's gold), the answers per question its gold holds, whether the audit needs gold, its official
metric and default variant, and whether the answerability metrics apply. Nothing else in the package lists
benchmarks: :func:`detect_layout`, the loaders' layout check (:mod:`.gold_layouts`) and the join's gold-shape check
(:func:`vqaudit.shortanswer.join.gold_shape_notes`) read the rows.

Benchmark -> metric (seed 002 §4 "Datasets"; the reference scorers are cited in
:mod:`vqaudit.scoring.official`):

============================  ====================  ==================  =======================================
name                          metric                default variant     published number reproduced from
============================  ====================  ==================  =======================================
``textvqa``                   VQA accuracy          ``mmf_textvqa``     LLaVA-1.5-13B val 61.25 / 61.3
``vizwiz``                    VQA accuracy          ``vizwiz``          (test gold not public: failure notes only)
``stvqa``                     ANLS                  ``paper``
``docvqa``, ``infovqa``       ANLS                  ``paper``           mPLUG-Owl DocVQA val ANLS 0.41 (x100)
``chartqa``, ``chartqa-human``  relaxed accuracy    ``pix2struct``      VILA1.5-13B 42.88 / 74.56 (``vlmevalkit``)
``chartqa-machine``
============================  ====================  ==================  =======================================

The metrics themselves (names, variants, default variants, scorers) are the one registry in
:mod:`vqaudit.scoring.registry`; this module maps benchmark names onto it. A new benchmark is one loader (a
function ``(Path) -> list[GoldItem]``, cited by ``"module:function"`` so this table imports no loader) and one
row given to :func:`register_benchmark` or added to :data:`BENCHMARKS`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vqaudit.errors import VqauditError
from vqaudit.scoring.registry import default_variant, official_scorer

if TYPE_CHECKING:
    from vqaudit.shortanswer.records import GoldItem

__all__ = [
    "BENCHMARKS",
    "BenchmarkSpec",
    "GoldLayout",
    "detect_layout",
    "get_benchmark",
    "get_layout",
    "load_gold",
    "register_benchmark",
    "resolve_metric",
]


@dataclass(frozen=True)
class GoldLayout:
    """How one benchmark's gold file looks (several benchmarks may share a layout: the ChartQA splits).

    Attributes:
        id: layout id; also the ``--benchmark`` name suggested for a file of this layout.
        title: the benchmark's name as its authors write it ("TextVQA").
        described: what its gold file holds, for messages ("a 'data' list of rows with ...").
        detect: ``"module:function"`` of ``detect(first, data) -> str | None``: ``first`` is the first JSON
            object row of the file, ``data`` the parsed file; returns the evidence ("row 1 has 'imgname'") when
            the file has this layout, else None.
    """

    id: str
    title: str
    described: str
    detect: str


@dataclass(frozen=True)
class BenchmarkSpec:
    """One short-answer benchmark: every fact the audit needs of it.

    Attributes:
        name: benchmark name as given to ``--benchmark`` (lower case).
        metric: its official metric, a name of :data:`vqaudit.scoring.registry.METRICS`.
        variant: the metric's variant that reproduces the benchmark's own scorer.
        loader: ``"module:function"`` of its gold loader, ``(Path) -> list[GoldItem]`` raising VqauditError
            naming the file, row and field; "" when it has no gold loader.
        layout: the layout of its gold file (None: no layout check).
        answers: the most answers per question its gold may hold: 10 for the 10-annotator VQA-style gold (TextVQA,
            VizWiz; ST-VQA, whose loader reads the same ``question_id`` layout), None for a few at most. A gold with
            10 answers on most rows is refused for a benchmark whose row says few.
        gold_required: the audit refuses predictions without gold (a gold file or gold embedded in the
            predictions); False where gold is not public (VizWiz test) and the failure notes are all there is.
        answerability: the gold marks unanswerable questions and the audit reports the answerability metrics
            (:mod:`vqaudit.scoring.unanswerable`: precision, recall and F1 of "unanswerable", average precision
            when the predictions carry a score).
    """

    name: str
    metric: str
    variant: str
    loader: str = ""
    layout: GoldLayout | None = None
    answers: int | None = None
    gold_required: bool = True
    answerability: bool = False


_LOADERS = "vqaudit.shortanswer.loaders"
_LAYOUTS = "vqaudit.shortanswer.gold_layouts"

TEXTVQA = GoldLayout(
    "textvqa",
    "TextVQA",
    "a 'data' list of rows with 'question_id', 'question', 'image_id' and the 10 annotator 'answers'",
    f"{_LAYOUTS}:looks_textvqa",
)
STVQA = GoldLayout(
    "stvqa",
    "ST-VQA",
    "a 'data' list of rows with 'question_id', 'question', 'answers' and 'file_name'",
    f"{_LAYOUTS}:looks_stvqa",
)
DOCVQA = GoldLayout(
    "docvqa", "DocVQA", "a 'data' list of rows with 'questionId', 'question' and 'answers'", f"{_LAYOUTS}:looks_docvqa"
)
INFOVQA = GoldLayout(
    "infovqa",
    "InfographicVQA",
    "a 'data' list of rows with 'questionId', 'question', 'answers' and 'answer_type'",
    f"{_LAYOUTS}:looks_infovqa",
)
CHARTQA = GoldLayout(
    "chartqa", "ChartQA", "a list of rows with 'imgname', 'query' and 'label'", f"{_LAYOUTS}:looks_chartqa"
)
VIZWIZ = GoldLayout(
    "vizwiz",
    "VizWiz",
    "a list of rows with 'image', 'question', 'answerable', 'answer_type' and "
    "10 'answers' objects ('answer', 'answer_confidence')",
    f"{_LAYOUTS}:looks_vizwiz",
)

BENCHMARKS: dict[str, BenchmarkSpec] = {
    b.name: b
    for b in (
        BenchmarkSpec("textvqa", "vqa_accuracy", "mmf_textvqa", f"{_LOADERS}:load_textvqa", TEXTVQA, answers=10),
        BenchmarkSpec(
            "vizwiz",
            "vqa_accuracy",
            "vizwiz",
            f"{_LOADERS}:load_vizwiz",
            VIZWIZ,
            answers=10,
            gold_required=False,
            answerability=True,
        ),
        BenchmarkSpec("stvqa", "anls", "paper", f"{_LOADERS}:load_stvqa", STVQA, answers=10),
        BenchmarkSpec("docvqa", "anls", "paper", f"{_LOADERS}:load_docvqa", DOCVQA),
        BenchmarkSpec("infovqa", "anls", "paper", f"{_LOADERS}:load_infovqa", INFOVQA),
        BenchmarkSpec("chartqa", "relaxed_accuracy", "pix2struct", f"{_LOADERS}:load_chartqa", CHARTQA),
        BenchmarkSpec("chartqa-human", "relaxed_accuracy", "pix2struct", f"{_LOADERS}:load_chartqa_human", CHARTQA),
        BenchmarkSpec("chartqa-machine", "relaxed_accuracy", "pix2struct", f"{_LOADERS}:load_chartqa_machine", CHARTQA),
    )
}
"""Benchmark name -> row. The order of the layouts here is the order :func:`detect_layout` tries them in."""


MC_BENCHMARKS = ("mmbench", "mmmu", "mathvista", "mc")
"""The multiple-choice layouts ``vqaudit audit`` also takes (:mod:`vqaudit.shortanswer.multichoice`)."""


def register_benchmark(spec: BenchmarkSpec) -> None:
    """Add (or replace) one row of the benchmark table (a plugin or a test)."""
    BENCHMARKS[spec.name] = spec


def get_benchmark(name: str) -> BenchmarkSpec:
    """Return the spec of a benchmark name. Raises VqauditError listing the known names."""
    spec = BENCHMARKS.get(name.lower())
    if spec is None:
        raise VqauditError(f"unknown benchmark {name!r}; known: {', '.join(BENCHMARKS)}")
    return spec


def _resolve(target: str) -> Callable[..., Any]:
    module, _, function = target.partition(":")
    fn: Callable[..., Any] = getattr(importlib.import_module(module), function)
    return fn


def layouts() -> list[GoldLayout]:
    """The distinct gold layouts of the table's rows, in row order."""
    seen: dict[str, GoldLayout] = {}
    for spec in BENCHMARKS.values():
        if spec.layout is not None and spec.layout.id not in seen:
            seen[spec.layout.id] = spec.layout
    return list(seen.values())


def get_layout(layout_id: str) -> GoldLayout:
    """The layout of a layout id (a row's ``layout.id``). Raises VqauditError for an unknown one."""
    for layout in layouts():
        if layout.id == layout_id:
            return layout
    raise VqauditError(f"unknown gold layout {layout_id!r}; known: {', '.join(x.id for x in layouts())}")


def detect_layout(data: Any) -> tuple[str, str] | None:
    """Which benchmark's gold layout a parsed gold file has, judged from its first row (and ``dataset_name``).

    Each layout of the table's rows is asked in row order (:attr:`GoldLayout.detect`); the first that
    recognises the file wins.

    Args:
        data: the parsed JSON of a gold file (an object with a ``data`` list, or a list).

    Returns:
        ``(layout, evidence)`` with ``layout`` a layout id and ``evidence`` the keys that tell (e.g. ``"row 1
        has 'questionId' and 'answer_type'"``), or None when nothing tells (then every loader whose layout does
        not contradict it accepts the file).
    """
    records = data.get("data") if isinstance(data, dict) else data
    first = next((r for r in records if isinstance(r, dict)), None) if isinstance(records, list) else None
    if first is None:
        return None
    for layout in layouts():
        evidence = _resolve(layout.detect)(first, data)
        if evidence is not None:
            return layout.id, str(evidence)
    return None


def load_gold(path: Path, benchmark: str) -> list[GoldItem]:
    """Load a gold file with the loader of ``benchmark``'s row.

    Raises:
        VqauditError: an unknown benchmark, a benchmark without a gold loader, or a malformed file (naming the
            file, row and field).
    """
    spec = get_benchmark(benchmark)
    if not spec.loader:
        with_gold = ", ".join(name for name, row in BENCHMARKS.items() if row.loader)
        raise VqauditError(f"no gold layout for benchmark {benchmark!r}; known: {with_gold}")
    items: list[GoldItem] = _resolve(spec.loader)(path)
    return items


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
