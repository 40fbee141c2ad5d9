"""Hand-computed cases for every quirk of the official scorers, plus two published numbers reproduced from data.

Each expected value says which script rule it comes from. Commits: GT-Vision-Lab/VQA vqaEval.py a013f00 ("vqaeval")
and c4e6a0e ("vqaeval_legacy"); mmf m4c_evaluators.py 2dc099a; pix2struct metrics.py bd70460; VLMEvalKit
vqa_eval.py e5266a1; Qwen-VL evaluate_vqa.py cfe66a7.
"""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from vqaudit.scoring.official import anls, exact_match, relaxed_accuracy, vqa_accuracy
from vqaudit.scoring.vqa_normalize import (
    evalai_process,
    process_digit_article,
    process_punctuation,
    vqaeval_process,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "shortanswer"


def _jsonl_gz(name: str) -> list[dict[str, Any]]:
    with gzip.open(FIXTURES / name, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


# ---------------------------------------------------------------- VQA accuracy: leave-one-out arithmetic


@pytest.mark.parametrize(
    ("matches", "expected"),
    [
        # 10 answers, m match. Leaving out a matching answer leaves m-1 matches, leaving out another leaves m:
        # (m * min(1, (m-1)/3) + (10-m) * min(1, m/3)) / 10.
        (0, 0.0),
        (1, 0.3),  # (1*0 + 9*1/3) / 10
        (2, 0.6),  # (2*1/3 + 8*2/3) / 10 -- also GT-Vision-Lab/VQA#1: "no" with 8 "yes" + 2 "no" -> 0.6
        (3, 0.9),  # (3*2/3 + 7*1) / 10
        (4, 1.0),  # (4*1 + 6*1) / 10
        (10, 1.0),
    ],
)
def test_leave_one_out_average(matches: int, expected: float) -> None:
    answers = ["no"] * matches + ["yes"] * (10 - matches)
    for variant in ("vqaeval", "vqaeval_legacy", "mmf_textvqa", "vlmevalkit"):
        assert vqa_accuracy("no", answers, variant=variant) == pytest.approx(expected, abs=1e-12)


def test_leave_one_out_is_not_the_plain_min_over_all_ten() -> None:
    # 3 of 10 match: the plain min(3/3, 1) would give 1.0; the leave-one-out average gives 0.9.
    assert vqa_accuracy("cat", ["cat"] * 3 + ["dog"] * 7) == pytest.approx(0.9)


def test_single_reference_always_scores_zero() -> None:
    # Leaving out the only answer leaves nothing to match: min(1, 0/3) = 0.
    assert vqa_accuracy("cat", ["cat"]) == 0.0


# ---------------------------------------------------------------- VQA accuracy: which side gets normalized, when


def test_unanimous_references_switch_off_normalization_in_vqaeval() -> None:
    # a013f00: processing happens only inside `if len(set(gtAnswers)) > 1`, for references and prediction alike.
    assert vqa_accuracy("Yes.", ["yes"] * 10) == 0.0
    # Mixed references: both sides are normalized, "Yes." -> "yes" matches 9 of them (>= 3 in every subset).
    assert vqa_accuracy("Yes.", ["yes"] * 9 + ["no"]) == 1.0
    # Tabs, newlines and surrounding spaces are stripped unconditionally (before the set test).
    assert vqa_accuracy(" yes\n", ["yes"] * 10) == 1.0


def test_legacy_normalizes_prediction_always_and_references_only_for_punctuation() -> None:
    # c4e6a0e: resAns always gets punctuation + digit/article processing; references get processPunctuation
    # only, and only when not unanimous.
    assert vqa_accuracy("Yes.", ["yes"] * 10, variant="vqaeval_legacy") == 1.0
    # Unanimous "the cat": the prediction loses its article, the references keep it -> never matches.
    assert vqa_accuracy("the cat", ["the cat"] * 10, variant="vqaeval_legacy") == 0.0
    assert vqa_accuracy("the cat", ["the cat"] * 10, variant="vqaeval") == 1.0  # nothing processed at all
    # GT-Vision-Lab/VQA#7: prediction "none" -> "0", but the reference "none" is not number-mapped under the
    # legacy rule, so the one matching annotator is lost (0.0 instead of 0.3).
    answers = ["none"] + ["nothing"] * 5 + ["nobody"] * 4
    assert vqa_accuracy("none", answers, variant="vqaeval_legacy") == 0.0
    assert vqa_accuracy("none", answers, variant="vqaeval") == pytest.approx(0.3)


def test_mmf_and_vlmevalkit_always_normalize_both_sides() -> None:
    # m4c_evaluators.py processes every reference and the prediction with EvalAIAnswerProcessor;
    # VLMEvalKit's vqa_score runs process_answer on all of them.
    assert vqa_accuracy("Yes.", ["yes"] * 10, variant="mmf_textvqa") == 1.0
    assert vqa_accuracy("Yes.", ["yes"] * 10, variant="vlmevalkit") == 1.0
    # LLaVA#618: an answer "A" is an article and is deleted; so are references "a" -> "" == "".
    assert evalai_process("A") == ""
    assert vqa_accuracy("A", ["a"] * 10, variant="mmf_textvqa") == 1.0


def test_normalization_quirks_reach_the_score() -> None:
    others = ["x"] * 7
    # commaStrip condition: "1,000" -> "1000" on both sides.
    assert vqa_accuracy("1,000", ["1000"] * 3 + others) == pytest.approx(0.9)
    # Number words: "two" -> "2".
    assert vqa_accuracy("two", ["2"] * 3 + others) == pytest.approx(0.9)
    # Articles dropped: "a dog" -> "dog".
    assert vqa_accuracy("A dog", ["dog"] * 3 + others) == pytest.approx(0.9)
    # Contractions: "dont" -> "don't".
    assert vqa_accuracy("dont", ["don't"] * 3 + others) == pytest.approx(0.9)


def test_mmf_textvqa_requires_ten_answers() -> None:
    # m4c_evaluators.py: `assert len(answers) == 10`.
    with pytest.raises(ValueError, match="exactly 10"):
        vqa_accuracy("a", ["a"] * 9, variant="mmf_textvqa")


def test_vqa_accuracy_input_errors() -> None:
    with pytest.raises(ValueError):
        vqa_accuracy("a", [])
    with pytest.raises(TypeError):
        vqa_accuracy("a", "a")
    with pytest.raises(ValueError, match="unknown variant"):
        vqa_accuracy("a", ["a"], variant="nope")  # type: ignore[arg-type]


# ---------------------------------------------------------------- the normalization functions themselves


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1,000", "1000"),  # digit-comma-digit -> every punctuation mark is deleted
        ("1,000-2", "10002"),  # ... including the hyphen, which would otherwise become a space
        ("red,blue", "red blue"),  # no adjacent space, no digit comma -> replaced by a space
        ("red, blue", "red blue"),  # ", " present -> deleted
        ("t-shirt", "t shirt"),
        ("yes!", "yes"),  # "!" not next to a space -> " ", later dropped by split/join
        ("3.5", "3.5"),  # periodStrip keeps a "." followed by a digit
        (".5", ".5"),
        ("3.", "3"),
        ("U.S.A", "USA"),  # "(?!<=\d)" is a lookahead typo, so every "." not before a digit goes
        ("it's 50%", "it's 50%"),  # apostrophes and % are not in the punctuation list
    ],
)
def test_process_punctuation(text: str, expected: str) -> None:
    assert " ".join(process_punctuation(text).split()) == expected


