"""Exact rational equality for chart answers and normalized string match (SPEC section 1; seed 000, §4)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from vqaudit.schema import Obligation
from vqaudit.scoring import answer_matches, normalize_text, parse_number

NUM = Obligation(kind="answer", gold=("12.5",), answer_type="number", unit="births per woman")
PCT = Obligation(kind="answer", gold=("40",), answer_type="number", unit="%")
BIG = Obligation(kind="answer", gold=("1500",), answer_type="number", unit="thousand jobs")


@pytest.mark.parametrize("answer", ["12.5", "12.50", "25/2", " 12.5 ", "12.5 births per woman", "+12.5", "1.25e1"])
def test_equal_rationals_match(answer: str) -> None:
    assert answer_matches(answer, NUM)


@pytest.mark.parametrize("answer", ["12.49", "12.51", "12", "about 12.5", "12.5 %", "twelve and a half", "", "25/0"])
def test_other_answers_do_not_match(answer: str) -> None:
    assert not answer_matches(answer, NUM)


def test_thousands_separators_only_in_groups_of_three() -> None:
    assert answer_matches("1,500", BIG)
    assert answer_matches("1500 thousand jobs", BIG)
    assert not answer_matches("1,50", BIG)
    assert not answer_matches("15,00", BIG)
    assert parse_number("12,345,678.5") == Fraction(24691357, 2)


def test_percent_only_for_a_percent_axis() -> None:
    assert answer_matches("40%", PCT) and answer_matches("40 %", PCT)
    assert parse_number("40%") is None  # no unit declared: a percent sign is not silently dropped


def test_unicode_minus_and_null_answers() -> None:
    assert parse_number("\u22123.5") == Fraction(-7, 2)
    assert not answer_matches(None, NUM)
    assert not answer_matches("12.5", Obligation(kind="abstain"))


def test_text_answers_use_normalized_exact_match() -> None:
    text = Obligation(kind="answer", gold=("Large red cube",), answer_type="text")
    assert answer_matches("large red cube.", text)
    assert answer_matches("  LARGE   red cube ", text)
    assert not answer_matches("large red", text)
    count = Obligation(kind="answer", gold=("3",), answer_type="text")
    assert answer_matches("3.0", count)  # both numbers: rational equality
    assert normalize_text("\uff21BC!") == "abc"  # NFKC folds the full-width letter
