"""The answerability reply contract (SPEC section 1; seed 000, appendix A): tolerant extraction, strict validity."""

from __future__ import annotations

import pytest

from vqaudit.parsing import extract_json_object, parse_answerability

VALID = '{"answerable": true, "answer": "12.5", "reason": "the bar reaches 12.5"}'


@pytest.mark.parametrize(
    "text",
    [
        VALID,
        f"```json\n{VALID}\n```",
        f"Sure! Here is my answer:\n{VALID}\nHope this helps.",
        f"```\n{VALID}\n```",
        f"I think {{not json}} but then {VALID}",
    ],
)
def test_json_found_in_fences_and_prose(text: str) -> None:
    parsed = parse_answerability(text)
    assert parsed.decision == "answer" and parsed.answer == "12.5" and parsed.raw == text


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "no JSON object"),
        ("The answer is 12.5", "no JSON object"),
        ("[1, 2, 3]", "no JSON object"),
        ('{"answerable": true, "answer": "3"}', "missing key"),
        ('{"answer": null, "reason": "x"}', "missing key"),
        ('{"answerable": "yes", "answer": "3", "reason": "x"}', "not a boolean"),
        ('{"answerable": 1, "answer": "3", "reason": "x"}', "not a boolean"),
        ('{"answerable": true, "answer": "3", "reason": ""}', "nonempty"),
        ('{"answerable": true, "answer": "3", "reason": "   "}', "nonempty"),
        ('{"answerable": true, "answer": "3", "reason": 7}', "nonempty"),
        ('{"answerable": true, "answer": [3], "reason": "x"}', "not a string, number or null"),
        ('{"answerable": true, "answer": true, "reason": "x"}', "not a string, number or null"),
        ('{"answerable": false, "answer": "3", "reason": "hidden"}', "not null"),
        ('{"answerable": true, "answer": "3", "reason": "x"', "no JSON object"),
        ("{" * 5000, "no JSON object"),
        ("\x00\udcff garbage", "no JSON object"),
    ],
)
def test_malformed_replies_are_invalid_and_never_raise(text: str, why: str) -> None:
    parsed = parse_answerability(text)
    assert parsed.decision == "invalid"
    assert parsed.invalid_reason is not None and why in parsed.invalid_reason


def test_abstain_and_answerable_with_null_answer() -> None:
    abstain = parse_answerability('{"answerable": false, "answer": null, "reason": "masked"}')
    assert abstain.decision == "abstain" and abstain.answer is None
    # answerable:true with a null answer passes the decision but carries no answer (SPEC section 1).
    null = parse_answerability('{"answerable": true, "answer": null, "reason": "visible"}')
    assert null.decision == "answer" and null.answer is None


def test_numeric_answers_keep_their_exact_text() -> None:
    assert parse_answerability('{"answerable": true, "answer": 12.5, "reason": "r"}').answer == "12.5"
    assert parse_answerability('{"answerable": true, "answer": 3000, "reason": "r"}').answer == "3000"
    assert parse_answerability('{"answerable": true, "answer": 0.1, "reason": "r"}').answer == "0.1"


def test_backend_error_or_missing_reply_is_invalid() -> None:
    assert parse_answerability(None, "HTTP 500 after 5 retries").decision == "invalid"
    assert parse_answerability(VALID, "timeout").decision == "invalid"


def test_extract_json_object_returns_none_without_an_object() -> None:
    assert extract_json_object("no braces here") is None
    assert extract_json_object('{"a": 1} and {"b": 2}') == {"a": 1}


def test_absurdly_long_numbers_are_invalid_or_unparsed_never_a_crash() -> None:
    from vqaudit.scoring import parse_number

    # Python refuses int() over 4300 digits (ValueError, not JSONDecodeError): the reply must still parse.
    huge = '{"answerable": true, "answer": ' + "9" * 5000 + ', "reason": "r"}'
    assert parse_answerability(huge).decision == "invalid"
    assert parse_number("9" * 5000) is None
