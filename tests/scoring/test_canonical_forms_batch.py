"""The batch forms and the fused batch scoring give exactly the per-string definitions' results.

References: ``canonical_text._forms`` (itself tested against the step-by-step ``_surfaces`` /
``_light_surfaces``), ``canonical_text._vqaeval``, and the single-row :func:`canonical_score`. Strings: every
question, prediction, answer and OCR token of the three fixture files (tests/fixtures/shortanswer), plus random
hostile strings: any Unicode, the batch separator and Python's other line breaks and spaces inside the text,
empty and very long texts, digits with commas and periods, leading and trailing marks, wrappers and closings.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from vqaudit.scoring import canonical_forms, canonical_text
from vqaudit.scoring.canonical import canonical_score, canonical_scores
from vqaudit.scoring.vqa_normalize import fast_vqaeval_process

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shortanswer"))
from test_fast_path import Row, _load  # noqa: E402  (the fixture loader of the fast-path tests)

_PIECES = [
    "a",
    "A",
    "the",
    "The",
    "an",
    "two",
    "Two",
    "none",
    "dont",
    "twas",
    "somebody'd",
    "U.S.",
    "e.g.",
    "x",
    "Ab",
    "answer is",
    "The answer is",
    "answer:",
    "It is",
    "it's",
    "its",
    "so the answer is",
    "Thus the final answer is",
    "\\boxed{",
    "}",
    "{",
    "(",
    ")",
    "[",
    "]",
    "1",
    "12",
    "1,234",
    "0,1",
    "3.5",
    ".5",
    "45%",
    "percent",
    "$",
    "-",
    "\u2212",
    "\u2013",
    "and",
    "&",
    "/",
    ";",
    ",",
    ".",
    "..",
    "!",
    "?",
    ":",
    '"',
    "'",
    "`",
    "*",
    " ",
    "  ",
    "\t",
    "\n",
    "\r",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x1d",
    "\x1e",
    "\x1f",
    "\x85",
    "\u2028",
    "\u2029",
    "\u00a0",
    "\u3000",
    "\x00",
    "\u03a3",
    "\u03c3",
    "\u0130",
    "\u017f",
    "\u212a",
    "\ufb01",
    "\u00bd",
    "caf\u00e9",
    "\U0001f600",
]


def _hostile(rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.6:
            text = "".join(rng.choice(_PIECES) + rng.choice(["", " ", ""]) for _ in range(rng.randint(0, 8)))
        elif kind < 0.8:
            text = "".join(chr(rng.randint(0, 0x2FFF)) for _ in range(rng.randint(0, 12)))
        elif kind < 0.95:
            text = " ".join(rng.choice(_PIECES) for _ in range(rng.randint(10, 60)))  # sentences
        else:
            text = rng.choice(_PIECES) * rng.randint(30, 400)  # very long
        out.append(text)
    return out


@pytest.fixture(scope="module")
def rows() -> dict[str, list[Row]]:
    return _load()


@pytest.fixture(scope="module")
def strings(rows: dict[str, list[Row]]) -> list[str]:
    out = {s for part in rows.values() for q, p, a, ocr in part for s in (q, p, *a, *ocr)}
    out.update(_hostile(random.Random(7), 20_000))
    out.update(["", " ", ".", "\n", "a\nb.", "x.\n", "The answer is 4.\n", "\u03a3\n\u03a3.", "\u0130."])
    # one final period after a letter or digit, lone or not (strip_trailing keeps an abbreviation's period)
    out.update(
        [
            "ab.",
            "a.",
            "1.",
            "x1.",
            "_a.",
            " a.",
            "a b.",
            "U.S.",
            "e.g.",
            "x y.",
            "x_.",
            "a-b.",
            "1a.",
            "'a.",
            "ab..",
            "a. .",
            "12.5.",
            "A.B.",
            "it is x.",
        ]
    )
    return sorted(out)


@pytest.mark.parametrize("light", [False, True])
def test_forms_many_equals_forms(strings: list[str], light: bool) -> None:
    got = canonical_forms.forms_many(strings, light, fast_vqaeval_process)
    assert set(got) == set(strings)
    light_of = canonical_text._light if light else None
    for s in strings:
        assert got[s][:4] == canonical_text._forms(s, canonical_text._vqaeval, light_of), repr(s)
        assert got[s][4] == s.strip(), repr(s)


def test_forms_many_in_pieces_and_with_a_memo(strings: list[str]) -> None:
    # Repeats, a shared memo filled by an earlier call, and small batches give the same forms.
    rng = random.Random(3)
    sample = rng.sample(strings, 3000)
    memo: dict[str, str] = {}
    whole = canonical_forms.forms_many(sample + sample[:100], True, fast_vqaeval_process, memo)
    for start in range(0, len(sample), 7):
        part = canonical_forms.forms_many(sample[start : start + 7], True, fast_vqaeval_process, memo)
        assert all(part[s] == whole[s] for s in part)
    assert all(memo[s] == canonical_text._vqaeval(s) for s in memo)


def test_canonical_vqaeval_many_equals_the_definition(strings: list[str]) -> None:
    memo: dict[str, str] = {}
    canonical_forms.canonical_vqaeval_many(strings, memo, {})
    for s in strings:
        assert memo[s] == canonical_text._vqaeval(s), repr(s)


@pytest.mark.parametrize("metric", ["vqa_accuracy", "anls", "relaxed_accuracy", "exact_match", "containment"])
def test_batch_scores_equal_single_rows_on_hostile_rows(strings: list[str], metric: str) -> None:
    # Rows that pair hostile predictions with hostile references (and with themselves, so every step can match).
    rng = random.Random(11)
    preds, answers = [], []
    numbers = [s for s in strings if s[:1].isdigit()]
    for i in range(4000):
        p = rng.choice(numbers if i % 4 == 0 else strings)
        refs = [rng.choice(strings) if rng.random() < 0.5 else _variant(rng, p) for _ in range(rng.randint(1, 4))]
        preds.append(p)
        answers.append(refs)
    expected = [canonical_score(p, a, metric) for p, a in zip(preds, answers, strict=True)]
    assert canonical_scores(preds, answers, metric) == expected


def _variant(rng: random.Random, text: str) -> str:
    """A text near ``text`` (a step of the canonical layer may map one onto the other)."""
    choice = rng.randrange(8)
    if choice == 6:
        return rng.choice(["$", "about ", "~", "\\boxed{", "-"]) + text
    if choice == 7:
        return text + rng.choice(["%", " percent", " million", "0", ",000", "}"])
    if choice == 0:
        return text.upper()
    if choice == 1:
        return text + rng.choice([".", " .", "!", '"', " ", "%"])
    if choice == 2:
        return rng.choice(["The answer is ", "It is ", '"', "*", " "]) + text
    if choice == 3:
        return text.replace(" ", ", ")
    if choice == 4:
        words = text.split()
        rng.shuffle(words)
        return " and ".join(words)
    return text[: len(text) // 2]


def test_form_length_bounds_hold(strings: list[str]) -> None:
    # The bound is below the length of every vqaEval and light form of steps 1-4 (that lets ANLS skip the forms
    # of a prediction much longer than its references); on sentences it is not trivial.
    texts = [s for s in strings if s.isascii()]
    _, t4s = canonical_forms.step_texts(texts)
    bounds = canonical_forms.form_length_bounds(t4s)
    for s, bound in zip(texts, bounds, strict=True):
        _, _, surfaces, light = canonical_text._forms(s, canonical_text._vqaeval, canonical_text._light)
        assert light is not None
        assert bound <= min(map(len, (*surfaces, *light))), repr(s)
    # By hand: strong characters "bd" "$15555" in 2 words, plus the letters u g e t of the long piece "budget";
    # "M" "Lld" "2" "cp" in 4 words, plus o s of "Lloyd's" (the apostrophe is not counted).
    assert canonical_forms.form_length_bounds(["The budget is $15,555.", "the a an", "", "Mr. Lloyd's 2 cups"]) == [
        8 + 1 + 4,
        0,
        0,
        8 + 3 + 2,
    ]


def test_step_texts_equal_the_rules(strings: list[str]) -> None:
    texts = [s for s in strings if s.isascii()]
    t3s, t4s = canonical_forms.step_texts(texts)
    for s, t3, t4 in zip(texts, t3s, t4s, strict=True):
        assert t3 == canonical_text.strip_trailing(s), repr(s)
        assert t4 == canonical_text.strip_trailing(canonical_text.strip_wrapper(t3)), repr(s)


def test_strong_bounds_are_smaller(strings: list[str]) -> None:
    _, t4s = canonical_forms.step_texts([s for s in strings if s.isascii()])
    assert all(
        a <= b for a, b in zip(canonical_forms.strong_bounds(t4s), canonical_forms.form_length_bounds(t4s), strict=True)
    )
