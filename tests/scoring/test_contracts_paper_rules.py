"""The contract rules as seed 002's text states them (§1, §3.2 with Table 1, Table 12, Appendix A).

Each test quotes the sentence that decides the bucket; the gold strings are real fixture golds where the test
says so (tests/fixtures/shortanswer: DocVQA val via mPLUG-Owl's file, TextVQA val with its OCR tokens).
"""

from __future__ import annotations

import pytest

from vqaudit.scoring.contracts import classify, classify_many, is_scalar_answer


@pytest.mark.parametrize(
    "gold",
    # Real DocVQA / TextVQA val golds, all of which the earlier rules left out of scalar.
    [
        "February 24",
        "May 17",
        "Dec. 1st",
        "26 september",
        "25th May, 2010",
        "11 FEb 86",
        "SATURDAY, JUNE 8, 1968",
        "Wednesday, November 8, 2000",
        "monday 25th july 2011",
        "Tues. Feb. 4",
        "31-AUG-2014",
    ],
)
def test_dates_are_scalar(gold: str) -> None:
    """Table 1: scalar holds "numbers, dates, yes/no" - a date with or without its year or weekday."""
    assert is_scalar_answer(gold)
    assert classify("What is the date?", [gold]).bucket == "scalar"


def test_a_date_before_an_identifier_shape() -> None:
    """Table 1 "numbers, dates, yes/no": "31-AUG-2014" is a date, not a hyphenated code (it was identifier)."""
    assert classify("When was it signed?", ["31-AUG-2014"]).bucket == "scalar"
    assert classify("What is the room?", ["C-5"]).bucket == "identifier"  # Table 12's code stays a code


@pytest.mark.parametrize("gold", ["four", "TEN", "seven", "twenty-five", "one million", "18 million"])
def test_number_words_are_scalar(gold: str) -> None:
    """§1: 'A numeric question like "How many people?" has a small set of acceptable answer strings: "4",
    perhaps "four"'; Table 1: scalar holds "numbers". (Real DocVQA golds: "four", "TEN", "seven", "18 million".)
    """
    assert classify("How many were there?", [gold]).bucket == "scalar"


@pytest.mark.parametrize("gold", ["$ 7,265,516", "$ 1,000", "24,26,435", "1,08,35,696", "(69)", "(79.23%)"])
def test_written_numbers_are_scalar(gold: str) -> None:
    """Table 1: scalar holds "numbers" - a currency sign before a space, the Indian digit grouping of Indian
    documents, accounting parentheses. (All real DocVQA val golds.)"""
    assert classify("How much is it?", [gold]).bucket == "scalar"


@pytest.mark.parametrize("gold", ["13:57", "2 years", "5kg", "one penny", "September 3 to 9, 1972", "(69"])
def test_what_the_paper_does_not_call_scalar_stays_out(gold: str) -> None:
    """The paper names numbers, dates and yes/no; a time of day, a quantity with a unit (Table 8 files "5kg"
    under identifier), a date range or an unbalanced parenthesis is none of these, and stays where it was."""
    assert not is_scalar_answer(gold)


def test_any_gold_answer_that_is_an_ocr_span_makes_readout() -> None:
    """Appendix A: "In TextVQA, 2,670/5,000 questions have OCR-extractable gold answers" - the raw field that
    "anchor[s] the extractive-readout ... bucket[s]" counts a question whose gold answers (any of them) are an OCR
    span. Here the majority answer "coca cola classic" is not on the image, "coca cola" is."""
    answers = ["coca cola classic"] * 6 + ["coca cola"] * 4
    contract = classify("what drink is this?", answers, ocr_tokens=["Coca", "Cola", "since", "1886"])
    assert contract.rule == "readout:ocr-token"
    assert classify("what drink is this?", answers).bucket == "other-open"  # without the OCR tokens


def test_readout_comes_before_identifier_and_multi_span() -> None:
    """§3.2: the rules are "applied in priority order"; Table 1 lists scalar, readout, identifier, multi-span
    (as do Tables 4, 5 and 7). An OCR span shaped like a code, or a readout question answered with a list, is
    readout; the same golds without the OCR evidence or the readout question keep their shape's bucket."""
    assert classify("what country is on the plate?", ["USA"] * 10, ocr_tokens=["USA", "1776"]).bucket == "readout"
    assert classify("what country is on the plate?", ["USA"] * 10).bucket == "identifier"
    assert classify("Who are the authors?", ["Smith and Jones"]).rule == "readout:question"
    assert classify("Which authors signed it?", ["Smith and Jones"]).bucket == "multi-span"
    # InfographicVQA answer types anchor multi-span (Appendix A: they "distinguish single-span from multi-span
    # answers"); a single-span type leaves the gold's own shape to decide.
    assert classify("Which sectors?", ["retail, banking"], answer_type="single span").bucket == "multi-span"
    assert classify("Which sectors?", ["retail"], answer_type="multi-span").bucket == "multi-span"


def test_scalar_still_comes_first() -> None:
    """Table 1 lists scalar first: a year that is also an OCR token, asked by a readout question, is scalar
    (Table 12's scalar example is the year "2014")."""
    assert classify("What is written on the sign?", ["2014"], ocr_tokens=["2014"]).bucket == "scalar"


def test_the_batch_path_follows_the_same_order() -> None:
    """classify_many gives classify's contracts on the cases above (the OCR rule reads every gold answer)."""
    cases = [
        ("what drink is this?", ["coca cola classic"] * 6 + ["coca cola"] * 4, None, ["Coca", "Cola"]),
        ("what country is on the plate?", ["USA"] * 10, None, ["USA"]),
        ("Who are the authors?", ["Smith and Jones"], None, []),
        ("Which sectors?", ["retail"], "multiple spans", []),
        ("When?", ["SATURDAY, JUNE 8, 1968"], None, []),
        ("How many?", ["four"], None, []),
    ]
    got = classify_many([c[0] for c in cases], [c[1] for c in cases], [c[2] for c in cases], [c[3] for c in cases])
    assert [c.bucket for c in got] == ["readout", "readout", "readout", "multi-span", "scalar", "scalar"]
    assert got == [classify(q, a, answer_type=t, ocr_tokens=o) for q, a, t, o in cases]


def test_official_infographicvqa_answer_type_labels() -> None:
    """The official InfographicVQA labels (``image span``, ``question span``, ``multiple spans``, ``non span``; the
    RRC evaluation script's ``answer_types``) are read as the paper's names (Appendix A: single-span, question
    span, multi-span, non-extractive). Only the multi-span type decides a bucket (Appendix A: the types
    "distinguish single-span from multi-span answers"); Table 5's 113 readout items of InfographicVQA's 2,801,
    1,968 of them single-span, rule out single span -> readout, so the other types leave the gold's shape to
    decide."""
    multi = classify("Which two sports?", ["football"], answer_type="multiple spans")
    assert (multi.bucket, multi.subtype) == ("multi-span", "list-2")
    for answer_type in ("image span", "single span", "question span", "non span"):
        assert classify("Which year?", ["the blue one"], answer_type=answer_type).bucket == "other-open"
