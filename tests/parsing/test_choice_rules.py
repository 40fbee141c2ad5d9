"""The rules of the one choice reader (``parsing/choice.py``), one test per rule, each reply written for the test.

Every expected value is the reading a careful human takes of the reply (docs/upd.md, "How a choice is read");
none is copied from a model's output.
"""

from __future__ import annotations

import time

import pytest

from vqaudit.parsing.choice import (
    AMBIGUOUS,
    Abstention,
    Ambiguous,
    ChoiceMatch,
    extract_choice,
    match_choice,
    match_declaration,
    read_choice,
)
from vqaudit.parsing.declarations import declarations

PETS = {"A": "a horse", "B": "a dog", "C": "a cat", "D": "a cow", "E": "a goat"}
FRUIT = {"A": "a plum", "B": "a lemon", "C": "a fig", "D": "a kiwi"}


def _read(reply: str, options: dict[str, str] = PETS) -> str | None:
    found = read_choice(reply, options)
    if isinstance(found, ChoiceMatch):
        return found.letter
    if isinstance(found, Abstention):
        return "abstain"
    if isinstance(found, Ambiguous):
        return "ambiguous"
    return None


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        # A final declaration wins over earlier mentions of other labels.
        ("At first (A) looked right, and (B) was close, but the answer is (D).", "D"),
        ("Option A has a mane. Option B barks. The final answer is C.", "C"),
        # ... and over later mentions that declare nothing.
        ("The answer is (E). Option (B) would need floppy ears.", "E"),
        ("Answer: C\nThe other choices, A, B and D, describe larger animals.", "C"),
    ],
)
def test_a_final_declaration_wins_over_mentions(reply: str, expected: str) -> None:
    assert _read(reply) == expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("The answer is (C). Option (D) is incorrect because of the udder.", "C"),  # a rejection after the answer
        ("Option (A) is incorrect.", None),
        ("B is wrong.", None),
        ("The answer is not B.", None),
        ("Not (E).", None),
        ("It is not option D; the answer is (B).", "B"),
        ("This rules out A. Answer: D", "D"),
        ("We can rule out **C**, so **B**.", "B"),
        ("(D) can be ruled out at once.", None),
        ("Option A: a horse - incorrect, no mane.\nOption E: a goat - correct.", "E"),
        ("Rather than (A), I choose (C).", "C"),
        ("I wouldn't choose B. The answer is D.", "D"),
        ("D. a cow - no.", None),  # a rejected lettered opening (the strict matcher's rule 2)
        ("Option D: a cow - no.", None),  # ... and its option text is not then read as the choice
        ("(A) is incorrect", None),
    ],
)
def test_a_negated_or_rejected_option_is_never_the_choice(reply: str, expected: str | None) -> None:
    assert _read(reply) == expected


@pytest.mark.parametrize(
    ("reply", "labels"),
    [
        ("The answer is (A) and (B).", "AB"),
        ("The answer is D, or maybe E.", "DE"),
        ("The answer is D: a cow. Or E.", "DE"),
        ("Answer: B/C", "BC"),
        ("It is either (C) or (E).", "CE"),
        ("Both A and D are correct.", "AD"),
        ("**B** or **E**", "BE"),
    ],
)
def test_two_options_named_as_the_answer_are_ambiguous(reply: str, labels: str) -> None:
    found = read_choice(reply, PETS)
    assert found == Ambiguous(labels) and found.rule == AMBIGUOUS
    # Every other caller sees an undecided reply: extract_choice and match_declaration give None.
    assert extract_choice(reply, PETS) is None
    assert match_declaration(reply, "ABCDE") is None


@pytest.mark.parametrize(
    "reply",
    [
        "The answer is B, not C.",  # "not C" rejects C
        "The answer is C because A and B are wrong.",  # a clause opened by "because" argues, it does not hedge
        "The answer is B and C is incorrect.",  # the second label is itself rejected
        "The answer is B, the one that barks.",
    ],
)
def test_a_second_label_that_is_not_a_second_answer_keeps_the_choice(reply: str) -> None:
    assert isinstance(read_choice(reply, PETS), ChoiceMatch)


@pytest.mark.parametrize(
    ("reply", "letter", "form"),
    [
        ("The animal purrs.\n\n**(E)**", "E", "bold"),
        ("**E**", "E", "bold"),
        ("\\boxed{E}", "E", "boxed"),
        ("So the result is $\\boxed{\\text{E}}$.", "E", "boxed"),
        ("Given the horns, it would be D.", "D", "would-be"),
        ("The correct choice is (A).", "A", "answer-is"),
        ("The correct option is (A) - the horse.", "A", "answer-is"),
        ("Given the whiskers, the animal is option C: a cat.", "C", "chosen"),
        ("I'll go with option (B).", "B", "chosen"),
        ("It has a beard and small horns: E.", "E", "colon-end"),
        ("The one with hooves is option A.", "A", "chosen"),
        ("It barks, so option B.", "B", "option-x-end"),
        ("(A) a horse: no\n(D) a cow: correct", "D", "list-correct"),
        ("B is the best fit here.", "B", "x-is-correct"),
    ],
)
def test_recognised_declaration_forms(reply: str, letter: str, form: str) -> None:
    found = read_choice(reply, PETS)
    assert isinstance(found, ChoiceMatch) and (found.letter, found.rule, found.form) == (
        letter,
        "final-declaration",
        form,
    )


