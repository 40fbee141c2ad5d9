"""Grouped metrics: hand-computed strata on a designed outcome set, and the one bootstrap shared by every stratum.

Definitions from seed 000 §4: Bk is the share of groups whose every view has a correct decision, Jk the share of
groups whose every view meets its obligation (supported answered correctly, negative abstained), Ebal the mean
of supported rejection and EU. Intervals: groups resampled with replacement, the same draws for every comparison.
"""

from __future__ import annotations

import numpy as np
import pytest

from vqaudit.errors import VqauditError
from vqaudit.metrics import answerability_metrics, draw_weights, grouped, percentile_interval
from vqaudit.schema import Outcome

from .conftest import LAYOUTS, make_outcome

KIND = {"charts-1": "bar", "charts-2": "bar", "charts-3": "line", "charts-4": "line"}


def _designed() -> list[Outcome]:
    """Four chart groups (original, S, C supported; M, I negative), two per chart kind:

    - charts-1 (bar): every view right;
    - charts-2 (bar): the M view answered (a false acceptance: decision wrong);
    - charts-3 (line): the C view answered with a wrong value (decision right, task wrong);
    - charts-4 (line): every view right.
    """
    out = []
    for g in KIND:
        for state, obligation in LAYOUTS["charts"]:
            decision = "answer" if obligation == "answer" or (g == "charts-2" and state == "M") else "abstain"
            right = not (g == "charts-3" and state == "C")
            out.append(
                make_outcome(
                    f"{g}-{state}",
                    g,
                    state,
                    obligation,
                    decision,  # type: ignore[arg-type]
                    answer="7" if decision == "answer" else None,
                    answer_correct=right,
                )
            )
    return out


def test_hand_computed_strata_by_chart_kind() -> None:
    table = grouped(("Jk", "Bk", "Ebal", "EU"), _designed(), by=lambda o: KIND[o.group_id], n_draws=0)
    assert [s.key for s in table.strata] == ["bar", "line"]
    bar, line = table["bar"], table["line"]
    assert (bar.n_groups, bar.n_views, line.n_groups, line.n_views) == (2, 10, 2, 10)
    # bar: charts-1 meets everything, charts-2 fails a decision: Bk = Jk = 1/2; EU = 1 of 4 negative views
    # answered; no supported view rejected, so Ebal = (0 + 1/4) / 2.
    assert bar.values == {"Jk": 0.5, "Bk": 0.5, "Ebal": 0.125, "EU": 0.25}
    # line: every decision right (Bk = 1); charts-3's wrong C answer fails the task (Jk = 1/2); Ebal = 0.
    assert line.values == {"Jk": 0.5, "Bk": 1.0, "Ebal": 0.0, "EU": 0.0}
    assert bar.ci == dict.fromkeys(("Jk", "Bk", "Ebal", "EU"))  # no draws, no intervals


def test_hand_computed_strata_by_state() -> None:
    table = grouped(
        ("Jk", "Bk", "Ebal"), _designed(), by=lambda o: o.state, order=("original", "S", "C", "M", "I"), n_draws=0
    )
    assert [s.key for s in table.strata] == ["original", "S", "C", "M", "I"]
    # per state, Jk and Bk are over each group's view in that state: C has 4 right decisions and 3 right
    # answers; M has 3 abstentions of 4. Ebal needs both obligations, which no single state holds.
    assert table["C"].values == {"Jk": 0.75, "Bk": 1.0, "Ebal": None}
    assert table["M"].values == {"Jk": 0.75, "Bk": 0.75, "Ebal": None}
    assert table["original"].values == {"Jk": 1.0, "Bk": 1.0, "Ebal": None}
    assert (table["M"].n_groups, table["M"].n_views) == (4, 4)


def test_the_whole_stratum_is_the_source_entry() -> None:
    """A stratum holding every view is drawn exactly like :func:`answerability_metrics` (same groups, draws)."""
    outcomes = _designed()
    table = grouped(("Jk", "Bk", "Ebal"), outcomes, by=lambda o: ("all", KIND[o.group_id]), n_draws=500, seed=3)
    source = answerability_metrics(outcomes, n_draws=500, seed=3)["charts"]
    for key in ("Jk", "Bk", "Ebal"):
        assert table["all"].values[key] == source[key]
        assert table["all"].ci[key] == source["ci"][key]


def test_one_bootstrap_for_every_stratum() -> None:
    """Every stratum is weighted by the same draw: the paired difference is computed from the draws by hand.

    Draw d gives group g the weight w[d, g] (its count in the resample, :func:`draw_weights`). Under it,
    Jk(bar) = w1 / (w1 + w2) (charts-1 meets everything, charts-2 does not) and Jk(line) = w4 / (w3 + w4); a draw
    with no group of a kind leaves that kind undefined and out of the percentiles.
    """
    n = 2000
    table = grouped("Jk", _designed(), by=lambda o: KIND[o.group_id], n_draws=n, seed=7)
    w = draw_weights(4, n, 7).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        jk_bar = w[:, 0] / (w[:, 0] + w[:, 1])
        jk_line = w[:, 3] / (w[:, 2] + w[:, 3])
    np.testing.assert_array_equal(table.draws["bar"]["Jk"], jk_bar)
    np.testing.assert_array_equal(table.draws["line"]["Jk"], jk_line)
    point, lo, hi = table.difference("bar", "line", "Jk")
    expect_lo, expect_hi = percentile_interval(jk_bar - jk_line)
    assert point == 0.0
    assert (lo, hi) == (float(expect_lo), float(expect_hi))
    lo_bar, hi_bar = percentile_interval(jk_bar)
    assert table["bar"].ci["Jk"] == [float(lo_bar), float(hi_bar)]
    assert table.difference("bar", "bar", "Jk") == (0.0, 0.0, 0.0)  # one stratum against itself, same draws


def test_refusals() -> None:
    outcomes = _designed()
    with pytest.raises(VqauditError, match="unknown metric"):
        grouped("Jq", outcomes, by=lambda o: o.state)
    with pytest.raises(VqauditError, match=r"strata \['line'\] are not in the order given"):
        grouped("Jk", outcomes, by=lambda o: KIND[o.group_id], order=("bar",))
    with pytest.raises(VqauditError, match="non-empty string"):
        grouped("Jk", outcomes, by=lambda o: "", n_draws=0)
    with pytest.raises(VqauditError, match="one source at a time"):
        grouped(
            "Jk",
            [*outcomes, make_outcome("p-M", "p", "M", "abstain", "abstain", source="photos")],
            by=lambda o: o.state,
        )
    with pytest.raises(VqauditError, match="undefined in stratum 'M'"):
        grouped("Ebal", outcomes, by=lambda o: o.state, n_draws=0).difference("M", "C", "Ebal")
