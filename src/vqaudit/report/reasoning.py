"""The report's reasoning sections: what thinking does to abstention, and the token-budget sweep.

Both the Markdown report (:mod:`vqaudit.report.compare`) and the HTML report (:mod:`vqaudit.report.html`) take
their rows from here; the numbers come from :mod:`vqaudit.metrics.reasoning` and :mod:`vqaudit.metrics.sweep`.

- **Reasoning** (per run and answerability source, only for runs where some reply held reasoning): the share of
  replies that finished their reasoning, reasoning length (median, p90, characters), drafts overruled, the run's
  token usage (``run.json`` ``usage``, when the backend reported it), and Jk, Bk, Ebal, EU, EM by reasoning-length
  quartile with group-bootstrap intervals (seed 000 §4).
- **Token-budget sweep**: runs of one model on one benchmark whose ``run.json`` ``params.max_tokens`` differ
  (``vqaudit eval --budgets``) are one sweep: Ebal, EU, EM, Jk and Bk per budget with intervals, and the paired
  difference to the largest budget.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.files import write_json
from vqaudit.markdown import row, separator, table
from vqaudit.metrics.bootstrap import DEFAULT_DRAWS
from vqaudit.metrics.reasoning import QUARTILE_METRICS, ReasoningSummary, reasoning_summary
from vqaudit.metrics.sweep import SWEEP_METRICS, BudgetSweep, budget_sweep
from vqaudit.schema import Outcome
from vqaudit.store import RunFolder

USAGE_KEYS = ("replies", "prompt_tokens", "completion_tokens", "reasoning_tokens")
"""The token usage sums of ``run.json`` ``usage`` shown in the report, in order."""

REASONING_NOTE = (
    "Replies holding reasoning (tags or the server's reasoning field). finished: share of them whose reasoning "
    "closed (the others ran out of tokens while thinking and are invalid); chars: reasoning length in characters; "
    "drafts overruled: finished replies whose final decision differs from the last answerability decision drafted "
    "inside the reasoning, of the finished replies holding a draft."
)
QUARTILE_NOTE = (
    "Quartiles split the groups by their mean reasoning length per view (a view without reasoning counts 0); each "
    "quartile is scored on its own groups, percentages with 95% group-bootstrap intervals "
    "(Cha et al., arXiv:2609.34480, §4)."
)
SWEEP_NOTE = (
    "One model at several max_tokens budgets on one benchmark. Percentages with 95% group-bootstrap intervals; "
    "Δ is the paired difference to the largest budget (the same resampled groups for every budget; "
    "Cha et al., arXiv:2609.34480, §4). unfinished: views whose reasoning ran out of tokens (invalid)."
)


@dataclass(frozen=True)
class ReasoningRun:
    """One scored run as the reasoning sections read it.

    Attributes:
        label: the run's label in the report.
        model: its model spec.
        bench: its benchmark folder (resolved).
        max_tokens: ``run.json`` ``params.max_tokens`` (None when not recorded).
        usage: ``run.json`` ``usage`` token sums (:data:`USAGE_KEYS`), None when the run has none.
        outcomes: its outcomes.
        answer_sources: its answerability sources (reasoning-length quartiles and budget sweeps are scored on
            these; an MM-UPD run has none and gets shares and lengths only).
    """

    label: str
    model: str
    bench: Path
    max_tokens: int | None
    usage: dict[str, int | None] | None
    outcomes: list[Outcome]
    answer_sources: frozenset[str]


def reasoning_run(
    label: str, run_dir: Path, bench: Path | None, outcomes: Sequence[Outcome], answer_sources: Iterable[str]
) -> ReasoningRun:
    """Read what the reasoning sections need of a scored run folder (``run.json``; outcomes already loaded).

    ``bench`` is the run's benchmark folder (None: the absolute path ``run.json`` records). ``usage`` is
    ``run.json``'s token sums (:class:`vqaudit.store.RunUsage`); a run made before backends
    reported usage has none.
    """
    info = RunFolder(run_dir).read_info()
    budget = info.params.get("max_tokens")
    return ReasoningRun(
        label=label,
        model=info.model,
        bench=(bench or Path(info.benchmark)).resolve(),
        max_tokens=budget if isinstance(budget, int) and not isinstance(budget, bool) else None,
        usage=info.usage.model_dump() if info.usage is not None else None,
        outcomes=list(outcomes),
        answer_sources=frozenset(answer_sources),
    )


def _pct(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{100 * value:.1f}"


def _signed(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{100 * value:+.1f}"


def _chars(value: float | None) -> str:
    """Characters: whole numbers plain, others (a median of two, an interpolated percentile) to one decimal."""
    if value is None:
        return "n/a"
    tenths = round(value, 1)
    return f"{tenths:,.0f}" if tenths == int(tenths) else f"{tenths:,.1f}"


def _interval(ci: list[float] | None) -> str:
    return "" if not ci else f"[{_pct(ci[0])}, {_pct(ci[1])}]"


def _count_share(n: int, of: int, share: float | None) -> str:
    return f"{n} of {of} ({_pct(share)}%)" if of else "–"  # none to count: no bare "0" that reads as a count


@dataclass(frozen=True)
class ReasoningRows:
    """The reasoning section's rows of one run, ready to render.

    Attributes:
        label: the run's label.
        usage: ``(key, value)`` token sums, empty when the run has no usage.
        sources: ``(source, summary row, quartile rows)``: the summary row maps ``views``, ``reasoning``,
            ``finished``, ``median``, ``p90``, ``overruled`` to text; each quartile row maps ``quartile``,
            ``chars``, ``groups`` to text and ``cells`` to ``[(metric, point, interval)]``.
    """

    label: str
    usage: list[tuple[str, int]]
    sources: list[tuple[str, dict[str, str], list[dict[str, Any]]]]


def scored_runs(run_dirs: Sequence[Path], answer_sources: Sequence[Iterable[str]]) -> list[ReasoningRun]:
    """The reasoning view of scored run folders, each with its answerability sources.

    A run folder holding ``metrics.json`` but no ``outcomes.jsonl`` (written by hand or by another tool) has no
    replies to summarise: it is left out, and the report shows what it always did for it.
    """
    from vqaudit.score import load_outcomes

    return [
        reasoning_run(d.name, d, None, load_outcomes(d), sources)
        for d, sources in zip(run_dirs, answer_sources, strict=True)
        if RunFolder(d).outcomes.is_file()
    ]


def reasoning_rows(runs: Sequence[ReasoningRun], *, n_draws: int = DEFAULT_DRAWS) -> list[ReasoningRows]:
    """The reasoning section of the runs where some reply held reasoning; ``[]`` when none did.

    Args:
        runs: the report's runs.
        n_draws: group-bootstrap draws per quartile (seed 000 §4: 10,000).
    """
    out = []
    for r in runs:
        summaries: dict[str, ReasoningSummary] = {}
        for quartiles in (True, False):  # answerability sources get quartiles, MM-UPD shares and lengths only
            mine = [o for o in r.outcomes if (o.source in r.answer_sources) == quartiles]
            summaries.update(reasoning_summary(mine, quartiles=quartiles, n_draws=n_draws) if mine else {})
        if not summaries:
            continue
        # a count no reply reported (None) is left out: shown as "n/a", never as 0
        usage = [(k, v) for k in USAGE_KEYS if (v := (r.usage or {}).get(k)) is not None]
        out.append(
            ReasoningRows(
                label=r.label,
                usage=usage,
                sources=[(s, _summary_row(m), _quartile_rows(m)) for s, m in sorted(summaries.items())],
            )
        )
    return out


def _summary_row(m: ReasoningSummary) -> dict[str, str]:
    return {
        "views": str(m.n_views),
        "reasoning": str(m.n_reasoning),
        "finished": _count_share(m.n_finished, m.n_reasoning, m.finished_share),
        "median": _chars(m.median_chars),
        "p90": _chars(m.p90_chars),
        "overruled": _count_share(m.n_overruled, m.n_drafts, m.overruled_share),
    }


def _quartile_rows(m: ReasoningSummary) -> list[dict[str, Any]]:
    rows = []
    for q in m.quartiles:
        chars = (
            "–"
            if q.lo_chars is None
            else (_chars(q.lo_chars) if q.lo_chars == q.hi_chars else f"{_chars(q.lo_chars)}–{_chars(q.hi_chars)}")
        )
        rows.append(
            {
                "quartile": f"Q{q.index}",
                "chars": chars,
                "groups": str(q.n_groups),
                "cells": [(k, _pct(q.metrics[k]), _interval(q.ci[k])) for k in QUARTILE_METRICS],
            }
        )
    return rows


def reasoning_markdown(rows: Sequence[ReasoningRows]) -> str:
    """The Markdown "Reasoning" section of :func:`reasoning_rows` (``""`` when no run held reasoning)."""
    if not rows:
        return ""
    lines = [
        "## Reasoning",
        "",
        REASONING_NOTE,
        "",
        *table(
            ["run", "source", "views", "with reasoning", "finished", "chars, median", "chars, p90", "drafts overruled"],
            [
                [
                    r.label,
                    source,
                    *(f"{s[k]}" for k in ("views", "reasoning", "finished", "median", "p90", "overruled")),
                ]
                for r in rows
                for source, s, _ in r.sources
            ],
        ),
    ]
    used = [r for r in rows if r.usage]
    if used:
        lines += [
            "",
            "Token usage reported by the backend (sums over the run's replies, run.json):",
            "",
            row(["run", *(k.replace("_", " ") for k in USAGE_KEYS)]),
            separator(1 + len(USAGE_KEYS)),
        ]
        for r in used:
            have = dict(r.usage)
            lines.append(row([r.label, *(f"{have[k]:,}" if k in have else "n/a" for k in USAGE_KEYS)]))
    if not any(quartiles for r in rows for _, _, quartiles in r.sources):
        return "\n".join(lines)
    lines += [
        "",
        "### By reasoning-length quartile",
        "",
        QUARTILE_NOTE,
        "",
        row(["run", "source", "quartile", "group mean chars", "groups", *QUARTILE_METRICS]),
        separator(5 + len(QUARTILE_METRICS)),
    ]
    for r in rows:
        for source, _, quartiles in r.sources:
            for q in quartiles:
                lines.append(
                    row(
                        [
                            r.label,
                            source,
                            f"{q['quartile']}",
                            f"{q['chars']}",
                            f"{q['groups']}",
                            *(f"{p} {ci}".rstrip() for _, p, ci in q["cells"]),
                        ]
                    )
                )
    return "\n".join(lines)


def budget_sweeps(runs: Sequence[ReasoningRun], *, n_draws: int = DEFAULT_DRAWS) -> list[BudgetSweep]:
    """The budget sweeps among the runs: one per model, benchmark and source run at two or more budgets.

    Runs of one model spec on one benchmark (the same resolved folder) whose ``max_tokens`` are all recorded and
    distinct form a sweep (:func:`vqaudit.metrics.sweep.budget_sweep`), one per answerability source they hold;
    runs of one model at one budget twice are not a sweep (they are compared in the other sections), nor are runs
    whose groups or views differ (a shard beside a whole run).
    """
    by_key: dict[tuple[str, Path], list[ReasoningRun]] = {}
    for r in runs:
        by_key.setdefault((r.model, r.bench), []).append(r)
    sweeps = []
    for group in by_key.values():
        budgets = [r.max_tokens for r in group]
        if len(group) < 2 or None in budgets or len(set(budgets)) != len(budgets):
            continue
        sources = sorted({o.source for r in group for o in r.outcomes if o.source in r.answer_sources})
        for source in sources:
            try:
                sweeps.append(
                    budget_sweep(
                        [(r.max_tokens or 0, r.label, [o for o in r.outcomes if o.source == source]) for r in group],
                        source,
                        n_draws=n_draws,
                    )
                )
            except VqauditError:  # not the same groups and views (e.g. one run is a shard): no paired sweep
                continue
    return sweeps


def sweep_rows(sweep: BudgetSweep) -> list[dict[str, Any]]:
    """One row per budget: ``budget``, ``run``, ``unfinished`` and ``cells``.

    Each cell is ``(metric, point, interval, diff, diff interval)`` as text: percentages, the difference to the
    largest budget in signed points (its interval ``""`` without draws).
    """
    rows = []
    for p in sweep.points:
        cells = []
        for k in SWEEP_METRICS:
            d = p.diff[k]
            diff = "n/a" if d is None else _signed(d[0])
            spread = "" if d is None or d[1] is None or d[2] is None else f"[{_signed(d[1])}, {_signed(d[2])}]"
            cells.append((k, _pct(p.metrics[k]), _interval(p.ci[k]), diff, spread))
        rows.append(
            {"budget": p.budget, "run": p.run, "unfinished": f"{p.n_unfinished} of {p.n_reasoning}", "cells": cells}
        )
    return rows


def sweep_markdown(sweeps: Sequence[BudgetSweep]) -> str:
    """The Markdown "Token-budget sweep" section (``""`` without sweeps)."""
    if not sweeps:
        return ""
    lines = ["## Token-budget sweep", "", SWEEP_NOTE]
    for sweep in sweeps:
        head = ["budget", "run", "unfinished"] + [x for k in SWEEP_METRICS for x in (k, f"Δ{k}")]
        lines += [
            "",
            f"### {sweep.source}: Δ against max_tokens = {sweep.reference}",
            "",
            row(head),
            separator(len(head)),
        ]
        for line in sweep_rows(sweep):
            cells = [f"{p} {ci}".rstrip() + f" | {diff} {spread}".rstrip() for _, p, ci, diff, spread in line["cells"]]
            lines.append(row([f"{line['budget']}", f"{line['run']}", f"{line['unfinished']}", *cells]))
    return "\n".join(lines)


def write_sweep_json(run_dirs: Sequence[Path], path: Path, *, n_draws: int = DEFAULT_DRAWS) -> list[BudgetSweep]:
    """Write ``sweep.json``: the budget sweep of scored runs of one model at several budgets; return the sweeps.

    The file holds ``format`` (``vqaudit-sweep/1``), ``model``, ``benchmark``, ``runs`` (budget -> run folder)
    and ``sources``: per answerability source, :meth:`~vqaudit.metrics.sweep.BudgetSweep.as_dict` (fractions in
    [0, 1]; ``diff`` is ``[point, lo, hi]`` against the largest budget).

    Raises:
        VqauditError: a run not scored, or the runs are not one model on one benchmark at distinct recorded
            budgets (then no sweep can be made).
    """
    from vqaudit.score import load_outcomes

    runs = []
    for d in run_dirs:
        outcomes = load_outcomes(d)
        runs.append(reasoning_run(d.name, d, RunFolder(d).benchmark(), outcomes, {o.source for o in outcomes}))
    if len({(r.model, r.bench) for r in runs}) != 1:
        raise VqauditError(
            "a budget sweep is one model on one benchmark; got "
            + ", ".join(sorted({f"{r.model} on {r.bench}" for r in runs}))
        )
    sweeps = budget_sweeps(runs, n_draws=n_draws)
    write_json(
        path,
        {
            "format": "vqaudit-sweep/1",
            "model": runs[0].model,
            "benchmark": str(runs[0].bench),
            "runs": {str(r.max_tokens): str(d) for r, d in zip(runs, run_dirs, strict=True)},
            "sources": {s.source: s.as_dict() for s in sweeps},
        },
    )
    return sweeps