@pytest.mark.parametrize(
    "reply",
    [
        "Let's look at option A.",  # "option X." ending a reply concludes only after "so", a comma, a sentence start
        "It is C-shaped.",  # "it is X" needs the clause to end after the label
        "Option A is a horse, option B is a dog.",  # "Option X" opening a line must be followed by ":", ".", ...
        "I choose to answer carefully.",
    ],
)
def test_phrases_near_a_label_that_declare_nothing(reply: str) -> None:
    assert declarations(reply) == []


@pytest.mark.parametrize(
    ("reply", "options", "expected"),
    [
        # A capital letter used as a name in running text is no choice ...
        ("In the drawing, angle A is the right angle.", PETS, None),
        ("Angle A is the right angle.", {"A": "angle A", "B": "angle B", "C": "angle C"}, "A"),  # ... the text is
        ("A lemon is rich in vitamin C.", FRUIT, "B"),  # the option text, not label C
        ("Vitamin C is the correct answer.", {"A": "vitamin A", "B": "vitamin C", "C": "iron"}, "B"),
        ("A dog sits at point B.", {"A": "a cat", "B": "a bird", "C": "a dog"}, "C"),
        ("Type A cooks dry a fig.", FRUIT, "C"),
        ("Mr. B is holding the plum, so the answer is A.", FRUIT, "A"),
        ("Angle A's measure is 90 degrees. The answer is (B).", PETS, "B"),
        # ... nor are the letters of an era or an initialism.
        ("B. sixth or seventh century C. E.", {"A": "first century", "B": "sixth or seventh century C.E."}, "B"),
        ("A. minted in the first century B.C.", {"A": "first century", "B": "sixth or seventh century C.E."}, "A"),
        ("C. sent from Washington D.C.", {"A": "a letter", "B": "a parcel", "C": "a postcard"}, "C"),
    ],
)
def test_a_capital_used_as_a_name_is_not_a_choice(reply: str, options: dict[str, str], expected: str | None) -> None:
    assert _read(reply, options) == expected


def test_the_strict_matcher_reads_an_initialism_as_no_second_option() -> None:
    options = {"A": "first century B.C.", "B": "sixth or seventh century C.E.", "C": "tenth century"}
    assert match_choice("B. sixth or seventh century C. E.", options) == ChoiceMatch("B", "letter-prefix")
    assert match_choice("B. or C.", options) is None  # a real second option: undecided as before


def test_a_later_declaration_overrides_the_opening_letter() -> None:
    assert read_choice("B) a dog. Wait: the ears are pointed, so the answer is C", PETS) == ChoiceMatch(
        "C", "final-declaration"
    )
    assert read_choice("B) a dog. Option A is incorrect.", PETS) == ChoiceMatch("B", "letter-prefix")
    assert _read("A. a horse. Or maybe the answer is B or C.") == "ambiguous"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("I cannot determine the animal from this image.", "abstain"),
        ("Sorry, I can't see the image clearly.", "abstain"),
        ("None of the options match.", "abstain"),
        ("I don't know.", "abstain"),
        ("I can't be sure, but the answer is (B).", "B"),  # a declaration wins over an abstention phrase
        ("The picture is detailed. " * 20 + "I cannot determine it.", None),  # long reasoning: declarations only
    ],
)
def test_abstention_phrases_as_before(reply: str, expected: str | None) -> None:
    assert _read(reply) == expected


def test_results_stay_compatible() -> None:
    # ChoiceMatch equality ignores the declaration form, so callers comparing (letter, rule) are unaffected.
    found = read_choice("The answer is (C).", PETS)
    assert found == ChoiceMatch("C", "final-declaration") and isinstance(found, ChoiceMatch)
    assert found.form == "answer-is"
    assert [(d.form, d.label, d.ambiguous, d.second) for d in declarations("The answer is A or B.")] == [
        ("answer-is", "A", True, "B")
    ]


HOSTILE = [
    "**A** " * 2_700,
    "The answer is A, " * 1_000,
    "A or " * 3_300,
    "angle A is correct. " * 820,
    "C. E. " * 2_700,
    "Option A: - \n" * 1_250,
    "(A) and (B) are " * 1_000,
    "\\boxed{" * 2_300,
    "it is " * 2_700 + "A.",
    "rules out " * 1_600 + "B",
]


@pytest.mark.parametrize("reply", HOSTILE, ids=lambda r: repr(r[:12]))
def test_hostile_16kb_replies_are_read_in_linear_time(reply: str) -> None:
    # 16 KB replies built to make each pattern match at every position; every window the reader scans is
    # bounded, so a reply takes milliseconds. The bound (2 s of CPU) is loose for a shared machine; a quadratic
    # reading takes minutes.
    assert len(reply) >= 16_000
    start = time.process_time()
    read_choice(reply, PETS)
    assert time.process_time() - start < 2.0
