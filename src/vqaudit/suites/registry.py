"""The source table: every benchmark source is one row here, and one hooks module in its package.

A row names the source, its default size for ``vqaudit eval``, and the dotted path of its hooks module, imported
only when the source is used. A hooks module exposes:

- ``Options``: the pydantic model of its build options (``seed`` and, for sized sources, ``groups`` among them);
- ``build(out: Path, options: Options, *, workers: int, on_group) -> dict``: writes the benchmark through
  :func:`vqaudit.suites.common.build_benchmark` and returns its manifest;
- ``prompt(view) -> (prompt_id, prompt_text)``: the prompt a view is asked with;
- ``score(views, responses, ctx: ScoreContext) -> list[Outcome]``: the reply parser and scorer;
- ``metrics(outcomes, views, groups, *, n_draws, seed) -> dict``: the source's ``metrics.json`` entry;
- ``diagnostics(outcomes, groups, metrics, *, n_draws, seed) -> dict | None``: its ``diagnostics.json`` entry;
- ``verify(bench_dir, views, groups, missing, *, workers) -> list[(id, problem)]``: its re-checks for
  ``vqaudit verify`` beyond the image and manifest hashes every benchmark gets;
- ``checked(views, groups) -> dict[str, int]``: what ``verify`` re-checked, for its summary line;
- optionally ``rebuild_options(manifest) -> Options``: the build options the manifest records, for
  ``vqaudit verify --rebuild`` (raising VqauditError when the inputs are not in the benchmark);
- ``summary_line(entry) -> str``: the line ``vqaudit score`` prints for the source's ``metrics.json`` entry.

The row also names the report writer of the source's runs (``module:function`` taking ``(run_dirs, out_dir)``
and returning the Markdown path), a string so that no suite imports the report layer.

The stages (``build``, ``eval``, ``run``, ``verify``, ``score``, ``report``) look a source up here; none names a
source in an if/elif. Adding a source is one package with a hooks module plus one :class:`Source` row (or
:func:`register_source`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from vqaudit.errors import VqauditError

REFERENCE_POLICIES = ("reference:always-answer", "reference:always-abstain", "reference:gold")
"""The built-in reference policies, run by ``vqaudit eval`` on every source when no model is given."""


@dataclass(frozen=True)
class Source:
    """One row of the source table.

    Attributes:
        name: the source name recorded in every view, group and manifest (``charts``).
        hooks: dotted module path of the source's hooks (see the module docstring).
        eval_defaults: the build options ``vqaudit eval`` sets when the user does not, as ``(field, value)``
            pairs of the source's ``Options`` (``seed`` defaults to 0 for every source).
        summary: one line for ``--help``.
        report: ``module:function`` of the report writer of its scored runs; every writer writes into the report
            folder itself (``vqaudit report --out``, ``vqaudit eval``'s ``OUT/report``), under file names of its
            own (``report.md``, ``upd_report.md``), so runs of sources with different reports report together.
        summary_table: ``module:function`` returning the table ``vqaudit eval`` prints for scored runs.
        eval_models: the model specs ``vqaudit eval`` runs when no ``--model`` is given.
        budget_sweep: ``vqaudit eval --budgets`` can sweep it (its runs have answerability groups: Jk, Bk, Ebal).
    """

    name: str
    hooks: str
    eval_defaults: tuple[tuple[str, Any], ...]
    summary: str
    report: str = "vqaudit.report.compare:write_report"
    summary_table: str = "vqaudit.report.compare:summary_table"
    eval_models: tuple[str, ...] = REFERENCE_POLICIES
    budget_sweep: bool = True

    def eval_options(self, **given: Any) -> dict[str, Any]:
        """The build options of ``vqaudit eval``: ``seed`` and :attr:`eval_defaults`, overridden by ``given``.

        Raises:
            VqauditError: a given option (not None) that this source's eval does not take.
        """
        defaults = dict(self.eval_defaults)
        for key, value in given.items():
            if value is not None and key not in defaults and key != "seed":
                raise VqauditError(f"eval {self.name}: --{key.replace('_', '-')} does not apply to this source")
        out = {"seed": given.get("seed") or 0}
        out.update({k: given.get(k) if given.get(k) is not None else v for k, v in defaults.items()})
        return out

    def module(self) -> ModuleType:
        """The hooks module (imported on first use)."""
        return importlib.import_module(self.hooks)


SOURCES: dict[str, Source] = {
    row.name: row
    for row in (
        Source(
            "charts",
            "vqaudit.suites.charts.source",
            (("groups", 60),),
            "chart groups from bundled real tables",
            eval_models=(*REFERENCE_POLICIES, "baseline:chart-reader"),
        ),
        Source("scenes", "vqaudit.suites.scenes.source", (("groups", 12),), "CLEVR scene groups rendered on the CPU"),
        Source("photos", "vqaudit.suites.photos.source", (("groups", 40),), "photo groups (COCO or GQA)"),
        Source(
            "upd",
            "vqaudit.suites.upd.source",
            (("max_items", 80),),
            "MM-UPD variants of multiple-choice sets",
            report="vqaudit.report.upd:write_upd_report",
            summary_table="vqaudit.report.upd:summary_table",
            budget_sweep=False,
        ),
    )
}


def register_source(source: Source) -> None:
    """Add (or replace) one row of the source table (a plugin or a test)."""
    SOURCES[source.name] = source


def get_source(name: str) -> Source:
    """The row of a source name.

    Raises:
        VqauditError: no such source (the message lists the known ones).
    """
    row = SOURCES.get(name)
    if row is None:
        raise VqauditError(f"unknown source {name!r}; known: {', '.join(SOURCES)}")
    return row


def hooks(name: str) -> Any:
    """The hooks module of a source (see the module docstring). Raises VqauditError for an unknown source."""
    return get_source(name).module()


def prompt_for(view: Any) -> tuple[str, str]:
    """``(prompt_id, prompt_text)`` of a view, from its source's ``prompt`` hook.

    Raises:
        VqauditError: the view's source is not in the table.
    """
    result: tuple[str, str] = hooks(view.source).prompt(view)
    return result


def sources_in_order(names: set[str]) -> list[str]:
    """The given source names in table order (unknown names last, sorted)."""
    known = [n for n in SOURCES if n in names]
    return known + sorted(names - set(SOURCES))


def _resolve(path: str) -> Any:
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


def report_for(name: str, run_dirs: list[Path], out_dir: Path) -> Path:
    """Write the report of scored runs of one source with its row's report writer; return the Markdown path."""
    path: Path = _resolve(get_source(name).report)(run_dirs, out_dir)
    return path


def summary_table_for(name: str, run_dirs: list[Path]) -> str:
    """The table ``vqaudit eval`` prints for scored runs of one source (its row's ``summary_table``)."""
    text: str = _resolve(get_source(name).summary_table)(run_dirs)
    return text


@dataclass(frozen=True)
class ScoreContext:
    """What a source's ``score`` hook may need beyond views and responses.

    Attributes:
        run_dir: the run folder (a judge caches its verdicts there).
        judge: the judge's model spec, or None (no judge).
        judge_backend: a ready judge backend (built by the score stage from ``judge``), or None.
        judge_concurrency: judge calls in flight.
        reasoning_format: which reasoning spans are split off every reply before it is read (``auto``, ``none``
            or a format name of :mod:`vqaudit.parsing.reasoning`).
    """

    run_dir: Path
    judge: str | None = None
    judge_backend: Any = None
    judge_concurrency: int = 8
    reasoning_format: str = "auto"
