"""The whole audit (every layer, every row) gives the recorded results on the three real prediction files.

The digests were recorded with the audit as it stood before its speed rewrite (commit c8e0700, plus the
``model`` field and the per-bucket ``errors`` count, checked to leave every other value as it was), so any
change of any number in ``report.json`` or any field of ``rows.jsonl`` on these fixtures - official, canonical,
contract, RA-Eval, repair, overlay, failure notes - makes this test fail. Files: LLaVA-1.5-13B TextVQA val
(joined on image and question with the gold file, which carries OCR tokens), VILA1.5-13B ChartQA test
(VLMEvalKit sheet, with questions), mPLUG-Owl DocVQA val (see CREDITS*.md).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from vqaudit.report.shortanswer import _clean, result_to_json
from vqaudit.suites.shortanswer.audit import AuditResult, run_audit

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "shortanswer"

CASES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "textvqa": ("llava15_13b_textvqa_answers.jsonl.gz", "textvqa",
                {"gold": FIXTURES / "textvqa_val_gold.json.gz", "join_on": "image-question", "id_field": "row",
                 "image_field": "question_id"}),
    "chartqa": ("vila15_13b_chartqa_test.xlsx", "chartqa", {"variant": "vlmevalkit"}),
    "docvqa": ("mocr_mplugowl_docvqa_val.json.gz", "docvqa", {}),
}
EXPECTED = {
    "chartqa": "94b6499ff1bc4601865aa4d06fa97599fa6ba93eea800e855c962a625dc1c52c",
    "docvqa": "196eaf53783adb309cbc6f4f590d4c172c6ed7a8a0ac1de85ed4867b23fae884",
    "textvqa": "5a66db5f1cd0dbfa0d3ab61e3493537419b5d5f07f0d6fd4888d80b56f78eb37",
}


def digest(result: AuditResult) -> str:
    report = result_to_json(result)
    rows = [_clean(dataclasses.asdict(r)) for r in result.rows]
    text = json.dumps({"report": report, "rows": rows}, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize("case", sorted(CASES))
def test_audit_results_are_unchanged(case: str) -> None:
    name, benchmark, options = CASES[case]
    result = run_audit(FIXTURES / name, benchmark, **options)
    assert digest(result) == EXPECTED[case]