def test_period_strip_removes_at_most_32_periods() -> None:
    # periodStrip.sub("", outText, re.UNICODE): re.UNICODE == 32 lands in the `count` argument.
    assert process_punctuation("." * 40) == "." * 8


def test_process_digit_article() -> None:
    assert process_digit_article("Two Dogs") == "2 dogs"
    assert process_digit_article("none") == "0"
    assert process_digit_article("eleven") == "eleven"  # only zero..ten (and none) are mapped
    assert process_digit_article("The an A") == ""
    assert process_digit_article("i dont know") == "i don't know"
    assert process_digit_article("Im") == "im"  # the key "Im" is capitalised and can never match
    assert process_digit_article("somebody'd") == "somebodyd"  # the one reversed table entry


def test_evalai_processor_differs_from_vqaeval() -> None:
    # word_tokenize deletes all commas first, so the digit-comma condition can no longer fire.
    assert vqaeval_process("1,000-2") == "10002"
    assert evalai_process("1,000-2") == "1000 2"
    # word_tokenize turns "'s" into " 's".
    assert vqaeval_process("dog's") == "dog's"
    assert evalai_process("dog's") == "dog 's"


# ---------------------------------------------------------------- ANLS


def test_anls_exactly_at_the_threshold() -> None:
    # lev("ab", "a") = 1, max length 2 -> NL = 0.5 exactly.
    assert anls("a", ["ab"]) == 0.0  # paper Eq. 1: 1 - NL only if NL < 0.5
    assert anls("a", ["ab"], variant="pix2struct") == 0.5  # anls_metric: NL <= theta
    assert anls("a", ["ab"], variant="mmf_stvqa") == 0.5  # get_anls: iou >= .5
    assert anls("a", ["ab"], variant="vlmevalkit") == 0.5  # hit_calculate: 0 only if 1 - NL < 0.5


