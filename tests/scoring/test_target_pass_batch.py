"""The column-at-once passes of the target pass (written for speed) give exactly the per-row results.

Each batch function is compared, row by row, with the per-row definition it replaces: ``official_scores`` with
``official_scorer(metric, variant)``, ``evalai_many`` with ``evalai_process``, ``classify_many`` with
``classify``, ``reference_overlays`` with ``reference_overlay``, ``repair_outputs`` with ``repair_output`` and
``repair_scores`` given the official scores and overlays with ``repair_row``. Inputs: every fixture row
(``tests/fixtures/shortanswer``) and random hostile strings (any Unicode, the separator of bulk string passes
inside the text, Unicode whitespace and line breaks, the final sigma, empty and very long strings, digits with
commas and periods, leading and trailing marks, wrappers), and the same row objects repeated.
"""

from __future__ import annotations

import random
import re

import pytest

from shortanswer.helpers import load_fixture_rows
from vqaudit.scoring import official_batch, vqa_normalize
from vqaudit.scoring.columns import repeated_rows
from vqaudit.scoring.contracts import BUCKETS, Contract, classify, classify_many
from vqaudit.scoring.official_batch import evalai_many, official_scores
from vqaudit.scoring.output_repair import repair_output, repair_outputs
from vqaudit.scoring.registry import METRIC_VARIANTS, official_scorer
from vqaudit.scoring.repair import VARIANTS, reference_overlay, reference_overlays, repair_row, repair_scores

Row = tuple[str, str, tuple[str, ...], tuple[str, ...]]  # (question, prediction, answers, ocr tokens)

# Letters of both cases (the dotted capital I and the capital sigma change length or form when lower-cased),
# digits, every mark the rules read, ASCII and Unicode whitespace and line breaks (\x1c-\x1f, \x85 and \u2028
# split lines for str.splitlines and are whitespace to str.split), dashes, a newline inside the text.
HOSTILE = (
    "aAbBsSxXyZ Iye0123456789.,;:!?'\"`*-/&[]()%$#_@+=<>{}\\\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\u00a0"
    "\u2028\u2029\u2212\u2013\u0130\u03a3\u03c3\u00e9\u00df"
)
WORDS = [
    "the",
    "a",
    "an",
    "two",
    "none",
    "ten",
    "dont",
    "it's",
    "dog's",
    "The answer is",
    "The answer is:",
    "Answer:",
    "It is",
    "so the answer is",
    "\\boxed{7}",
    "yes",
    "No.",
    "Yes,",
    "and",
    "&",
    "1,000",
    "3/4",
    "C-5",
    "A12",
    "5kg",
    "USA",
    "[A, B]",
    "50 percent",
    "45%",
    "$3.50",
    "U.S.",
    "'quoted'",
    "*bold*",
    "\u2013",
    "x.",
    "xy.",
    "ab.",
    "\u03a3\u03a3.",
    "Jan 12, 2020",
    "Jr.",
    "Inc.",
    ":",
    "...",
    "?",
    "!",
    " ",
    "\n",
    "ΑΣ",
]


def _random_strings(seed: int, n: int, alphabet: str = HOSTILE, longest: int = 12) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, longest))) for _ in range(n)]


def _wordy_strings(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(["", " ", "\t"]).join(rng.choice(WORDS) for _ in range(rng.randint(1, 7))) for _ in range(n)]


def _hostile_strings() -> list[str]:
    out = _random_strings(1, 6000) + _wordy_strings(2, 6000)
    out += [
        "",
        " ",
        "\n",
        "a" * 5000,
        "The answer is " + "x " * 2000 + ".",
        "1,234,567.",
        "0.5",
        ".5",
        "5.",
        "12345",
        "007",
        "9" * 30,
        "\u0130" * 30,
        "\u03a3",
        "A\u03a3",
        "A\u03a3 b",
        "a\nb",
        "a\u2028b",
    ]
    return out


@pytest.fixture(scope="module")
def rows() -> dict[str, list[Row]]:
    return load_fixture_rows()


@pytest.fixture(scope="module")
def strings(rows: dict[str, list[Row]]) -> list[str]:
    fixture = [s for part in rows.values() for q, p, a, ocr in part for s in (q, p, *a, *ocr[:5])]
    return list(dict.fromkeys(fixture + _hostile_strings()))


def test_evalai_many_equals_evalai_process(strings: list[str]) -> None:
    memo = evalai_many(strings)
    assert memo == {s: vqa_normalize.evalai_process(s) for s in strings}
    into = {"kept": "as is"}
    assert evalai_many(["kept", "Two dogs"] * 3, into) is into
    assert into == {"kept": "as is", "Two dogs": "2 dogs"}  # existing entries are kept, repeats cost nothing


