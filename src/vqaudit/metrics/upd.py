"""MM-UPD metrics: Standard, UPD and Dual accuracy with circular evaluation, overall and per ability.

Seed 001, §4 "Evaluation Metrics" and appendix 0.C.1. Per (variant, setting) configuration, one group = one item:

- the item's **standard** question passes when every circular rotation of it is right (MMBench circular
  evaluation); its **UPD** question passes when every rotation of the UPD question is right;
- Standard accuracy = share of items whose standard question passes; UPD accuracy = share whose UPD question
  passes; **Dual** accuracy = share where both pass, so ``Dual <= min(Standard, UPD)`` always;
- the ``original`` setting (LLaVA's letter-only prompt) has only standard questions: UPD and Dual are None.

A view without an outcome counts as failed. 95% percentile intervals come from ``n_draws`` group-bootstrap draws
(:mod:`vqaudit.metrics.bootstrap`; items resampled with all their views) over the items of the configuration,
or of the configuration and ability for the per-ability numbers. All values are fractions in [0, 1] or None.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import numpy as np

from vqaudit.metrics.bootstrap import bootstrap_totals, percentile_interval
from vqaudit.schema import Outcome, UPDViewMeta, View

KEYS = ("standard", "upd", "dual")


def _interval(rows: np.ndarray, n_draws: int, seed: int, has_upd: bool) -> dict[str, list[float] | None]:
    """Percentile intervals of the three accuracies from per-item rows ``[std_ok, upd_ok, dual_ok]``."""
    if n_draws <= 0 or rows.shape[0] == 0:
        return {k: None for k in KEYS}
    totals = bootstrap_totals(rows, n_draws=n_draws, seed=seed)
    lo, hi = percentile_interval(totals / rows.shape[0])
    out: dict[str, list[float] | None] = {}
    for j, key in enumerate(KEYS):
        out[key] = [float(lo[j]), float(hi[j])] if (has_upd or key == "standard") else None
    return out


def _summary(rows: np.ndarray, n_draws: int, seed: int, has_upd: bool) -> dict[str, Any]:
    n = int(rows.shape[0])
    means = rows.mean(axis=0) if n else np.full(3, np.nan)
    point = {k: (float(means[j]) if (has_upd or k == "standard") and n else None) for j, k in enumerate(KEYS)}
    return {"n_items": n, **point, "ci": _interval(rows, n_draws, seed, has_upd)}


def upd_metrics(outcomes: list[Outcome], views: list[View], *, n_draws: int, seed: int) -> dict[str, Any]:
    """Standard, UPD and Dual accuracy per (variant, setting), overall and per ability, with intervals.

    Args:
        outcomes: outcomes of (some of) ``views``; others are ignored.
        views: the UPD views of the benchmark (their ``meta`` gives variant, setting, kind and ability).
        n_draws: group-bootstrap draws per interval (0: no intervals).
        seed: seed of the draws.

    Returns:
        JSON-ready dict: ``configs`` maps ``"<variant>/<setting>"`` to ``{variant, setting, n_items, n_views,
        standard, upd, dual, ci, per_ability, undecided, decided_by}``; ``per_ability`` maps each ability to
        ``{ability_index, n_items, standard, upd, dual, ci}``; ``undecided`` counts standard and UPD views left
        undecided (failures, reported separately) and views without a reply; ``decided_by`` counts the rule or
        judge behind every view. Top level: ``n_groups``, ``n_views`` and ``dual_le_min`` (always True).
    """
    by_id = {o.view_id: o for o in outcomes}
    metas = {v.view_id: UPDViewMeta.of(v) for v in views}
    index_of = {m.ability: m.ability_index for m in metas.values()}
    groups: dict[str, list[View]] = defaultdict(list)
    for view in views:
        groups[view.group_id].append(view)
    per_config: dict[str, list[tuple[str, str, tuple[int, int, int]]]] = defaultdict(list)
    undecided: dict[str, Counter[str]] = defaultdict(Counter)
    decided: dict[str, Counter[str]] = defaultdict(Counter)
    n_views: Counter[str] = Counter()
    has_upd: dict[str, bool] = {}
    for group_id in sorted(groups):
        members = groups[group_id]
        meta = metas[members[0].view_id]
        config = f"{meta.variant}/{meta.setting}"
        passed = {"standard": True, "upd": True}
        seen = {"standard": False, "upd": False}
        for view in members:
            kind = "upd" if view.obligation.kind == "abstain" else "standard"
            seen[kind] = True
            outcome = by_id.get(view.view_id)
            ok = outcome is not None and outcome.task_correct
            passed[kind] = passed[kind] and ok
            who = "missing" if outcome is None else (outcome.decided_by or "unknown")
            decided[config][who] += 1
            if who in ("undecided", "missing", "no-reply"):
                undecided[config][f"{kind}_views" if who == "undecided" else "no_reply"] += 1
        n_views[config] += len(members)
        has_upd[config] = has_upd.get(config, False) or seen["upd"]
        std_ok = int(passed["standard"] and seen["standard"])
        upd_ok = int(passed["upd"] and seen["upd"])
        per_config[config].append((group_id, meta.ability, (std_ok, upd_ok, std_ok * upd_ok)))
    configs: dict[str, Any] = {}
    for config in sorted(per_config):
        entries = per_config[config]
        variant, setting = config.split("/", 1)
        rows = np.array([e[2] for e in entries], dtype=np.int64).reshape(-1, 3)
        upd = has_upd[config]
        abilities: dict[str, Any] = {}
        for ability in sorted({e[1] for e in entries}):
            sub = np.array([e[2] for e in entries if e[1] == ability], dtype=np.int64).reshape(-1, 3)
            abilities[ability] = {"ability_index": index_of.get(ability), **_summary(sub, n_draws, seed, upd)}
        configs[config] = {
            "variant": variant,
            "setting": setting,
            "n_views": n_views[config],
            **_summary(rows, n_draws, seed, upd),
            "per_ability": abilities,
            "undecided": {k: undecided[config].get(k, 0) for k in ("standard_views", "upd_views", "no_reply")},
            "decided_by": dict(sorted(decided[config].items())),
        }
    dual_ok = all(c["dual"] is None or c["dual"] <= min(c["standard"], c["upd"]) + 1e-12 for c in configs.values())
    return {"configs": configs, "n_groups": len(groups), "n_views": len(views), "dual_le_min": dual_ok}


MIN_CORRELATION_RUNS = 3
"""A correlation across models is shown only for at least this many runs (two points always lie on a line)."""


def pearson(xs: list[float], ys: list[float]) -> float | None:
    """Pearson's r of paired values: ``sum(dx * dy) / sqrt(sum(dx^2) * sum(dy^2))``, deviations from the means.

    Returns:
        r in [-1, 1]; None for fewer than 2 pairs or when either side has no spread (r undefined).
    """
    n = len(xs)
    if n < 2 or n != len(ys):
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    dx, dy = [x - mx for x in xs], [y - my for y in ys]
    sxx, syy = sum(d * d for d in dx), sum(d * d for d in dy)
    if sxx <= 1e-24 or syy <= 1e-24:
        return None
    r = sum(a * b for a, b in zip(dx, dy, strict=True)) / float(np.sqrt(sxx * syy))
    return max(-1.0, min(1.0, r))


def _ranks(values: list[float]) -> list[float]:
    """1-based ranks, ties given the average of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(xs: list[float], ys: list[float]) -> float | None:
    """Spearman's rho: Pearson's r of the average ranks (ties share the mean rank); None when r is undefined."""
    return pearson(_ranks(xs), _ranks(ys)) if len(xs) == len(ys) else None


