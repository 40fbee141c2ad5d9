"""Final-answer rules of the multiple-choice extractor (issue 17 item 1), against hand-checked replies and
against VLMEvalKit's ``can_infer`` (re-stated in :mod:`tests.parsing.vlmevalkit_reference`) on every row."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from tests.parsing.vlmevalkit_reference import can_infer

from vqaudit.parsing.choice import Abstention, ChoiceMatch, extract_choice, extract_yes_no

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "upd"
VERBOSE = FIXTURES / "verbose_choice_replies.jsonl"
LLAVA = FIXTURES / "llava15_13b_mmbench_dev.jsonl.gz"
OPTIONS = {"A": "a horse", "B": "a dog", "C": "a cat", "D": "a cow"}


def _ours(reply: str, options: dict[str, str]) -> str | None:
    found = extract_choice(reply, options)
    return found.letter if isinstance(found, ChoiceMatch) else "abstain" if found is not None else None


def _verbose_rows() -> list[dict[str, object]]:
    return [json.loads(line) for line in VERBOSE.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("row", _verbose_rows(), ids=lambda r: str(r["reply"])[:40])
def test_hand_checked_verbose_replies(row: dict[str, object]) -> None:
    # Each expected value was read off the reply by hand; "why" names the rule (tests/fixtures/upd/CREDITS.md).
    options = row["options"]
    assert isinstance(options, dict) and isinstance(row["reply"], str)
    assert _ours(row["reply"], options) == row["expected"], row["why"]


def test_the_deciding_rule_is_recorded() -> None:
    assert extract_choice("B", OPTIONS) == ChoiceMatch("B", "letter")
    assert extract_choice("Answer: A. No wait, the answer is (C).", OPTIONS) == ChoiceMatch("C", "final-declaration")
    assert extract_choice("I don't know", OPTIONS) == Abstention("abstain-phrase", "I don't know")
    assert extract_choice("It looks like a cat", OPTIONS) == ChoiceMatch("C", "option-text-in-reply")


def test_a_declaration_beats_an_abstention_and_an_invalid_one_decides_nothing() -> None:
    # A declaration is read before abstention phrases; a declaration that cannot decide leaves the reply undecided
    # (it is not read as an abstention nor as another option's text).
    assert _ours("I can't be sure, but the answer is B.", OPTIONS) == "B"
    assert _ours("None of the options fit; the answer is E.", OPTIONS) is None
    assert _ours("A cat. The answer is A or C.", OPTIONS) is None


def test_long_replies_are_read_only_by_declarations() -> None:
    filler = "The picture is detailed. " * 20  # 500 characters, over MAX_ABSTAIN_CHARS
    assert _ours(filler + "I cannot determine it.", OPTIONS) is None
    assert _ours(filler + "It is a cat.", OPTIONS) is None
    assert _ours(filler + "The answer is (C).", OPTIONS) == "C"


def test_against_can_infer_on_the_llava_mmbench_sheet() -> None:
    # The bundled MMBench sheet (4,377 rows, LLaVA-1.5-13B): every row compared with VLMEvalKit's can_infer.
    with gzip.open(LLAVA, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    ours_decided = theirs_decided = 0
    disagreements: list[tuple[int, str, str | None, str | None]] = []
    for rec in rows:
        options = {c: rec[c] for c in "ABCD" if rec[c] is not None}
        ours, theirs = _ours(str(rec["prediction"]), options), can_infer(str(rec["prediction"]), options)
        ours_decided += ours is not None
        theirs_decided += theirs is not None
        if ours != theirs:
            disagreements.append((rec["index"], rec["prediction"], ours, theirs))
    assert (ours_decided, theirs_decided) == (4377, 4377)  # every prediction there is a bare letter
    assert disagreements == []


def test_against_can_infer_on_the_verbose_replies() -> None:
    # Where the two disagree, vqaudit's reading is the hand-checked one; VLMEvalKit's letters that the reply does
    # not declare (the article "A", a negated or rejected option, a lower-case "b") are listed here.
    rows = _verbose_rows()
    listed: dict[str, tuple[str | None, str | None]] = {}
    for row in rows:
        reply, options = str(row["reply"]), dict(row["options"])  # type: ignore[call-overload]
        ours, theirs = _ours(reply, options), can_infer(reply, options)
        theirs = "abstain" if theirs == "Z" else theirs
        assert ours == row["expected"]
        if ours != theirs:
            listed[reply] = (ours, theirs)
    wrong_theirs = {r: v for r, v in listed.items() if v[1] is not None}
    assert wrong_theirs == {
        "The answer is A or B.": (None, "A"),
        "I do not think the answer is B.": (None, "B"),
        "Option A is incorrect.": (None, "A"),
        "The answer is A dog.": ("B", "A"),
        "In the picture I can see a small animal, it looks like a cow to me, so A": (None, "A"),
        "I think the answer is b.": (None, "B"),
        "The answer is A because it has a mane.": (None, "A"),
        "It is not red.": (None, "A"),
        "a horseshoe": (None, "A"),
    }
    ours_n = sum(1 for row in rows if row["expected"] is not None)
    theirs_n = sum(1 for row in rows if can_infer(str(row["reply"]), dict(row["options"])) is not None)  # type: ignore[call-overload]
    # The fixture: 43 replies, 31 decided by hand; can_infer also decides 31, 9 of them with a letter the reply does
    # not declare (listed above).
    assert (len(rows), ours_n, theirs_n, len(wrong_theirs)) == (43, 31, 31, 9)
    assert ours_n >= theirs_n - len(wrong_theirs)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Yes.", (True, "leading-token")),
        ("No", (False, "leading-token")),
        ("**No** - different", (False, "leading-token")),
        ("no, it is a cat", (False, "leading-token")),
        ("Yes\nThe sign is red.", (True, "leading-token")),
        ("The answer is no.", (False, "final-declaration")),
        ("Answer: Yes", (True, "final-declaration")),
        ("No dog is visible", None),  # "no" inside a phrase never decides
        ("Nothing", None),
        ("Not sure", None),
        ("None", None),
        ("I know", None),
        ("There is no doubt", None),
        ("yes it is", None),
        ("", None),
    ],
)
def test_yes_no(reply: str, expected: tuple[bool, str] | None) -> None:
    assert extract_yes_no(reply) == expected
