"""The batch failure notes give exactly the per-output rules' counts.

Reference: :func:`vqaudit.shortanswer.failures._row_notes`, the per-output loop ``failure_notes`` was before the
batch passes (its rules: ``_truncated``, ``_formatting``, the abstention pattern, ``is_unanswerable``). Outputs:
every prediction of the three real fixture files (tests/fixtures/shortanswer), one by one and all together, and
random hostile outputs (any Unicode, the marks every rule looks at, each whitespace character Python knows, NUL,
the case-folding letters the patterns match (``ſ``, ``ı``, ``İ``, ``K``), empty and very long outputs, digits,
commas and periods, leading and trailing marks), one by one and in random lists.
"""

from __future__ import annotations

import dataclasses
import random
import re
import sys
from pathlib import Path

import pytest

from vqaudit.scoring import canonical_text
from vqaudit.shortanswer import failures
from vqaudit.shortanswer.failures import failure_notes

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_fast_path import _load  # noqa: E402  (the fixture loader of the fast-path tests)

_WHITESPACE = "".join(c for c in map(chr, range(0x3001)) if c.isspace())
_PIECES = [
    "",
    " ",
    "  ",
    *_WHITESPACE,
    ".",
    "...",
    "\u2026",
    ",",
    ";",
    ":",
    "!",
    "?",
    "(",
    ")",
    "[",
    "]",
    '"',
    "'",
    "`",
    "**",
    "*",
    "# ",
    "#",
    "- ",
    "-",
    "* ",
    "\\boxed{7}",
    "\\boxed{",
    "{",
    "}",
    "\u201c",
    "\u201d",
    "\x00",
    "_",
    "3.",
    "5.",
    "1,000",
    "0.5",
    "42",
    "a",
    "the",
    "The answer is",
    "the final answer is",
    "Answer:",
    "Result is",
    "It is",
    "it's",
    "Its",
    "This says",
    "That reads",
    "so the answer is",
    "Thus, the answer is",
    "answeris",
    "unanswerable",
    "Unanswerable",
    "UNANSWERABLE",
    "un-answerable",
    "un.answerable",
    "unan\u017fwerable",
    "unknown",
    "un\u212anown",
    "N/A",
    "n/a",
    "I cannot",
    "\u0130 cannot",
    "\u0131 can't",
    "i am unable to",
    "cannot be determined",
    "cannot  be determined",
    "there is no way",
    "it is not possible",
    "not possible to tell",
    "red",
    "blue",
    "yes",
    "no",
    "word",
    "\u00e9",
    "\u03a3",
    "\U0001f600",
    "\ud800",
    "\ufffd",
    "\u0301",
]


def _hostile(rng: random.Random) -> str:
    n = rng.choice([0, 1, 1, 2, 3, 5, 8, 25])
    text = "".join(rng.choice(_PIECES) + rng.choice(["", " ", " ", " ", "\n", "  "]) for _ in range(n))
    if rng.random() < 0.03:
        text = text * rng.randint(20, 100)
    if rng.random() < 0.1:
        text += "".join(chr(rng.randrange(1, 0x3000)) for _ in range(rng.randint(1, 5)))
    return text


def _same(outputs: list[str]) -> None:
    got = dataclasses.asdict(failure_notes(outputs))
    want = dataclasses.asdict(failures._row_notes(outputs))
    assert got == want, outputs if len(outputs) < 5 else len(outputs)
    assert list(got["formatting"]) == list(failures.FORMAT_KINDS)


@pytest.fixture(scope="module")
def fixture_outputs() -> list[str]:
    return [p for part in _load().values() for _, p, _, _ in part]


def test_batch_equals_the_rules_on_every_fixture_output(fixture_outputs: list[str]) -> None:
    _same(fixture_outputs)
    for text in dict.fromkeys(fixture_outputs):
        _same([text])


@pytest.mark.parametrize("seed", range(20))
def test_batch_equals_the_rules_on_hostile_outputs(seed: int) -> None:
    rng = random.Random(seed)
    texts = [_hostile(rng) for _ in range(500)]
    for text in texts:
        _same([text])
        _same([text, text, "  "])
    _same(texts)
    _same([t for t in texts if "\x00" not in t])


def test_batch_edge_cases() -> None:
    for outputs in (
        [],
        [""],
        ["   "],
        ["\x00"],
        ["a\x00b", "c"],
        ["x"] * 3,
        ["one two three four five six"],
        ["a b c d e f g h i j k l m n o p q r s t u"],
        ["a b c d e f g h i j k l m n o p q r s t u."],
        ["1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22"],
        ["- item"],
        ["-5"],
        ["'q'"],
        ["'"],
        ['"'],
        ["Yes."],
        ["3."],
        ["x3."],
        ["It is red"],
        ["answer is 5"],
        ["the answer is: 5"],
        ["(a"],
        ["a)"],
        ["[a]"],
        ['"a" b "'],
        ["\u2026"],
        ["ok..."],
    ):
        _same(list(outputs))


def test_wrapper_start_is_a_superset_of_the_wrapper_pattern() -> None:
    # Every output strip_wrapper changes at its start must be a candidate of the batch pattern (bytes, after NUL).
    rng = random.Random(3)
    texts = [_hostile(rng) for _ in range(20_000)] + _PIECES
    for t in texts:
        t = t.strip()
        if t.isascii() and canonical_text._WRAPPER.match(t) and not re.search(r"[^\S ]", t):
            assert failures._WRAPPER_START.match(b"\x00" + t.lower().encode()), t
