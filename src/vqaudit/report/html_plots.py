"""SVG plots of the HTML report: Jk/Bk with intervals, E_λ curves with the paired band, per-state bars, budget sweeps.

Every plot returns SVG bytes; the page embeds them as ``data:image/svg+xml`` images, so nothing inside an SVG
(run names and state names become glyph outlines) can run as script. Text is drawn as paths, so the files do not
depend on fonts on the reader's machine.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import Any

import matplotlib
import numpy as np
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure

from vqaudit.metrics.sweep import BudgetSweep
from vqaudit.report.html_tables import Curve, StateRow

BLUE, ORANGE, GREY, RED, GREEN = "#1f77b4", "#ff7f0e", "#7f7f7f", "#d62728", "#2ca02c"


def plain(text: str) -> str:
    """``text`` for a matplotlib label: a ``$`` would start mathtext (and fail on unbalanced input), so escape it."""
    return text.replace("$", r"\$")


def _svg(fig: Figure) -> bytes:
    """The figure as SVG bytes: the same bytes for the same figure.

    No date, and element ids (``clip-path``) hashed from a fixed salt instead of a random one (matplotlib's
    ``svg.hashsalt``).
    """
    FigureCanvasSVG(fig)
    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "vqaudit"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    return buf.getvalue()


def _pct(values: Sequence[float | None]) -> np.ndarray[Any, Any]:
    return np.asarray([math.nan if v is None else 100.0 * v for v in values], dtype=np.float64)


def jk_bk_svg(source: str, runs: Sequence[tuple[str, dict[str, Any]]]) -> bytes:
    """Bars of Jk and Bk (percent of groups) per run for one source, with 95% intervals as error bars.

    Args:
        source: the source name (title).
        runs: (run label, that source's ``metrics.json`` entry) pairs.
    """
    fig = Figure(figsize=(max(4.5, 1.3 * len(runs) + 2), 3.2), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    x = np.arange(len(runs))
    for offset, key, color in ((-0.2, "Jk", BLUE), (0.2, "Bk", ORANGE)):
        vals = _pct([m.get(key) for _, m in runs])
        lo = _pct([((m.get("ci") or {}).get(key) or [None, None])[0] for _, m in runs])
        hi = _pct([((m.get("ci") or {}).get(key) or [None, None])[1] for _, m in runs])
        err = np.nan_to_num(np.stack([np.maximum(vals - lo, 0), np.maximum(hi - vals, 0)]))
        ax.bar(x + offset, np.nan_to_num(vals), 0.4, yerr=err, capsize=3, color=color, label=key)
    ax.set_xticks(x, [plain(label) for label, _ in runs], rotation=15, ha="right")
    ax.set_ylim(0, 122)
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel("percent of groups")
    ax.set_title(plain(f"{source}: complete task (Jk) and decision (Bk) success, 95% intervals"))
    ax.legend(loc="upper right", frameon=False, ncol=2)
    return _svg(fig)


def e_lambda_svg(source: str, label_a: str, curve_a: Curve, label_b: str, curve_b: Curve, diff: Curve) -> bytes:
    """Two panels (seed 000 Figure 5): E_λ of runs A and B with 95% bands; and E_λ(A) - E_λ(B) with its paired band.

    Values are drawn in percent; λ is the weight on supported rejection (λ = 0.5 is Ebal).
    """
    fig = Figure(figsize=(9.0, 3.2), dpi=100)
    left, right = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    lam = np.asarray(curve_a.lambdas)
    for label, curve, color in ((label_a, curve_a, BLUE), (label_b, curve_b, ORANGE)):
        left.plot(lam, _pct(curve.point), color=color, label=plain(label))
        left.fill_between(lam, _pct(curve.lo), _pct(curve.hi), color=color, alpha=0.2, linewidth=0)
    left.set_xlabel(r"$\lambda$ (weight on supported rejection)")
    left.set_ylabel(r"$E_\lambda$, percent")
    left.set_ylim(-2, 102)
    left.set_title(plain(source) + r": $E_\lambda$ with 95% intervals")
    left.legend(loc="best", frameon=False, fontsize=8)
    right.axhline(0.0, color=GREY, linewidth=0.8)
    right.plot(lam, _pct(diff.point), color=RED)
    right.fill_between(lam, _pct(diff.lo), _pct(diff.hi), color=RED, alpha=0.2, linewidth=0)
    right.set_xlabel(r"$\lambda$")
    right.set_ylabel("difference, points")
    right.set_title(
        r"$E_\lambda$(" + plain(label_a) + r") − $E_\lambda$(" + plain(label_b) + "), paired 95% band", fontsize=9
    )
    return _svg(fig)


def state_bars_svg(title: str, rows: Sequence[StateRow]) -> bytes:
    """Stacked bars per state (seed 000 Table 3): correct / wrong answers, rejections, false acceptances, invalid.

    Supported states stack correct answers (green), wrong answers (orange), rejections (blue) and invalid (grey);
    negative states stack abstentions (green), acceptances (red) and invalid (grey). Heights in percent of views.
    """
    fig = Figure(figsize=(max(3.0, 0.55 * len(rows) + 1.2), 2.6), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    x = np.arange(len(rows))
    layers: list[tuple[str, str, list[float]]] = [
        ("right (answer or abstain)", GREEN, []),
        ("wrong answer", ORANGE, []),
        ("supported rejected", BLUE, []),
        ("negative accepted", RED, []),
        ("invalid", GREY, []),
    ]
    for r in rows:
        n = max(r.views, 1)
        supported = r.obligation == "answer"
        layers[0][2].append(100 * ((r.correct or 0) if supported else r.rejected) / n)
        layers[1][2].append(100 * (r.wrong or 0) / n if supported else 0.0)
        layers[2][2].append(100 * r.rejected / n if supported else 0.0)
        layers[3][2].append(0.0 if supported else 100 * r.accepted / n)
        layers[4][2].append(100 * r.invalid / n)
    bottom = np.zeros(len(rows))
    for label, color, values in layers:
        ax.bar(x, values, 0.6, bottom=bottom, color=color, label=label)
        bottom += np.asarray(values)
    ax.set_xticks(x, [plain(r.state) for r in rows])
    ax.set_ylim(0, 100)
    ax.set_ylabel("percent of views", fontsize=8)
    ax.tick_params(labelsize=8)
    ax.set_title(plain(title), fontsize=9)
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False, fontsize=7)
    return _svg(fig)


def contract_mix_svg(title: str, mix: dict[str, float]) -> bytes:
    """Horizontal bars of the answer-contract mix (seed 002 Table 5): share of rows per bucket, in percent."""
    fig = Figure(figsize=(6.0, 0.45 * len(mix) + 1.2), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    names = list(mix)
    ax.barh(np.arange(len(names)), [100 * mix[n] for n in names], color=BLUE)
    ax.set_yticks(np.arange(len(names)), [plain(n) for n in names])
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("percent of rows")
    ax.set_title(plain(title))
    return _svg(fig)


def budget_sweep_svg(sweep: BudgetSweep) -> bytes:
    """Two panels of a token-budget sweep: Jk and Bk (success), and Ebal, EU, EM (failure rates) against the budget.

    Points are percent with their 95% group-bootstrap intervals as error bars, the metrics of a panel drawn a little
    apart around each budget; the budget axis is logarithmic (base 2), one tick per budget.
    """
    fig = Figure(figsize=(9.0, 3.2), dpi=100)
    budgets = np.asarray([p.budget for p in sweep.points], dtype=np.float64)
    panels = (
        (fig.add_subplot(1, 2, 1), (("Jk", BLUE), ("Bk", ORANGE)), "success, percent of groups"),
        (fig.add_subplot(1, 2, 2), (("Ebal", RED), ("EU", GREEN), ("EM", GREY)), "failure rate, percent"),
    )
    for ax, keys, ylabel in panels:
        for i, (key, color) in enumerate(keys):
            shift = 2.0 ** (0.06 * (i - (len(keys) - 1) / 2))  # side by side, so equal values stay visible
            vals = _pct([p.metrics[key] for p in sweep.points])
            ci = [p.ci[key] for p in sweep.points]
            lo = _pct([c[0] if c else None for c in ci])
            hi = _pct([c[1] if c else None for c in ci])
            err = np.nan_to_num(np.stack([np.maximum(vals - lo, 0), np.maximum(hi - vals, 0)]))
            ax.errorbar(budgets * shift, vals, yerr=err, capsize=3, marker="o", color=color, label=key)
        ax.set_xscale("log", base=2)
        ax.set_xticks(budgets, [str(p.budget) for p in sweep.points])
        ax.minorticks_off()
        ax.set_ylim(-2, 102)
        ax.set_xlabel("max_tokens")
        ax.set_ylabel(ylabel)
        ax.legend(loc="best", frameon=False, fontsize=8)
    fig.suptitle(plain(f"{sweep.source}: metrics against the token budget, 95% intervals"), fontsize=10)
    return _svg(fig)


def upd_correlation_svg(variant: str, rows: Sequence[dict[str, Any]]) -> bytes:
    """Seed 001 Fig. 7 layout for one variant: Standard accuracy (x) against UPD (top) and Dual (bottom) accuracy.

    One column per setting of ``rows`` (rows of :func:`vqaudit.metrics.upd.standard_correlation` for this
    variant), one point per run, labelled with the run; Pearson r in each panel's title. Axes in percent, 0-100.
    Each panel's points are the SVG group ``points-VARIANT-SETTING-upd`` / ``-dual`` (one marker per run).
    """
    cols = max(len(rows), 1)
    fig = Figure(figsize=(3.4 * cols + 0.4, 6.4), dpi=100)
    for j, row in enumerate(rows):
        x_label = "Original Standard acc. (%)" if row["x_from"] == "original" else "Standard acc. (%)"
        xs = [100.0 * p["x"] for p in row["points"]]
        for i, (key, name, color) in enumerate((("upd", "UPD", RED), ("dual", "Dual", BLUE))):
            ax = fig.add_subplot(2, cols, i * cols + j + 1)
            ys = [100.0 * p[key] for p in row["points"]]
            ax.scatter(xs, ys, color=color, s=28, zorder=3, gid=f"points-{variant}-{row['setting']}-{key}")
            for p, x, y in zip(row["points"], xs, ys, strict=True):
                ax.annotate(plain(p["run"]), (x, y), textcoords="offset points", xytext=(4, 3), fontsize=7)
            r = row[f"pearson_{key}"]
            ax.set_title(
                plain(f"{variant.upper()}, {row['setting']}: r = " + ("n/a" if r is None else f"{r:.2f}")), fontsize=9
            )
            ax.set_xlim(-2, 102)
            ax.set_ylim(-2, 102)
            ax.set_xlabel(x_label, fontsize=8)
            ax.set_ylabel(f"{name} acc. (%)", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(True, color="#dddddd", linewidth=0.6)
    fig.tight_layout()
    return _svg(fig)
