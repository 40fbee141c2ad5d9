"""The strict choice matcher (seed 001, appendix 0.C.1 "Simplification of the matching algorithm")."""

from __future__ import annotations

import pytest

from vqaudit.parsing.choice import match_choice
from vqaudit.schema import View

OPTIONS = {"A": "a horse", "B": "a dog", "C": "a cat", "D": "a cow"}


@pytest.mark.parametrize(
    ("reply", "letter", "rule"),
    [
        # The paper's accepted forms: a bare letter, "A) XXX", "A. XXX", "A, XXX", "(A) XXX" (0.C.1).
        ("B", "B", "letter"),
        ("  C\n", "C", "letter"),
        ("A) a horse", "A", "letter-prefix"),
        ("B. a dog", "B", "letter-prefix"),
        ("D, a cow", "D", "letter-prefix"),
        ("(C) a cat", "C", "letter-prefix"),
        ("A.", "A", "letter-prefix"),
        # The full option text alone (MMBench's matcher).
        ("a dog", "B", "option-text"),
        ("A Cat.", "C", "option-text"),
    ],
)
def test_matcher_accepts_the_papers_patterns(reply: str, letter: str, rule: str) -> None:
    found = match_choice(reply, OPTIONS)
    assert found is not None and (found.letter, found.rule) == (letter, rule)


@pytest.mark.parametrize(
    "reply",
    [
        "A man is riding a horse.",  # starts with a capital A but is a sentence, not option A (docs/upd.md)
        "A horse is in the picture",
        "An animal",
        "a",  # letters are upper-case only
        "A. a horse, or maybe B. a dog",  # names another option (0.C.1: "without the inclusion of other choices")
        "(A) or (B)",
        "A) horse; C) cat",
        "The answer is B",  # not one of the accepted forms: left to the judge
        "E",  # not a valid letter here
        "",
        "horse",  # not an option's full text
    ],
)
def test_matcher_does_not_decide_other_replies(reply: str) -> None:
    assert match_choice(reply, OPTIONS) is None


def test_extra_letter_of_the_instruction_setting_is_valid() -> None:
    # Instruction setting: "F. None of the above" is answerable although only A-D are listed (seed 001, §4).
    found = match_choice("F. None of the above", OPTIONS, extra_letters="F")
    assert found is not None and found.letter == "F"
    assert match_choice("F", OPTIONS) is None


def test_json_contract_replies_are_read_before_the_matcher(small_views: list[View]) -> None:
    # Reference policies reply in the answerability JSON format: answerable:false abstains, answer goes through
    # the strict matcher (docs/upd.md, "Scoring" step 1).
    from vqaudit.scoring.upd import match_reply

    view = next(v for v in small_views if v.state == "aad" and v.meta["setting"] == "base")
    verdict = match_reply(view, '{"answerable": false, "answer": null, "reason": "no option fits"}')
    assert verdict is not None and (verdict.meaning, verdict.decided_by) == ("abstain", "matcher:json-abstain")
    verdict = match_reply(view, '{"answerable": true, "answer": "B", "reason": "r"}')
    assert verdict is not None and (verdict.meaning, verdict.decided_by) == ("option:B", "matcher:json-letter")
    assert match_reply(view, '{"answerable": true, "answer": "A man is riding", "reason": "r"}') is None
    removed = str(view.meta["removed_text"])
    verdict = match_reply(view, removed + ".")
    assert verdict is not None and verdict.meaning == "removed"
