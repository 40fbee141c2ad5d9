"""Residual-cue audit for photo groups: flag groups whose M view still hints at the answer; stratified metrics.

Seed 000 §6.2 and appendix C: a mask can leave residual cues (a masked box on the left still tells a model the
answer "left"); the paper reports metrics without the 376 of 1,000 GQA groups whose original answers are spatial
terms, as a sensitivity analysis. Reasons a group is flagged (:func:`residual_cues`):

- ``spatial_answer``: the original answer is a spatial term (:data:`SPATIAL_TERMS`), the paper's stratum;
- ``mask_position``: the program reads the position (``hposition``/``vposition``) of a masked object;
- ``mask_relation``: the program tests a geometric relation (:data:`GEOMETRIC`) between masked objects, which the
  masks' own layout shows;
- ``mask_size``: the program reads the size attribute of a masked object, which the mask's size shows;
- ``mask_count``: a count equals the number of separate masks (connected groups of overlapping rectangles).

The group meta holds ``spatial_answer`` (bool), ``residual_cue`` (any reason) and ``residual_cue_reasons``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.metrics import METRIC_KEYS, grouped
from vqaudit.schema import Group, Outcome, PhotoGroupMeta
from vqaudit.scoring.answers import normalize_text
from vqaudit.suites.photos.gqa import split_argument
from vqaudit.suites.photos.graph import Question
from vqaudit.suites.photos.masks import Rect

SPATIAL_TERMS = frozenset(
    {
        "left",
        "right",
        "top",
        "bottom",
        "middle",
        "center",
        "centre",
        "above",
        "below",
        "front",
        "behind",
        "upper",
        "lower",
        "side",
        "near",
        "far",
        "inside",
        "outside",
        "to the left of",
        "to the right of",
        "on the left",
        "on the right",
        "in front of",
        "next to",
        "on top of",
        "under",
        "beneath",
        "beside",
    }
)
"""Answers that name a place in the image (seed 000 §6.2: "left, right, top, bottom, ...")."""

GEOMETRIC = frozenset(
    {
        "to the left of",
        "to the right of",
        "above",
        "below",
        "next to",
        "on top of",
        "under",
        "in front of",
        "behind",
        "beside",
        "near",
    }
)
"""Relations that a mask layout alone can show."""

STRATA = ("spatial_answer", "residual_cue")


def _components(rects: Sequence[Rect]) -> int:
    parent = list(range(len(rects)))

    def find(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i, a in enumerate(rects):
        for j in range(i):
            b = rects[j]
            if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                parent[find(i)] = find(j)
    return len({find(i) for i in range(len(rects))})


def residual_cues(question: Question, answer: str, m_rects: Sequence[Rect]) -> tuple[str, ...]:
    """The reasons (module docstring, in that order) a group's M view may leave the answer recoverable.

    Args:
        question: the group's question (its program's steps are inspected).
        answer: the original answer.
        m_rects: the M view's mask rectangles (every dependency object is masked).
    """
    reasons = []
    if normalize_text(answer) in SPATIAL_TERMS:
        reasons.append("spatial_answer")
    kinds = set()
    for step in question.program:
        op, _, kind = step.operation.partition(" ")
        body = split_argument(step.argument)[0]
        if op == "query" and not kind:
            kind = body
        if kind in ("hposition", "vposition") or (op == "filter" and body in SPATIAL_TERMS):
            kinds.add("mask_position")
        if (op == "relate" or kind == "rel") and any(
            r.strip() in GEOMETRIC for r in (body.split(",")[1].split("|") if "," in body else [])
        ):
            kinds.add("mask_relation")
        if kind == "size":
            kinds.add("mask_size")
        if op == "count" and answer.isdigit() and int(answer) == _components(m_rects):
            kinds.add("mask_count")
    reasons += [k for k in ("mask_position", "mask_relation", "mask_size", "mask_count") if k in kinds]
    return tuple(reasons)


def _flags(groups: Iterable[Group] | Mapping[str, Mapping[str, Any]], stratum: str) -> dict[str, bool]:
    if not isinstance(groups, Mapping):
        return {g.group_id: bool(getattr(PhotoGroupMeta.of(g), stratum)) for g in groups}
    out = {}
    for gid, meta in groups.items():
        if stratum not in meta:
            raise VqauditError(
                f"groups.jsonl: group {gid!r}, field 'meta.{stratum}': missing (rebuild the benchmark "
                "with `vqaudit build photos`)"
            )
        out[gid] = bool(meta[stratum])
    return out


def stratified_metrics(
    outcomes: Sequence[Outcome],
    groups: Iterable[Group] | Mapping[str, Mapping[str, Any]],
    *,
    stratum: str = "spatial_answer",
    n_draws: int = 10_000,
    seed: int = 0,
) -> dict[str, Any]:
    """Answerability metrics of photo outcomes on all groups, without the flagged stratum, and on it alone.

    Seed 000 §6.2 / Table 9: excluding the 376 spatial-answer groups of 1,000 leaves 624 (1,872 views). The
    three parts are strata of :func:`vqaudit.metrics.grouped`: the photo groups are resampled once and every
    part is scored on the same draws (seed 000 §4), so the "all" part is exactly the photos entry of
    ``metrics.json`` and the parts can be compared by a paired difference.

    Args:
        outcomes: scored views (only ``source == "photos"`` outcomes are used).
        groups: the benchmark's groups (or ``{group_id: meta}``); each meta must hold the ``stratum`` flag.
        stratum: ``"spatial_answer"`` (the paper's) or ``"residual_cue"`` (any reason of :func:`residual_cues`).
        n_draws: bootstrap draws of the photo groups, shared by the three parts (seed 000 §4: 10,000).
        seed: seed of the draws.

    Returns:
        ``{"stratum", "n_groups", "n_flagged", "all", "without", "only"}``: each metrics entry has the shape of
        the photos entry of :func:`vqaudit.metrics.answerability_metrics` (None when its part has no groups).

    Raises:
        VqauditError: an unknown stratum, no photo outcomes, or a scored group missing from ``groups``.
    """
    if stratum not in STRATA:
        raise VqauditError(f"unknown stratum {stratum!r}; choose one of {', '.join(STRATA)}")
    photos = [o for o in outcomes if o.source == "photos"]
    if not photos:
        raise VqauditError("no photo outcomes to stratify")
    flags = _flags(groups, stratum)
    missing = sorted({o.group_id for o in photos} - set(flags))
    if missing:
        raise VqauditError(f"outcomes name groups not in the benchmark: {missing[:5]}")

    table = grouped(
        METRIC_KEYS,
        photos,
        by=lambda o: ("all", "only" if flags[o.group_id] else "without"),
        n_draws=n_draws,
        seed=seed,
    )
    parts = {s.key: s.as_dict() for s in table.strata}
    scored = {o.group_id for o in photos}
    return {
        "stratum": stratum,
        "n_groups": len(scored),
        "n_flagged": sum(flags[g] for g in scored),
        "all": parts["all"],
        "without": parts.get("without"),
        "only": parts.get("only"),
    }


def mask_reaction(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Abstention rate per photo state, and the mask effect ``abstain(matched) − abstain(original)``.

    The ``matched`` view (appearance-matched control) carries the same masks as M, moved off the evidence: a model
    that abstains there reacts to the mask itself, not to missing evidence.

    Returns:
        ``{"abstain_rate": {state: rate}, "n_views": {state: n}, "mask_effect": float | None}`` (rates in [0, 1];
        invalid replies count as not abstaining).
    """
    counts: dict[str, list[int]] = {}
    for o in outcomes:
        if o.source == "photos":
            c = counts.setdefault(o.state, [0, 0])
            c[0] += o.decision == "abstain"
            c[1] += 1
    rates = {s: c[0] / c[1] for s, c in sorted(counts.items())}
    effect = rates["matched"] - rates["original"] if "matched" in rates and "original" in rates else None
    return {"abstain_rate": rates, "n_views": {s: c[1] for s, c in sorted(counts.items())}, "mask_effect": effect}
