"""Grouped-metric tables of the reports: per chart kind, per scene template and per state.

Each table scores one run's source by strata with :func:`vqaudit.metrics.grouped`: the source's groups are
resampled once and every stratum is scored on the same draws (seed 000 §4), so a row's 95% interval and the
comparison of two rows come from the same resamples.

- per chart kind (``bar``, ``hbar``, ``line``, ...; the group's ``kind``, :class:`~vqaudit.schema.ChartGroupMeta`)
  and per scene template (CLEVR's ``family/index``, :class:`~vqaudit.schema.SceneGroupMeta`): Jk, Bk and Ebal of
  the stratum's groups;
- per state (every answerability source): Jk and Bk over each group's view in that state (the share of groups
  whose view in the state met its obligation / had the right decision). Ebal is left out: a state holds views of
  one obligation, so one of its two rates is undefined.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vqaudit.errors import VqauditError
from vqaudit.files import read_json, read_jsonl
from vqaudit.markdown import table
from vqaudit.metrics import DEFAULT_DRAWS, grouped
from vqaudit.report.html_tables import state_rank
from vqaudit.schema import ChartGroupMeta, Group, Outcome, SceneGroupMeta
from vqaudit.score import load_outcomes
from vqaudit.store import BenchmarkFolder, RunFolder

GROUPED_NOTE = (
    "Percentages; brackets are 95% percentile intervals from one group bootstrap per run and source "
    "(every row scored on the same draws of the source's groups; seed 000 §4). Per state, Jk and Bk "
    "are over each group's view in that state."
)


@dataclass(frozen=True)
class Grouping:
    """One kind of grouped table: its title, the source it applies to, its metrics, and the strata.

    Attributes:
        by: the table's name (``chart kind``, ``scene template``, ``state``).
        source: the source it applies to, or None for every answerability source.
        metrics: the metrics shown (keys of :data:`vqaudit.metrics.METRIC_KEYS`).
        group_key: the stratum of a group, read from its typed meta; None when the stratum is the view's state.
    """

    by: str
    source: str | None
    metrics: tuple[str, ...]
    group_key: Callable[[Group], str] | None


GROUPINGS: tuple[Grouping, ...] = (
    Grouping("chart kind", "charts", ("Jk", "Bk", "Ebal"), lambda g: ChartGroupMeta.of(g).kind),
    Grouping("scene template", "scenes", ("Jk", "Bk", "Ebal"), lambda g: SceneGroupMeta.of(g).template),
    Grouping("state", None, ("Jk", "Bk"), None),
)
"""The report's grouped tables, in order."""


@dataclass(frozen=True)
class GroupedRow:
    """One stratum of a table: its key, its counts, and per metric the point and interval as text."""

    stratum: str
    n_groups: int
    n_views: int
    cells: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class GroupedTable:
    """One run's table for one source and one :class:`Grouping`."""

    run: str
    source: str
    by: str
    metrics: tuple[str, ...]
    rows: tuple[GroupedRow, ...]


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"


def _interval(ci: list[float] | None) -> str:
    return "" if ci is None else f"[{_pct(ci[0])}, {_pct(ci[1])}]"


def _key_reader(key_of: Mapping[str, str]) -> Callable[[Outcome], str]:
    def by(outcome: Outcome) -> str:
        return key_of[outcome.group_id]

    return by


def benchmark_groups(bench_dir: Path) -> dict[str, Group]:
    """The groups of a benchmark folder by id (``groups.jsonl`` only; the views are not read).

    Raises:
        VqauditError: ``groups.jsonl`` is missing or malformed.
    """
    return {g.group_id: g for g in read_jsonl(BenchmarkFolder(bench_dir).groups, Group)}


