"""The batch canonical layer and its shortcuts give exactly the definitions' results.

References: the plain definitions kept in :mod:`vqaudit.scoring.canonical_text` (``_surfaces``,
``_light_surfaces``: every step normalized on its own), the single-row :func:`canonical_score` (whose results on
every fixture row are pinned by ``tests/golden/fast_path_*.json``), and hand computation. Strings: every
question, prediction, answer and OCR token of the three real fixture files (tests/fixtures/shortanswer), plus
short random strings over the characters the steps look at, plus hand-made hostile ones.
"""

from __future__ import annotations

import functools
import random
import sys
from pathlib import Path

import pytest

from vqaudit.scoring import canonical, canonical_text
from vqaudit.scoring.canonical import canonical_score, canonical_scores, parse_number
from vqaudit.scoring.ra_eval import is_multiple_choice, ra_eval_layer, ra_eval_recovered
from vqaudit.scoring.vqa_normalize import vqaeval_process

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shortanswer"))
from test_fast_path import METRICS, Row, _load  # noqa: E402  (the fixture loader of the fast-path tests)

HOSTILE = [
    "",
    ".",
    "..",
    " . ",
    "a.",
    "A.",
    "the.",
    "The cat.",
    "U.S. .",
    "x U.S. .",
    "it is .",
    "Two dogs.",
    "see the.",
    "  spaced out.  ",
    "tab\tend.",
    "new\nline.",
    "a-b- .",
    "a-b-.",
    "1,234.",
    "0,1.",
    "12,34.",
    "3.",
    ".5.",
    "x" + "." * 40,
    "a." * 40,
    "\u2212 5.",
    "caf\u00e9 au lait.",
    "\u0130stanbul.",
    "\u00bd.",
    '"quoted."',
    "*bold*.",
    "`code`.",
    "It is red.",
    "The answer is 42.",
    "so the answer is B.",
    "[Austria, Chile].",
    "Procter and Gamble.",
    "dont.",
    "twas.",
    "none.",
    "an.",
    "\\boxed{7}.",
    "(!).",
    "ab." * 33,
]


@pytest.fixture(scope="module")
def rows() -> dict[str, list[Row]]:
    return _load()


