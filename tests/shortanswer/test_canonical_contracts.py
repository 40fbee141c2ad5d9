"""Canonical layer fault kinds and the contract taxonomy (seed 002 Tables 1, 8 and 12)."""

from __future__ import annotations

import pytest

from vqaudit.scoring.canonical import canonical_match, canonical_score, parse_number, split_spans
from vqaudit.scoring.contracts import classify, identifier_subtype, multispan_subtype
from vqaudit.scoring.official import relaxed_accuracy, vqa_accuracy

from .helpers import bucket_counts


@pytest.mark.parametrize(
    ("pred", "ref", "tolerance", "kind"),
    [
        ("Yes.", "yes", 0.0, "one-sided-normalization"),  # vqaEval skips normalization for unanimous gold
        ("\u22125", "-5", 0.0, "unicode-dashes"),  # U+2212 MINUS SIGN
        ("Rabbit", "Rabbit**", 0.05, "trailing-punctuation"),  # a real ChartQA gold with footnote asterisks
        ("stop:", "stop", 0.0, "trailing-punctuation"),  # vqaEval's punctuation list has no ":"
        ("The answer is 42.", "42", 0.0, "sentence-wrapper"),
        ("1,000", "1000", 0.05, "thousands-separator"),  # pix2struct: float("1,000") fails -> string compare
        ("45%", "45", 0.05, "percent-unit"),  # pix2struct: 0.45 vs 45
        ("0.0", "0", 0.05, "zero-gold"),  # pix2struct: a target of 0 falls back to string equality
        ("Austria and Chile", "[Austria, Chile]", 0.05, "multi-span"),  # Table 12's multi-span example
        ("Chile, Austria", "Austria, Chile", 0.0, "multi-span"),  # order does not matter
        ("paris", "paris", 0.0, "exact"),
    ],
)
def test_each_fault_kind_is_fixed_and_named(pred: str, ref: str, tolerance: float, kind: str) -> None:
    assert canonical_match(pred, ref, tolerance) == kind


def test_years_and_identifiers_are_exact_under_a_relative_tolerance() -> None:
    # |2016 - 2014| / 2014 = 0.1% <= 5%: the official relaxed rule accepts a wrong year; canonical refuses it.
    assert relaxed_accuracy("2016", "2014") == 1.0
    assert canonical_match("2016", "2014", 0.05) is None
    assert canonical_match("02139", "2139", 0.05) is None  # leading-zero identifier
    assert canonical_match("102", "100", 0.05) == "numeric-equal"  # plain quantities keep the 5% tolerance


def test_thousands_separators_versus_list_commas() -> None:
    assert parse_number("1,234,567") == (1234567.0, False, "1234567")
    assert parse_number("3, 4") is None
    assert split_spans("3, 4") == ("3", "4")
    assert canonical_match("4, 3", "3, 4") == "multi-span"
    assert canonical_match("34", "3, 4") is None


def test_canonical_score_keeps_the_metric_aggregation() -> None:
    # VQA accuracy: "Yes." against 10 unanimous "yes" scores 0 under vqaEval a013f00 (no normalization), 1.0
    # canonically (leave-one-out with 9 matches in every subset).
    assert vqa_accuracy("Yes.", ["yes"] * 10) == 0.0
    assert canonical_score("Yes.", ["yes"] * 10, "vqa_accuracy") == (1.0, "one-sided-normalization")
    # 2 of 10 annotators match: (2 * 1/3 + 8 * 2/3) / 10 = 0.6, the same arithmetic as the official scorer.
    assert canonical_score("no", ["no"] * 2 + ["yes"] * 8, "vqa_accuracy")[0] == pytest.approx(0.6)
    assert canonical_score("1,000", ["1000"], "relaxed_accuracy") == (1.0, "thousands-separator")
    assert canonical_score("nope", ["yes"], "exact_match") == (0.0, None)


# Seed 002 Table 12: one example per bucket (question, gold, representative non-canonical output).
TABLE_12 = [
    ("scalar", "When does support for legalization reach the peak?", "2014"),
    ("readout", "What is the name of the medication?", "SEPTRA"),
    ("identifier", "Where is the women\u2019s gym located?", "C-5"),
    ("multi-span", "Which two countries are being compared in the graph?", "[Austria, Chile]"),
]


@pytest.mark.parametrize(("bucket", "question", "gold"), TABLE_12)
def test_table_12_examples_land_in_their_buckets(bucket: str, question: str, gold: str) -> None:
    assert classify(question, [gold]).bucket == bucket