def _scoring_rows(rows: dict[str, list[Row]], strings: list[str], ten: bool) -> list[tuple[str, tuple[str, ...]]]:
    rng = random.Random(3)
    out = [(p, a) for part in rows.values() for _, p, a, _ in part if not ten or len(a) == 10]
    for _ in range(4000):
        pred = rng.choice(strings)
        if ten:
            golds = tuple(rng.choice([pred, rng.choice(strings), rng.choice(strings)]) for _ in range(10))
        else:
            golds = tuple(rng.choice([pred.upper(), pred + " ", rng.choice(strings)]) for _ in range(rng.randint(1, 3)))
        out.append((pred, golds))
    out += [("x" * 90, ("ab",)), ("ab" * 20, ("\u0130" * 10,)), ("", ("",)), (" ", ("  ",)), ("a", ("a", "b"))]
    return [(p, a) for p, a in out if not ten or len(a) == 10]


@pytest.mark.parametrize(("metric", "variant"), [(m, v) for m, vs in METRIC_VARIANTS.items() for v in vs])
def test_official_scores_equal_the_per_row_scorer(
    rows: dict[str, list[Row]], strings: list[str], metric: str, variant: str
) -> None:
    cases = _scoring_rows(rows, strings, ten=variant == "mmf_textvqa")
    if metric == "relaxed_accuracy" or metric == "containment":
        cases = cases[::4]
    scorer = official_scorer(metric, variant, memo=0)
    predictions, answers = [p for p, _ in cases], [a for _, a in cases]
    assert official_scores(predictions, answers, metric, variant) == [scorer(p, a) for p, a in cases]
    # The same row objects again (a resampled pool) are scored once, with the same floats.
    picks = [random.Random(4).randrange(len(cases)) for _ in range(3000)]
    again = official_scores([predictions[k] for k in picks], [answers[k] for k in picks], metric, variant)
    assert again == [scorer(predictions[k], answers[k]) for k in picks]


