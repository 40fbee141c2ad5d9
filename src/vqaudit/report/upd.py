"""MM-UPD report: seed 001's Table 1 layout, a detailed table, and radar charts per ability.

Table 1: Dual accuracy per variant and setting, one column per run. The detailed table adds 95% intervals and
undecided counts. One radar chart per run and configuration.

Radar charts follow the paper's figures (Fig. 3-6): one axis per ability (ordered by the Table A index), Standard
accuracy in blue and UPD accuracy in red, in percent.
"""

from __future__ import annotations

import io
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.projections.polar import PolarAxes

from vqaudit.errors import VqauditError
from vqaudit.files import atomic_write_bytes, atomic_write_text, read_json
from vqaudit.markdown import row, separator
from vqaudit.metrics.upd import standard_correlation
from vqaudit.report.reasoning import reasoning_markdown, reasoning_rows, scored_runs
from vqaudit.scored_state import bootstrap_phrase, check_scored
from vqaudit.store import RunFolder
from vqaudit.suites.upd.abilities import ABILITY_LABELS
from vqaudit.suites.upd.variants import VARIANTS

ORACLE_NOTE = "reference:gold is an oracle that answers the gold letter and abstains on UPD views (a check of the "
ORACLE_NOTE += "scoring path, not a model)"
SETTING_LABELS = {"original": "Original Standard", "base": "Base", "option": "Option", "instruction": "Instruction"}


@dataclass(frozen=True)
class UPDRun:
    """A scored run: its folder, model spec and ``metrics.json["upd"]``."""

    run_dir: Path
    model: str
    metrics: dict[str, Any]


def load_upd_run(run_dir: Path) -> UPDRun:
    """Read ``run.json`` and ``metrics.json["upd"]`` of a scored run.

    Raises:
        VqauditError: the run is not scored or has no UPD metrics, or its replies changed since it was scored
            (:func:`vqaudit.scored_state.check_scored`).
    """
    folder = RunFolder(run_dir)
    info = folder.read_info()
    if not folder.metrics.is_file():
        raise VqauditError(f"{run_dir}: no {folder.metrics.name}; run `vqaudit score {run_dir}` first")
    check_scored(run_dir)
    metrics = read_json(folder.metrics)
    if not isinstance(metrics, dict) or "upd" not in metrics:
        raise VqauditError(f"{folder.metrics}: no 'upd' metrics (is this a UPD benchmark run?)")
    return UPDRun(run_dir=run_dir, model=info.model, metrics=metrics["upd"])


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _ci(cell: dict[str, Any], key: str) -> str:
    ci = (cell.get("ci") or {}).get(key)
    point = _pct(cell.get(key))
    return point if not ci else f"{point} [{_pct(ci[0])}, {_pct(ci[1])}]"


def table1(runs: list[UPDRun]) -> str:
    """Markdown in the layout of seed 001, Table 1: Dual accuracy (Original Standard: standard accuracy)."""
    head = ["", "", *(f"{r.run_dir.name}" for r in runs)]
    lines = [row(head), separator(len(head))]
    for variant in VARIANTS:
        first = True
        for setting in ("original", "base", "option", "instruction"):
            key = f"{variant}/{setting}"
            if not any(key in r.metrics["configs"] for r in runs):
                continue
            cells = []
            for r in runs:
                c = r.metrics["configs"].get(key)
                cells.append("n/a" if c is None else _pct(c["standard"] if setting == "original" else c["dual"]))
            label = variant.upper() if first else ""
            lines.append(row([label, SETTING_LABELS[setting], *cells]))
            first = False
    return "\n".join(lines)


def _ordered(configs: dict[str, Any]) -> list[dict[str, Any]]:
    """Configurations in the order AAD, IASD, IVQD and, within each, original, base, option, instruction."""
    rank = {s: i for i, s in enumerate(("original", "base", "option", "instruction"))}
    return sorted(
        configs.values(),
        key=lambda c: (
            VARIANTS.index(c["variant"]) if c["variant"] in VARIANTS else 9,
            c["variant"],
            rank.get(c["setting"], 9),
        ),
    )


def detail_table(runs: list[UPDRun]) -> str:
    """Markdown: per run and configuration, Standard / UPD / Dual with 95% intervals and undecided counts."""
    head = ["run", "model", "variant", "setting", "items", "Standard", "UPD", "Dual", "undecided (std/UPD)", "no reply"]
    lines = [row(head), separator(len(head))]
    for r in runs:
        for c in _ordered(r.metrics["configs"]):
            und = c["undecided"]
            lines.append(
                row(
                    [
                        r.run_dir.name,
                        r.model,
                        c["variant"],
                        c["setting"],
                        str(c["n_items"]),
                        _ci(c, "standard"),
                        _ci(c, "upd"),
                        _ci(c, "dual"),
                        f"{und['standard_views']}/{und['upd_views']}",
                        str(und["no_reply"]),
                    ]
                )
            )
    return "\n".join(lines)


