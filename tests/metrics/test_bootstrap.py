from __future__ import annotations

import numpy as np
import pytest

from vqaudit.errors import VqauditError
from vqaudit.metrics import (
    METRIC_KEYS,
    answerability_metrics,
    bootstrap_totals,
    bootstrap_weights,
    clear_weight_cache,
    draw_weights,
    group_counts,
    metrics_from_counts,
    paired_bootstrap_difference,
    paired_difference,
    percentile_interval,
)
from vqaudit.metrics import bootstrap as bootstrap_module
from vqaudit.schema import Outcome

from .conftest import make_outcome, policy_outcomes, random_outcomes


def test_weights_are_group_counts_and_independent_of_chunking() -> None:
    full = np.concatenate(list(bootstrap_weights(7, 53, seed=4)))
    assert full.shape == (53, 7)
    assert (full.sum(axis=1) == 7).all() and (full >= 0).all()
    for chunk in (1, 5, 13, 53, 100):
        assert np.array_equal(np.concatenate(list(bootstrap_weights(7, 53, seed=4, chunk=chunk))), full)
    # More draws extend the same stream: the first rows do not change.
    longer = np.concatenate(list(bootstrap_weights(7, 80, seed=4)))
    assert np.array_equal(longer[:53], full)
    assert not np.array_equal(np.concatenate(list(bootstrap_weights(7, 53, seed=5))), full)
    assert list(bootstrap_weights(7, 0, seed=4)) == []


def test_cached_weights_are_reused_and_match_the_stream() -> None:
    clear_weight_cache()
    w = draw_weights(50, 400, 9)
    assert draw_weights(50, 400, 9) is w  # cached per (n_groups, n_draws, seed)
    assert not w.flags.writeable
    assert np.array_equal(w, np.concatenate(list(bootstrap_weights(50, 400, 9, chunk=37))))
    # Multinomial(G, 1/G) counts: mean 1, variance 1 - 1/G.
    assert w.mean() == pytest.approx(1.0)
    assert w.var() == pytest.approx(1 - 1 / 50, rel=0.05)


