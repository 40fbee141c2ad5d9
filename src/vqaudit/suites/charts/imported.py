"""Chart groups from published chart data: PlotQA annotations with their QA pairs, and ChartQA's CSV tables.

``vqaudit build charts --from plotqa --annotations annotations.json [--qa qa_pairs.json]`` and ``--from chartqa
--tables DIR`` turn each plot (or table) into a **declared table** and one chart group over it, with the same
five states, witnesses, checker and ``verify`` as the bundled charts (seed 000, §3.2; docs/papers.md).

**PlotQA** annotations and QA pairs are read by :mod:`vqaudit.suites.charts.plotqa`, **ChartQA** tables by
:mod:`vqaudit.suites.charts.chartqa` (each layout is described there); the declared-domain rules both share and
the group build are here.

The declared domain of a plot never depends on a hidden value:

- the **axis range** is the plot's own declared value axis: its major tick labels, ``[first, last]``, which must
  be evenly spaced (their spacing is the tick step);
- the **grid** is the finest decimal step the plot's printed values use (``10**-d`` for ``d`` decimals), or
  ``--grid STEP``; a plot whose values do not fit a finite grid of at most ``max_grid_points`` points inside the
  axis, or lie outside the axis, is **skipped and counted** (``skipped`` in the manifest), never snapped.

ChartQA tables (``Entity,<series>...`` CSV, values such as ``19.3%``) have no axis of their own: as for the
bundled tables, the axis is declared per table from the whole table before any question is drawn (``0`` or a
round lower bound, up to the first round number at or above the largest value), never per chart.

A group's queried cell comes from a QA pair when ``--qa`` is given: a numeric answer equal to exactly one cell
whose category (and, with several series, series name) the question names; a plot without such a pair is
skipped. The group's question is vqaudit's own lookup question for that cell (the program decides the labels);
the PlotQA question and answer are kept in the meta (``qa``). One category is held out of the world so that the
invalid-reference view (``I``) can name it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from vqaudit.errors import VqauditError
from vqaudit.files import sha256_bytes
from vqaudit.schema import ChartGroupMeta, Group, View
from vqaudit.suites.charts.declared_tables import table_to_json
from vqaudit.suites.charts.programs import Lookup
from vqaudit.suites.charts.real_table import RealTable
from vqaudit.suites.charts.tables import TABLES_DIR, declare_table
from vqaudit.suites.charts.world import ChartKind, World, replace_category
from vqaudit.suites.common import GroupBuild, build_benchmark
from vqaudit.textsafe import hidden_characters

MAX_GRID_POINTS = 10_000
"""Default cap on the grid points inside a declared axis (a finer grid is "not a finite grid" here)."""
MAX_SERIES = 2
"""The renderer draws one or two series (:data:`vqaudit.suites.charts.figure.COLORS`)."""


@dataclass(frozen=True)
class ImportedPlot:
    """One usable plot or table: its declared table, chart kind, queried cell (or None: drawn) and origin."""

    table: RealTable
    kind: ChartKind
    query: tuple[str, str] | None
    qa: dict[str, Any] | None
    origin: str


@dataclass
class ImportResult:
    """The usable plots and the skipped ones, counted by reason."""

    plots: list[ImportedPlot]
    skipped: dict[str, int]
    n_read: int
    first: dict[str, str] = field(default_factory=dict)
    """Reason -> where the first plot skipped for it is (a table's file name, ``annotations.json row 3``)."""

    def skip(self, reason: str, where: str | None = None) -> None:
        """Count one skipped plot; ``where`` names it (kept for the first plot of each reason)."""
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        if where is not None:
            self.first.setdefault(reason, where)

    def reasons(self) -> str:
        """Every reason with its count and first plot: ``"a value is not a number: 2 (first: a.json row 1)"``."""
        return "; ".join(
            f"{k}: {n}" + (f" (first: {self.first[k]})" if k in self.first else "")
            for k, n in sorted(self.skipped.items())
        )


def label_problem(text: str) -> str | None:
    """Why a category or series name cannot be drawn as a label a reader sees, or None.

    Refused: characters that draw nothing or reorder what follows (:func:`vqaudit.textsafe.hidden_characters`:
    zero-width spaces and joiners, bidirectional overrides, controls, a blank name), and characters the chart
    font has no glyph for (:func:`vqaudit.suites.charts.figure.undrawable_characters`): the chart would show an
    empty box or nothing, and the view could not be certified answerable from its pixels. Emoji are decided by
    the font like every other character: DejaVu Sans draws some in outline (U+1F600, U+2764), which are then
    visible labels, and lacks most (U+1F680), which are refused.
    """
    from vqaudit.suites.charts.figure import undrawable_characters

    hidden = hidden_characters(text)
    if hidden:
        return f"holds an invisible or direction-changing character ({', '.join(hidden)})"
    missing = undrawable_characters(text)
    if missing:
        return f"holds a character the chart font cannot draw ({', '.join(missing)})"
    return None


HIDDEN_LABEL = "a category or series name holds an invisible or direction-changing character"
UNDRAWABLE_LABEL = "a category or series name holds a character the chart font cannot draw (an emoji?)"


def labels_skip(names: Sequence[str]) -> tuple[str, str] | None:
    """``(skip reason, detail)`` for the first name :func:`label_problem` refuses, or None when all are drawable."""
    for name in names:
        problem = label_problem(name)
        if problem is not None:
            reason = HIDDEN_LABEL if problem.startswith("holds an invisible") else UNDRAWABLE_LABEL
            return reason, f"{name!r} {problem}"
    return None


def parse_number(value: Any) -> Fraction | None:
    """The exact value of a printed number ("12.5", 12.5, "1,200", "19.3%", "1e+06"), or None."""
    if isinstance(value, bool) or value is None:
        return None
    text = repr(value) if isinstance(value, float) else str(value)
    text = text.strip().replace(",", "").rstrip("%*").strip()
    if not text or text.lower() in ("nan", "-", "inf", "-inf"):
        return None
    try:
        number = Fraction(text)
    except (ValueError, ZeroDivisionError):
        return None
    return number


def _decimals(value: Fraction) -> int | None:
    """Decimal places of a terminating decimal (None if it does not terminate)."""
    den, d = value.denominator, 0
    while den % 10 == 0:
        den //= 10
        d += 1
    while den % 2 == 0 or den % 5 == 0:
        den //= 2 if den % 2 == 0 else 5
        d += 1
    return d if den == 1 else None


def label_text(value: Any) -> str:
    """A JSON label as text: a whole float without its ``.0`` (``2004.0`` -> ``2004``), other values stripped."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def fit_grid(
    values: Sequence[Fraction], axis_lo: Fraction, axis_hi: Fraction, grid: Fraction | None, max_points: int
) -> Fraction | str:
    """The declared grid step (``grid``, or the values' finest printed decimal), or why the values fit none.

    Returns:
        The step, or the skip reason: a value outside ``[axis_lo, axis_hi]``, a value that is no terminating
        decimal, a value off ``grid``, or more than ``max_points`` grid steps across the axis.
    """
    if any(not axis_lo <= v <= axis_hi for v in values):
        return "a value lies outside the declared axis"
    if grid is None:
        places = [_decimals(v) for v in values]
        if any(p is None for p in places):
            return "values fit no finite decimal grid"
        grid = Fraction(1, 10 ** max(p for p in places if p is not None))
    if any((v / grid).denominator != 1 for v in values):
        return "values off the declared grid"
    if (axis_hi - axis_lo) / grid > max_points:
        return f"the grid needs more than {max_points} points"
    return grid


def table_name(prefix: str, key: str, payload: Any) -> str:
    """``PREFIX-KEY-HASH``: the key made file-safe (40 characters at most) and 10 hex digits of the payload's hash."""
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:10]
    safe = re.sub(r"[^A-Za-z0-9_-]+", "_", key)[:40]
    return f"{prefix}-{safe}-{digest}"


def read_json_file(path: Path, what: str) -> Any:
    """Parse a UTF-8 JSON file.

    Raises:
        VqauditError: the file is missing (named as the ``what`` file), not UTF-8, or not JSON (line, column).
    """
    if not path.is_file():
        raise VqauditError(f"{path}: {what} file not found")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise VqauditError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}") from None
    except UnicodeDecodeError as exc:
        raise VqauditError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def _world(plot: ImportedPlot, rng: np.random.Generator) -> tuple[World, int, int, World] | str:
    table = plot.table
    if plot.query is not None:
        series, category = plot.query
    else:
        series = table.series[int(rng.integers(len(table.series)))]
        category = table.categories[int(rng.integers(len(table.categories)))]
    spare_pool = [c for c in table.categories if c != category]
    if len(spare_pool) < 2:
        return "fewer than three categories (one is held out for the invalid-reference view)"
    spare = spare_pool[int(rng.integers(len(spare_pool)))]
    cats = tuple(c for c in table.categories if c != spare)
    values = tuple(tuple(Fraction(repr(table.values[(s, c)])) for c in cats) for s in table.series)
    values = tuple(tuple((v / table.grid_step).limit_denominator(1) * table.grid_step for v in row) for row in values)
    world = World(
        table=table.name,
        kind=plot.kind,
        title=table.title,
        category_label=table.category_label,
        value_label=table.value_label,
        unit=table.unit,
        categories=cats,
        series=table.series,
        values=values,
        axis_lo=table.axis_lo,
        axis_hi=table.axis_hi,
        grid_step=table.grid_step,
        tick_step=table.tick_step,
    )
    s, c = table.series.index(series), cats.index(category)
    invalid = replace_category(world, c, table, rng)
    if invalid is None:  # pragma: no cover - the spare category is always available
        return "no category to hold out"
    return world, s, c, invalid