RADAR_INCHES = 8.0
RADAR_DPI = 80
"""A radar chart is ``RADAR_INCHES * RADAR_DPI`` = 640 px square; ``report.css`` shows it at that width."""
RADAR_LABEL_PT = 11
"""Axis label size: 11 pt at 80 dpi is 12.2 px, as rendered in ``index.html`` (was 7 pt shown at 360 px: 4.7 px)."""


def radar_chart(title: str, per_ability: dict[str, Any]) -> bytes:
    """PNG bytes of a radar chart: Standard (blue) and UPD (red) accuracy in percent, one axis per ability.

    ``RADAR_INCHES * RADAR_DPI`` px square; axis labels ``#N Ability`` in ``RADAR_LABEL_PT`` pt, wrapped at 16
    characters so neighbouring labels do not overlap.
    """
    names = sorted(per_ability, key=lambda a: (per_ability[a].get("ability_index") or 99, a))
    labels = [
        textwrap.fill(f"#{per_ability[a].get('ability_index') or '?'} {ABILITY_LABELS.get(a, a)}", 16) for a in names
    ]
    angles = np.linspace(0, 2 * np.pi, max(len(names), 1), endpoint=False).tolist()
    fig = Figure(figsize=(RADAR_INCHES, RADAR_INCHES), dpi=RADAR_DPI)
    FigureCanvasAgg(fig)
    ax = cast(PolarAxes, fig.add_axes((0.2, 0.16, 0.6, 0.6), polar=True))
    for key, color, label in (("standard", "blue", "Standard"), ("upd", "red", "UPD")):
        values = [100 * (per_ability[a].get(key) or 0.0) for a in names]
        ax.plot([*angles, angles[0]], [*values, values[0]], color=color, linewidth=2, label=label)
        ax.fill([*angles, angles[0]], [*values, values[0]], color=color, alpha=0.25)
    ax.set_xticks(angles, labels, fontsize=RADAR_LABEL_PT)
    ax.tick_params(axis="x", pad=10)
    for tick, angle in zip(ax.get_xticklabels(), angles, strict=True):  # away from the circle: no overlaps
        x = np.cos(angle)
        tick.set_horizontalalignment("center" if abs(x) < 0.05 else "left" if x > 0 else "right")
    ax.set_rlabel_position(180 / max(len(names), 1))  # radial ticks between the first two axes
    ax.tick_params(axis="y", labelsize=RADAR_LABEL_PT - 2)
    ax.set_ylim(0, 100)
    fig.suptitle(title, fontsize=RADAR_LABEL_PT + 2, y=0.97)
    ax.legend(loc="upper right", bbox_to_anchor=(1.3, 1.3), frameon=False, fontsize=RADAR_LABEL_PT)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def _coef(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3f}"


def correlation_table(runs: list[UPDRun]) -> str:
    """Markdown: Pearson r and Spearman rho across the runs between Standard and UPD / Dual accuracy (seed 001 Fig. 7).

    One row per variant and setting held by at least :data:`vqaudit.metrics.upd.MIN_CORRELATION_RUNS` runs
    (:func:`vqaudit.metrics.upd.standard_correlation`); an empty string for fewer runs.
    """
    rows = standard_correlation([(r.run_dir.name, r.metrics) for r in runs])
    if not rows:
        return ""
    head = [
        "variant",
        "setting",
        "x (Standard)",
        "models",
        "Pearson r (UPD)",
        "Spearman rho (UPD)",
        "Pearson r (Dual)",
        "Spearman rho (Dual)",
    ]
    lines = [row(head), separator(len(head))]
    for line in rows:
        x_from = "Original Standard" if line["x_from"] == "original" else "same setting"
        lines.append(
            row(
                [
                    line["variant"].upper(),
                    SETTING_LABELS.get(line["setting"], line["setting"]),
                    x_from,
                    str(line["n"]),
                    _coef(line["pearson_upd"]),
                    _coef(line["spearman_upd"]),
                    _coef(line["pearson_dual"]),
                    _coef(line["spearman_dual"]),
                ]
            )
        )
    return "\n".join(lines)


