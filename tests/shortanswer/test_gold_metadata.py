"""Mistyped gold metadata (OCR tokens, InfographicVQA answer types) is refused naming the file, row and field.

Seed 002 appendix A counts the raw split from these fields, and the contract buckets read them; before, a string
``ocr_tokens`` was read as "no tokens", a ``null`` token as the token "None" and an ``answer_type`` of ``3`` as
"no type", each changing the counts without a word. The official files hold lists of strings
(TextVQA 0.5.1 ``ocr_tokens``; InfographicVQA ``answer_type``, e.g. ``["image span", "multiple spans"]``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shortanswer.helpers import run_cli
from vqaudit.errors import VqauditError
from vqaudit.shortanswer.benchmarks import load_gold


def _textvqa(path: Path, second: dict[str, Any]) -> Path:
    rows = [
        {"question_id": 1, "question": "what does it say?", "answers": ["stop"] * 10, "ocr_tokens": ["STOP"]},
        {"question_id": 2, "question": "what brand?", "answers": ["sale"] * 10, **second},
    ]
    path.write_text(json.dumps({"dataset_name": "textvqa", "data": rows}))
    return path


def _infovqa(path: Path, second: Any) -> Path:
    rows = [
        {"questionId": 1, "question": "q1", "answers": ["a"], "answer_type": ["image span"]},
        {"questionId": 2, "question": "q2", "answers": ["b"], "answer_type": second},
    ]
    path.write_text(json.dumps({"dataset_name": "infographicsVQA", "data": rows}))
    return path


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ({"ocr_tokens": "SALE"}, "row 2, field 'ocr_tokens': expected a list of strings, got a string"),
        ({"ocr_tokens": ["SALE", None]}, "row 2, field 'ocr_tokens': item 2 is null, expected a list of strings"),
        ({"ocr_tokens": [5]}, "row 2, field 'ocr_tokens': item 1 is a number, expected a list of strings"),
        ({"ocr_info": "SALE"}, "row 2, field 'ocr_info': expected a list of objects, got a string"),
        ({"ocr_info": [{"word": 5}]}, "row 2, field 'ocr_info': item 1 has no string 'word'"),
    ],
)
def test_mistyped_ocr_tokens_are_refused(tmp_path: Path, second: dict[str, Any], message: str) -> None:
    path = _textvqa(tmp_path / "TextVQA_0.5.1_val.json", second)
    with pytest.raises(VqauditError) as err:
        load_gold(path, "textvqa")
    assert str(err.value).startswith(f"{path}: {message}")


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (3, "row 2, field 'answer_type': expected a list of strings such as [\"image span\"], got a number"),
        ({"type": "non span"}, "row 2, field 'answer_type': expected a list of strings such as"),
        ([3, None], "row 2, field 'answer_type': item 1 is a number, expected a list of strings"),
        (["image span", True], "row 2, field 'answer_type': item 2 is a boolean, expected a list of strings"),
    ],
)
def test_mistyped_answer_types_are_refused(tmp_path: Path, second: Any, message: str) -> None:
    path = _infovqa(tmp_path / "infographicsVQA_val_v1.0.json", second)
    with pytest.raises(VqauditError) as err:
        load_gold(path, "infovqa")
    assert str(err.value).startswith(f"{path}: {message}")


def test_well_typed_metadata_reads_as_before(tmp_path: Path) -> None:
    # ocr_info words when ocr_tokens is absent; null fields mean "no metadata"; a list type is joined with "|".
    tv = load_gold(
        _textvqa(tmp_path / "TextVQA_0.5.1_val.json", {"ocr_info": [{"word": "SALE", "bbox": {}}]}), "textvqa"
    )
    assert [g.ocr_tokens for g in tv] == [("STOP",), ("SALE",)]
    tv = load_gold(_textvqa(tmp_path / "TextVQA_0.5.1_val.json", {"ocr_tokens": None}), "textvqa")
    assert tv[1].ocr_tokens == ()
    info = load_gold(_infovqa(tmp_path / "infographicsVQA_val_v1.0.json", ["multiple spans", "image span"]), "infovqa")
    assert [g.answer_type for g in info] == ["image span", "multiple spans|image span"]
    info = load_gold(_infovqa(tmp_path / "infographicsVQA_val_v1.0.json", None), "infovqa")
    assert info[1].answer_type is None


def test_the_audit_refuses_with_exit_2_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    gold = _infovqa(tmp_path / "infographicsVQA_val_v1.0.json", 3)
    preds = tmp_path / "preds.jsonl"
    preds.write_text('{"questionId": 1, "prediction": "a"}\n{"questionId": 2, "prediction": "b"}\n')
    out = tmp_path / "audit"
    assert (
        run_cli(monkeypatch, "audit", str(preds), "--benchmark", "infovqa", "--gold", str(gold), "--out", str(out)) == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"error: {gold}: row 2, field 'answer_type'")
    assert not (out / "report.json").exists()
