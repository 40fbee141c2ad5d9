"""The appendix-B section of the reports: common-state comparison, conditional disagreement and quoted counts.

Reads each answerability source's ``diagnostics.json`` entries written by
:func:`vqaudit.metrics.conditional.conditional_diagnostics` (seed 000 §4, §5.2, appendix B): Bk and Jk on the
states every source shares (the paper's ``B_F^{SM}``), the conditional disagreement ``(Bk - Jk) / Bk``, "groups
with every decision right but a wrong supported answer" (the paper's "265 of 835 chart groups") and "numerical
mismatches among supported views" ("478 ... among 3,000 supported chart views"), beside the paper's per-source
names of Jk and Bk (J5/B5 charts, J4/B4 scenes, J3/B3 photos). A run scored before these entries existed adds no
row, so its report is unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from vqaudit.markdown import table
from vqaudit.metrics.conditional import PAPER_NAMES

CONDITIONAL_TITLE = "Common states and conditional disagreement (Cha et al., arXiv:2609.34480, §5.2, appendix B)"
CONDITIONAL_NOTE = (
    "Percentages; brackets are 95% percentile intervals from the group bootstrap of each run and source (seed 000 "
    "§4). Common states: Bk and Jk over each group's views in the states every source shares, S and M (the photo "
    "control mask is the photo S state), keeping each source's questions and intervention mechanism (the paper's "
    "B_F^SM). Conditional disagreement = (Bk − Jk) / Bk: the share of groups with every decision right that hold a "
    "wrong supported answer. Supported views are counted as answered correctly, rejected (abstained or invalid), "
    "mismatched (a wrong non-null answer) or answered null. Paper names: Jk/Bk are J5/B5 on charts, J4/B4 on "
    "scenes, J3/B3 on photos (k = views per group)."
)
HEADER = (
    "run",
    "source",
    "paper names",
    "common states",
    "Bk (S, M)",
    "Jk (S, M)",
    "conditional disagreement",
    "groups with every decision right but a wrong supported answer",
    "numerical mismatches among supported views",
    "supported: correct / rejected / answered null",
)


@dataclass(frozen=True)
class ConditionalRow:
    """One run and source of the section; every cell already formatted (percentages with their interval)."""

    run: str
    source: str
    paper_names: str
    states: str
    bk_common: str
    jk_common: str
    disagreement: str
    wrong_groups: str
    mismatches: str
    supported: str

    def cells(self) -> list[str]:
        """The cells in the order of :data:`HEADER`."""
        return [
            self.run,
            self.source,
            self.paper_names,
            self.states,
            self.bk_common,
            self.jk_common,
            self.disagreement,
            self.wrong_groups,
            self.mismatches,
            self.supported,
        ]


def _pct(value: object) -> str:
    return f"{100 * value:.1f}" if isinstance(value, int | float) else "n/a"


def _cell(value: object, ci: object) -> str:
    if not isinstance(value, int | float):
        return "n/a"
    if isinstance(ci, list) and len(ci) == 2:
        return f"{_pct(value)} [{_pct(ci[0])}, {_pct(ci[1])}]"
    return _pct(value)


def conditional_rows(runs: Iterable[tuple[str, Mapping[str, Any]]]) -> list[ConditionalRow]:
    """One row per run and answerability source whose ``diagnostics.json`` entry holds the appendix-B entries.

    Args:
        runs: ``(run label, diagnostics.json object)`` per run, in report order.

    Returns:
        The rows, sources sorted within a run; empty when no run has the entries.
    """
    rows = []
    for label, diagnostics in runs:
        for source, d in sorted(diagnostics.items()):
            if not isinstance(d, dict) or not {"common_state", "conditional_disagreement", "supported_answers"} <= set(
                d
            ):
                continue
            common, cd, sup = d["common_state"], d["conditional_disagreement"], d["supported_answers"]
            ci = common.get("ci") or {}
            j, b = PAPER_NAMES.get(source, ("Jk", "Bk"))
            rows.append(
                ConditionalRow(
                    run=label,
                    source=source,
                    paper_names=f"{j} / {b}",
                    states=", ".join(common.get("states") or []) or "none",
                    bk_common=_cell(common.get("Bk"), ci.get("Bk")),
                    jk_common=_cell(common.get("Jk"), ci.get("Jk")),
                    disagreement=_cell(cd.get("value"), cd.get("ci")),
                    wrong_groups=f"{cd['wrong_answer_groups']:,} of {cd['decision_correct_groups']:,}",
                    mismatches=f"{sup['mismatched']:,} among {sup['supported']:,}",
                    supported=f"{sup['correct']:,} / {sup['rejected']:,} / {sup['answered_null']:,}",
                )
            )
    return rows


def markdown_section(runs: Iterable[tuple[str, Mapping[str, Any]]]) -> str:
    """The Markdown section (title, note, table), or ``""`` when no run has the appendix-B entries."""
    rows = conditional_rows(runs)
    if not rows:
        return ""
    return "\n".join([f"## {CONDITIONAL_TITLE}", "", CONDITIONAL_NOTE, "", *table(HEADER, (r.cells() for r in rows))])
