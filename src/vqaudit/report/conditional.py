"""The appendix-B section of the reports: common-state comparison, conditional disagreement and quoted counts.

Reads each answerability source's ``diagnostics.json`` entries written by
:func:`vqaudit.metrics.conditional.conditional_diagnostics` (seed 000 §4, §5.2, appendix B): Bk and Jk on the
states every source shares (the paper's ``B_F^{SM}``), the conditional disagreement ``(Bk - Jk) / Bk``, "groups
with every decision right but a wrong supported answer" (the paper's "265 of 835 chart groups") and "numerical
mismatches among supported views" ("478 ... among 3,000 supported chart views"), beside the paper's per-source
names of Jk and Bk (J5/B5 charts, J4/B4 scenes, J3/B3 photos). A run scored before these entries existed adds no
row, so its report is unchanged.

With several runs of one benchmark, the section adds their paired differences (seed 000 §4: paired comparisons
reuse the same draws): for each later run holding a source, common-state Bk, common-state Jk and the conditional
disagreement minus those of the first run holding it, with 95% paired group-bootstrap intervals drawn with the
first run's recorded settings (:func:`vqaudit.metrics.conditional_paired.conditional_difference`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.markdown import table
from vqaudit.metrics.conditional import PAPER_NAMES
from vqaudit.metrics.conditional_paired import PAIRED_KEYS, ConditionalDifference, PairedDelta, conditional_difference
from vqaudit.schema import Outcome
from vqaudit.scored_state import paired_bootstrap

CONDITIONAL_TITLE = "Common states and conditional disagreement (Cha et al., arXiv:2609.34480, §5.2, appendix B)"
CONDITIONAL_NOTE = (
    "Percentages; brackets are 95% percentile intervals from the group bootstrap of each run and source (seed 000 "
    "§4). Common states: Bk and Jk over each group's views in the states every source shares, S and M (the photo "
    "control mask is the photo S state), keeping each source's questions and intervention mechanism (the paper's "
    "B_F^SM). Conditional disagreement = (Bk − Jk) / Bk over every state (the Bk and Jk of the first table, not "
    "the common-state columns beside it): the share of groups with every decision right that hold a wrong "
    "supported answer. Supported views are counted as answered correctly, rejected (abstained or invalid), "
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
    "conditional disagreement (all states)",
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


def _has_entries(entry: object) -> bool:
    return isinstance(entry, dict) and {"common_state", "conditional_disagreement", "supported_answers"} <= set(entry)


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
            if not _has_entries(d):
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


PAIRED_TITLE = "Paired differences against the first run (same bootstrap draws)"
PAIRED_NOTE = (
    "Percentage points, run − the first run of its benchmark holding the source (the base); brackets are 95% "
    "percentile intervals of the paired group bootstrap: every draw resamples the source's groups once and weighs "
    "each group alike in both runs (seed 000 §4), with the base's recorded draws and seed (`vqaudit score --draws "
    "--bootstrap-seed`; the draws of its own intervals). Δ Bk and Δ Jk are on the common states S and M; "
    "Δ conditional disagreement is on every view, n/a where a run has no group with every decision right."
)
PAIRED_HEADER = (
    "run",
    "base",
    "source",
    "draws",
    "Δ Bk (S, M)",
    "Δ Jk (S, M)",
    "Δ conditional disagreement (all states)",
    "note",
)


@dataclass(frozen=True)
class PairedRun:
    """A scored run as the paired differences read it.

    Attributes:
        label: the run's name in the report.
        run_dir: the run folder (its recorded bootstrap settings are read from it).
        benchmark: what tells the benchmark apart (runs are paired only when equal).
        outcomes: the run's outcomes.
        diagnostics: the run's ``diagnostics.json`` object (sources with the appendix-B entries are compared).
    """

    label: str
    run_dir: Path
    benchmark: str
    outcomes: Sequence[Outcome]
    diagnostics: Mapping[str, Any]


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:+.1f}"


@dataclass(frozen=True)
class PairedRow:
    """One later run and source: its paired differences against the base, or why there are none.

    Attributes:
        run: the later run's label.
        base: the base run's label.
        source: the source compared.
        draws: the bootstrap settings used, as ``200 draws, seed 0``.
        difference: the differences (None when the runs could not be paired).
        problem: why the runs could not be paired (one line), else None.
    """

    run: str
    base: str
    source: str
    draws: str
    difference: ConditionalDifference | None
    problem: str | None

    def deltas(self) -> list[tuple[str, str, bool]]:
        """Per key of :data:`PAIRED_KEYS`: the signed point, its ``[lo, hi]`` (or ""), and whether it holds 0."""
        out = []
        for key in PAIRED_KEYS:
            d = self.difference.deltas[key] if self.difference is not None else PairedDelta(None, None, None, None)
            ci = d.ci
            out.append(
                (
                    _signed(d.point),
                    "" if ci is None else f"[{_signed(ci[0])}, {_signed(ci[1])}]",
                    ci is not None and ci[0] <= 0.0 <= ci[1],
                )
            )
        return out

    def note(self) -> str:
        """The problem, or which run leaves the conditional disagreement undefined; "" when nothing to say."""
        if self.problem is not None:
            return self.problem
        assert self.difference is not None
        d = self.difference.deltas["conditional_disagreement"]
        missing = [label for label, v in ((self.base, d.a), (self.run, d.b)) if v is None]
        if missing:
            return "no group with every decision right in " + " and ".join(missing)
        return ""

    def cells(self) -> list[str]:
        """The Markdown cells in the order of :data:`PAIRED_HEADER`."""
        shown = [f"{p} {ci}".strip() for p, ci, _ in self.deltas()]
        return [self.run, self.base, self.source, self.draws, *shown, self.note().replace("|", "/")]


def paired_rows(runs: Sequence[PairedRun]) -> list[PairedRow]:
    """The paired differences of every later run of a benchmark against the first run of it holding each source.

    Only sources whose ``diagnostics.json`` entry holds the appendix-B entries are compared. The draws are the
    base's recorded settings (:func:`vqaudit.scored_state.paired_bootstrap`).

    Returns:
        Rows in run order, sources sorted within a run; a pair whose groups or views differ gets a row with its
        ``problem`` (the one-line error) and no difference.
    """
    base_of: dict[tuple[str, str], PairedRun] = {}
    rows = []
    for r in runs:
        for source in sorted(s for s, entry in r.diagnostics.items() if _has_entries(entry)):
            base = base_of.setdefault((source, r.benchmark), r)
            if base is r:
                continue
            boot = paired_bootstrap(base.run_dir, r.run_dir)
            draws = f"{boot.draws:,} draws, seed {boot.seed}"
            try:
                diff = conditional_difference(base.outcomes, r.outcomes, source, n_draws=boot.draws, seed=boot.seed)
            except VqauditError as exc:
                rows.append(PairedRow(r.label, base.label, source, draws, None, str(exc).splitlines()[0]))
                continue
            rows.append(PairedRow(r.label, base.label, source, draws, diff, None))
    return rows


def markdown_section(runs: Iterable[tuple[str, Mapping[str, Any]]], paired: Sequence[PairedRow] = ()) -> str:
    """The Markdown section, or ``""`` when no run has the appendix-B entries.

    Args:
        runs: ``(run label, diagnostics.json object)`` per run, in report order.
        paired: :func:`paired_rows` of the runs; when given, a subsection of them follows the table.
    """
    rows = conditional_rows(runs)
    if not rows:
        return ""
    lines = [f"## {CONDITIONAL_TITLE}", "", CONDITIONAL_NOTE, "", *table(HEADER, (r.cells() for r in rows))]
    if paired:
        lines += ["", f"### {PAIRED_TITLE}", "", PAIRED_NOTE, "", *table(PAIRED_HEADER, (p.cells() for p in paired))]
    return "\n".join(lines)