def test_table_8_subtypes() -> None:
    assert identifier_subtype("C-5") == "hyphenated code"
    assert identifier_subtype("B12") == "alnum code"
    assert identifier_subtype("5kg") == "compact num+unit"
    assert identifier_subtype("USA") == "short upper"
    assert identifier_subtype("Paris") is None
    assert multispan_subtype("red/blue") == "slash pair"
    assert multispan_subtype("salt and pepper") == "conjunctive"
    assert multispan_subtype("[Austria, Chile]") == "list-2"
    assert multispan_subtype("[Germany, Bolivia, Dominican Republic]") == "list-3plus"
    assert multispan_subtype("red, green, blue") == "list-3plus"
    # Prose with commas is not a list (every item must be short).
    assert multispan_subtype("I don't discriminate against them, nor do I fear them.") is None


def test_priority_order_and_metadata() -> None:
    # Scalar wins over everything: "yes" read aloud from a sign is still a yes/no scalar.
    assert classify("What is written on the sign?", ["yes"]).bucket == "scalar"
    # OCR metadata (TextVQA) anchors readout even without a readout question prefix.
    assert classify("what is on the can?", ["pepsi"] * 10, ocr_tokens=["PEPSI", "cola"]).rule == "readout:ocr-token"
    # InfographicVQA answer_type metadata: multi-span qualifies a list answer.
    assert classify("which ones?", ["tea"], answer_type="multi-span").bucket == "multi-span"
    # The representative gold is the majority of the 10 TextVQA answers.
    assert classify("how many?", ["3"] * 6 + ["three people"] * 4).bucket == "scalar"
    assert classify("what airline is this?", ["Airfrance"]).bucket == "other-open"
    counts = bucket_counts([classify(q, [g]) for _, q, g in TABLE_12])
    assert counts == {"scalar": 1, "readout": 1, "identifier": 1, "multi-span": 1, "other-open": 0}


def test_failure_note_heuristics() -> None:
    from vqaudit.shortanswer.failures import failure_notes, formatting_kinds, is_truncated

    assert is_truncated("The total revenue in 2019 was") is False  # short: not at the token limit
    assert is_truncated(
        "The chart shows that the value rose sharply between 2010 and 2015 while the other series "
        "stayed flat and then the"
    )  # 21 words, no final punctuation
    assert is_truncated("Austria (and")
    assert formatting_kinds("The answer is 42.") == ("wrapper",)
    assert formatting_kinds("**42**") == ("markdown",)
    assert formatting_kinds("yes.") == ("trailing-punctuation",)
    notes = failure_notes(["", "  ", "Unanswerable", "I cannot tell from the image.", "42"])
    assert (notes.n, notes.empty, notes.abstention, notes.unanswerable) == (5, 2, 2, 1)


@pytest.mark.parametrize(
    "gold",
    # Real DocVQA val golds (tests/fixtures/shortanswer/mocr_mplugowl_docvqa_val.json.gz) whose commas punctuate
    # one entity: a name or company suffix, a date, an address, a city with its state code.
    [
        "Walter F. Wrenn, Jr.",
        "THE NUTRITION FOUNDATION, INC.",
        "Michael F. Jacobson, Ph.D.",
        "SATURDAY, JUNE 8, 1968",
        "Monday, May 10",
        "Atlanta, Georgia 30301",
        "P. O. Box 32, Fremont",
        "Lexington, KY",
    ],
)
def test_single_entities_are_not_lists(gold: str) -> None:
    assert multispan_subtype(gold) is None
    assert classify("What is it?", [gold]).bucket != "multi-span"
    parts = [p.strip() for p in gold.split(",")]
    assert canonical_match(", ".join(reversed(parts)), gold) is None  # reordered parts are not the same answer


def test_lists_stay_lists() -> None:
    assert multispan_subtype("Austria, Chile") == "list-2"  # Table 12
    assert multispan_subtype("red, green, blue") == "list-3plus"
    assert multispan_subtype("Dogs and cats") == "conjunctive"
    assert multispan_subtype("glycerine/glycol") == "slash pair"
    assert multispan_subtype("3/25") is None  # a date or a fraction, not a pair of spans
    # A conjunction inside a long title is not a list of spans (each side at most 4 words).
    assert multispan_subtype("Comparison of basic hourly wage rates for male workers and cost of living") is None
    assert canonical_match("Chile, Austria", "Austria, Chile") == "multi-span"


def test_canonical_containment_layer() -> None:
    # MultimodalOCR's whole-word containment normalizes both sides with vqaEval and searches the gold in the
    # output. Its canonical counterpart runs the same search on the canonical forms: a Unicode dash in the gold
    # ("C\u20135", en dash) is then found in an output that writes "C-5"; the official rule misses it.
    from vqaudit.scoring.registry import mocr_containment

    out = "The women's gym is located in room C-5 on the first floor."
    assert mocr_containment(out, ["C\u20135"]) == 0.0
    assert canonical_score(out, ["C\u20135"], "containment") == (1.0, "unicode-dashes")
    assert canonical_score("located in C-52", ["C-5"], "containment") == (0.0, None)  # word boundary needed
    assert canonical_score(out, ["C-5"], "containment")[0] == mocr_containment(out, ["C-5"]) == 1.0
