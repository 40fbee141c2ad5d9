"""The twelve real data tables shipped in ``suites/charts/data``, read into RealTables with their declared domains.

Credits are in ``data/SOURCES.md``. Each loader reads its CSV or JSON file into (series, category) -> value cells
(missing cells absent) and sets the table's declared domain (value grid and axis range) from the whole table's range;
:func:`~vqaudit.suites.charts.tables.load_table` looks them up by name and checks every value against the axis range.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable
from fractions import Fraction
from importlib import resources
from typing import Any

from vqaudit.suites.charts.real_table import RealTable

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _read_text(name: str) -> str:
    return resources.files("vqaudit.suites.charts").joinpath("data").joinpath(name).read_text(encoding="utf-8")


def _csv_rows(name: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(_read_text(name))))


def _json_rows(name: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(_read_text(name))
    return rows


def _num(text: object) -> float | None:
    if text is None:
        return None
    s = str(text).strip()
    if s in ("", "NA", "nan", "NaN"):
        return None
    try:
        return float(s)
    except ValueError:
        return None


def _table(
    name: str,
    cells: Iterable[tuple[str, str, float | None]],
    *,
    category_order: Iterable[str] | None = None,
    **fields: Any,
) -> RealTable:
    """Build a RealTable from (series, category, value) triples, keeping first-seen order."""
    values: dict[tuple[str, str], float] = {}
    series: dict[str, None] = {}
    categories: dict[str, None] = {}
    for s, c, v in cells:
        series.setdefault(s)
        categories.setdefault(c)
        if v is not None:
            values[(s, c)] = v
    cats = tuple(category_order) if category_order is not None else tuple(categories)
    return RealTable(name=name, categories=cats, series=tuple(series), values=values, **fields)


def _fertility() -> RealTable:
    rows = _csv_rows("statsmodels_fertility_worldbank.csv")
    years = [str(y) for y in range(1960, 2014)]
    return _table(
        "fertility",
        ((y, r["Country Name"], _num(r.get(y))) for r in rows for y in years),
        title="Fertility rate",
        category_label="Country",
        value_label="Fertility rate",
        unit="births per woman",
        ordered=False,
        axis_lo=Fraction(0),
        axis_hi=Fraction(10),
        grid_step=Fraction(1, 2),
        tick_step=Fraction(1),
        source="World Bank WDI SP.DYN.TFRT.IN (via statsmodels)",
    )


def _life_expectancy() -> RealTable:
    rows = _csv_rows("gapminder.csv")
    return _table(
        "life_expectancy",
        ((r["year"], r["country"], _num(r["lifeExp"])) for r in rows),
        title="Life expectancy at birth",
        category_label="Country",
        value_label="Life expectancy",
        unit="years",
        ordered=False,
        axis_lo=Fraction(0),
        axis_hi=Fraction(90),
        grid_step=Fraction(5, 2),
        tick_step=Fraction(10),
        source="Gapminder.org (via the gapminder package)",
    )


def _iowa_electricity() -> RealTable:
    rows = _csv_rows("vega_iowa-electricity.csv")
    return _table(
        "iowa_electricity",
        ((r["source"], r["year"][:4], _num(r["net_generation"])) for r in rows),
        title="Iowa net electricity generation",
        category_label="Year",
        value_label="Net generation",
        unit="thousand MWh",
        ordered=True,
        axis_lo=Fraction(0),
        axis_hi=Fraction(45000),
        grid_step=Fraction(1500),
        tick_step=Fraction(5000),
        source="US EIA (via vega_datasets)",
    )


_SECTORS = {
    "construction": "Construction",
    "manufacturing": "Manufacturing",
    "information": "Information",
    "financial_activities": "Financial activities",
    "leisure_and_hospitality": "Leisure and hospitality",
    "other_services": "Other services",
    "wholesale_trade": "Wholesale trade",
    "retail_trade": "Retail trade",
    "transportation_and_warehousing": "Transportation",
    "professional_and_business_services": "Business services",
    "education_and_health_services": "Education and health",
    "government": "Government",
    "durable_goods": "Durable goods",
    "nondurable_goods": "Nondurable goods",
}


def _us_employment() -> RealTable:
    rows = [r for r in _csv_rows("vega_us-employment.csv") if r["month"].endswith("-01-01")]
    return _table(
        "us_employment",
        ((f"January {r['month'][:4]}", label, _num(r[col])) for r in rows for col, label in _SECTORS.items()),
        title="US employment by sector",
        category_label="Sector",
        value_label="Employment",
        unit="thousand jobs",
        ordered=False,
        axis_lo=Fraction(0),
        axis_hi=Fraction(25000),
        grid_step=Fraction(500),
        tick_step=Fraction(5000),
        source="US BLS Current Employment Statistics (via vega_datasets)",
    )


def _barley() -> RealTable:
    rows = _json_rows("vega_barley.json")
    return _table(
        "barley",
        ((f"{r['site']} {r['year']}", str(r["variety"]), _num(r["yield"])) for r in rows),
        title="Barley yield by variety",
        category_label="Variety",
        value_label="Yield",
        unit="bushels per acre",
        ordered=False,
        axis_lo=Fraction(0),
        axis_hi=Fraction(70),
        grid_step=Fraction(5, 2),
        tick_step=Fraction(10),
        source="Immer et al. (1934) barley trials (via vega_datasets)",
    )


_CRIME = {
    "poverty": "Poverty rate",
    "hs_grad": "High-school graduates",
    "white": "White population",
    "urban": "Urban population",
    "single": "Single-parent households",
}


def _state_statistics() -> RealTable:
    rows = _csv_rows("statsmodels_statecrime.csv")
    return _table(
        "state_statistics",
        ((label, r["state"], _num(r[col])) for r in rows for col, label in _CRIME.items()),
        title="US state statistics, 2009",
        category_label="State",
        value_label="Share",
        unit="%",
        ordered=False,
        axis_lo=Fraction(0),
        axis_hi=Fraction(100),
        grid_step=Fraction(5, 2),
        tick_step=Fraction(10),
        source="US Census Bureau and FBI UCR, 2009 (via statsmodels statecrime)",
    )


def _bachelors_women() -> RealTable:
    rows = _csv_rows("bokeh_percent-bachelors-degrees-women-usa.csv")
    fields = [k for k in rows[0] if k != "Year"]
    return _table(
        "bachelors_women",
        ((f, r["Year"], _num(r[f])) for r in rows for f in fields),
        title="Bachelor's degrees awarded to women",
        category_label="Year",
        value_label="Share of degrees",
        unit="%",
        ordered=True,
        axis_lo=Fraction(0),
        axis_hi=Fraction(100),
        grid_step=Fraction(5, 2),
        tick_step=Fraction(10),
        source="US NCES Digest of Education Statistics (via bokeh-sampledata)",
    )


def _unemployment() -> RealTable:
    rows = _csv_rows("bokeh_unemployment1948.csv")
    return _table(
        "unemployment",
        ((r["Year"], m, _num(r[m])) for r in rows for m in _MONTHS),
        category_order=_MONTHS,
        title="US unemployment rate",
        category_label="Month",
        value_label="Unemployment rate",
        unit="%",
        ordered=True,
        axis_lo=Fraction(0),
        axis_hi=Fraction(12),
        grid_step=Fraction(1, 2),
        tick_step=Fraction(2),
        source="US BLS (via bokeh-sampledata)",
    )


def _marriages() -> RealTable:
    rows = _csv_rows("bokeh_us_marriages_divorces.csv")
    names = {"Marriages_per_1000": "Marriages", "Divorces_per_1000": "Divorces"}
    return _table(
        "marriages",
        ((label, r["Year"], _num(r[col])) for r in rows for col, label in names.items()),
        title="US marriage and divorce rates",
        category_label="Year",
        value_label="Rate",
        unit="per 1,000 people",
        ordered=True,
        axis_lo=Fraction(0),
        axis_hi=Fraction(18),
        grid_step=Fraction(1, 2),
        tick_step=Fraction(2),
        source="US CDC/NCHS (via bokeh-sampledata)",
    )


def _nile() -> RealTable:
    rows = _csv_rows("statsmodels_nile.csv")
    return _table(
        "nile",
        (("Annual flow", r["year"], _num(r["volume"])) for r in rows),
        title="Annual flow of the Nile at Aswan",
        category_label="Year",
        value_label="Flow",
        unit="100 million m³",
        ordered=True,
        axis_lo=Fraction(0),
        axis_hi=Fraction(1500),
        grid_step=Fraction(50),
        tick_step=Fraction(250),
        source="Cobb (1978), Nile flow at Aswan (via statsmodels)",
    )


def _wheat() -> RealTable:
    rows = _json_rows("vega_wheat.json")
    return _table(
        "wheat",
        (("Wheat price", str(r["year"]), _num(r.get("wheat"))) for r in rows),
        title="Price of a quarter of wheat in England",
        category_label="Year",
        value_label="Price",
        unit="shillings",
        ordered=True,
        axis_lo=Fraction(0),
        axis_hi=Fraction(110),
        grid_step=Fraction(5, 2),
        tick_step=Fraction(10),
        source="William Playfair (1821) (via vega_datasets)",
    )


def _crimea() -> RealTable:
    rows = _json_rows("vega_crimea.json")
    causes = {"disease": "Disease", "wounds": "Wounds", "other": "Other causes"}

    def month(date: str) -> str:
        return f"{_MONTHS[int(date[5:7]) - 1]} {date[:4]}"

    return _table(
        "crimea",
        ((label, month(str(r["date"])), _num(r[key])) for r in rows for key, label in causes.items()),
        title="British army deaths in the Crimean War",
        category_label="Month",
        value_label="Deaths",
        unit="deaths",
        ordered=True,
        axis_lo=Fraction(0),
        axis_hi=Fraction(1500),
        grid_step=Fraction(50),
        tick_step=Fraction(250),
        source="Florence Nightingale (1858) (via vega_datasets)",
    )


LOADERS: dict[str, Callable[[], RealTable]] = {
    "fertility": _fertility,
    "life_expectancy": _life_expectancy,
    "iowa_electricity": _iowa_electricity,
    "us_employment": _us_employment,
    "barley": _barley,
    "state_statistics": _state_statistics,
    "bachelors_women": _bachelors_women,
    "unemployment": _unemployment,
    "marriages": _marriages,
    "nile": _nile,
    "wheat": _wheat,
    "crimea": _crimea,
}
"""Each bundled table's loader by table name (the names are ``tables.TABLE_NAMES``, in this order)."""