def test_anls_under_and_over_the_threshold() -> None:
    # lev("abc", "ab") = 1, length 3 -> NL = 1/3 -> 2/3 under every variant.
    for variant in ("paper", "pix2struct", "mmf_stvqa", "vlmevalkit"):
        assert anls("ab", "abc", variant=variant) == pytest.approx(2 / 3)
    # lev("abcd", "a") = 3, length 4 -> NL = 0.75 -> 0 everywhere.
    assert anls("a", "abcd", variant="pix2struct") == 0.0
    # A stricter tau: NL = 1/3 is not < 0.3.
    assert anls("ab", "abc", threshold=0.3) == 0.0


def test_anls_max_over_references_and_case() -> None:
    # "abce" vs "abcd": NL = 1/4 -> 0.75; "xyz" scores 0; the best reference wins.
    assert anls("abce", ["xyz", "abcd"]) == pytest.approx(0.75)
    assert anls("PARIS", ["paris"]) == 1.0  # every variant lower-cases


def test_anls_whitespace_handling_per_variant() -> None:
    # pix2struct lower-cases but does not strip: " paris" vs "paris" is 1 edit in 6 -> 5/6.
    assert anls(" paris", "paris", variant="pix2struct") == pytest.approx(5 / 6)
    assert anls(" paris", "paris") == 1.0  # paper variant strips
    # Internal runs of spaces: only the VLMEvalKit/RRC rule collapses them.
    assert anls("new   york", "new york") == pytest.approx(0.8)  # 2 edits / 10
    assert anls("new   york", "new york", variant="vlmevalkit") == 1.0


def test_anls_vlmevalkit_divides_by_the_raw_length() -> None:
    # Distance between normalized forms "pariss"/"paris" = 1, but the length is that of the raw prediction
    # "pariss    " (10 characters): NL = 0.1 -> 0.9. The paper variant: 1 / 6 -> 5/6.
    assert anls("pariss    ", "paris", variant="vlmevalkit") == pytest.approx(0.9)
    assert anls("pariss    ", "paris") == pytest.approx(5 / 6)


def test_anls_empty_strings_and_errors() -> None:
    assert anls("", [""]) == 1.0  # length 0 -> distance 0 (RRC convention)
    assert anls("", ["abc"]) == 0.0
    with pytest.raises(ValueError):
        anls("a", [])
    with pytest.raises(ValueError):
        anls("a", ["a"], threshold=1.5)


# ---------------------------------------------------------------- relaxed accuracy


def test_relaxed_tolerance_is_inclusive_and_relative_to_the_target() -> None:
    assert relaxed_accuracy("105", "100") == 1.0  # |105-100|/100 = 0.05 <= 0.05
    assert relaxed_accuracy("105.1", "100") == 0.0  # 0.051
    assert relaxed_accuracy("-10.4", "-10") == 1.0  # 0.4/10 = 0.04
    # Swapped call (Qwen-VL, VLMEvalKit): the tolerance is relative to the prediction.
    assert relaxed_accuracy("95.2", "100") == 1.0  # 4.8/100 = 0.048
    assert relaxed_accuracy("95.2", "100", variant="qwenvl") == 0.0  # 4.8/95.2 = 0.0504
    assert relaxed_accuracy("95.2", "100", variant="vlmevalkit") == 0.0


def test_relaxed_target_zero_falls_back_to_string_equality() -> None:
    # `if prediction_float is not None and target_float:` -- 0.0 is falsy.
    assert relaxed_accuracy("0", "0") == 1.0
    assert relaxed_accuracy("0.0", "0") == 0.0
    assert relaxed_accuracy("0.01", "0") == 0.0
    # Swapped: now the *prediction* 0 triggers the string comparison.
    assert relaxed_accuracy("0", "0.0", variant="qwenvl") == 0.0


def test_relaxed_percent_suffix() -> None:
    # _to_float: "50%" -> 50 / 100 = 0.5.
    assert relaxed_accuracy("0.5", "50%") == 1.0
    assert relaxed_accuracy("50", "50%") == 0.0  # 50 vs 0.5
    assert relaxed_accuracy("50%", "50") == 0.0  # 0.5 vs 50
    assert relaxed_accuracy("51%", "50%") == 1.0  # 0.51 vs 0.50: 2%
    assert relaxed_accuracy("50 %", "50%") == 1.0  # float("50 ") accepts the space


