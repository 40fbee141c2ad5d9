"""Seed 002 appendix A: the raw split of a gold file's own metadata, counted by hand on small gold files.

OCR-extractable (:mod:`vqaudit.shortanswer.raw_split`): some gold answer, VQA-normalized, equals one normalized
OCR token or a run of consecutive tokens. Answer types: each question counted under its first listed type.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from shortanswer.helpers import run_cli
from vqaudit.errors import VqauditError
from vqaudit.report.audit_inputs import read_audit
from vqaudit.report.audit_summary import summarize_audits
from vqaudit.report.audit_summary_render import render_summary_markdown
from vqaudit.scoring.contracts import ocr_extractable
from vqaudit.shortanswer.benchmarks import load_gold
from vqaudit.shortanswer.raw_split import NO_GOLD, NO_OCR, NO_TYPES, raw_split, raw_split_lines

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "shortanswer"
TOKENS = ["DAKOTA", "DIGITAL", "Camera"]

# (question id, answers, OCR tokens, extractable by hand)
TEXTVQA = [
    (1, ["dakota"] * 10, TOKENS, True),  # one token, case differs (the VQA normalization lower-cases)
    (2, ["dakota digital"] * 10, TOKENS, True),  # a run of two consecutive tokens
    (3, ["digital dakota"] * 10, TOKENS, False),  # both words are tokens, but not in this order
    (4, ["nous"] * 8 + ["dakota"] * 2, TOKENS, True),  # a minority answer is a token: some gold answer is
    (5, ["stop"] * 10, [], False),  # no OCR token on the image
    (6, ["kota"] * 10, TOKENS, False),  # a part of a token is not a token
    (7, ["digital camera."] * 10, TOKENS, True),  # the normalization drops the final period; a run of two
]


def _textvqa_gold(path: Path) -> Path:
    data = [
        {"question_id": q, "question": f"what does sign {q} say?", "image_id": f"img{q}", "answers": a, "ocr_tokens": t}
        for q, a, t, _ in TEXTVQA
    ]
    path.write_text(json.dumps({"dataset_name": "textvqa", "data": data}))
    return path


@pytest.mark.parametrize(("qid", "answers", "tokens", "expected"), TEXTVQA)
def test_each_hand_made_question(qid: int, answers: list[str], tokens: list[str], expected: bool) -> None:
    assert ocr_extractable(answers, tokens) is expected


def test_textvqa_shaped_gold_counts_by_hand(tmp_path: Path) -> None:
    split = raw_split(load_gold(_textvqa_gold(tmp_path / "TextVQA_0.5.1_val.json"), "textvqa"))
    # Questions 1, 2, 4, 7 extractable (4 of 7); 3, 5, 6 not (3); 6 of the 7 images have OCR tokens.
    assert split.questions == 7
    assert split.ocr is not None
    assert (split.ocr["extractable"], split.ocr["not_extractable"], split.ocr["questions_with_tokens"]) == (4, 3, 6)
    assert split.answer_types is None and split.answer_types_reason == NO_TYPES and split.ocr_reason is None


def test_infographicvqa_shaped_gold_counts_each_question_under_its_first_type(tmp_path: Path) -> None:
    # The InfographicVQA annotation layout: questionId, question, answers, answer_type (a list per question), with
    # the labels of the official evaluation script (image span, question span, multiple spans, non span).
    types = [
        ["image span"],
        ["image span"],
        ["image span"],
        ["multiple spans"],
        ["question span"],
        ["non span"],
        ["non span"],
        ["image span", "non span"],  # two types: the first listed counts in ``first``; both in ``listed``
    ]
    data = [
        {"questionId": i, "question": f"q{i}", "answers": ["a"], "answer_type": t, "image_local_name": f"{i}.jpeg"}
        for i, t in enumerate(types, start=1)
    ]
    path = tmp_path / "infographicsVQA_val_v1.0_withQT.json"
    path.write_text(json.dumps({"dataset_name": "infographicsVQA", "data": data}))
    split = raw_split(load_gold(path, "infovqa"))
    assert split.answer_types is not None and split.ocr is None and split.ocr_reason == NO_OCR
    # By hand: first types image span 4 (1, 2, 3, 8), multiple 1, question 1, non span 2 (sum 8 = questions);
    # listed: non span 3 (6, 7, 8); one question lists two types.
    assert split.answer_types["first"] == {"image span": 4, "multiple spans": 1, "question span": 1, "non span": 2}
    assert split.answer_types["listed"]["non span"] == 3 and split.answer_types["listed"]["image span"] == 4
    assert split.answer_types["several"] == 1 and split.answer_types["questions_with_type"] == 8
    lines = raw_split_lines(dataclasses.asdict(split))
    assert lines[0] == f"- OCR-extractable: {NO_OCR}"
    assert "image span 4, multiple spans 1, question span 1, non span 2; 1 questions list" in lines[1]
    # report.json is written with sorted keys; the HTML report and audit-summary read it back: the same line
    reread = json.loads(json.dumps(dataclasses.asdict(split), sort_keys=True))
    assert list(reread["answer_types"]["first"]) == ["image span", "multiple spans", "non span", "question span"]
    assert raw_split_lines(reread) == lines


def test_no_metadata_says_not_available_rather_than_zero(tmp_path: Path) -> None:
    path = tmp_path / "val_v1.0.json"  # DocVQA: neither OCR tokens nor answer types in the gold file
    path.write_text(
        json.dumps({"dataset_name": "docvqa", "data": [{"questionId": 1, "question": "q", "answers": ["a"]}]})
    )
    split = raw_split(load_gold(path, "docvqa"))
    assert (split.ocr, split.answer_types, split.ocr_reason, split.answer_types_reason) == (
        None,
        None,
        NO_OCR,
        NO_TYPES,
    )
    lines = raw_split_lines(dataclasses.asdict(split))
    assert lines == [
        "- OCR-extractable: not available (the gold file has no OCR tokens)",
        "- Answer types: not available (the gold file has no answer types)",
    ]
    embedded = raw_split(None)  # the gold embedded in a prediction file
    assert (embedded.ocr_reason, embedded.answer_types_reason) == (NO_GOLD, NO_GOLD)


def test_vizwiz_answer_type_is_not_the_infographicvqa_split(tmp_path: Path) -> None:
    """VizWiz's ``answer_type`` ("other", "yes/no", ...) is its own field; appendix A's answer types are
    InfographicVQA's (single-span, multi-span, question span, non-extractive)."""
    path = tmp_path / "val.json"
    answers = [{"answer": "red", "answer_confidence": "yes"}] * 10
    rows = [{"image": f"VizWiz_val_{i:08d}.jpg", "question": "what color?", "answers": answers,
             "answer_type": "other", "answerable": 1} for i in range(2)]  # fmt: skip
    path.write_text(json.dumps(rows))
    split = raw_split(load_gold(path, "vizwiz"))
    assert (split.answer_types, split.answer_types_reason) == (None, NO_TYPES)


