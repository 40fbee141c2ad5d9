"""The chart reader's decision: find the queried category and series, check for a mask, measure, round.

It answers a lookup ("What is the value of SERIES for CATEGORY?") from a :class:`Chart` and says why:

- the category is not among the category labels: **abstain** (an invalid reference);
- the series is not among the legend entries (charts with a legend): **abstain**;
- a printed value label names the category: **answer** with the printed value;
- the category's band is covered by a mask: **abstain** (missing evidence);
- the mark is measured: **answer** with its value rounded to the grid the chart's marks sit on;
- the chart's frame or value axis cannot be read (no evenly spaced numeric tick labels were recognized):
  **abstain**, "cannot read the value axis": without an axis no value can be read from the image, and claiming
  the view answerable would certify an answer the reader never saw (a horizontal-bar chart whose tick labels
  the OCR misses was "answerable" in both its M and I views);
- otherwise (the axis was read but no mark of the series is seen): **answerable with a null answer** (the
  contract of seed 000, appendix A, scores that as a failed answer).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from vqaudit.backends.chart_reader.chart import Category, Chart, normalize_label
from vqaudit.backends.chart_reader.measure import Mark, all_marks, choose_grid, measure, snap_value

_LOOKUP = re.compile(r"^What is the value of (?P<rest>.+?)(?:, in (?P<unit>[^?]*))?\?$", re.DOTALL)


def parse_lookup(question: str) -> list[tuple[str, str]]:
    """Every ``(series, category)`` split of a lookup question, or ``[]`` when it is not one.

    The form is the chart suite's lookup question, "What is the value of SERIES for CATEGORY[, in UNIT]?". A
    name may itself contain " for ", so every split at " for " is returned, first split first.
    """
    match = _LOOKUP.match(question.strip())
    if match is None:
        return []
    rest = match["rest"]
    parts = rest.split(" for ")
    return [(" for ".join(parts[:i]), " for ".join(parts[i:])) for i in range(1, len(parts))]


@dataclass(frozen=True)
class Reading:
    """The reader's reply to one lookup.

    Attributes:
        answerable: the contract's decision.
        value: the answer (exact rational) or None.
        reason: one sentence saying what was found (nonempty).
    """

    answerable: bool
    value: Fraction | None
    reason: str


def find_category(chart: Chart, name: str) -> Category | None:
    """The category label matching ``name`` (normalized exact match, see ``normalize_label``), or None."""
    want = normalize_label(name)
    for cat in chart.categories:
        if normalize_label(cat.text) == want:
            return cat
    return None


def series_colour(chart: Chart, series: str) -> tuple[int, int, int] | None:
    """The queried series' colour: its legend handle's, or the chart's main data colour when it has no legend."""
    if chart.legend:
        want = normalize_label(series)
        for text, colour in chart.legend:
            # the handle's line and marker can be read as a short prefix ("IT 1987"): allow up to 3 characters
            got = normalize_label(text)
            if got == want or (
                got.endswith(want)
                and len(got) - len(want) <= 3
                and text.rstrip().count(" ")
                and normalize_label(text.split(" ", 1)[1]) == want
            ):
                return colour
        return None
    return chart.colours[0] if chart.colours else None


def _near(a: tuple[int, int, int], b: tuple[int, int, int]) -> bool:
    return sum((x - y) ** 2 for x, y in zip(a, b, strict=True)) < 60**2


def _same_label(printed: str, name: str, chart: Chart) -> bool:
    """A printed label names ``name``: exactly (normalized), or within one OCR slip.

    A slip is allowed for names of 6+ characters only (rapidfuzz ratio >= 85), and only when no other category
    label of the chart is as close ("Califomia" names "California"; "1952" never names "1957").
    """
    got, want = normalize_label(printed), normalize_label(name)
    if got == want:
        return True
    if len(want) < 6:
        return False
    from rapidfuzz.fuzz import ratio

    score = ratio(got, want)
    rivals = [ratio(got, normalize_label(c.text)) for c in chart.categories if normalize_label(c.text) != want]
    return score >= 85 and all(r < score for r in rivals)


