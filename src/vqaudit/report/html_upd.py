"""Seed 001 (MM-UPD) in the HTML report.

Table 1, the per-ability Tables D-O with radar charts, the Fig. 7 correlation of Standard with UPD / Dual accuracy
across runs, and the Fig. E judge agreement.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vqaudit.report.html_cells import coef, data_uri, pct, with_ci
from vqaudit.report.html_plots import upd_correlation_svg
from vqaudit.report.html_runs import LoadedRun
from vqaudit.report.html_tables import upd_ability_tables


def upd_section(runs: Sequence[LoadedRun]) -> dict[str, Any] | None:
    """The UPD section's context for ``index.html`` over the runs scored on UPD (None: no run is).

    Returns:
        ``{"runs", "table1", "tables", "correlation", "agreement"}``: run labels, Table 1 rows (Standard, UPD and
        Dual accuracy per variant/setting with intervals, one cell per run), the per-ability tables with their
        radars, the Fig. 7 correlation (None under 3 runs) and the Fig. E agreement rows.
    """
    have = [r for r in runs if "upd" in r.metrics]
    if not have:
        return None
    from vqaudit.report.upd import SETTING_LABELS, radar_chart

    keys: list[str] = []
    for r in have:
        keys += [k for k in r.metrics["upd"].get("configs", {}) if k not in keys]
    order = {"aad": 0, "iasd": 1, "ivqd": 2}
    rank = {s: i for i, s in enumerate(("original", "base", "option", "instruction"))}
    keys.sort(key=lambda k: (order.get(k.split("/")[0], 9), rank.get(k.split("/")[-1], 9), k))
    table1 = []
    for key in keys:
        cells = []
        for r in have:
            c = r.metrics["upd"]["configs"].get(key)
            cells.append(
                None
                if not isinstance(c, dict)
                else {
                    "standard": with_ci(c, "standard"),
                    "upd": with_ci(c, "upd"),
                    "dual": with_ci(c, "dual"),
                    "n": c.get("n_items"),
                }
            )
        table1.append({"key": key, "cells": cells})
    by_config: dict[str, dict[str, Any]] = {}
    for r in have:
        for t in upd_ability_tables(r.metrics["upd"]):
            key = f"{t.variant}/{t.setting}"
            entry = by_config.setdefault(
                key,
                {
                    "variant": t.variant,
                    "setting": SETTING_LABELS.get(t.setting, t.setting),
                    "abilities": {},
                    "runs": [],
                    "radars": [],
                },
            )
            entry["abilities"].update({name: idx for idx, name in t.abilities})
            entry["runs"].append((r.label, t))
            c = r.metrics["upd"]["configs"].get(key, {})
            if c.get("upd") is not None and c.get("per_ability"):
                title = f"{r.label}: {t.variant.upper()}, {entry['setting']} setting"
                entry["radars"].append((title, data_uri("image/png", radar_chart(title, c["per_ability"]))))
    tables = []
    for key in sorted(by_config, key=lambda k: keys.index(k) if k in keys else len(keys)):
        entry = by_config[key]
        names = sorted(entry["abilities"], key=lambda a: (entry["abilities"][a] or 99, a))
        blocks = []
        for metric, title in (("standard", "Standard Acc."), ("upd", "UPD Acc."), ("dual", "Dual Acc.")):
            rows = []
            for label, t in entry["runs"]:
                got = {name: t.values[metric][i] for i, (_, name) in enumerate(t.abilities)}
                rows.append((label, [pct(got.get(name)) for name in names]))
            if any(v != "n/a" for _, vals in rows for v in vals):  # "original": Standard only
                blocks.append((title, rows))
        tables.append(
            {
                "key": key,
                "variant": entry["variant"],
                "setting": entry["setting"],
                "abilities": [(entry["abilities"][n], n) for n in names],
                "blocks": blocks,
                "radars": entry["radars"],
            }
        )
    return {
        "runs": [r.label for r in have],
        "table1": table1,
        "tables": tables,
        "correlation": _upd_correlation(have),
        "agreement": _upd_agreement(have),
    }


def _upd_correlation(runs: Sequence[LoadedRun]) -> dict[str, Any] | None:
    """Seed 001 Fig. 7: Standard against UPD / Dual accuracy across the runs (at least 3), table and scatter plots."""
    from vqaudit.metrics.upd import standard_correlation

    rows = standard_correlation([(r.label, r.metrics["upd"]) for r in runs])
    if not rows:
        return None
    plots = []
    for variant in dict.fromkeys(row["variant"] for row in rows):
        mine = [row for row in rows if row["variant"] == variant]
        plots.append((variant.upper(), data_uri("image/svg+xml", upd_correlation_svg(variant, mine))))
    table = [
        {
            "key": f"{row['variant']}/{row['setting']}",
            "variant": row["variant"].upper(),
            "setting": row["setting"],
            "x_from": "Original Standard" if row["x_from"] == "original" else "same setting",
            "n": row["n"],
            "coefs": [coef(row[k]) for k in ("pearson_upd", "spearman_upd", "pearson_dual", "spearman_dual")],
        }
        for row in rows
    ]
    return {"rows": table, "plots": plots}


def _upd_agreement(runs: Sequence[LoadedRun]) -> list[dict[str, Any]]:
    """Seed 001 Fig. E: per run scored with ``--labels``, the judge's agreement and kappa with the human labels."""
    out = []
    for r in runs:
        a = r.metrics["upd"].get("judge_agreement")
        if isinstance(a, dict):
            c = a.get("counts", {})
            out.append(
                {
                    "run": r.label,
                    "judge": a.get("judge"),
                    "n": a.get("n_compared"),
                    "counts": [c.get(k) for k in ("tp", "fp", "fn", "tn")],
                    "accuracy": pct(a.get("accuracy")),
                    "kappa": coef(a.get("kappa")),
                    "not_judged": a.get("n_not_judged"),
                }
            )
    return out
