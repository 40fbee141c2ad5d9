"""PlotQA plots as declared tables for imported chart groups (``vqaudit build charts --from plotqa``).

**PlotQA** (NiteshMethani/PlotQA ``PlotQA_Dataset.md``): ``annotations.json`` is a list of plots, each with
``models`` (one per series: ``name``, ``color``, ``bboxes``, ``label``, ``x``, ``y``), ``type``
(``vbar_categorical``, ``hbar_categorical``, ``dot_line``, ``line``), ``general_figure_info`` (``title``,
``x_axis`` / ``y_axis`` with ``label.text`` and ``major_labels.values``, ``legend``, ...) and ``image_index``.
The value axis is ``y`` (``x`` for ``hbar_categorical``, whose models hold the values in ``x``). The QA file is
a list (or ``{"qa_pairs": [...]}``) of ``{image_index, question_string, answer, template, type}``.

The declared domain and the group's queried cell follow the rules of :mod:`vqaudit.suites.charts.imported`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.suites.charts.imported import (
    MAX_GRID_POINTS,
    MAX_SERIES,
    ImportedPlot,
    ImportResult,
    fit_grid,
    label_text,
    labels_skip,
    parse_number,
    read_json_file,
    table_name,
)
from vqaudit.suites.charts.real_table import RealTable
from vqaudit.suites.charts.world import ChartKind

PLOTQA_KINDS: dict[str, ChartKind] = {
    "vbar_categorical": "vbar",
    "hbar_categorical": "hbar",
    "dot_line": "dot",
    "line": "line",
}
"""PlotQA's plot ``type`` -> the chart kind it is drawn as."""


def _axis_ticks(info: Any) -> tuple[Fraction, Fraction, Fraction] | str:
    """``(axis_lo, axis_hi, tick_step)`` from a PlotQA axis' major tick labels, or why not."""
    labels = ((info or {}).get("major_labels") or {}).get("values") if isinstance(info, dict) else None
    if not isinstance(labels, list) or len(labels) < 2:
        return "the value axis declares fewer than two tick labels"
    ticks = [parse_number(t) for t in labels]
    if any(t is None for t in ticks):
        return "a value-axis tick label is not a number"
    exact = sorted(t for t in ticks if t is not None)
    steps = {b - a for a, b in zip(exact, exact[1:], strict=False)}
    if len(steps) != 1 or min(steps) <= 0:
        return "the value axis' tick labels are not evenly spaced"
    return exact[0], exact[-1], steps.pop()


def _qa_by_image(path: Path) -> dict[str, list[tuple[int, dict[str, Any]]]]:
    data = read_json_file(path, "QA")
    if isinstance(data, dict) and isinstance(data.get("qa_pairs"), list):
        data = data["qa_pairs"]
    if not isinstance(data, list):
        raise VqauditError(f"{path}: expected a list of QA pairs (or {{'qa_pairs': [...]}})")
    out: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for row, rec in enumerate(data, start=1):
        if not isinstance(rec, dict):
            raise VqauditError(f"{path}: row {row}: expected a JSON object")
        for name in ("image_index", "question_string", "answer"):
            if name not in rec:
                raise VqauditError(f"{path}: row {row}, field '{name}': missing")
        out.setdefault(label_text(rec["image_index"]), []).append((row, rec))
    return out


def _names(text: str, name: str) -> bool:
    return re.search(r"(?<![A-Za-z0-9])" + re.escape(name.lower()) + r"(?![A-Za-z0-9])", text.lower()) is not None


def match_lookup(table: RealTable, qa: Sequence[tuple[int, dict[str, Any]]]) -> tuple[tuple[str, str], int] | None:
    """The first QA pair that asks a lookup: ``((series, category), qa_row)``, or None.

    A pair asks the lookup of cell (s, c) when its answer is a number equal to that cell's value, the question
    names category c (and series s when the plot has several), and exactly one cell qualifies.
    """
    for row, rec in qa:
        answer = parse_number(rec.get("answer"))
        question = str(rec.get("question_string", ""))
        if answer is None:
            continue
        hits = [
            (s, c)
            for (s, c), v in table.values.items()
            if parse_number(v) == answer and _names(question, c) and (len(table.series) == 1 or _names(question, s))
        ]
        if len(hits) == 1:
            return hits[0], row
    return None