def test_relaxed_commas_and_non_numbers() -> None:
    # float("1,000") raises -> case-insensitive string equality.
    assert relaxed_accuracy("1000", "1,000") == 0.0
    assert relaxed_accuracy("1,000", "1000") == 0.0
    assert relaxed_accuracy("1,000", "1,000") == 1.0
    assert relaxed_accuracy("yes", "Yes") == 1.0
    assert relaxed_accuracy("yes ", "Yes") == 0.0  # pix2struct passes strings unstripped
    assert relaxed_accuracy("yes ", "Yes", variant="qwenvl") == 1.0  # Qwen-VL strips the prediction
    assert relaxed_accuracy(" 12 ", "12") == 1.0  # ... but float() ignores surrounding spaces
    # A "nan" target parses and is truthy; the relative change is nan, never <= 0.05.
    assert relaxed_accuracy("nan", "nan") == 0.0


def test_relaxed_list_targets_and_max_over_targets() -> None:
    # VLMEvalKit: a Python-list answer means "any of these"; elements compared via str().
    assert relaxed_accuracy("2016", "[2014, 2016]", variant="vlmevalkit") == 1.0
    assert relaxed_accuracy("2016", "[2014, 2016]") == 0.0
    # Not a literal list (bare names): stays one string under every variant.
    assert relaxed_accuracy("[Gambia, Niger]", "[Gambia, Niger]", variant="vlmevalkit") == 1.0
    assert relaxed_accuracy("7", ["1", "7"]) == 1.0
    with pytest.raises(ValueError):
        relaxed_accuracy("1", "[]", variant="vlmevalkit")
    with pytest.raises(ValueError):
        relaxed_accuracy("1", "1", tolerance=-0.1)


# ---------------------------------------------------------------- exact match


def test_exact_match_variants() -> None:
    assert exact_match("paris", ["Paris", "paris"]) == 1.0
    assert exact_match("Paris", "paris") == 0.0  # pix2struct: x == y, nothing normalized
    assert exact_match(" Paris ", "paris", variant="vlmevalkit") == 1.0  # strip().lower()
    assert exact_match("The Paris.", "paris", variant="mmf_stvqa") == 1.0  # EvalAI processor on both sides
    assert exact_match("The Paris.", "paris", variant="vlmevalkit") == 0.0
    with pytest.raises(ValueError):
        exact_match("a", [])


# ---------------------------------------------------------------- published numbers, reproduced from real data


def test_llava15_13b_textvqa_reproduces_published_accuracy() -> None:
    # LLaVA's eval_textvqa.py: mmf TextVQAAccuracyEvaluator, printed "{:.2f}" -> 61.25; model zoo: 61.3.
    rows = _jsonl_gz("llava15_13b_textvqa_val.jsonl.gz")
    assert len(rows) == 5000
    scores = [vqa_accuracy(r["prediction"], r["gt_answers"], variant="mmf_textvqa") for r in rows]
    accuracy = 100.0 * sum(scores) / len(scores)
    assert f"{accuracy:.2f}" == "61.25"
    assert f"{accuracy:.1f}" == "61.3"
    # Without leave-one-out (plain min(#matches/3, 1) over all 10) the number is different.
    plain = []
    for r in rows:
        pred = evalai_process(r["prediction"])
        plain.append(min(1.0, sum(evalai_process(a) == pred for a in r["gt_answers"]) / 3))
    assert f"{100.0 * sum(plain) / len(plain):.2f}" != "61.25"


def test_vila15_13b_chartqa_reproduces_vlmevalkit_csv() -> None:
    rows = _jsonl_gz("vila15_13b_chartqa_test.jsonl.gz")
    with (FIXTURES / "vila15_13b_chartqa_test_acc.csv").open(newline="") as f:
        published = next(csv.DictReader(f))
    results: dict[str, dict[str, float]] = {}
    for variant in ("vlmevalkit", "pix2struct"):
        results[variant] = {}
        for split in ("test_human", "test_augmented"):
            sub = [r for r in rows if r["split"] == split]
            assert len(sub) == 1250
            hits = [relaxed_accuracy(r["prediction"], r["answer"], variant=variant) for r in sub]
            results[variant][split] = sum(hits) / len(hits) * 100
    vlm = results["vlmevalkit"]
    # Bit-for-bit equal to VLMEvalKit's csv: mean of the 0/1 hits times 100, per split ...
    assert vlm["test_human"] == float(published["test_human"]) == 42.88
    assert vlm["test_augmented"] == float(published["test_augmented"]) == 74.56
    # ... and "Overall" pooled over all 2,500 rows (1468 / 2500 * 100, with its float artefact).
    pooled = [relaxed_accuracy(r["prediction"], r["answer"], variant="vlmevalkit") for r in rows]
    assert sum(pooled) / len(pooled) * 100 == float(published["Overall"]) == 58.720000000000006
    # The reference (pix2struct) rule does not expand list answers: a slightly different human score.
    assert round(results["pix2struct"]["test_human"], 2) == 42.56
    assert round(results["pix2struct"]["test_augmented"], 2) == 74.56
