"""The canonical layer's labels say what it did (a row below official is named by its cause, not ``other``).

Every expected value is worked out by hand: official scores from pix2struct's ``relaxed_correctness`` rule
(``_to_float``: Python ``float()``, a ``%`` suffix divided by 100; stated in
:func:`vqaudit.scoring.official.relaxed_accuracy`), canonical ones from the rules in the docstring of
:mod:`vqaudit.scoring.canonical`, NFKC from the Unicode tables (U+FF11 FULLWIDTH DIGIT ONE -> "1", U+FB01 LATIN
SMALL LIGATURE FI -> "fi"; U+2013 EN DASH and U+2212 MINUS SIGN have no NFKC mapping).
"""

from __future__ import annotations

import unicodedata

import pytest

from vqaudit.scoring.canonical import (
    FAULT_KINDS,
    GAIN_KINDS,
    REFUSAL_CAUSES,
    canonical_match,
    canonical_score,
    canonical_scores,
    gain_kind,
    refusal_cause,
)
from vqaudit.scoring.official import relaxed_accuracy


@pytest.mark.parametrize(
    ("pred", "gold", "cause"),
    [
        ("1e3", "1000", "number-notation"),  # float("1e3") = 1000.0; the canonical reader has no exponent
        ("1000", "1e3", "number-notation"),  # the same on the gold side
        ("5E-1", "0.5", "number-notation"),
        ("1_000", "1000", "number-notation"),  # float("1_000") = 1000.0 (Python 3.6+ literal syntax)
        ("1000", "1_000", "number-notation"),
        ("50%", "0.5", "percent-as-fraction"),  # pix2struct: 50 / 100 = 0.5; canonical: 50 (kind 6) vs 0.5
        ("0.5", "50%", "percent-as-fraction"),
        ("50 %", "0.5", "percent-as-fraction"),  # float("50 ") / 100 = 0.5
        ("2016", "2014", "exact-year-identifier"),  # unchanged: 0.1% off, a year
    ],
)
def test_each_lost_relaxed_accuracy_row_names_its_cause(pred: str, gold: str, cause: str) -> None:
    for variant in ("pix2struct", "vlmevalkit", "vlmevalkit_677e30a5"):
        assert relaxed_accuracy(pred, [gold], variant=variant) == 1.0  # official accepts
    assert canonical_score(pred, [gold], "relaxed_accuracy")[0] == 0.0  # canonical refuses: a lost row
    assert refusal_cause(pred, [gold], "relaxed_accuracy") == cause
    assert cause in REFUSAL_CAUSES


def test_number_notation_is_relaxed_accuracy_only() -> None:
    # No other official metric reads numbers with float(): under exact match "1e3" and "1000" differ on both
    # layers, so no row is lost there and the cause is never named for it.
    assert canonical_score("1e3", ["1000"], "exact_match") == (0.0, None)
    assert refusal_cause("1e3", ["1000"], "exact_match") == "other"
    # nan and inf never give an official hit (abs(p - nan) / nan is nan, False), so they are no notation cause
    assert relaxed_accuracy("nan", ["nan"]) == 0.0 and relaxed_accuracy("inf", ["inf"]) == 0.0
    assert refusal_cause("inf", ["1000"], "relaxed_accuracy") == "other"


def test_one_thousand_with_underscores_is_no_canonical_number() -> None:
    # The canonical layer never reads "1_000" as a number or as "1000" (vqaEval turns "_" into a space), so it
    # accepts nothing official refuses here; official reads it as pix2struct does (float), and the lost row is
    # labelled number-notation above.
    assert canonical_match("1_000", "1000", 0.05) is None
    assert canonical_score("1_000", ["1000"] * 10, "vqa_accuracy") == (0.0, None)


@pytest.mark.parametrize(
    ("pred", "gold", "metric", "kind"),
    [
        ("\uff11\uff12", "12", "relaxed_accuracy", "unicode-nfkc"),  # full-width digits (a numeric pair)
        ("\uff11\uff12", "12", "exact_match", "unicode-nfkc"),
        ("\ufb01ve", "five", "exact_match", "unicode-nfkc"),  # ligature
        ("\ufb01ve", "five", "anls", "unicode-nfkc"),  # the light forms
        ("C\u20135", "C-5", "exact_match", "unicode-dashes"),  # en dash: NFKC keeps it
        ("\u22125", "-5", "relaxed_accuracy", "unicode-dashes"),  # minus sign
        ("\uff11\uff12\u22123", "12-3", "exact_match", "unicode-dashes"),  # both needed: the dash mapping decides
        ("\ufb01ve apples", "five", "containment", "unicode-nfkc"),
        ("Box C\u20135 here", "C-5", "containment", "unicode-dashes"),
    ],
)
def test_unicode_step_names_nfkc_apart_from_dashes(pred: str, gold: str, metric: str, kind: str) -> None:
    assert unicodedata.normalize("NFKC", "\uff11\uff12\ufb01") == "12fi"
    assert unicodedata.normalize("NFKC", "\u2013\u2212") == "\u2013\u2212"
    assert canonical_score(pred, [gold], metric) == (1.0, kind)
    assert canonical_scores([pred, "x"], [[gold], ["y"]], metric)[0] == (1.0, kind)  # the batch layer agrees
    assert kind in FAULT_KINDS and kind in GAIN_KINDS


def test_vqa_accuracy_row_gains_under_the_unicode_label_of_its_other_references() -> None:
    # 3 annotators wrote "12", one the full-width form: the row's kind is "exact" (one reference equals it), its
    # gain comes from the other three (official vqaEval: 1 match -> min(1/3, 1) averaged = 0.3; canonical 1.0).
    answers = ["\uff11\uff12", "12", "12", "12", "x", "x", "x", "x", "x", "x"]
    assert canonical_score("\uff11\uff12", answers, "vqa_accuracy")[1] == "exact"
    assert gain_kind("\uff11\uff12", answers, "vqa_accuracy") == "unicode-nfkc"
    assert "unicode-dashes" in FAULT_KINDS and FAULT_KINDS.index("unicode-nfkc") + 1 == FAULT_KINDS.index(
        "unicode-dashes"
    )
