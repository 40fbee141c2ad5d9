"""Reply parsing is linear in the reply's length and capped at the 512-token budget.

The inputs are the measured worst cases: an unclosed "```json" fence followed by whitespace (the old fence
regex backtracked: 16 KB took 2.4 s), re-decoding from every ``{`` (quadratic), deep nesting. Time itself is
measured in ``benchmarks/bench_reliability.py``; these tests pin the values and the work bound (decodes).
"""

from __future__ import annotations

import json

import pytest

from vqaudit.parsing import answerability, extract_json_object, parse_answerability
from vqaudit.parsing.answerability import MAX_OBJECT_STARTS, MAX_REPLY_CHARS, fenced_blocks

VALID = '{"answerable": true, "answer": "12.5", "reason": "r"}'


class CountingDecoder(json.JSONDecoder):
    """A real JSONDecoder that counts ``raw_decode`` calls (the decodes the search makes)."""

    calls = 0

    def raw_decode(self, s: str, idx: int = 0) -> tuple[object, int]:
        CountingDecoder.calls += 1
        return super().raw_decode(s, idx)


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> type[CountingDecoder]:
    CountingDecoder.calls = 0
    monkeypatch.setattr(answerability, "_DECODER", CountingDecoder())
    return CountingDecoder


def test_the_cap_is_512_tokens_of_32_characters() -> None:
    assert MAX_REPLY_CHARS == 512 * 32
    padded = VALID + " " * (MAX_REPLY_CHARS - len(VALID))
    assert parse_answerability(padded).answer == "12.5"  # exactly at the cap: parsed
    over = parse_answerability(padded + " ")
    assert (over.decision, over.invalid_reason, over.raw) == ("invalid", "too long", padded + " ")
    degenerate = VALID + "\n" + "the the " * 100_000  # a server ignoring max_tokens, or a replay file
    assert parse_answerability(degenerate).invalid_reason == "too long"


def test_unclosed_fence_followed_by_whitespace() -> None:
    assert fenced_blocks("```json" + " " * 16_000) == []
    parsed = parse_answerability("```json" + " \n" * 8_000)
    assert (parsed.decision, parsed.invalid_reason) == ("invalid", "no JSON object in the reply")
    # an object after the unclosed fence is still found by the {...} search
    assert parse_answerability("```json\n" + " " * 10_000 + VALID).answer == "12.5"


def test_fenced_blocks_in_one_scan() -> None:
    assert fenced_blocks("a ```json\n{1}\n``` b ```\n 2 ``` c ```py") == ["{1}", "2"]
    assert fenced_blocks("``````") == [""]
    assert fenced_blocks('```json{"a": 1}```') == ['{"a": 1}']
    assert fenced_blocks("```" * 5) == ["", ""]  # pairs in order; the fifth opens a fence that never closes
    assert extract_json_object('```json\n{"a": 1}\n``` and ```{"b": 2}```') == {"a": 1}


def test_decodes_are_bounded_for_nested_unclosed_objects(counting: type[CountingDecoder]) -> None:
    text = '{"a":[' * 2_700  # 16,200 characters: every "{" opens an object that never closes
    assert parse_answerability(text).invalid_reason == "no JSON object in the reply"
    assert counting.calls == MAX_OBJECT_STARTS == 16


def test_braces_that_cannot_start_an_object_are_not_decoded(counting: type[CountingDecoder]) -> None:
    text = "{" * 8_000 + "{x " * 2_000 + VALID
    assert parse_answerability(text).answer == "12.5"
    assert counting.calls == 1  # only the "{" of VALID is followed by a quote


def test_the_search_tries_the_first_16_object_starts() -> None:
    decoy = '{"unclosed": '
    assert extract_json_object(decoy * 15 + VALID) == json.loads(VALID)
    assert extract_json_object(decoy * 16 + VALID) is None  # documented bound: MAX_OBJECT_STARTS


def test_deep_nesting_is_stopped_by_the_decoder() -> None:
    closed = '{"a":' * 3_000 + "1" + "}" * 3_000  # 18,001 characters: over the cap
    assert parse_answerability(closed).invalid_reason == "too long"
    inner = '{"a":' * 2_000 + "1" + "}" * 2_000  # 12,001: RecursionError at every start, caught
    assert parse_answerability(inner).invalid_reason == "no JSON object in the reply"
    assert parse_answerability("[" * 16_000).invalid_reason == "no JSON object in the reply"


def test_numbers_the_decoder_refuses_or_overflows() -> None:
    huge_int = '{"answerable": true, "answer": ' + "1" * 5_000 + ', "reason": "r"}'
    assert parse_answerability(huge_int).invalid_reason == "no JSON object in the reply"  # over 4300 digits
    long_float = '{"answerable": true, "answer": 0.' + "1" * 16_000 + ', "reason": "r"}'
    assert parse_answerability(long_float).answer == repr(0.1111111111111111)