def test_streamed_totals_equal_cached_totals(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = group_counts(random_outcomes(2, n_groups=60)).for_source("charts").matrix
    cached = bootstrap_totals(counts, n_draws=700, seed=1)
    monkeypatch.setattr(bootstrap_module, "_CACHE_ELEMENTS", 100)  # force the chunked path
    monkeypatch.setattr(bootstrap_module, "_CHUNK_ELEMENTS", 600)
    streamed = bootstrap_totals(counts, n_draws=700, seed=1)
    assert np.array_equal(cached, streamed)
    weights = np.concatenate(list(bootstrap_weights(60, 700, seed=1)))
    assert np.array_equal(cached, weights.astype(np.float64) @ counts.astype(np.float64))


def test_same_seed_same_intervals_and_seed_matters() -> None:
    outcomes = random_outcomes(21, n_groups=50)
    a = answerability_metrics(outcomes, n_draws=2000, seed=7)
    clear_weight_cache()
    b = answerability_metrics(outcomes, n_draws=2000, seed=7)
    c = answerability_metrics(outcomes, n_draws=2000, seed=8)
    assert a == b
    assert a["charts"]["ci"] != c["charts"]["ci"]


def test_interval_contains_point_estimate() -> None:
    result = answerability_metrics(random_outcomes(1, n_groups=200), n_draws=2000, seed=0)
    for m in result.values():
        for key in METRIC_KEYS:
            value, interval = m[key], m["ci"][key]  # type: ignore[literal-required]
            if value is None:
                assert interval is None
                continue
            assert interval is not None
            lo, hi = interval
            assert 0.0 <= lo <= value <= hi <= 1.0
            if key in ("decision_accuracy", "Bk"):
                assert hi - lo > 0.01  # random decisions: a real spread


def test_intervals_are_the_percentiles_of_the_shared_draws() -> None:
    outcomes = random_outcomes(4, n_groups=80, sources=("scenes",))
    m = answerability_metrics(outcomes, n_draws=1000, seed=3)["scenes"]
    counts = group_counts(outcomes).matrix
    per_draw = metrics_from_counts(draw_weights(80, 1000, 3).astype(np.float64) @ counts)
    expected = np.nanpercentile(per_draw["Jk"], [2.5, 97.5])
    assert m["ci"]["Jk"] == pytest.approx(list(expected))
    assert (per_draw["Jk"] <= per_draw["Bk"]).all()  # Jk <= Bk holds in every resample too


def test_identical_groups_collapse_the_interval() -> None:
    # Every group is a copy of the same five views (one invalid, one null answer), so every resample has the
    # same ratios as the full data.
    outcomes = []
    for g in range(40):
        outcomes += [
            make_outcome(f"{g}-o", f"g{g}", "original", "answer", "answer", answer="1", answer_correct=True),
            make_outcome(f"{g}-s", f"g{g}", "S", "answer", "answer", answer=None),
            make_outcome(f"{g}-c", f"g{g}", "C", "answer", "invalid"),
            make_outcome(f"{g}-m", f"g{g}", "M", "abstain", "answer", answer="2"),
            make_outcome(f"{g}-i", f"g{g}", "I", "abstain", "abstain"),
        ]
    m = answerability_metrics(outcomes, n_draws=500)["charts"]
    for key in METRIC_KEYS:
        assert m["ci"][key] == [m[key], m[key]]  # type: ignore[literal-required]


def test_paired_difference_with_itself_is_exactly_zero() -> None:
    outcomes = random_outcomes(6, n_groups=50)
    for metric in METRIC_KEYS:
        if metric == "EI":
            continue  # undefined outside charts
        assert paired_difference(outcomes, outcomes[::-1], metric, source="photos", n_draws=500) == (0.0, 0.0, 0.0)
    assert paired_difference(outcomes, outcomes, "EI", source="charts", n_draws=500) == (0.0, 0.0, 0.0)


def test_paired_difference_uses_the_same_draws() -> None:
    run_a = random_outcomes(30, n_groups=100, sources=("charts",))
    run_b = random_outcomes(31, n_groups=100, sources=("charts",))
    point, lo, hi = paired_difference(run_a, run_b, "Jk", n_draws=1500, seed=2)
    ma = answerability_metrics(run_a, n_draws=0)["charts"]
    mb = answerability_metrics(run_b, n_draws=0)["charts"]
    assert ma["Jk"] is not None and mb["Jk"] is not None
    assert point == pytest.approx(ma["Jk"] - mb["Jk"])
    assert lo <= point <= hi
    # Recompute with the cached draws: the same weights apply to both runs.
    w = draw_weights(100, 1500, 2).astype(np.float64)
    da = metrics_from_counts(w @ group_counts(run_a).matrix)["Jk"]
    db = metrics_from_counts(w @ group_counts(run_b).matrix)["Jk"]
    assert [lo, hi] == pytest.approx(list(np.percentile(da - db, [2.5, 97.5])))
    # Pairing: a run that differs from A on a fifth of its groups gives a much narrower interval than the
    # independent intervals of the two runs would suggest.
    b_views = {o.view_id: o for o in run_b}
    mixed = [b_views[o.view_id] if int(o.group_id.split("-")[1]) % 5 == 0 else o for o in run_a]
    _, plo, phi = paired_difference(run_a, mixed, "decision_accuracy", n_draws=1500)
    ci_a = answerability_metrics(run_a, n_draws=1500)["charts"]["ci"]["decision_accuracy"]
    assert ci_a is not None
    assert phi - plo < (ci_a[1] - ci_a[0])


def test_paired_difference_rejects_different_benchmarks() -> None:
    run = random_outcomes(8, n_groups=20, sources=("charts",))
    fewer = [o for o in run if o.group_id != "charts-3"]
    with pytest.raises(VqauditError, match="same groups"):
        paired_difference(run, fewer, "Bk")
    extra_view = make_outcome("charts-3-extra", "charts-3", "S", "answer", "abstain")
    with pytest.raises(VqauditError, match="same views"):
        paired_difference(run, [*run, extra_view], "Bk")
    with pytest.raises(VqauditError, match="unknown metric"):
        paired_difference(run, run, "accuracy")
    both = random_outcomes(8, n_groups=20, sources=("charts", "scenes"))
    with pytest.raises(VqauditError, match="several sources"):
        paired_difference(both, both, "Bk")
    with pytest.raises(VqauditError, match="undefined"):
        paired_difference(both, both, "EI", source="scenes")
    with pytest.raises(VqauditError, match="no outcomes for source"):
        paired_difference(both, both, "Bk", source="photos")


def test_constant_policy_difference_is_degenerate() -> None:
    # Always-answer vs always-abstain: both have Ebal = 0.5 in every resample, so the difference is exactly 0.
    answer: list[Outcome] = policy_outcomes("answer", 25, ("charts",))
    abstain = policy_outcomes("abstain", 25, ("charts",))
    assert paired_difference(answer, abstain, "Ebal", n_draws=300) == (0.0, 0.0, 0.0)
    point, lo, hi = paired_difference(answer, abstain, "EU", n_draws=300)
    assert (point, lo, hi) == (1.0, 1.0, 1.0)


def test_percentile_interval_and_generic_paired_difference() -> None:
    samples = np.array([[0.0, np.nan], [1.0, np.nan], [2.0, np.nan], [3.0, np.nan], [4.0, np.nan]])
    lo, hi = percentile_interval(samples, confidence=0.5)
    assert lo[0] == pytest.approx(1.0) and hi[0] == pytest.approx(3.0)
    assert np.isnan(lo[1]) and np.isnan(hi[1])
    empty_lo, _ = percentile_interval(np.zeros((0, 3)))
    assert np.isnan(empty_lo).all()
    with pytest.raises(VqauditError):
        percentile_interval(samples, confidence=1.0)

    def share(totals: np.ndarray) -> np.ndarray:
        return np.asarray(totals[..., 0] / totals[..., 1], dtype=np.float64)

    a = np.array([[1, 1], [0, 1], [1, 1], [1, 1]])
    b = np.array([[0, 1], [0, 1], [1, 1], [0, 1]])
    point, lo2, hi2 = paired_bootstrap_difference(a, b, share, n_draws=2000, seed=0)
    assert point == pytest.approx(0.5)
    assert 0.0 <= lo2 <= point <= hi2 <= 1.0
    with pytest.raises(VqauditError, match="same shape"):
        paired_bootstrap_difference(a, b[:3], share)
    with pytest.raises(VqauditError):
        next(bootstrap_weights(0, 10, seed=0))
    with pytest.raises(VqauditError):
        next(bootstrap_weights(5, 10, seed=0, chunk=0))