def _plotqa_plot(
    path: Path, row: int, rec: Any, grid: Fraction | None, max_points: int
) -> RealTable | str | tuple[str, str]:
    """The plot of annotation ``row`` as a declared table, or why it is skipped.

    A skip is a reason, or ``(reason, where)`` when one field is to blame (``field 'models[0].y[3]': 'n/a'``).
    """
    if not isinstance(rec, dict):
        raise VqauditError(f"{path}: row {row}: expected a JSON object")
    for name in ("models", "type", "general_figure_info"):
        if name not in rec:
            raise VqauditError(f"{path}: row {row}, field '{name}': missing")
    kind = PLOTQA_KINDS.get(str(rec["type"]))
    if kind is None:
        return f"unsupported plot type {rec['type']!r}"
    info = rec["general_figure_info"]
    models = rec["models"]
    if not isinstance(info, dict) or not isinstance(models, list) or not models:
        raise VqauditError(f"{path}: row {row}, field 'models': expected a non-empty list of series")
    if len(models) > MAX_SERIES:
        return f"more than {MAX_SERIES} series"
    cat_key, val_key, val_axis, cat_axis = (
        ("y", "x", "x_axis", "y_axis") if kind == "hbar" else ("x", "y", "y_axis", "x_axis")
    )
    ticks = _axis_ticks(info.get(val_axis))
    if isinstance(ticks, str):
        return ticks
    axis_lo, axis_hi, tick_step = ticks
    values: dict[tuple[str, str], Fraction] = {}
    categories: dict[str, None] = {}
    series: list[str] = []
    for m, model in enumerate(models):
        if (
            not isinstance(model, dict)
            or not isinstance(model.get(cat_key), list)
            or not isinstance(model.get(val_key), list)
            or len(model[cat_key]) != len(model[val_key])
        ):
            raise VqauditError(
                f"{path}: row {row}, field 'models[{m}].{val_key}': expected lists '{cat_key}' and "
                f"'{val_key}' of one length"
            )
        name = label_text(model.get("label") or model.get("name") or "")
        name = name or label_text(((info.get(val_axis) or {}).get("label") or {}).get("text", "")) or f"series {m + 1}"
        if name in series:
            return "two series share a name"
        series.append(name)
        for i, (cat, raw) in enumerate(zip(model[cat_key], model[val_key], strict=True)):
            value = parse_number(raw)
            if value is None:
                return "a value is not a number", f"field 'models[{m}].{val_key}[{i}]': {raw!r}"
            label = label_text(cat)
            if (name, label) in values:
                return "a category appears twice in one series"
            categories.setdefault(label)
            values[(name, label)] = value
    fitted = fit_grid(list(values.values()), axis_lo, axis_hi, grid, max_points)
    if isinstance(fitted, str):
        return fitted
    cats = tuple(categories)
    if any((s, c) not in values for s in series for c in cats):
        return "a series lacks a category the others have"
    bad_label = labels_skip([*series, *cats])
    if bad_label is not None:
        return bad_label[0], bad_label[1]
    title = label_text((info.get("title") or {}).get("text", "")) if isinstance(info.get("title"), dict) else ""
    key = label_text(rec.get("image_index", row))
    payload = [rec["type"], title, series, cats, [[s, c, str(v)] for (s, c), v in values.items()]]
    return RealTable(
        name=table_name("plotqa", key, payload),
        title=title or "PlotQA plot",
        category_label=label_text(((info.get(cat_axis) or {}).get("label") or {}).get("text", "")) or "Category",
        value_label=label_text(((info.get(val_axis) or {}).get("label") or {}).get("text", "")) or "Value",
        unit="",
        categories=cats,
        series=tuple(series),
        values={k: float(v) for k, v in values.items()},
        ordered=all(parse_number(c) is not None for c in cats),
        axis_lo=axis_lo,
        axis_hi=axis_hi,
        grid_step=fitted,
        tick_step=tick_step,
        source=f"PlotQA plot image_index {key} ({path.name}, row {row})",
    )


def read_plotqa(
    annotations: Path, qa: Path | None = None, *, grid: Fraction | None = None, max_grid_points: int = MAX_GRID_POINTS
) -> ImportResult:
    """Read PlotQA annotations (and QA pairs) into declared tables (module docstring).

    Raises:
        VqauditError: a missing or malformed file (naming the file, row and field); a plot that only does not
            fit the declared domain is skipped and counted instead.
    """
    data = read_json_file(annotations, "annotations")
    if not isinstance(data, list):
        raise VqauditError(f"{annotations}: expected a JSON list of plot annotations")
    qa_pairs = _qa_by_image(qa) if qa is not None else None
    result = ImportResult([], {}, len(data))
    for row, rec in enumerate(data, start=1):
        table = _plotqa_plot(annotations, row, rec, grid, max_grid_points)
        if isinstance(table, str):
            result.skip(table, f"{annotations.name} row {row}")
            continue
        if isinstance(table, tuple):
            result.skip(table[0], f"{annotations.name} row {row}, {table[1]}")
            continue
        kind = PLOTQA_KINDS[str(rec["type"])]
        query: tuple[str, str] | None = None
        qa_rec: dict[str, Any] | None = None
        if qa_pairs is not None:
            found = match_lookup(table, qa_pairs.get(label_text(rec.get("image_index", row - 1)), []))
            if found is None:
                result.skip("no QA pair asks a lookup of one cell", f"{annotations.name} row {row}")
                continue
            query, qa_row = found
            qa_rec = next(r for n, r in qa_pairs[label_text(rec.get("image_index", row - 1))] if n == qa_row)
            qa_rec = {k: qa_rec[k] for k in ("question_string", "answer", "template", "type") if k in qa_rec}
            qa_rec["row"] = qa_row
        result.plots.append(ImportedPlot(table, kind, query, qa_rec, f"{annotations.name}:{row}"))
    return result