def standard_correlation(runs: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Correlation across models between Standard and UPD / Dual accuracy, per variant and setting (seed 001 Fig. 7).

    Seed 001 §7 ("Does UPD accuracy correlate with standard accuracy?") plots, one point per model, the Original
    Standard accuracy (x) against UPD and Dual accuracy (y) and reports their correlation per setting: high in the
    base and instruction settings, weak in the option setting. Here x is the run's Original Standard accuracy of
    the variant (the ``<variant>/original`` configuration) when every run of that configuration has one, else the
    configuration's own Standard accuracy (``x_from`` says which).

    Args:
        runs: ``(label, metrics.json["upd"])`` of each run, in report order.

    Returns:
        One row per configuration with UPD questions that at least :data:`MIN_CORRELATION_RUNS` runs hold, in the
        order AAD, IASD, IVQD and base, option, instruction: ``{variant, setting, x_from ("original" |
        "standard"), points: [{run, x, upd, dual}], n, pearson_upd, spearman_upd, pearson_dual, spearman_dual}``;
        accuracies are fractions, coefficients in [-1, 1] or None (no spread). Empty for fewer runs.
    """
    if len(runs) < MIN_CORRELATION_RUNS:
        return []
    rows: list[dict[str, Any]] = []
    rank = {"base": 0, "option": 1, "instruction": 2}
    keys = sorted(
        {k for _, m in runs for k, c in m.get("configs", {}).items() if c.get("upd") is not None},
        key=lambda k: (
            ("aad", "iasd", "ivqd").index(k.split("/")[0]) if k.split("/")[0] in ("aad", "iasd", "ivqd") else 9,
            rank.get(k.split("/")[-1], 9),
            k,
        ),
    )
    for key in keys:
        have = [
            (label, m["configs"][key], m["configs"].get(key.split("/")[0] + "/original"))
            for label, m in runs
            if (m.get("configs", {}).get(key) or {}).get("upd") is not None
        ]
        if len(have) < MIN_CORRELATION_RUNS:
            continue
        use_original = all(o is not None and o.get("standard") is not None for _, _, o in have)
        values = {
            "x": [float((o if use_original and o is not None else c)["standard"]) for _, c, o in have],
            "upd": [float(c["upd"]) for _, c, _ in have],
            "dual": [float(c["dual"]) for _, c, _ in have],
        }
        points = [{"run": label, **{k: v[i] for k, v in values.items()}} for i, (label, _, _) in enumerate(have)]
        variant, setting = key.split("/", 1)
        rows.append(
            {
                "variant": variant,
                "setting": setting,
                "x_from": "original" if use_original else "standard",
                "points": points,
                "n": len(points),
                **{
                    f"{fn.__name__}_{y}": fn(values["x"], values[y])
                    for y in ("upd", "dual")
                    for fn in (pearson, spearman)
                },
            }
        )
    return rows
