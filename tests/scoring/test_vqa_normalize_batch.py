"""``vqaeval_many`` (the vqaEval normalization of many texts into a caller's memo) equals the per-text rule.

The per-text reference is :func:`vqaudit.scoring.vqa_normalize.vqaeval_process`, the chain of vqaEval.py
(``processPunctuation`` then ``processDigitArticle``, GT-Vision-Lab/VQA at a013f00), which
``tests/scoring/test_target_pass_shortcuts.py`` checks against a transcription of the script's loops. Inputs:
every string of the fixture rows (``tests/fixtures/shortanswer``) and random strings over the characters the
rules read, including Unicode whitespace, the final-sigma letters and NUL bytes (the separator a bulk pass
would use).
"""

from __future__ import annotations

import random

from shortanswer.helpers import load_fixture_rows
from vqaudit.scoring import vqa_normalize
from vqaudit.scoring.vqa_normalize import vqaeval_many, vqaeval_process

HOSTILE = "aAsΣσς 09.,;:!?'\"-/()[]\\_@`\t\n\x00\x1c\x85\u00a0\u2028\u0130"
WORDS = ["the", "A", "an", "two", "None", "dont", "Ive", "ten.", "1,000", "3.5", "U.S.", "ΟΔΟΣ", "x\x00y", ""]


def _hostile(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    out = ["".join(rng.choice(HOSTILE) for _ in range(rng.randint(0, 14))) for _ in range(n)]
    return out + [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 6))) for _ in range(n)]


def test_vqaeval_many_equals_the_script_chain_per_text() -> None:
    rows = load_fixture_rows()
    texts = [s for part in rows.values() for _, p, answers, _ in part for s in (p, *answers)] + _hostile(3, 5000)
    memo = vqaeval_many(texts)
    assert memo.keys() == set(texts)
    for text in texts:
        assert memo[text] == vqaeval_process(text), repr(text)


def test_vqaeval_many_extends_the_callers_memo_and_keeps_its_entries() -> None:
    memo = {"The Dog.": "kept as given"}
    out = vqaeval_many(["The Dog.", "Two  cats!", "Two  cats!", "a"], memo)
    assert out is memo
    # "Two  cats!": "!" -> " " (no space beside it), then "two" -> "2", spaces folded; "a" is an article.
    assert memo == {"The Dog.": "kept as given", "Two  cats!": "2 cats", "a": ""}


def test_punctuation_replaced_per_mark_equals_one_translation() -> None:
    # The per-mark str.replace of process_punctuation against the one-table translation it replaced: the
    # replacements commute because each writes "" or " " for one mark and no step inserts a mark.
    rng = random.Random(11)
    marks = "".join(vqa_normalize.PUNCTUATION)
    for _ in range(20_000):
        text = "".join(rng.choice(marks + "a1 .") for _ in range(rng.randint(0, 12)))
        digit_comma = vqa_normalize.VQAEVAL_COMMA_CONDITION.search(text) is not None
        table = {
            ord(p): "" if digit_comma or p + " " in text or " " + p in text else " " for p in set(text) & set(marks)
        }
        translated = text.translate(table)
        expected = vqa_normalize.PERIOD_STRIP.sub("", translated, count=32)
        assert vqa_normalize.process_punctuation(text) == expected, repr(text)
