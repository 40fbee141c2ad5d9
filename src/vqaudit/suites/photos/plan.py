"""Choose the masks of a photo group and keep it only when the labels follow from the scene graph.

States (papers.md; seed 000 §3.1): ``original``; ``control`` (a mask on one object *outside* the program's
dependency set, of similar area, overlapping no dependency box: the answer is kept); ``M`` (masks on every
dependency box: abstain). The keep rule (docs/photos.md): a masked view *removes* an object when it is a masked
dependency or when at least :data:`REMOVED_COVERAGE` of its box lies under the masks; the program is re-executed
on the scene graph without the removed objects. A question is kept only when for M the answer changes or becomes
undefined (the evidence is gone) and for the control it is unchanged.

The appearance-matched control (seed 000 §7, "appearance-matched controls") moves the M masks, all by one offset,
to a place where they overlap no dependency box and leave the answer unchanged: same number, shapes and sizes
of masks, so a model's reaction to the mask itself can be measured apart from the loss of evidence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vqaudit.suites.photos.gqa import answer_text, dependency_set, execute
from vqaudit.suites.photos.graph import Question, SceneGraph
from vqaudit.suites.photos.masks import Rect, box_overlaps, covered_fraction, mask_rect, raster, rect_area

REMOVED_COVERAGE = 0.5
MAX_AREA_RATIO = 3.0
MATCHED_TRIES = 200


@dataclass(frozen=True)
class MaskedView:
    """One masked view: its rectangles, the objects it removes and the re-executed answer (None: undefined)."""

    rects: tuple[Rect, ...]
    removed: frozenset[str]
    answer: str | None

    def to_json(self) -> dict[str, object]:
        """JSON form for view and group meta."""
        return {"rects": [list(r) for r in self.rects], "removed": sorted(self.removed), "answer": self.answer}


@dataclass(frozen=True)
class Plan:
    """A kept photo group: question, answer, dependency set and its three masked views."""

    question: Question
    answer: str
    dependencies: frozenset[str]
    m: MaskedView
    control: MaskedView
    control_object: str
    area_ratio: float
    matched: MaskedView | None = None


def masked(question: Question, graph: SceneGraph, rects: tuple[Rect, ...], masked_ids: frozenset[str]) -> MaskedView:
    """Re-execute the question with ``masked_ids`` and every object mostly under ``rects`` removed."""
    cover = raster(rects, graph.width, graph.height)
    removed = masked_ids | {o.id for o in graph.objects if covered_fraction(o.box, cover) >= REMOVED_COVERAGE}
    answer = answer_text(execute(question.program, graph.without(removed), question.id).answer)
    return MaskedView(rects, frozenset(removed), answer)


def plan_group(question: Question, graph: SceneGraph) -> Plan | str:
    """The M and control views of a question, or the reason it is rejected.

    Returns:
        A :class:`Plan`, or one of ``"undefined_answer"``, ``"no_dependencies"``, ``"evidence_not_removed"``
        (M leaves the answer unchanged), ``"no_control"`` (no object of similar area, outside the dependencies,
        overlapping no dependency box, whose mask leaves the answer unchanged).
    """
    answer = answer_text(execute(question.program, graph, question.id).answer)
    if answer is None:
        return "undefined_answer"
    deps = dependency_set(question.program, graph)
    if not deps:
        return "no_dependencies"
    by = graph.by_id()
    m_rects = tuple(mask_rect(by[i].box, graph.width, graph.height) for i in sorted(deps))
    m = masked(question, graph, m_rects, deps)
    if m.answer == answer:
        return "evidence_not_removed"
    m_area = int(raster(m_rects, graph.width, graph.height).sum())
    candidates = []
    for o in graph.objects:
        rect = mask_rect(o.box, graph.width, graph.height)
        if o.id in deps or "crowd" in o.attributes or any(box_overlaps(rect, by[d].box) for d in deps):
            continue
        ratio = max(rect_area(rect), m_area) / max(1, min(rect_area(rect), m_area))
        if ratio <= MAX_AREA_RATIO:
            candidates.append((ratio, o.id, rect))
    for ratio, oid, rect in sorted(candidates):
        control = masked(question, graph, (rect,), frozenset({oid}))
        if control.answer == answer:
            return Plan(question, answer, deps, m, control, oid, round(ratio, 4))
    return "no_control"


def matched_control(plan: Plan, graph: SceneGraph, rng: np.random.Generator) -> MaskedView | None:
    """The M masks moved by one offset drawn with ``rng`` (up to :data:`MATCHED_TRIES` draws), or None.

    An offset is accepted when every moved rectangle stays inside the image, overlaps no dependency box, and the
    re-executed answer (objects mostly under the moved masks removed) equals the original answer.
    """
    rects = plan.m.rects
    x0, y0 = min(r[0] for r in rects), min(r[1] for r in rects)
    x1, y1 = max(r[2] for r in rects), max(r[3] for r in rects)
    if x1 - x0 >= graph.width and y1 - y0 >= graph.height:
        return None
    by = graph.by_id()
    for _ in range(MATCHED_TRIES):
        dx = int(rng.integers(-x0, graph.width - x1 + 1))
        dy = int(rng.integers(-y0, graph.height - y1 + 1))
        moved = tuple((a + dx, b + dy, c + dx, d + dy) for a, b, c, d in rects)
        if any(box_overlaps(r, by[i].box) for r in moved for i in plan.dependencies):
            continue
        view = masked(plan.question, graph, moved, frozenset())
        if view.answer == plan.answer:
            return view
    return None
