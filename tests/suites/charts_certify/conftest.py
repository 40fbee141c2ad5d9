from __future__ import annotations

from fractions import Fraction

import pytest

from vqaudit.suites.charts.world import World


def make_world(a: tuple[str, str, str] = ("4", "7.5", "7.5"), b: tuple[str, str, str] = ("2", "9", "0")) -> World:
    """Two series (A, B) x three years, domain [0, 10] step 1/2 (the bachelors-style percent axis)."""
    return World(
        table="barley",
        kind="vbar",
        title="t",
        category_label="Year",
        value_label="Share",
        unit="%",
        categories=("2001", "2002", "2003"),
        series=("A", "B"),
        values=(tuple(Fraction(v) for v in a), tuple(Fraction(v) for v in b)),
        axis_lo=Fraction(0),
        axis_hi=Fraction(10),
        grid_step=Fraction(1, 2),
        tick_step=Fraction(2),
    )


@pytest.fixture
def world() -> World:
    return make_world()
