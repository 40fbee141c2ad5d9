"""The canonical layer's labels say what it did (new-user trial, finding 9).

Every expected value is worked out by hand: official scores from pix2struct's ``relaxed_correctness`` rule
(``_to_float``: Python ``float()``, a ``%`` suffix divided by 100; stated in
:func:`vqaudit.scoring.official.relaxed_accuracy`), canonical ones from the rules in the docstring of
:mod:`vqaudit.scoring.canonical`.
"""

from __future__ import annotations

import pytest

from vqaudit.scoring.canonical import (
    REFUSAL_CAUSES,
    canonical_match,
    canonical_score,
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
