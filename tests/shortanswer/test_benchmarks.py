"""Benchmark -> metric table, the memoized scorers, and MultimodalOCR's whole-word containment."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from vqaudit.errors import VqauditError
from vqaudit.scoring.official import vqa_accuracy
from vqaudit.scoring.registry import mocr_containment, official_scorer
from vqaudit.shortanswer.benchmarks import get_benchmark

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "shortanswer"


@pytest.mark.slow
def test_memoized_vqa_scorers_equal_the_official_function_bit_for_bit() -> None:
    with gzip.open(FIXTURES / "llava15_13b_textvqa_val.jsonl.gz", "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    for variant in ("mmf_textvqa", "vlmevalkit", "vqaeval"):
        fast = official_scorer("vqa_accuracy", variant)
        for r in rows:
            assert fast(r["prediction"], r["gt_answers"]) == vqa_accuracy(
                r["prediction"], r["gt_answers"], variant=variant
            )  # type: ignore[arg-type]
    # The 10-answer assertion of m4c_evaluators.py is kept.
    with pytest.raises(ValueError, match="exactly 10"):
        official_scorer("vqa_accuracy", "mmf_textvqa")("a", ["a"] * 9)


def test_mocr_containment_rule() -> None:
    # MultimodalOCR eval.py VQAEval.evaluate: vqaEval normalization, then \b gold \b in the output.
    assert mocr_containment("The name of the university is the University of San Diego.", ["San Diego"]) == 1.0
    assert mocr_containment("The company is ITC Limited.", ["itc limited"]) == 1.0
    assert mocr_containment("Sandiego", ["san diego"]) == 0.0
    assert mocr_containment("It is 10.", ["0.28"]) == 0.0


def test_benchmark_table_and_errors() -> None:
    assert (get_benchmark("TextVQA").metric, get_benchmark("textvqa").variant) == ("vqa_accuracy", "mmf_textvqa")
    assert get_benchmark("docvqa").metric == "anls" and get_benchmark("chartqa-human").metric == "relaxed_accuracy"
    # VizWiz test gold is not public: the audit of its predictions gives failure notes, gold is not required.
    assert not get_benchmark("vizwiz").gold_required and get_benchmark("textvqa").gold_required
    assert (get_benchmark("vizwiz").metric, get_benchmark("vizwiz").variant) == ("vqa_accuracy", "vizwiz")
    with pytest.raises(VqauditError, match="unknown benchmark"):
        get_benchmark("gqa")
    with pytest.raises(VqauditError, match="has no variant"):
        official_scorer("anls", "mmf_textvqa")


def test_fast_normalizers_equal_the_official_ones_on_every_fixture_string() -> None:
    from vqaudit.scoring.vqa_normalize import evalai_process, fast_evalai_process, fast_vqaeval_process, vqaeval_process

    strings: set[str] = {"1,000-2", "dog's", "U.S.A", "A", "yes!", "t-shirt", "  two\tdogs\n", "none", "Im"}
    with gzip.open(FIXTURES / "llava15_13b_textvqa_val.jsonl.gz", "rt", encoding="utf-8") as f:
        for r in map(json.loads, f):
            strings.update([r["prediction"], *r["gt_answers"]])
    with gzip.open(FIXTURES / "mocr_mplugowl_docvqa_val.json.gz", "rt", encoding="utf-8") as f:
        for r in json.load(f):
            strings.update([r["answer"], *r["gt_answers"]])
    with gzip.open(FIXTURES / "vila15_13b_chartqa_test.jsonl.gz", "rt", encoding="utf-8") as f:
        for r in map(json.loads, f):
            strings.update([r["prediction"] or "", r["answer"]])
    assert len(strings) > 20_000
    for s in strings:
        assert fast_vqaeval_process(s) == vqaeval_process(s)
        assert fast_evalai_process(s) == evalai_process(s)
