"""Share of variance explained by a grouping (eta squared) of a 0/1 outcome: seed 002 appendix B.

Appendix B ("Why Not Just Numeric versus Text?") compares three coarse groupings of the items by how much of the
variance of an outcome each explains: the contract bucket (:mod:`vqaudit.scoring.contracts`), numeric / text
(:func:`answer_kind`) and the dataset alone. Paper figures: judge false negatives, dataset 0.050, numeric/text
0.033, contract 0.024; benign perturbation flips, contract 0.018, dataset 0.012, numeric/text 0.011.

eta squared is the one-way ANOVA decomposition: for outcomes ``y_i`` in {0, 1} in cells ``g`` with ``n_g``
items of which ``s_g`` are 1 (``N = sum n_g``, ``S = sum s_g``)::

    SS_total   = sum_i (y_i - S/N)^2           = S - S^2/N          (y^2 = y for a 0/1 outcome)
    SS_between = sum_g n_g (s_g/n_g - S/N)^2   = sum_g s_g^2/n_g - S^2/N
    eta^2      = SS_between / SS_total         in [0, 1]; NaN when SS_total = 0 (every outcome equal)

so each cell needs only its ``n`` and ``s``: the readers hold two counts per (grouping, cell), never the rows.

**numeric / text** (:func:`answer_kind`): the item's representative gold (the most frequent answer,
:func:`vqaudit.scoring.contracts.representative_gold`, the one the contract bucket reads) is ``numeric`` when the
canonical layer's number reader (:func:`vqaudit.scoring.canonical.parse_number`: sign, ``$``, thousands
separators, decimals, ``%``, magnitude words, fractions) reads it as a number, else ``text`` (yes/no, dates and
codes are text).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from vqaudit.prompts.perturbations import BENIGN
from vqaudit.scoring.canonical_numbers import parse_number
from vqaudit.scoring.contracts import representative_gold

NUMERIC, TEXT = "numeric", "text"
GROUPINGS: tuple[str, ...] = ("dataset", "numeric_text", "contract")
"""The groupings of appendix B, in the paper's order for judge false negatives."""


def answer_kind(answers: Sequence[str]) -> str:
    """``"numeric"`` when the representative gold reads as a number (module docstring), else ``"text"``."""
    return NUMERIC if parse_number(representative_gold(answers)) is not None else TEXT


@dataclass
class Cells:
    """Per-cell counts of a 0/1 outcome for each grouping: ``counts[grouping][cell] = [n, ones]``."""

    counts: dict[str, dict[str, list[int]]] = field(default_factory=dict)

    def add(self, groups: Mapping[str, str], outcome: bool, n: int = 1) -> None:
        """Count ``n`` items with this outcome into the cell each grouping gives (``grouping -> cell``)."""
        for grouping, cell in groups.items():
            pair = self.counts.setdefault(grouping, {}).setdefault(cell, [0, 0])
            pair[0] += n
            pair[1] += n if outcome else 0

    def merge(self, counts: Mapping[str, Mapping[str, Sequence[int]]]) -> None:
        """Add counts of the same shape (``grouping -> cell -> [n, ones]``), e.g. read from a file."""
        for grouping, cells in counts.items():
            for cell, (n, ones) in cells.items():
                pair = self.counts.setdefault(grouping, {}).setdefault(cell, [0, 0])
                pair[0] += int(n)
                pair[1] += int(ones)


def eta_squared(cells: Mapping[str, Sequence[int]]) -> float:
    """Eta squared of a 0/1 outcome from its cells ``cell -> (n, ones)`` (module docstring); NaN if undefined.

    Raises:
        ValueError: a cell with a negative count or more ones than items.
    """
    total = ones = 0
    between = 0.0
    for cell, (n, s) in cells.items():
        if n < 0 or s < 0 or s > n:
            raise ValueError(f"cell {cell!r}: expected 0 <= ones <= n, got n={n}, ones={s}")
        if n:
            total += n
            ones += s
            between += s * s / n
    if not total:
        return math.nan
    ss_total = ones - ones * ones / total
    if ss_total <= 0.0:
        return math.nan
    return max(0.0, between - ones * ones / total) / ss_total


def benign_flip_cells(
    official: Mapping[str, Mapping[str, float]], groups: Mapping[str, Mapping[str, str]]
) -> dict[str, dict[str, list[int]]]:
    """Appendix B's flip outcome per (question, benign variant) pair, counted per cell of each grouping.

    The outcome is the flip of :func:`vqaudit.metrics.flips.flip_rate`: the question's official correctness
    (score 1) under the benign variant (A1-A5, B1-B2; the B3 control is left out, as from the benign means)
    differs from Base's; only questions scored under both count, as there.

    Args:
        official: ``variant -> qid -> official score`` (Base under ``"Base"``).
        groups: ``grouping -> qid -> cell`` (e.g. ``{"contract": {qid: bucket}, "numeric_text": {...}}``); a
            question missing from a grouping is left out of it.

    Returns:
        ``grouping -> cell -> [pairs, flips]`` (the shape :class:`Cells` holds).
    """
    cells = Cells()
    base = official.get("Base", {})
    for vid in BENIGN:
        scores = official.get(vid, {})
        for qid, score in scores.items():
            if qid in base:
                flipped = (score >= 1.0) != (base[qid] >= 1.0)
                cells.add({g: by_qid[qid] for g, by_qid in groups.items() if qid in by_qid}, flipped)
    return cells.counts