def _group(plot: ImportedPlot, seed: int, g: int, prefix: str) -> GroupBuild | str:
    from vqaudit.suites.charts.build import group_from_plan, plan_group

    rng = np.random.default_rng([seed, g])
    drawn = _world(plot, rng)
    if isinstance(drawn, str):
        return drawn
    world, s, c, invalid = drawn
    program = Lookup((world.series[s], world.categories[c]))
    for _ in range(10):
        try:
            plan = plan_group(rng, plot.table, world, s, c, invalid, program, False)
        except VqauditError:
            return "every mask leaks (no pixel witness)"
        if plan is not None:
            meta: dict[str, Any] = {"imported": plot.origin}
            if plot.qa is not None:
                meta["qa"] = plot.qa
            built = group_from_plan(plan, f"{prefix}-{g:05d}", meta)
            path = f"{TABLES_DIR}/{plot.table.name}.json"
            return replace(built, certificates={**built.certificates, path: table_to_json(plot.table)})
    return "no answer-preserving or answer-changing edit found"


def build_imported_charts(
    out: Path,
    source: str,
    result: ImportResult,
    inputs: Sequence[Path],
    *,
    seed: int,
    max_groups: int,
    on_group: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Build a chart benchmark folder from imported plots (one group each, in input order, up to ``max_groups``).

    Returns:
        The manifest: the bundled charts' fields plus ``from`` (``plotqa``/``chartqa``), ``inputs`` (file
        SHA-256), ``n_plots_read``, ``n_plots_usable``, ``skipped`` (``{reason: plots}``) and ``tables`` (the
        declared tables, whose JSON is in ``tables/``).

    Raises:
        VqauditError: a non-empty output folder, or no plot left to build a group from.
    """
    if out.exists() and any(out.iterdir()):
        raise VqauditError(f"{out}: output folder exists and is not empty; choose a new folder")
    for plot in result.plots:
        declare_table(plot.table)
    builds: list[GroupBuild] = []
    for g, plot in enumerate(result.plots):
        if len(builds) >= max_groups:
            break
        built = _group(plot, seed, g, f"charts-{source}")
        if isinstance(built, str):
            result.skip(built, plot.origin)
        else:
            builds.append(built)
    if not builds:
        reasons = result.reasons() or "no plot in the input"
        where = ", ".join(str(p) for p in inputs)
        raise VqauditError(f"{where}: no {source} plot gave a group (skipped, by reason: {reasons})")

    from vqaudit.suites.charts.build import image_versions
    from vqaudit.suites.charts.render import RENDERER

    def fields(groups: Sequence[Group], views: Sequence[View]) -> dict[str, Any]:
        used = {ChartGroupMeta.of(g).table for g in groups}
        return {
            "from": source,
            "seed": seed,
            "n_groups": len(groups),
            "n_views": len(views),
            "states": sorted({v.state for v in views}),
            "programs": "lookup",
            "determined_views": False,
            "inputs": {p.name: sha256_bytes(p.read_bytes()) for p in _files(inputs)},
            "n_plots_read": result.n_read,
            "n_plots_usable": len(builds),
            "skipped": dict(sorted(result.skipped.items())),
            "renderer": RENDERER,
            "versions": image_versions(),
            "tables": {p.table.name: p.table.source for p in result.plots if p.table.name in used},
        }

    return build_benchmark(out, "charts", iter(builds), fields, on_group)


def _files(paths: Sequence[Path]) -> Iterator[Path]:
    for p in paths:
        if p.is_dir():
            yield from sorted(p.glob("*.csv"))
        else:
            yield p