def test_bundled_textvqa_val_gold() -> None:
    """The bundled 5,000 TextVQA val questions (CREDITS_issue5.md) give 2,661 OCR-extractable questions.

    The paper's 2,670 of 5,000 (appendix A) is on its own copy of the same 5,000 TextVQA 0.5.1 val questions (ids
    34602-39601, all 5,000 here); the 9 questions between them are plausibly the OCR tokens (ours are the Rosetta
    tokens LLaVA put in its prompts, split on ", "). The count is pinned from vqaudit's own run of the rule.
    """
    gold = load_gold(FIXTURES / "textvqa_val_gold.json.gz", "textvqa")
    assert len(gold) == 5000 and {int(g.qid) for g in gold} == set(range(34602, 39602))
    split = raw_split(gold)
    assert split.ocr is not None
    assert (split.ocr["extractable"], split.ocr["not_extractable"]) == (2661, 2339)
    assert split.ocr["questions_with_tokens"] == 5000


def test_audit_report_carries_the_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gold = _textvqa_gold(tmp_path / "TextVQA_0.5.1_val.json")
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"question_id": q, "text": "dakota"}) + "\n" for q, *_ in TEXTVQA[:3]))
    out = tmp_path / "audit"
    assert (
        run_cli(monkeypatch, "audit", str(preds), "--benchmark", "textvqa", "--gold", str(gold), "--out", str(out)) == 0
    )
    report = json.loads((out / "report.json").read_text())
    # Over the gold file's 7 questions, not the 3 answered.
    assert report["raw_split"]["questions"] == 7 and report["raw_split"]["ocr"]["extractable"] == 4
    md = (out / "report.md").read_text()
    assert (
        "### Raw split (appendix A)" in md and "- OCR-extractable: 4 of 7 questions (57.1%), not extractable: 3" in md
    )


def test_audit_summary_shows_the_split_per_benchmark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gold = _textvqa_gold(tmp_path / "TextVQA_0.5.1_val.json")
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"question_id": q, "text": "dakota"}) + "\n" for q, *_ in TEXTVQA))
    folders = [tmp_path / "a1", tmp_path / "a2"]
    for name, out in zip(("m1", "m2"), folders, strict=True):
        args = ("audit", str(preds), "--benchmark", "textvqa", "--gold", str(gold), "--out", str(out))
        assert run_cli(monkeypatch, *args, "--model-name", name) == 0
    s = summarize_audits([read_audit(f) for f in folders])
    assert s.raw_split["textvqa"] is not None and s.raw_split["textvqa"]["ocr"]["extractable"] == 4
    md = render_summary_markdown(s)
    section = md.split("## Raw split of the gold metadata (appendix A)")[1]
    assert section.startswith("\n\ntextvqa, 7 gold questions:\n\n- OCR-extractable: 4 of 7 questions (57.1%)")
    report = json.loads((folders[1] / "report.json").read_text())
    report["raw_split"]["ocr"]["extractable"] = -1
    (folders[1] / "report.json").write_text(json.dumps(report))
    with pytest.raises(VqauditError, match=r"field 'raw_split.ocr.extractable': expected a count"):
        read_audit(folders[1])
