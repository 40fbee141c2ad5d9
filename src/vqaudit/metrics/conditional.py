"""Common-state comparison, conditional disagreement and supported-answer counts of one answerability source.

Seed 000 appendix B ("Full metrics and sensitivity analyses") lists, beside Jk and Bk:

- the **common-state comparison**: Bk and Jk recomputed on the views in the states every source shares, keeping
  each source's questions and intervention mechanism (the paper's ``B_F^{SM}``: 86.1%, 47.4% and 39.9% on PlotQA,
  CLEVR and GQA). The paper's subscript names the states ``S`` and ``M``; the photo source's answer-preserving
  state is its control mask (a box outside the question's dependencies), so ``control`` is read as ``S``
  (:data:`COMMON_STATES`). A group's common-state view set is its ``S`` (or control) view and its ``M`` view.
- **conditional disagreement**: among groups whose every decision is correct, the share with a wrong supported
  answer, ``(Bk - Jk) / Bk`` (§4: "Bk − Jk is the share of groups with correct decisions but incorrect supported
  answers"; §5.2 and appendix B quote it as "265 of 835 chart groups");
- the **supported-answer counts** of §5.2 ("2,473 correct answers, rejects 49, and returns 478 incorrect
  numerical values across 3,000 supported chart views"): supported views answered correctly, not answered
  (abstained or invalid), answered with a wrong non-null value (the mismatches) and answered with a null answer.

All intervals come from one group bootstrap of the source (:func:`vqaudit.metrics.grouped`), seed 000 §4.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from vqaudit.metrics.bootstrap import CONFIDENCE, DEFAULT_DRAWS, percentile_interval
from vqaudit.metrics.grouped import grouped
from vqaudit.schema import Outcome

COMMON_STATES = {"S": "S", "control": "S", "M": "M"}
"""State name -> the paper's common state (seed 000 appendix B, ``SM``); other states are left out."""

COMMON_KEY = "SM"
"""The stratum name of the common states, as the paper writes it."""

PAPER_NAMES = {"charts": ("J5", "B5"), "scenes": ("J4", "B4"), "photos": ("J3", "B3")}
"""The paper's per-source names of Jk and Bk (k = views per group: 5 chart, 4 scene, 3 photo states)."""


def _opt(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def conditional_diagnostics(
    outcomes: Sequence[Outcome], *, n_draws: int = DEFAULT_DRAWS, seed: int = 0, confidence: float = CONFIDENCE
) -> dict[str, Any]:
    """The appendix-B entries of one source's ``diagnostics.json`` (seed 000 §4, §5.2, appendix B).

    Args:
        outcomes: scored views of one source.
        n_draws: group-bootstrap draws (0: no intervals).
        seed: seed of the draws (the same draws as the source's metrics for equal seeds and group sets).
        confidence: interval coverage in (0, 1).

    Returns:
        ``{"common_state": {...}, "conditional_disagreement": {...}, "supported_answers": {...}}``:
        ``common_state`` has ``states`` (the source's states read as S and M), ``Bk`` and ``Jk`` (fractions in
        [0, 1], or None without common-state views), ``n_groups``, ``n_views`` and ``ci``;
        ``conditional_disagreement`` has ``value`` (``(Bk - Jk) / Bk``, None when no group has every decision
        correct), ``decision_correct_groups``, ``wrong_answer_groups`` and ``ci``; ``supported_answers`` has
        integer counts ``supported``, ``correct``, ``rejected``, ``mismatched``, ``answered_null``
        (``correct + rejected + mismatched + answered_null == supported``).

    Raises:
        VqauditError: what :func:`vqaudit.metrics.grouped` refuses (no outcomes, several sources, duplicated
            views, ``n_draws < 0``).
    """
    g = grouped(
        ("Bk", "Jk"),
        outcomes,
        by=lambda o: ("all", COMMON_KEY) if o.state in COMMON_STATES else "all",
        order=("all", COMMON_KEY),
        n_draws=n_draws,
        seed=seed,
        confidence=confidence,
    )
    everything = g["all"]
    n_groups = everything.n_groups
    bk, jk = everything.values["Bk"], everything.values["Jk"]
    decision_ok = round((bk or 0.0) * n_groups)
    wrong = decision_ok - round((jk or 0.0) * n_groups)
    cd_ci: list[float] | None = None
    if g.n_draws:
        b_draws, j_draws = g.draws["all"]["Bk"], g.draws["all"]["Jk"]
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.where(b_draws > 0, (b_draws - j_draws) / b_draws, np.nan)
        lo, hi = percentile_interval(ratio, confidence=confidence)
        if decision_ok and not np.isnan(lo):
            cd_ci = [float(lo), float(hi)]
    common: dict[str, Any] = {
        "states": sorted({o.state for o in outcomes if o.state in COMMON_STATES}),
        "Bk": None,
        "Jk": None,
        "n_groups": 0,
        "n_views": 0,
        "ci": {"Bk": None, "Jk": None},
    }
    if any(s.key == COMMON_KEY for s in g.strata):
        common.update(g[COMMON_KEY].as_dict())
    supported = [o for o in outcomes if o.obligation == "answer"]
    correct = sum(1 for o in supported if o.decision == "answer" and o.answer_correct)
    answered_wrong = [o for o in supported if o.decision == "answer" and not o.answer_correct]
    mismatched = sum(1 for o in answered_wrong if o.answer is not None)
    return {
        "common_state": common,
        "conditional_disagreement": {
            "value": _opt((bk - jk) / bk) if bk and jk is not None else None,
            "decision_correct_groups": decision_ok,
            "wrong_answer_groups": wrong,
            "ci": cd_ci,
        },
        "supported_answers": {
            "supported": len(supported),
            "correct": correct,
            "rejected": sum(1 for o in supported if o.decision != "answer"),
            "mismatched": mismatched,
            "answered_null": len(answered_wrong) - mismatched,
        },
    }
