"""The batch RA-Eval layer gives exactly the row rule's results.

Reference, kept here: the rule of seed 002 §3.3 row by row - the plain vqaEval.py transcription
(:func:`vqaudit.scoring.vqa_normalize.vqaeval_process`, no memo, no shortcut) of output and golds, the length floor
``|g_norm| > 3`` and a word-boundary regex search - and the multiple-choice test as its two patterns alone.
Rows: every row of the three real fixture files (tests/fixtures/shortanswer) under several official-score
patterns, and random hostile rows (any Unicode, the separators and marks the normalization looks at, whitespace
oddities, empty strings and empty gold lists, very long texts, NaN and out-of-range scores).
"""

from __future__ import annotations

import math
import random
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from vqaudit.scoring import ra_eval
from vqaudit.scoring.ra_eval import MIN_GOLD_CHARS, is_multiple_choice, ra_eval_layer
from vqaudit.scoring.vqa_normalize import fast_vqaeval_process, vqaeval_process

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shortanswer"))
from test_fast_path import _load  # noqa: E402  (the fixture loader of the fast-path tests)


def _reference_multiple_choice(question: str) -> bool:
    if ra_eval._OPTIONS_WORD.search(question):
        return True
    return len({m.group(1) for m in ra_eval._OPTION_MARK.finditer(question)}) >= 2


def _reference_recovered(prediction: str, answers: Sequence[str]) -> bool:
    output = vqaeval_process(prediction)
    for gold in answers:
        g = vqaeval_process(gold)
        if len(g) > MIN_GOLD_CHARS and re.search(r"(?<!\w)" + re.escape(g) + r"(?!\w)", output):
            return True
    return False


def _reference_layer(
    predictions: Sequence[str], answers: Sequence[Sequence[str]], questions: Sequence[str], official: Sequence[float]
) -> list[bool | None]:
    return [
        None if s >= 1.0 or _reference_multiple_choice(q) else _reference_recovered(p, a)
        for p, a, q, s in zip(predictions, answers, questions, official, strict=True)
    ]


_PIECES = [
    "",
    " ",
    "  ",
    "\t",
    "\n",
    "\x1c",
    "\x85",
    "\u2028",
    "\u00a0",
    "\u3000",
    ".",
    "..",
    ",",
    "1,000",
    "3.5",
    "-",
    "/",
    "(",
    ")",
    "[",
    "]",
    '"',
    "'",
    "`",
    "_",
    "?",
    "!",
    ":",
    "A.",
    "B)",
    "(C)",
    "Options:",
    "the",
    "an",
    "a",
    "two",
    "ten",
    "none",
    "dont",
    "twas",
    "yall'd've",
    "red",
    "blue",
    "septra",
    "SEPTRA",
    "Septra",
    "\u0130stanbul",
    "\u017fun",
    "\u212aelvin",
    "caf\u00e9",
    "\u03a3\u039f\u03a3",
    "x_y",
    "x-y",
    "42",
    "4 2",
    "1,2,3",
    "100%",
    "$5",
    "\x00",
    "\ufffd",
    "\u0301",
    "t-shirt",
    "U.S.A",
    "no",
    "yes",
    "unanswerable",
]


def _hostile(rng: random.Random) -> str:
    n = rng.choice([0, 1, 1, 2, 3, 5, 8])
    text = "".join(rng.choice(_PIECES) + rng.choice(["", " ", " ", ""]) for _ in range(n))
    if rng.random() < 0.05:
        text = text * rng.randint(20, 200)  # very long
    if rng.random() < 0.1:
        text += "".join(chr(rng.randrange(0x20, 0x3000)) for _ in range(rng.randint(1, 6)))  # any Unicode
    return text


def _hostile_rows(seed: int, n: int) -> tuple[list[str], list[tuple[str, ...]], list[str], list[float]]:
    rng = random.Random(seed)
    golds = [_hostile(rng) for _ in range(40)]
    predictions, answers, questions, official = [], [], [], []
    for _ in range(n):
        refs = tuple(
            rng.choice(golds) if rng.random() < 0.7 else _hostile(rng) for _ in range(rng.choice([0, 1, 1, 2, 3, 10]))
        )
        p = rng.choice(
            [
                _hostile(rng),
                " ".join(refs),
                rng.choice(refs) if refs else "",
                "The answer is " + (refs[0] if refs else "") + ".",
            ]
        )
        predictions.append(p)
        answers.append(refs)
        questions.append(
            rng.choice(
                [
                    "What is it?",
                    "Which? A. red B. blue",
                    "Options: x",
                    _hostile(rng),
                    "Is A. one?",
                    "(A) x (B) y",
                    "A) x",
                ]
            )
        )
        official.append(rng.choice([0.0, 0.0, 0.3, 1.0, 1.5, -0.0, math.nan, 0.9999]))
    return predictions, answers, questions, official


@pytest.mark.parametrize("seed", range(30))
def test_layer_equals_the_row_rule_on_hostile_rows(seed: int) -> None:
    predictions, answers, questions, official = _hostile_rows(seed, 300)
    want = _reference_layer(predictions, answers, questions, official)
    assert ra_eval_layer(predictions, answers, questions, official) == want
    forms: dict[str, str] = {}
    assert ra_eval_layer(predictions, answers, questions, official, forms=forms) == want
    assert all(v == fast_vqaeval_process(k) for k, v in forms.items())  # the shared memo holds true forms only
    assert ra_eval_layer(predictions, answers, questions, official, forms=forms) == want  # read back from the memo
    assert ra_eval_layer(predictions, answers, questions, official, vqaeval=vqaeval_process) == want


def test_layer_equals_the_row_rule_on_the_fixture_rows() -> None:
    for part in _load().values():
        predictions, answers, questions = [r[1] for r in part], [r[2] for r in part], [r[0] for r in part]
        for pattern in range(3):
            official = [[0.0, 0.5, 1.0][(i + pattern) % 3] if pattern else 0.0 for i in range(len(part))]
            want = _reference_layer(predictions, answers, questions, official)
            assert ra_eval_layer(predictions, answers, questions, official) == want


def test_a_memo_entry_is_used_as_given() -> None:
    # The layer reads forms from the shared memo (it must hold fast_vqaeval_process results): a planted entry shows it.
    forms = {"zzzz": "septra"}
    assert ra_eval_layer(["zzzz"], [["septra"]], ["What?"], [0.0], forms=forms) == [True]
    assert ra_eval_layer(["zzzz"], [["septra"]], ["What?"], [0.0]) == [False]


def test_unequal_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        ra_eval_layer(["a"], [["a"]], ["q"], [0.0, 1.0])


def test_multiple_choice_shortcut_equals_the_patterns() -> None:
    rng = random.Random(7)
    questions = {q for part in _load().values() for q, *_ in part}
    questions.update(_hostile(rng) for _ in range(20_000))
    questions.update(
        [
            "A. x B. y",
            "A) x B) y",
            "(A) x (B) y",
            "A: x B: y",
            "Options:",
            "choices :",
            "A x B y",
            "A . x",
            "CHOICES: a",
            "\u017fomething A. x B. y",
            "A.\u2028x B.\u2028y",
        ]
    )
    for q in questions:
        assert is_multiple_choice(q) == _reference_multiple_choice(q), q
