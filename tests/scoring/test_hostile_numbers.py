"""Number answers never build a huge Fraction ("1e100000000" made ``score`` hang).

``Fraction("1e100000000")`` is exact: it builds 10**(10**8), an integer of 332 million bits, and comparing it
with a gold answer multiplies such integers; the old ``parse_number`` did that for any decimal text under 200
characters. The bound is on the exponent (:data:`MAX_EXPONENT`, 400) and on the length (200 characters).
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from vqaudit.schema import Obligation, Response, View
from vqaudit.scoring import answer_matches, parse_number, score_view
from vqaudit.scoring.answers import MAX_EXPONENT

ONE = Obligation(kind="answer", gold=("1",), answer_type="number")
TEXT_ONE = Obligation(kind="answer", gold=("1",), answer_type="text")


@pytest.mark.parametrize(
    "text",
    [
        "1e100000000",
        "1E+100000000",
        "-1e100000000",
        "1e-100000000",
        ".5e99999999",
        "1e401",
        "1e-401",
        "1e0000000000000000000000000000401",
        "1e\u0661\u0660\u0660\u0660\u0660\u0660\u0660\u0660\u0660",
    ],
)  # Arabic-Indic digits
def test_exponent_beyond_the_limit_is_not_a_number(text: str) -> None:
    assert parse_number(text) is None
    assert not answer_matches(text, ONE)
    assert not answer_matches(text, TEXT_ONE)  # text answers compare as numbers first; then as strings (differ)


def test_exponents_within_the_limit_stay_exact() -> None:
    assert MAX_EXPONENT == 400
    assert parse_number("1e400") == Fraction(10) ** 400
    assert parse_number("-2.5e-400") == Fraction(-5, 2) / Fraction(10) ** 400
    assert parse_number("1.25e1") == Fraction(25, 2)
    assert answer_matches("1e0", ONE) and answer_matches("0.1e1", ONE) and answer_matches("10e-1", ONE)


def test_long_digit_strings_are_not_numbers() -> None:
    assert parse_number("1" * 200) == int("1" * 200)
    assert parse_number("1" * 201) is None
    assert parse_number("1/" + "9" * 198) == Fraction(1, int("9" * 198))
    assert parse_number("9" * 100_000) is None


def test_score_view_of_a_huge_exponent_is_a_wrong_answer() -> None:
    view = View(
        view_id="v",
        group_id="g",
        source="charts",
        state="original",
        image="i.png",
        image_sha256="0" * 64,
        question="q?",
        obligation=ONE,
    )
    for answer in ("1e100000000", 1e300, "1" + "0" * 5000):
        reply = json.dumps({"answerable": True, "answer": answer, "reason": "r"})
        outcome = score_view(view, Response(view_id="v", model="m", prompt_id="p", text=reply))
        assert (outcome.decision, outcome.decision_correct, outcome.answer_correct) == ("answer", True, False)
    # a JSON number beyond the float range (Python decodes it as inf) is invalid, as the literal Infinity is
    reply = '{"answerable": true, "answer": 1e100000000, "reason": "r"}'
    outcome = score_view(view, Response(view_id="v", model="m", prompt_id="p", text=reply))
    assert (outcome.decision, outcome.answer, outcome.decision_correct) == ("invalid", None, False)
    assert outcome.invalid_reason == "'answer' is not a finite number (NaN or Infinity)"