def grouped_tables(
    run: str,
    outcomes: Sequence[Outcome],
    sources: Sequence[str],
    groups: Mapping[str, Group] | None,
    *,
    n_draws: int = DEFAULT_DRAWS,
) -> list[GroupedTable]:
    """The grouped tables of one run: for each source of ``sources`` (answerability sources), each grouping.

    Args:
        run: the run's label.
        outcomes: the run's outcomes.
        sources: the answerability sources to tabulate.
        groups: the benchmark's groups by id; None leaves out the tables read from group meta (kind, template).
        n_draws: group-bootstrap draws per source (seed 000 §4: 10,000).

    Raises:
        VqauditError: a scored group missing from ``groups``, a group meta that breaks its contract (the message
            names the group and field), or outcomes the group metrics refuse.
    """
    tables = []
    for source in sources:
        mine = [o for o in outcomes if o.source == source]
        if not mine:
            continue
        for g in GROUPINGS:
            if g.source not in (None, source) or (g.group_key is not None and groups is None):
                continue
            if g.group_key is None:
                states = sorted({o.state for o in mine}, key=state_rank)
                table = grouped(g.metrics, mine, by=lambda o: o.state, order=states, n_draws=n_draws)
            else:
                key_of = {}
                for gid in sorted({o.group_id for o in mine}):
                    if groups is None or gid not in groups:
                        raise VqauditError(f"groups.jsonl: no group {gid!r}, which the run's outcomes name")
                    key_of[gid] = g.group_key(groups[gid])
                table = grouped(g.metrics, mine, by=_key_reader(key_of), n_draws=n_draws)
            rows = tuple(
                GroupedRow(
                    s.key, s.n_groups, s.n_views, tuple((_pct(s.values[m]), _interval(s.ci[m])) for m in g.metrics)
                )
                for s in table.strata
            )
            tables.append(GroupedTable(run, source, g.by, g.metrics, rows))
    return tables


def grouped_markdown(tables: Sequence[GroupedTable], *, missing_benchmarks: Sequence[str] = ()) -> str:
    """The Markdown section of the grouped tables (empty when there are none).

    ``missing_benchmarks``: runs whose benchmark folder was not found (their per-kind and per-template tables are
    left out; the section says so).
    """
    if not tables:
        return ""
    lines = ["## Grouped metrics (per chart kind, scene template and state)", "", GROUPED_NOTE]
    if missing_benchmarks:
        lines += [
            "",
            "Benchmark folder not found, per-kind and per-template tables left out for: "
            + ", ".join(missing_benchmarks)
            + ".",
        ]
    for t in tables:
        head = [t.by, "groups", "views", *t.metrics]
        lines += [
            "",
            f"### {t.run}: {t.source} per {t.by}",
            "",
            *table(
                head,
                [
                    [r.stratum, str(r.n_groups), str(r.n_views), *(f"{p} {ci}".rstrip() for p, ci in r.cells)]
                    for r in t.rows
                ],
            ),
        ]
    return "\n".join(lines)


def markdown_section(run_dirs: Sequence[Path], *, n_draws: int = DEFAULT_DRAWS) -> str:
    """The grouped tables of scored runs as Markdown (the Markdown report's call site).

    Each run's outcomes and metrics are read from its folder; its benchmark's groups from the folder the run
    records (:meth:`vqaudit.store.RunFolder.benchmark`).

    Raises:
        VqauditError: as :func:`grouped_tables`, or an unreadable run folder.
    """
    tables: list[GroupedTable] = []
    missing: list[str] = []
    for run_dir in run_dirs:
        folder = RunFolder(run_dir)
        metrics = read_json(folder.metrics)
        sources = sorted(s for s in metrics if s != "upd") if isinstance(metrics, dict) else []
        groups: dict[str, Group] | None = None
        if any(g.group_key is not None and g.source in sources for g in GROUPINGS):
            try:
                groups = benchmark_groups(folder.benchmark())
            except VqauditError:
                missing.append(run_dir.name)
        tables += grouped_tables(run_dir.name, load_outcomes(run_dir), sources, groups, n_draws=n_draws)
    return grouped_markdown(tables, missing_benchmarks=missing)


def grouped_by_source(
    runs: Iterable[tuple[str, Sequence[Outcome], Sequence[str], Path]], *, n_draws: int = DEFAULT_DRAWS
) -> dict[str, list[GroupedTable]]:
    """The grouped tables of runs by source (the HTML report's call site).

    Args:
        runs: per run, its label, outcomes, answerability sources and benchmark folder.
        n_draws: group-bootstrap draws per run and source.

    Raises:
        VqauditError: as :func:`grouped_tables`, or an unreadable ``groups.jsonl``.
    """
    out: dict[str, list[GroupedTable]] = {}
    for label, outcomes, sources, bench_dir in runs:
        for t in grouped_tables(label, outcomes, sources, benchmark_groups(bench_dir), n_draws=n_draws):
            out.setdefault(t.source, []).append(t)
    return out