@pytest.fixture(scope="module")
def strings(rows: dict[str, list[Row]]) -> list[str]:
    out = {s for part in rows.values() for q, p, a, ocr in part for s in (q, p, *a, *ocr)}
    rng = random.Random(1)
    alphabet = "aAtThHeEnN2.,;:!?\"'`*- \t\n\u00a0\u2212%$[]()"
    out.update("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10))) for _ in range(30_000))
    out.update(HOSTILE)
    return sorted(out)


def test_forms_equal_the_step_by_step_definitions(strings: list[str]) -> None:
    # _forms skips normalizations whose result it knows (a final period, punctuation-free light forms); the
    # definitions normalize every step's text.
    for s in strings:
        t2, t3, surfaces, light = canonical_text._forms(s, canonical_text._vqaeval, canonical_text._light)
        assert (t2, t3) == (canonical.unify_dashes(s), canonical.strip_trailing(canonical.unify_dashes(s))), s
        assert surfaces == canonical_text._surfaces(s), s
        assert light == canonical_text._light_surfaces(s), s
        assert canonical_text._forms(s, canonical_text._vqaeval, None) == (t2, t3, surfaces, None), s


def test_final_period_shortcuts_by_hand() -> None:
    # vqaEval deletes a period that no digit follows, so "Two dogs." and "Two dogs" share one vqaEval form;
    # the light form (no punctuation step) keeps "dogs." apart from "dogs".
    assert canonical_text._surfaces("Two dogs.") == ("2 dogs", "2 dogs", "2 dogs", "2 dogs")
    assert canonical_text._light_surfaces("Two dogs.") == ("2 dogs.", "2 dogs.", "2 dogs", "2 dogs")
    assert canonical_text._light_without_final_period("2 dogs.", "Two dogs") == "2 dogs"
    assert canonical_text._light_without_final_period("see the.", "see the") == "see"  # an article goes
    assert canonical_text._light_without_final_period("dont.", "dont") == "don't"  # a contraction expands
    assert canonical_text._light_without_final_period("the.", "the") is None  # empty: the caller's fallback
    # 33 periods: vqaEval removes only the first 32 (its count argument), so dropping the last one matters.
    s = "ab." * 33
    assert canonical_text._surfaces(s)[1:3] == ("ab" * 33 + ".", "ab" * 33)
    # A text that vqaEval empties falls back to its raw form, which keeps the final period.
    assert canonical_text._surfaces("(!).")[1:3] == ("(!).", "(!)")


def test_sentences_are_no_numbers() -> None:
    # The longest number text (8 tokens, hand-read: minus three quarters) parses; 9 tokens never reach the regexes.
    assert parse_number("\\boxed{ approximately - $ 3 / 4 }") == (-0.75, False, "3/4")
    assert parse_number("12 (twelve thousand and three hundred and four)") == (12.0, False, "12")
    assert parse_number("in the year 2014 the share rose to 45 percent") is None
    assert parse_number("$ 1,200 million") == (1.2e9, False, "1200000000")


@pytest.mark.parametrize("dataset", sorted(METRICS))
def test_batch_equals_the_single_row_score(rows: dict[str, list[Row]], dataset: str) -> None:
    part = rows[dataset]
    preds, answers = [r[1] for r in part], [r[2] for r in part]
    for metric in ("vqa_accuracy", "anls", "relaxed_accuracy", "exact_match", "containment"):
        expected = [canonical_score(p, a, metric) for p, a in zip(preds, answers, strict=True)]
        assert canonical_scores(preds, answers, metric) == expected, metric
        shared = canonical_scores(preds, answers, metric, vqaeval=functools.lru_cache(maxsize=None)(vqaeval_process))
        assert shared == expected, metric


def test_batch_by_hand_and_bad_input() -> None:
    # TextVQA leave-one-out (vqaEval.py): 2 of 10 annotators match -> (8 * 2/3 + 2 * 1/3) / 10 = 0.6.
    got = canonical_scores(["Yes.", "no"], [["yes"] * 10, ["no"] * 2 + ["yes"] * 8], "vqa_accuracy")
    assert got[0] == (1.0, "one-sided-normalization")
    assert got[1][0] == pytest.approx(0.6) and got[1][1] == "exact"
    assert canonical_scores(["1,000"], [["1000"]], "relaxed_accuracy") == [(1.0, "thousands-separator")]
    with pytest.raises(ValueError, match="at least one reference"):
        canonical_scores(["x"], [[]], "anls")
    with pytest.raises(ValueError, match="2 predictions but 1"):
        canonical_scores(["x", "y"], [["x"]], "anls")


def test_ra_eval_layer_equals_the_row_rule(rows: dict[str, list[Row]]) -> None:
    for part in rows.values():
        official = [0.0 if i % 3 else (1.0 if i % 2 else 0.5) for i in range(len(part))]
        expected = [
            ra_eval_recovered(p, a) if s < 1.0 and not is_multiple_choice(q, a) else None
            for (q, p, a, _), s in zip(part, official, strict=True)
        ]
        got = ra_eval_layer([r[1] for r in part], [r[2] for r in part], [r[0] for r in part], official)
        assert got == expected
    # By hand (seed 002 section 3.3): "septra" (6 > 3 characters) occurs at word boundaries; a correct row and a
    # multiple-choice row are not tested.
    q_mc = "Which drug? A. Septra B. Bactrim"
    assert ra_eval_layer(
        ["The medication is SEPTRA.", "septra", "septra"],
        [["septra"]] * 3,
        ["What drug?", "What drug?", q_mc],
        [0.0, 1.0, 0.0],
    ) == [True, None, None]
