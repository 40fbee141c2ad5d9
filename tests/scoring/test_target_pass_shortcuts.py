"""The shortcuts of the short-answer target pass (written for speed) give exactly the results of the plain rules.

Each shortcut of ``scoring/official.py``, ``registry.py``, ``vqa_normalize.py``, ``contracts.py`` and ``repair.py``
is compared with a transcription, kept here, of the rule as it was computed before the shortcut (the code of
commit d489e72): the leave-one-out loop of vqaEval.py, ANLS through :func:`vqaudit.scoring.official.anls`, the
normalizers' full chains, the contract rules in priority order without prefilters (since rewritten for the rules
re-read against seed 002: Table 1's order, any gold answer against the OCR tokens), the overlay builder calling
the canonical string steps and number reader every time, and a repair that always builds the overlay. Inputs:
every DocVQA/ChartQA fixture row, a sample of the TextVQA rows (``tests/fixtures/shortanswer``), and random
strings over the characters the rules look at (Unicode whitespace and case, digits, separators, wrappers).
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Sequence

import pytest
from rapidfuzz.distance import Levenshtein

from shortanswer.helpers import load_fixture_rows
from vqaudit.scoring import contracts, official, overlay_score, repair, vqa_normalize
from vqaudit.scoring.canonical import is_single_entity, parse_plain_number, strip_trailing, unify_dashes
from vqaudit.scoring.contracts import Contract, classify_item, representative_gold
from vqaudit.scoring.registry import official_scorer, scorer_identity
from vqaudit.scoring.repair import VARIANTS, reference_overlay, repair_output, repair_row, repair_scores

Row = tuple[str, str, tuple[str, ...], tuple[str, ...]]  # (question, prediction, answers, ocr tokens)
BUCKETS = ("scalar", "readout", "identifier", "multi-span", "other-open")


@pytest.fixture(scope="module")
def rows() -> dict[str, list[Row]]:
    data = load_fixture_rows()
    return {"textvqa": data["textvqa"][::4], "chartqa": data["chartqa"], "docvqa": data["docvqa"]}


def _random_strings(seed: int, n: int, alphabet: str, longest: int = 10) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, longest))) for _ in range(n)]


# Letters, digits, every punctuation mark the rules read, ASCII and Unicode whitespace (\x1c is whitespace to
# str.split but not to most regex engines), a dash, the dotted capital I (lower-cases to two characters).
HOSTILE = "aAbSsT 0123456789.,;:!?'\"`*-/&[]()%$\t\n\x1c\u00a0\u2028\u2212\u0130"
WORDY = [
    "the",
    "a",
    "an",
    "two",
    "none",
    "dont",
    "it's",
    "answer is",
    "The answer is:",
    "yes",
    "No.",
    "and",
    "&",
    "1,000",
    "3/4",
    "C-5",
    "[A, B]",
    "50 percent",
    "'s",
    " ",
    "\u2013",
    "U.S.",
    "ten",
]


def _wordy_strings(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDY) for _ in range(rng.randint(1, 5))) for _ in range(n)]


# --- official.py / registry.py ---


def test_leave_one_out_score_equals_the_vqaeval_loop_on_every_hit_pattern() -> None:
    # vqaEval.py: for each left-out answer, min(1, matches among the others / 3); the mean. Every pattern of up to
    # 10 answers (mmf asserts 10), compared as floats.
    for n in range(1, 11):
        for hits in itertools.product((False, True), repeat=n):
            refs = ["x" if h else "y" for h in hits]
            assert official.leave_one_out_score("x", refs) == official.leave_one_out_accuracy(hits)
    assert official.leave_one_out_score("x", ["x"] * 4 + ["y"] * 6) == 1.0  # 4 matches: every subset keeps 3
    assert official.leave_one_out_score("x", ["x"] * 3 + ["y"] * 7) == 0.9  # hits 2/3 each, misses 1: 9/10
    with pytest.raises(ZeroDivisionError):
        official.leave_one_out_score("x", [])


def _hostile_anls_cases(rows: dict[str, list[Row]]) -> list[tuple[str, Sequence[str]]]:
    cases: list[tuple[str, Sequence[str]]] = [(p, a) for part in rows.values() for _, p, a, _ in part]
    strings = _random_strings(3, 3000, HOSTILE)
    rng = random.Random(4)
    cases += [(rng.choice(strings), tuple(rng.sample(strings, rng.randint(1, 3)))) for _ in range(3000)]
    cases += [("ab", ("cd", "ax", "zz")), ("", ("",)), (" ", ("  ",)), ("\u0130", ("i\u0307",)), ("a", ["a", "b"])]
    return cases


def test_anls_paper_scorer_equals_anls(rows: dict[str, list[Row]]) -> None:
    # Biten et al. 2019 Eq. 1 as official.anls computes it; the registry's scorer asks rapidfuzz with a cutoff.
    scorer = official_scorer("anls", "paper", memo=0)
    for pred, answers in _hostile_anls_cases(rows):
        assert scorer(pred, answers) == official.anls(pred, answers), (pred, answers)
    for pred, answers in _hostile_anls_cases(rows)[::7]:  # anls itself asks with a cutoff: the plain Eq. 1
        for threshold in (0.0, 0.25, 0.5, 1.0):
            for strict, strip, variant in ((True, True, "paper"), (False, False, "pix2struct")):
                p = pred.lower().strip() if strip else pred.lower()
                nls = [Levenshtein.normalized_distance(r.lower().strip() if strip else r.lower(), p) for r in answers]
                best = min(nls)
                expected = 1.0 - best if (best < threshold if strict else best <= threshold) else 0.0
                assert official.anls(pred, answers, threshold=threshold, variant=variant) == expected
    assert scorer("ab", ("cd", "ax", "zz")) == 0.0  # a distance of exactly 0.5 scores 0 on the paper rule
    with pytest.raises(TypeError):
        scorer("a", ("a", 3))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        scorer("a", ())


def test_official_scorers_carry_their_identity() -> None:
    assert scorer_identity(official_scorer("anls", "pix2struct")) == ("anls", "pix2struct")
    assert scorer_identity(official_scorer("vqa_accuracy", "mmf_textvqa", memo=0)) == ("vqa_accuracy", "mmf_textvqa")
    assert scorer_identity(lambda p, a: 1.0) is None


# --- vqa_normalize.py ---


def test_fast_normalizers_equal_the_full_chains_on_hostile_strings(rows: dict[str, list[Row]]) -> None:
    strings = _random_strings(5, 20_000, HOSTILE) + _wordy_strings(6, 5000)
    strings += [s for part in rows.values() for q, p, a, ocr in part for s in (p, *a, *ocr)]
    fast_vqaeval = vqa_normalize.fast_vqaeval_process.__wrapped__
    fast_evalai = vqa_normalize.fast_evalai_process.__wrapped__
    for s in strings:
        assert fast_vqaeval(s) == vqa_normalize.vqaeval_process(s), s
        assert fast_evalai(s) == vqa_normalize.evalai_process(s), s
        # processDigitArticle: lower-case, split, map number words, drop articles, expand contractions.
        words = [vqa_normalize.NUMBER_WORDS.get(w, w) for w in s.lower().split()]
        expected = " ".join(vqa_normalize.CONTRACTIONS.get(w, w) for w in words if w not in vqa_normalize.ARTICLES)
        assert vqa_normalize.process_digit_article(s) == expected, s


def _reference_process_punctuation(text: str, comma: re.Pattern[str], period: re.Pattern[str]) -> str:
    # vqaEval.py processPunctuation: one mark after the other, conditions read on the input text.
    out = text
    for p in vqa_normalize.PUNCTUATION:
        if (p + " " in text or " " + p in text) or comma.search(text) is not None:
            out = out.replace(p, "")
        else:
            out = out.replace(p, " ")
    return period.sub("", out, count=32)


def test_process_punctuation_equals_the_script_loop() -> None:
    marks = "".join(vqa_normalize.PUNCTUATION) + ".a1 ,\t"
    strings = _random_strings(16, 20_000, marks, 12) + ["1,000-2", "red,blue", "a" + "." * 40, "3.5.", ". ."]
    for comma in (vqa_normalize.VQAEVAL_COMMA_CONDITION, vqa_normalize.EVALAI_COMMA_CONDITION):
        for period in (vqa_normalize.PERIOD_STRIP, vqa_normalize.PERIOD_STRIP_928A95B0):
            for s in strings:
                assert vqa_normalize.process_punctuation(s, comma, period) == _reference_process_punctuation(
                    s, comma, period
                ), s
    assert vqa_normalize.process_punctuation("1,000-2") == "10002"  # the digit comma switches all to deletion
    assert vqa_normalize.process_punctuation("a" + "." * 40) == "a" + "." * 8  # at most 32 periods go


# --- contracts.py ---


def _reference_representative_gold(answers: Sequence[str]) -> str:
    # The rule of the contracts docstring: most frequent light form, ties to the first in order.
    light = [" ".join(x.lower().split()).rstrip(".") for x in answers]
    best = max(light.count(n) for n in light)
    return next(x for x, n in zip(answers, light, strict=True) if light.count(n) == best).strip()


def test_representative_gold_equals_its_rule_on_random_annotator_lists() -> None:
    pool = ["Coke", "coke", "coke.", " coke ", "COKE", "pepsi", "Pepsi ", "pepsi.", "7up", "7 up", "", "  "]
    rng = random.Random(7)
    for _ in range(20_000):
        answers = tuple(rng.choice(pool) for _ in range(rng.randint(1, 10)))
        assert representative_gold(answers) == _reference_representative_gold(answers), answers
    assert representative_gold(()) == ""


def _reference_classify(
    question: str, answers: Sequence[str], answer_type: str | None, ocr_tokens: Sequence[str]
) -> Contract:
    # The rules of the contracts module docstring in Table 1's priority order, written out plainly: scalar gold
    # shape; readout from any OCR-span answer or a readout question; identifier
    # shape; list shape or the InfographicVQA multi-span type; the remainder.
    gold = representative_gold(answers)
    if contracts.is_scalar_answer(gold):
        return Contract("scalar", None, "scalar:gold-shape")
    if any(contracts._in_ocr(a, ocr_tokens) for a in answers):
        return Contract("readout", None, "readout:ocr-token")
    if contracts._READOUT_Q.match(question):
        return Contract("readout", None, "readout:question")
    ident = contracts.identifier_subtype(gold)
    if ident is not None:
        return Contract("identifier", ident, "identifier:shape")
    multi = contracts.multispan_subtype(gold, answer_type)
    if multi is not None:
        return Contract("multi-span", multi, "multi-span:shape")
    return Contract("other-open", None, "other-open:remainder")


def test_classify_item_equals_the_rules_without_prefilters(rows: dict[str, list[Row]]) -> None:
    golds = _random_strings(8, 8000, "aAbZ09 -/,;&[].%$\t\u00a0", 8) + _wordy_strings(9, 4000)
    golds += ["USA", "C-5", "5kg", "B12", "yes", "No.", "Jan 12, 2020", "a/b", "3/25", "x and y", "[1, 2, 3]", ""]
    golds += ["four", "$ 1,000", "(69)", "February 24", "31-AUG-2014", "13:57", "USA and UK", "C-5, C-6"]
    questions = ["what is the name of the shop?", "who wrote this?", "how many?", ""]
    types = [None, "single span", "multi-span", "question span", "image span", "multiple spans", "non span"]
    rng = random.Random(10)
    for gold in golds:
        q, t = rng.choice(questions), rng.choice(types)
        ocr = tuple(rng.sample(golds, 3)) + (gold,) if rng.random() < 0.3 else ()
        assert classify_item(q, (gold,), answer_type=t, ocr_tokens=ocr) == _reference_classify(q, (gold,), t, ocr)
    for part in rows.values():
        for q, _, a, ocr in part:
            assert classify_item(q, a, ocr_tokens=ocr) == _reference_classify(q, a, None, ocr)


# --- repair.py ---


def _reference_number_forms(ref: str, question: str) -> list[str]:
    parsed = parse_plain_number(ref)
    if parsed is None:
        return []
    value, percent, digits = parsed
    forms: list[str] = []
    core = ref.strip().rstrip("%").strip()
    if "," in core:
        forms.append(core.replace(",", "") + ("%" if percent else ""))
    elif value.is_integer() and abs(value) >= 10000 and not digits.startswith("0"):
        forms.append(f"{int(value):,}" + ("%" if percent else ""))
    if percent:
        forms += [core, core + " %"]
    elif repair._PERCENT_Q.search(question):
        forms.append(core + "%")
    return forms


def _reference_overlay_one(ref: str, bucket: str, question: str) -> tuple[str, ...]:
    # repair._overlay_one at d489e72: the canonical string steps and the number reader on every gold.
    cleaned = strip_trailing(unify_dashes(ref))
    forms = [cleaned] if cleaned and cleaned != ref else []
    if not cleaned.isascii() or repair._DIGIT.search(cleaned):
        forms += _reference_number_forms(cleaned, question)
    if bucket == "identifier" and "-" in cleaned and " " not in cleaned:
        forms += [cleaned.replace("-", ""), cleaned.replace("-", " ")]
    if bucket == "multi-span" and repair._LIST_MARK.search(cleaned) and not is_single_entity(cleaned):
        spans = repair._overlay_spans(cleaned)
        if len(spans) >= 2:
            span_forms = [", ".join(spans), ", ".join(spans[:-1]) + " and " + spans[-1]]
            if len(spans) == 2:
                span_forms += [f"{spans[1]}, {spans[0]}", f"{spans[1]} and {spans[0]}"]
            words = repair._words(cleaned)
            forms += [f for f in span_forms if repair._words(f) == words]
    return tuple(dict.fromkeys(f for f in forms if f and f != ref)) if forms else ()


def _golds(rows: dict[str, list[Row]]) -> list[str]:
    out = _random_strings(11, 10_000, HOSTILE, 8) + _wordy_strings(12, 4000)
    out += [
        "web ",
        "  plan b  ",
        "u.s.a ",
        "ab ",
        "a ",
        "99999999999999999999",
        "12345",
        "0.5",
        "007",
        "1,234,567",
        "-1,234.5%",
        "45 PERCENT",
        "$ 146.93",
        "a/b",
        "x, y and z",
        "C-5",
        "'quoted'",
        "*bold*",
    ]
    out += [a for part in rows.values() for _, _, answers, _ in part for a in answers]
    return list(dict.fromkeys(out))


def test_overlay_equals_the_builder_without_shortcuts(rows: dict[str, list[Row]]) -> None:
    for gold in _golds(rows):
        for bucket in BUCKETS:
            for question in ("what share is it?", "what is it?"):
                expected = (_reference_overlay_one(gold, bucket, question),)
                assert reference_overlay((gold,), Contract(bucket, None, "test"), question) == expected, gold


def test_overlay_forms_stay_within_the_anls_length_bound(rows: dict[str, list[Row]]) -> None:
    # The bound overlay_score.overlay_too_short relies on: a form of an ASCII gold of L characters has at most 2 L + 4.
    for gold in _golds(rows):
        if gold.isascii():
            for bucket in BUCKETS:
                for form in _reference_overlay_one(gold, bucket, "what percentage?"):
                    assert len(form) <= 2 * len(gold) + 4, (gold, form)


def test_number_prefilter_never_drops_a_number() -> None:
    texts = _random_strings(13, 100_000, "0123456789 .,%$+-tTpercnPERCNab\n", 9)
    texts += [t + suffix for t in texts[:20_000] for suffix in (" percent", "PERCENT")]
    for text in texts:
        if parse_plain_number(text) is not None:
            assert repair._may_be_number(text), text


def _reference_repair_row(
    pred: str,
    refs: Sequence[str],
    question: str,
    contract: Contract,
    metric: str,
    variant: str,
    scorer: Callable[[str, Sequence[str]], float],
) -> tuple[float, ...]:
    # repair.repair_row at d489e72: the overlay is built for every row the plain comparison does not accept.
    repaired = repair_output(pred, contract.bucket)
    values = []
    for v in VARIANTS:
        if v == "output-only":
            values.append(scorer(repaired, refs))
            continue
        target = pred if v == "reference-only" else repaired
        base = scorer(target, refs)
        overlay = tuple(_reference_overlay_one(a, contract.bucket, question) for a in refs)
        values.append(
            base if base >= 1.0 else overlay_score.score_with_overlay(target, refs, overlay, metric, variant, scorer)
        )
    return tuple(values)


SCORERS = [
    ("anls", "paper", "docvqa"),
    ("anls", "pix2struct", "docvqa"),
    ("anls", "mmf_stvqa", "docvqa"),
    ("anls", "vlmevalkit", "docvqa"),
    ("vqa_accuracy", "mmf_textvqa", "textvqa"),
    ("vqa_accuracy", "vlmevalkit", "textvqa"),
    ("vqa_accuracy", "vqaeval", "textvqa"),
    ("relaxed_accuracy", "pix2struct", "chartqa"),
]


@pytest.mark.parametrize(("metric", "variant", "dataset"), SCORERS)
def test_repair_scores_equal_the_repair_that_always_builds_the_overlay(
    rows: dict[str, list[Row]], metric: str, variant: str, dataset: str
) -> None:
    part = rows[dataset][::2]
    rng = random.Random(14)
    # Hostile rows: short and long outputs around the ANLS length bound, non-ASCII golds, repeated rows.
    extra = [
        ("what share?", rng.choice(_wordy_strings(15, 50)) * rng.randint(1, 6), row[2], ())
        for row in rng.sample(part, 300)
    ]
    extra += [("", "\u0130" * 40, ("\u0130",), ()), ("", "x" * 60, ("ab",), ()), ("", "ab " * 9, ("ab",), ())]
    if metric == "vqa_accuracy" and variant == "mmf_textvqa":
        extra = [r for r in extra if len(r[2]) == 10]
    part = part + extra + part[:50]
    scorer = official_scorer(metric, variant)
    found = [classify_item(q, a, ocr_tokens=ocr) for q, _, a, ocr in part]
    got = repair_scores(
        [r[1] for r in part], [r[2] for r in part], [r[0] for r in part], found, metric, variant, scorer
    )
    for i, (q, p, a, _) in enumerate(part):
        expected = _reference_repair_row(p, a, q, found[i], metric, variant, scorer)
        assert tuple(got[v][i] for v in VARIANTS) == expected, (p, a)
        assert repair_row(p, a, q, found[i], metric, variant, scorer) == expected, (p, a)
    # A scorer the registry did not make gets no shortcut (and the same results when it is the same rule).
    plain = official_scorer(metric, variant, memo=0)
    unknown: Callable[[str, Sequence[str]], float] = lambda p, a: plain(p, a)  # noqa: E731
    assert scorer_identity(unknown) is None
    again = repair_scores(
        [r[1] for r in part[:400]],
        [r[2] for r in part[:400]],
        [r[0] for r in part[:400]],
        found[:400],
        metric,
        variant,
        unknown,
    )
    assert {v: got[v][:400] for v in VARIANTS} == again
