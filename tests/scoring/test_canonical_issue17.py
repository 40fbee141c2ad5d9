"""The canonical layer never destroys an answer; every expected value is worked out by hand
from the rule in the docstring of :mod:`vqaudit.scoring.canonical` and vqaEval.py's processing."""

from __future__ import annotations

import pytest

from vqaudit.scoring.canonical import (
    canonical_match,
    canonical_score,
    gain_kind,
    parse_number,
    refusal_cause,
    separate_digit_commas,
    strip_wrapper,
)
from vqaudit.scoring.vqa_normalize import vqaeval_process


def test_an_article_or_letter_that_is_the_whole_answer_is_kept() -> None:
    assert vqaeval_process("a") == "" and vqaeval_process("A") == ""  # the official step empties both
    # an empty output no longer matches gold "a" (vqaEval: "" == ""), and the letter answer A does
    assert canonical_match("", "a") is None
    assert canonical_score("", ["a"], "exact_match") == (0.0, None)
    assert canonical_match("A", "a") == "one-sided-normalization"
    assert canonical_match("The", "a") is None  # two different articles stay different
    assert canonical_score("", ["a"] * 10, "vqa_accuracy") == (0.0, None)  # was 1.0: "" == "" for every annotator


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1,234,567", "1234567"),
        ("0,1", "0, 1"),
        ("12,34", "12, 34"),
        ("1,2345", "1, 2345"),
        ("red, blue", "red, blue"),
        ("1,000 and 2,5", "1000 and 2, 5"),
    ],
)
def test_digit_commas(text: str, expected: str) -> None:
    assert separate_digit_commas(text) == expected


def test_zero_comma_one_and_zero_one_differ() -> None:
    assert vqaeval_process("0,1") == vqaeval_process("01") == "01"  # vqaEval deletes the comma
    assert canonical_match("0,1", "01") is None
    assert canonical_match("1,200", "1200") == "thousands-separator"
    assert canonical_match("Oct 23,2010", "oct 23 2010") == "one-sided-normalization"  # "23,2010": items


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("The answer is: 12", "12"),
        ("The result is 7", "7"),
        ("It is red", "red"),
        ("The tallest bar is 2014, so the answer is 2014.", "2014"),
        ("Thus the final answer is blue", "blue"),
        ("\\boxed{42}", "42"),
        (
            "I think the answer is wrong. It is hard to say! Something else",
            "I think the answer is wrong. It is hard to say! Something else",
        ),  # no closing declaration at the end: unchanged
        ("red", "red"),
    ],
)
def test_wrappers(text: str, plain: str) -> None:
    assert strip_wrapper(text) == plain


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("$1,200", 1200.0),
        ("1.2 million", 1_200_000.0),
        ("approximately 12", 12.0),
        ("about 12", 12.0),
        ("~12", 12.0),
        ("12 (twelve)", 12.0),
        ("\\boxed{12}", 12.0),
        ("3/4", 0.75),
        ("-1/2", -0.5),
        ("2 billion", 2e9),
    ],
)
def test_number_formats(text: str, value: float) -> None:
    parsed = parse_number(text)
    assert parsed is not None and parsed[0] == value


def test_number_format_matches_are_labelled() -> None:
    assert canonical_match("$1,200", "1200") == "number-format"
    assert canonical_match("1.2 million", "1200000") == "number-format"
    assert canonical_match("3/4", "0.75") == "number-format"
    assert canonical_match("1/0", "0") is None  # a zero denominator is not a number
    assert canonical_match("approximately 2016", "2014", tolerance=0.05) is None  # a year stays exact


def test_anls_never_makes_different_strings_identical() -> None:
    assert vqaeval_process("a.b") == vqaeval_process("ab") == "ab"
    # light forms keep the period: "a.b" vs "ab" has distance 1 over length 3 -> 1 - 1/3
    assert canonical_score("a.b", ["ab"], "anls") == (pytest.approx(2 / 3), None)
    assert canonical_score("0,1", ["01"], "anls") == (pytest.approx(2 / 3), None)
    assert canonical_score("A.B.", ["a.b."], "anls") == (1.0, "one-sided-normalization")  # case only


def test_gained_rows_name_their_kind_and_refusals_their_cause() -> None:
    # one exact annotator and one "$31,888": the row's kind is "exact", the gain comes from the other answer
    assert canonical_score("31888", ["31888", "$31,888"], "vqa_accuracy")[1] == "exact"
    assert gain_kind("31888", ["31888", "$31,888"], "vqa_accuracy") == "number-format"
    assert refusal_cause("2016", ["2014"], "relaxed_accuracy") == "exact-year-identifier"
    # |50.18 - 47.68| / 50.18 = 4.98% (VLMEvalKit before 677e30a5), / 47.68 = 5.24%
    assert refusal_cause("50.18", ["47.68"], "relaxed_accuracy") == "relative-to-prediction"
    assert refusal_cause("1.34", ["[1.34, 1.37]"], "relaxed_accuracy") == "list-literal-gold"
    assert refusal_cause("x", ["the"], "vqa_accuracy") == "empty-normalized-gold"
    assert refusal_cause("0,1", ["01"], "exact_match") == "digit-comma"