def agreement_table(runs: list[UPDRun]) -> str:
    """Markdown: per run scored with ``--labels``, the judge's agreement and Cohen's kappa with the human labels.

    Seed 001 App. 0.C.2, Fig. E (:mod:`vqaudit.metrics.judge_agreement`); an empty string when no run has them.
    """
    have = [r for r in runs if isinstance(r.metrics.get("judge_agreement"), dict)]
    if not have:
        return ""
    head = [
        "run",
        "judge",
        "views compared",
        "judge right / human right",
        "agreement",
        "Cohen's kappa",
        "labelled, not judged",
    ]
    lines = [row(head), separator(len(head))]
    for r in have:
        a = r.metrics["judge_agreement"]
        c = a["counts"]
        lines.append(
            row(
                [
                    r.run_dir.name,
                    f"`{a['judge']}`",
                    str(a["n_compared"]),
                    f"{c['tp'] + c['fp']} / {c['tp'] + c['fn']}",
                    _pct(a["accuracy"]),
                    _coef(a["kappa"]),
                    str(a["n_not_judged"]),
                ]
            )
        )
    return "\n".join(lines)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")


def _head(runs: list[UPDRun]) -> list[str]:
    return [
        "# vqaudit MM-UPD report",
        "",
        "Dual accuracy in percent (an item counts only if its standard and its UPD question are both right in "
        "every circular rotation); the Original Standard row is standard accuracy with LLaVA's letter-only prompt, "
        "an upper bound of Dual (Miyai et al., Unsolvable Problem Detection, Table 1). Columns are run folders:",
        "",
        *(f"- `{r.run_dir.name}`: `{r.model}`" for r in runs),
        *([f"- {ORACLE_NOTE}"] if any(r.model == "reference:gold" for r in runs) else []),
        "",
        table1(runs),
    ]


def summary_table(run_dirs: list[Path]) -> str:
    """The report's title, legend and Table 1 of scored UPD runs, as ``vqaudit eval upd`` prints them.

    Raises:
        VqauditError: a run that is not scored or has no UPD metrics.
    """
    return "\n".join(_head([load_upd_run(d) for d in run_dirs])).rstrip()


def write_upd_report(run_dirs: list[Path], out_dir: Path) -> Path:
    """Write ``upd_report.md`` and radar-chart PNGs comparing scored UPD runs; return the Markdown path.

    Args:
        run_dirs: scored run folders (each ``metrics.json`` has a ``upd`` entry).
        out_dir: report folder (created).

    Raises:
        VqauditError: no runs given, or a run that is not scored or has no UPD metrics.
    """
    if not run_dirs:
        raise VqauditError("give at least one run folder")
    runs = [load_upd_run(d) for d in run_dirs]
    parts = [
        *_head(runs),
        "",
        "## Standard, UPD and Dual accuracy with 95% intervals",
        "",
        f"Brackets: 95% percentile intervals from {bootstrap_phrase(list(run_dirs))} over items. Undecided "
        "replies (neither the "
        "strict matcher nor a judge chose an option) count as failures and are listed here.",
        "",
        detail_table(runs),
        "",
        "## Radar charts per ability (Standard blue, UPD red)",
        "",
    ]
    for r in runs:
        for c in _ordered(r.metrics["configs"]):
            if c["upd"] is None:
                continue
            name = f"radar_{_slug(r.run_dir.name)}_{c['variant']}_{c['setting']}.png"
            title = f"{r.run_dir.name}: {c['variant'].upper()}, {SETTING_LABELS[c['setting']]} setting"
            atomic_write_bytes(out_dir / name, radar_chart(title, c["per_ability"]))
            parts += [f"![{title}]({name})", ""]
    correlation = correlation_table(runs)
    if correlation:
        parts += [
            "## Standard versus UPD and Dual accuracy across models (seed 001 Fig. 7)",
            "",
            "One point per run; x is the run's Original Standard accuracy of the variant when every run has "
            "that setting (as in the paper), else the Standard accuracy of the same setting. Coefficients "
            "over the runs of this report; `undefined` when one side has no spread.",
            "",
            correlation,
            "",
        ]
    agreement = agreement_table(runs)
    if agreement:
        parts += [
            "## The judge versus human labels (seed 001 Fig. E)",
            "",
            "Over the labelled views the judge decided (replies the strict matcher left undecided, as in the "
            "paper); agreement in percent, Cohen's kappa (p_o - p_e) / (1 - p_e).",
            "",
            agreement,
            "",
        ]
    # reasoning models only: shares and lengths of the reasoning (a run whose replies held none adds nothing)
    thinking = reasoning_markdown(reasoning_rows(scored_runs([r.run_dir for r in runs], [()] * len(runs))))
    if thinking:
        parts += [thinking, ""]
    path = out_dir / "upd_report.md"
    atomic_write_text(path, "\n".join(parts))
    return path
