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
    dual_ok = all(
        c["dual"] is None or c["dual"] <= min(c["standard"], c["upd"]) + 1e-12 for c in configs.values()
    )
    return {"configs": configs, "n_groups": len(groups), "n_views": len(views), "dual_le_min": dual_ok}
