"""Paired differences between two runs of common-state Bk, Jk and the conditional disagreement (seed 000 §4, App. B).

Designed runs of four chart groups (five views each: original, S, C supported; M, I negative), every figure worked
out by hand below.

Run A (the chart faults of tests/metrics/test_conditional.py): g0 answers C wrongly, g1 answers the original with a
null answer (both: decisions right, task wrong), g2 answers M (decision wrong), g3's S is invalid (decision wrong).
Every view: Bk = 2/4 (g0, g1), Jk = 0/4, conditional disagreement = (2 - 0) / 2 = 1. Common states S and M:
g2 fails M, g3 fails S, g0 and g1 are right on both: Bk = Jk = 2/4.

Run B: g0 answers S wrongly (decision right, task wrong), g2 answers M; g1 and g3 gold. Every view: Bk = 3/4
(g0, g1, g3), Jk = 2/4 (g1, g3), conditional disagreement = (3 - 2) / 3 = 1/3. Common states: g0's S is task-wrong,
g2 fails M: Bk = 3/4, Jk = 2/4.

B - A: common Bk 3/4 - 2/4 = +1/4, common Jk 2/4 - 2/4 = 0, conditional disagreement 1/3 - 1 = -2/3.
"""

from __future__ import annotations

import numpy as np
import pytest

from vqaudit.errors import VqauditError
from vqaudit.metrics import draw_weights
from vqaudit.metrics.conditional import conditional_diagnostics
from vqaudit.metrics.conditional_paired import PAIRED_KEYS, conditional_difference
from vqaudit.schema import Decision, Outcome

from .conftest import LAYOUTS, make_outcome


def _run(faults: dict[tuple[int, str], tuple[Decision, str | None]], n_groups: int = 4) -> list[Outcome]:
    """Gold chart groups except the views in ``faults``: (group, state) -> (decision, answer)."""
    out = []
    for g in range(n_groups):
        for state, obligation in LAYOUTS["charts"]:
            decision, answer = faults.get((g, state), (obligation, "1" if obligation == "answer" else None))
            out.append(
                make_outcome(
                    f"charts-{g}-{state}",
                    f"g{g}",
                    state,
                    obligation,
                    decision,
                    answer=answer,
                    answer_correct=(g, state) not in faults,
                )
            )
    return out


RUN_A = _run(
    {
        (0, "C"): ("answer", "7"),
        (1, "original"): ("answer", None),
        (2, "M"): ("answer", "3"),
        (3, "S"): ("invalid", None),
    }
)
RUN_B = _run({(0, "S"): ("answer", "7"), (2, "M"): ("answer", "3")})


def test_points_by_hand() -> None:
    d = conditional_difference(RUN_A, RUN_B, "charts", n_draws=0)
    got = {k: (d.deltas[k].a, d.deltas[k].b, d.deltas[k].point) for k in PAIRED_KEYS}
    assert got["common_Bk"] == (0.5, 0.75, 0.25)
    assert got["common_Jk"] == (0.5, 0.5, 0.0)
    a, b, point = got["conditional_disagreement"]
    assert a == 1.0 and b == pytest.approx(1 / 3)
    assert point == pytest.approx(-2 / 3)
    assert all(d.deltas[k].ci is None for k in PAIRED_KEYS)  # no draws, no intervals
    assert (d.source, d.n_groups, d.n_draws) == ("charts", 4, 0)


def test_points_agree_with_each_runs_diagnostics() -> None:
    da, db = (conditional_diagnostics(run, n_draws=0) for run in (RUN_A, RUN_B))
    d = conditional_difference(RUN_A, RUN_B, "charts", n_draws=0).deltas
    assert d["common_Bk"].point == db["common_state"]["Bk"] - da["common_state"]["Bk"]
    assert d["common_Jk"].point == db["common_state"]["Jk"] - da["common_state"]["Jk"]
    cd_a, cd_b = da["conditional_disagreement"]["value"], db["conditional_disagreement"]["value"]
    assert d["conditional_disagreement"].point == pytest.approx(cd_b - cd_a)


def test_interval_is_the_paired_percentiles_of_the_shared_draws() -> None:
    d = conditional_difference(RUN_A, RUN_B, "charts", n_draws=400, seed=3).deltas
    for key in PAIRED_KEYS:
        ci, point = d[key].ci, d[key].point
        assert ci is not None and point is not None
        assert ci[0] <= point <= ci[1], key
    # By hand from the draws (4 groups, 400 draws, seed 3): per group g of the canonical order g0..g3,
    # common Bk of A is right on g0, g1 and of B on g0, g1, g3; common Jk of both on g1 plus A's g0 and B's g3.
    w = draw_weights(4, 400, 3).astype(np.float64)
    common_bk = (w @ [0, 0, 0, 1]) / 4  # B gains g3, loses nothing
    common_jk = (w @ [-1, 0, 0, 1]) / 4  # B loses g0 (its S answer is wrong), gains g3
    dok_a, tok_a = w @ [1, 1, 0, 0], w @ [0, 0, 0, 0]
    dok_b, tok_b = w @ [1, 1, 0, 1], w @ [0, 1, 0, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        cd = np.where((dok_a > 0) & (dok_b > 0), (dok_b - tok_b) / dok_b - (dok_a - tok_a) / dok_a, np.nan)
    for key, draws in (("common_Bk", common_bk), ("common_Jk", common_jk), ("conditional_disagreement", cd)):
        assert list(d[key].ci or ()) == pytest.approx(list(np.nanpercentile(draws, [2.5, 97.5]))), key
    # common Bk: B is never below A in any draw (it only gains g3), so the interval lies in [0, 1]
    assert d["common_Bk"].ci is not None and d["common_Bk"].ci[0] >= 0.0


def test_identical_runs_give_exact_zeros() -> None:
    d = conditional_difference(RUN_A, list(reversed(RUN_A)), "charts", n_draws=500, seed=9).deltas
    for key in PAIRED_KEYS:
        assert (d[key].point, d[key].ci) == (0.0, (0.0, 0.0)), key


def test_undefined_conditional_disagreement_has_no_point_or_interval() -> None:
    # every M view answered: no group has every decision right, so (Bk - Jk) / Bk is undefined in B
    every_m = _run({(g, "M"): ("answer", "3") for g in range(4)})
    d = conditional_difference(RUN_A, every_m, "charts", n_draws=200).deltas
    cd = d["conditional_disagreement"]
    assert (cd.a, cd.b, cd.point, cd.ci) == (1.0, None, None, None)
    assert d["common_Bk"].point == -0.5  # 0/4 - 2/4


def test_runs_of_other_groups_or_views_are_refused() -> None:
    with pytest.raises(VqauditError, match="same groups"):
        conditional_difference(RUN_A, _run({}, n_groups=3), "charts", n_draws=10)
    extra = make_outcome("charts-0-extra", "g0", "S", "answer", "abstain")
    with pytest.raises(VqauditError, match="same views"):
        conditional_difference(RUN_A, [*RUN_B, extra], "charts", n_draws=10)
    with pytest.raises(VqauditError, match="no outcomes for source"):
        conditional_difference(RUN_A, RUN_B, "scenes", n_draws=10)
    with pytest.raises(VqauditError, match="confidence"):
        conditional_difference(RUN_A, RUN_B, "charts", n_draws=0, confidence=1.0)