def _bars(marks: list[Mark]) -> bool:
    """True when most of a colour's marks are bars."""
    return bool(marks) and sum(m.bar for m in marks) > len(marks) / 2


def _masked(chart: Chart, pos: float) -> bool:
    return any(a - 1 <= pos <= b for a, b in chart.masks)


def _decimal(value: Fraction) -> str:
    """Exact decimal text of a rational with a terminating expansion, else ``p/q``."""
    if value.denominator == 1:
        return str(value.numerator)
    for digits in range(1, 12):
        scaled = value * 10**digits
        if scaled.denominator == 1:
            sign = "-" if value < 0 else ""
            text = str(abs(scaled.numerator)).rjust(digits + 1, "0")
            return f"{sign}{text[:-digits]}.{text[-digits:]}"
    return f"{value.numerator}/{value.denominator}"


def answer_text(value: Fraction) -> str:
    """The answer as the contract's text ("12.5", "3000")."""
    return _decimal(value)


def read_lookup(chart: Chart, splits: list[tuple[str, str]], *, ignore_mask: bool = False) -> Reading:
    """Answer a lookup from a read chart.

    Args:
        chart: the chart read by :func:`~vqaudit.backends.chart_reader.chart.read_chart`.
        splits: the question's ``(series, category)`` candidates (:func:`parse_lookup`); the first whose
            category is among the labels is used.
        ignore_mask: measure even where a mask covers the band (the leak audit: does anything still show?).

    Returns:
        The Reading (see the module docstring for the decision rules).
    """
    if not splits:
        return Reading(True, None, "not a lookup question the chart reader can read")
    if chart.problem is not None:
        return Reading(False, None, f"cannot read the value axis ({chart.problem})")
    found = [(s, c, cat) for s, c in splits if (cat := find_category(chart, c)) is not None]
    if not found:
        return Reading(False, None, f"the category {splits[0][1]!r} is not among the chart's category labels")
    series, name, cat = found[0]
    colour = series_colour(chart, series)
    for label in chart.value_labels:
        if _same_label(label.category, name, chart) and (
            label.colour is None or colour is None or _near(label.colour, colour)
        ):
            return Reading(True, label.value, f"a printed value label gives {series} for {name}")
    if colour is None:
        if chart.legend:
            return Reading(False, None, f"the series {series!r} is not among the legend entries")
        return Reading(True, None, "no coloured data marks found in the plot area")
    if _masked(chart, cat.pos) and not ignore_mask:
        return Reading(False, None, f"the mark of {series} at {name} is covered by a mask")
    marks = all_marks(chart, colour)
    mark = measure(chart, colour, cat.pos)
    if mark is None and chart.axis is not None and _bars(marks) and not _masked(chart, cat.pos):
        base = chart.axis.value(chart.frame.bottom if chart.axis.b < 0 else chart.frame.top)  # type: ignore[union-attr]
        return Reading(
            True,
            snap_value(chart.axis, chart.axis.step, base),
            f"no bar of {series} at {name}: the value is at the axis base",
        )
    if mark is None:
        if _masked(chart, cat.pos):
            return Reading(False, None, f"the mark of {series} at {name} is covered by a mask")
        return Reading(True, None, f"no mark of {series} found at {name}")
    assert chart.axis is not None
    mark = next((m for m in marks if m.column == mark.column), mark)
    grid = choose_grid(chart.axis, [m.value for m in marks] + [mark.value])
    value = snap_value(chart.axis, grid, mark.value)
    what = "bar end" if mark.bar else "marker"
    return Reading(
        True, value, f"the {what} of {series} at {name} read against the value axis (grid {answer_text(grid)})"
    )
