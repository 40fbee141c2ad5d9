"""The answerability JSON repair pass: strict first, then repairs that never change a string."""

from __future__ import annotations

import pytest

from vqaudit.parsing import parse_answerability
from vqaudit.parsing.answerability import REPAIRED, extract_json_object_repaired
from vqaudit.parsing.json_repair import repair_json


@pytest.mark.parametrize(
    ("text", "decision", "answer", "reason"),
    [
        # one trailing comma: hand-checked, the object minus the comma
        ('{"answerable": true, "answer": "12", "reason": "the bar",}', "answer", "12", "the bar"),
        ('{"answerable": true, "answer": "12", "reason": "r" , \n }', "answer", "12", "r"),
        # Python literals and single-quoted strings; the escaped quote is one apostrophe
        ("{'answerable': True, 'answer': 'it\\'s 12', 'reason': 'the bar'}", "answer", "it's 12", "the bar"),
        ("{'answerable': False, 'answer': None, 'reason': 'masked'}", "abstain", None, "masked"),
        # a double quote inside a single-quoted string stays one character
        ("{'answerable': true, 'answer': 'the \"A\" bar', 'reason': 'r'}", "answer", 'the "A" bar', "r"),
        # typographic quotes as delimiters; the straight quotes and the comma inside are content
        (
            '{\u201canswerable\u201d: true, \u201canswer\u201d: \u201c5\u201d, \u201creason\u201d: \u201ca, "b"\u201d}',
            "answer",
            "5",
            'a, "b"',
        ),
        # a string that looks like a repair target is copied unchanged: ",}" and "True" inside strings
        ('{"answerable": true, "answer": "a,}", "reason": "True, None",}', "answer", "a,}", "True, None"),
        # in a fence after prose
        ('Here:\n```json\n{"answerable": true, "answer": 3, "reason": "r",}\n```', "answer", "3", "r"),
    ],
)
def test_repairs(text: str, decision: str, answer: str | None, reason: str) -> None:
    parsed = parse_answerability(text)
    assert (parsed.decision, parsed.answer, parsed.reason, parsed.decided_by) == (decision, answer, reason, REPAIRED)


def test_strict_json_is_read_first_and_not_marked() -> None:
    parsed = parse_answerability('{"answerable": true, "answer": "12", "reason": "r"}')
    assert (parsed.decision, parsed.decided_by) == ("answer", None)
    # A strict object later in the reply wins over a repairable one earlier: strict parsing first.
    obj, repaired = extract_json_object_repaired('{"a": 1,} then {"b": 2}')
    assert (obj, repaired) == ({"b": 2}, False)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"answerable": true, "answer": NaN, "reason": "r"}', "finite"),
        ('{"answerable": true, "answer": Infinity, "reason": "r"}', "finite"),
        ('{"answerable": true, "answer": -Infinity, "reason": "r"}', "finite"),
        # New-user trial: numbers beyond the float range (max about 1.8e308) decoded as "inf" / "-inf" answers;
        # they are no more finite than Infinity, so they get its reason (also after the repair pass).
        ('{"answerable": true, "answer": 1e999, "reason": "r"}', "'answer' is not a finite number"),
        ('{"answerable": true, "answer": -1e999, "reason": "r"}', "'answer' is not a finite number"),
        ('{"answerable": true, "answer": 1E400, "reason": "r"}', "'answer' is not a finite number"),
        ("{'answerable': True, 'answer': 1e999, 'reason': 'r',}", "'answer' is not a finite number"),
        ('Sure: {"answerable": true, "answer": -1.5e309, "reason": "r"} done', "'answer' is not a finite number"),
        ('{"answerable": true, "answer": "3", "reason": "\u200b\u200b"}', "nonempty"),  # zero-width spaces
        ('{"answerable": true, "answer": "3", "reason": "\ufeff \u2060\u3164"}', "nonempty"),
        ("{'answerable': true, 'answer': 'x', 'reason': 'never closed}", "no JSON object"),
        ('{"answerable": true, "answer": "x", "reason": "r"', "no JSON object"),  # no closing brace: no guess
        ("{'answerable': yes, 'answer': 'x', 'reason': 'r'}", "no JSON object"),  # yes is no literal
    ],
)
def test_still_invalid(text: str, why: str) -> None:
    parsed = parse_answerability(text)
    assert parsed.decision == "invalid" and parsed.invalid_reason is not None and why in parsed.invalid_reason


def test_repair_json_values() -> None:
    assert repair_json("{'a': [1, 2,], 'b': None,}") == '{"a": [1, 2], "b": null}'
    assert repair_json("x {'a': 'b'} y", 2) == '{"a": "b"}'  # stops at the closing brace
    assert repair_json('{"a": "b" \' }') is None  # a stray quote: nothing is guessed
    assert repair_json("{'a': 'C:\\\\new'}") == '{"a": "C:\\\\new"}'  # an escaped backslash stays one backslash