@pytest.mark.parametrize(
    ("metric", "variant"), [("vqa_accuracy", "mmf_textvqa"), ("anls", "paper"), ("relaxed_accuracy", "pix2struct")]
)
def test_official_scores_raise_the_per_row_errors(metric: str, variant: str) -> None:
    good = ("a",) * 10
    for bad in [(), ("a",) * 9, ["a"] * 9, ("a", 3) * 5]:
        scorer = official_scorer(metric, variant, memo=0)
        try:
            scorer("a", bad)  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 (whatever the per-row scorer raises, the batch raises too)
            with pytest.raises(type(exc), match=re.escape(str(exc))):
                official_scores(["a", "a", "a"], [good, bad, good], metric, variant)  # type: ignore[list-item]
        else:
            assert official_scores(["a", "a"], [good, bad], metric, variant)[1] == scorer("a", bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        official_scores(["a"], [], metric, variant)


def _classify_rows(
    rows: dict[str, list[Row]], strings: list[str]
) -> list[tuple[str, tuple[str, ...], str | None, tuple[str, ...]]]:
    rng = random.Random(5)
    out: list[tuple[str, tuple[str, ...], str | None, tuple[str, ...]]] = [
        (q, a, None, ocr) for part in rows.values() for q, _, a, ocr in part
    ]
    questions = ["what is the name of the shop?", "who wrote this?", "how many?", "", "What does it say?"]
    types = [
        None,
        "single span",
        "multi-span",
        "question span",
        "single span, multi-span",
        "image span",
        "multiple spans",
    ]
    golds = strings[::3] + [
        "USA",
        "C-5",
        "5kg",
        "B12",
        "yes",
        "No.",
        "Jan 12, 2020",
        "a/b",
        "3/25",
        "x and y",
        "[1, 2, 3]",
        "",
        "a, b, c",
        "Walter F. Wrenn, Jr.",
    ]
    for _ in range(8000):
        answers = tuple(rng.choice(golds) for _ in range(rng.choice([1, 1, 2, 3, 10])))
        ocr = tuple(rng.sample(golds, 4)) + (answers[0],) if rng.random() < 0.4 else ()
        out.append((rng.choice(questions + strings[:50]), answers, rng.choice(types), ocr))
    return out


def test_classify_many_equals_classify(rows: dict[str, list[Row]], strings: list[str]) -> None:
    cases = _classify_rows(rows, strings)
    expected = [classify(q, a, answer_type=t, ocr_tokens=o) for q, a, t, o in cases]
    assert (
        classify_many([c[0] for c in cases], [c[1] for c in cases], [c[2] for c in cases], [c[3] for c in cases])
        == expected
    )
    picks = [random.Random(6).randrange(len(cases)) for _ in range(5000)]  # the same objects again
    assert classify_many(
        [cases[k][0] for k in picks],
        [cases[k][1] for k in picks],
        [cases[k][2] for k in picks],
        [cases[k][3] for k in picks],
    ) == [expected[k] for k in picks]
    plain = [(q, a) for q, a, _, _ in cases[:3000]]
    assert classify_many([q for q, _ in plain], [a for _, a in plain]) == [classify(q, a) for q, a in plain]
    assert classify_many([], []) == []
    with pytest.raises(ValueError):
        classify_many(["q"], [])


def test_reference_overlays_equal_reference_overlay(rows: dict[str, list[Row]], strings: list[str]) -> None:
    rng = random.Random(7)
    golds = strings[::2] + ["5", "0", "007", "1234", "9999", "10000", "12345", "\u0661\u0662", "\u00b2", "5 ", " 5"]
    answers = [a for part in rows.values() for _, _, a, _ in part]
    answers += [tuple(rng.choice(golds) for _ in range(rng.choice([1, 1, 2, 3, 10]))) for _ in range(12_000)]
    answers += [(), ("a b", "a b"), ("5",) * 10]
    contracts = [Contract(rng.choice(BUCKETS), None, "test") for _ in answers]
    questions = [rng.choice(["what share is it?", "what is it?", "percent?", "", "how many %"]) for _ in answers]
    expected = [reference_overlay(a, c, q) for a, c, q in zip(answers, contracts, questions, strict=True)]
    assert reference_overlays(answers, contracts, questions) == expected


def test_repair_outputs_equal_repair_output(rows: dict[str, list[Row]], strings: list[str]) -> None:
    predictions = [p for part in rows.values() for _, p, _, _ in part] + strings
    predictions += [s + "." for s in strings[::5]] + ["The answer is " + s + "." for s in strings[::7]]
    rng = random.Random(8)
    buckets = [rng.choice(BUCKETS) for _ in predictions]
    assert repair_outputs(predictions, buckets) == list(map(repair_output, predictions, buckets))
    for bucket in BUCKETS:
        assert repair_outputs(predictions[::3], [bucket] * len(predictions[::3])) == [
            repair_output(p, bucket) for p in predictions[::3]
        ]


SCORERS = [
    ("anls", "paper", "docvqa"),
    ("anls", "pix2struct", "docvqa"),
    ("vqa_accuracy", "mmf_textvqa", "textvqa"),
    ("vqa_accuracy", "vqaeval", "textvqa"),
    ("relaxed_accuracy", "pix2struct", "chartqa"),
    ("anls", "vlmevalkit", "docvqa"),
]


@pytest.mark.parametrize(("metric", "variant", "dataset"), SCORERS)
def test_repair_scores_with_given_official_scores_and_overlays_equal_repair_row(
    rows: dict[str, list[Row]], metric: str, variant: str, dataset: str
) -> None:
    part = rows[dataset]
    rng = random.Random(9)
    extra = [
        ("what share?", rng.choice(_wordy_strings(10, 50)) * rng.randint(1, 6), row[2], row[3])
        for row in rng.sample(part, 300)
    ]
    extra += [("", "\u0130" * 40, ("\u0130",) * len(part[0][2]), ()), ("", "x" * 60, ("ab",) * len(part[0][2]), ())]
    part = part + extra + part[:50]
    scorer = official_scorer(metric, variant)
    predictions, answers, questions = [r[1] for r in part], [r[2] for r in part], [r[0] for r in part]
    found = classify_many(questions, answers, None, [r[3] for r in part])
    official = official_scores(predictions, answers, metric, variant)
    overlays = reference_overlays(answers, found, questions)
    expected = [
        repair_row(p, a, q, c, metric, variant, scorer, VARIANTS, o)
        for p, a, q, c, o in zip(predictions, answers, questions, found, overlays, strict=True)
    ]
    for given in (None, overlays):
        got = repair_scores(
            predictions,
            answers,
            questions,
            found,
            metric,
            variant,
            scorer,
            VARIANTS,
            official=official,
            overlays_given=given,
        )
        assert list(zip(*(got[v] for v in VARIANTS), strict=True)) == expected
    only = repair_scores(
        predictions, answers, questions, found, metric, variant, scorer, ("bidirectional",), official=official
    )
    assert only["bidirectional"] == [e[2] for e in expected]


def test_repeated_rows_finds_the_same_objects() -> None:
    a, b = tuple(["x"]), tuple(["x"])
    assert repeated_rows([a, b], ["p", "p"]) is None  # equal but distinct objects: distinct rows
    assert repeated_rows([a], ["p"]) is None
    assert repeated_rows([a, a, b, a], ["p", "p", "p", "q"]) == ([0, 2, 3], [0, 0, 2, 3])


def test_official_batch_names_its_rules() -> None:
    # The batch module reuses the per-row rules it is tested against (no copy of them).
    assert official_batch._evalai_one is vqa_normalize.fast_evalai_process.__wrapped__
    assert isinstance(official_batch.official_scores(["a"], [("a",) * 10], "vqa_accuracy", "mmf_textvqa")[0], float)
