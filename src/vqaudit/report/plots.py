"""Plots: Jk and Bk per run with 95% interval error bars, one panel per source."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure


def jk_bk_chart(runs: list[tuple[str, dict[str, Any]]]) -> bytes:
    """PNG bytes of a bar chart: for each run, Jk and Bk (percent) with their 95% intervals as error bars.

    Args:
        runs: (label, metrics-by-source) pairs as written to ``metrics.json``.
    """
    sources = sorted({s for _, m in runs for s in m})
    fig = Figure(figsize=(max(5.0, 1.6 * len(runs) + 2), 3.6 * max(1, len(sources))), dpi=100)
    FigureCanvasAgg(fig)
    for row, source in enumerate(sources):
        ax = fig.add_subplot(len(sources), 1, row + 1)
        x = np.arange(len(runs))
        for offset, key, color in ((-0.2, "Jk", "#1f77b4"), (0.2, "Bk", "#ff7f0e")):
            vals, err_lo, err_hi = [], [], []
            for _, metrics in runs:
                m = metrics.get(source, {})
                v = 100 * (m.get(key) or 0.0)
                ci = (m.get("ci") or {}).get(key) or [None, None]
                lo = 100 * ci[0] if ci[0] is not None else v
                hi = 100 * ci[1] if ci[1] is not None else v
                vals.append(v)
                err_lo.append(max(v - lo, 0.0))
                err_hi.append(max(hi - v, 0.0))
            ax.bar(x + offset, vals, 0.4, yerr=[err_lo, err_hi], capsize=3, color=color, label=key)
        ax.set_xticks(x, [label for label, _ in runs], rotation=15, ha="right")
        ax.set_ylim(0, 105)
        ax.set_ylabel("percent of groups")
        ax.set_title(f"{source}: complete task (Jk) and decision (Bk) success")
        ax.legend(loc="upper left", frameon=False)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()
