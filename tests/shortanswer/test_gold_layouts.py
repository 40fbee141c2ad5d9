"""Gold loaders refuse another benchmark's gold file (loaders.detect_layout), naming what it looks like.

The hand-made files copy the layouts the benchmarks distribute (seed 002 §4; loaders.py docstring): TextVQA
``TextVQA_0.5.1_val.json`` (its first row is the first row of tests/fixtures/shortanswer/textvqa_val_gold.json.gz),
ST-VQA ``train_task_1.json``, DocVQA ``val_v1.0.json``, InfographicVQA ``infographicsVQA_val_v1.0.json`` and
ChartQA ``test_human.json`` (its row is the first row of tests/fixtures/shortanswer/chartqa_test_human_slice.json)
and VizWiz ``val.json`` (a hand-made row in the layout of VizWiz's VQA annotations).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from vqaudit.errors import VqauditError
from vqaudit.shortanswer.benchmarks import detect_layout, get_layout, load_gold

TEXTVQA = {
    "dataset_name": "textvqa",
    "dataset_split": "val",
    "data": [
        {
            "question_id": 34602,
            "question": "what is the brand of this camera?",
            "image_id": "003a8ae2ef43b901",
            "answers": [
                "nous les gosses",
                "dakota",
                "clos culombu",
                "dakota",
                "dakota",
                "dakota",
                "dakota",
                "dakota",
                "dakota",
                "dakota",
            ],
        }
    ],
}
STVQA = {
    "data": [
        {
            "question_id": 7,
            "question": "What number is on the bus?",
            "answers": ["54"],
            "file_name": "COCO_train2014_000000000009.jpg",
            "file_path": "coco-text/COCO_train2014_000000000009.jpg",
        }
    ]
}
DOCVQA = {
    "data": [
        {
            "questionId": 337,
            "question": "what is the date mentioned in this letter?",
            "answers": ["1/8/93"],
            "image": "documents/xnbl0037_1.png",
            "docId": 279,
        }
    ]
}
INFOVQA = {
    "data": [
        {
            "questionId": 65718,
            "question": "Which social platform has the most users?",
            "answers": ["facebook"],
            "answer_type": ["single span"],
            "image_local_name": "37313.jpeg",
        }
    ]
}
VIZWIZ = [
    {
        "image": "VizWiz_val_00000000.jpg",
        "question": "What is this?",
        "answer_type": "other",
        "answerable": 1,
        "answers": [{"answer": "soup", "answer_confidence": "yes"}] * 10,
    }
]
CHARTQA = [{"imgname": "41699051005347.png", "query": "How many food item is shown in the bar graph?", "label": "14"}]

FILES = {"textvqa": TEXTVQA, "stvqa": STVQA, "docvqa": DOCVQA, "infovqa": INFOVQA, "chartqa": CHARTQA, "vizwiz": VIZWIZ}
FIRST_QID = {
    "textvqa": "34602",
    "stvqa": "7",
    "docvqa": "337",
    "infovqa": "65718",
    "chartqa": "test_augmented:1",
    "vizwiz": "VizWiz_val_00000000.jpg",
}


def _write(tmp_path: Path, layout: str) -> Path:
    # a ChartQA file's split is read from its name (loaders.chartqa_split_of): named as ChartQA ships it
    path = tmp_path / ("test_augmented.json" if layout == "chartqa" else f"{layout}_gold.json")
    path.write_text(json.dumps(FILES[layout]), encoding="utf-8")
    return path


@pytest.mark.parametrize("layout", sorted(FILES))
def test_each_layout_is_recognised_and_loads_with_its_own_loader(tmp_path: Path, layout: str) -> None:
    found = detect_layout(FILES[layout])
    assert found is not None and found[0] == layout
    (item,) = load_gold(_write(tmp_path, layout), layout)
    assert item.qid == FIRST_QID[layout] and item.benchmark == layout


@pytest.mark.parametrize(
    ("layout", "wanted"),
    [(f, b) for f in sorted(FILES) for b in sorted(FILES) if f != b]
    + [("docvqa", "chartqa-human"), ("textvqa", "chartqa-machine")],
)
def test_another_benchmarks_gold_file_is_refused(tmp_path: Path, layout: str, wanted: str) -> None:
    # ("benchmark" is a pytest-benchmark fixture name, hence "wanted")
    path = _write(tmp_path, layout)
    with pytest.raises(VqauditError) as info:
        load_gold(path, wanted)
    expected = get_layout(wanted.split("-")[0]).title
    message = str(info.value)
    assert message.startswith(f"{path}: looks like a {get_layout(layout).title} gold file (")
    assert f"not the {expected} layout expected" in message and f"--benchmark {layout} for this one" in message
    assert "\n" not in message


def test_the_evidence_is_named() -> None:
    assert detect_layout(DOCVQA) == ("docvqa", "row 1 has 'questionId' and no 'answer_type'")
    assert detect_layout(INFOVQA) == ("infovqa", "row 1 has 'questionId' and 'answer_type'")
    assert detect_layout(TEXTVQA) == ("textvqa", "its 'dataset_name' is 'textvqa'")
    assert detect_layout(TEXTVQA["data"]) == ("textvqa", "row 1 has 'question_id' and 10 annotator answers")
    assert detect_layout(STVQA) == ("stvqa", "row 1 has 'question_id' and 'file_name', no 'image_id'")
    assert detect_layout(CHARTQA) == ("chartqa", "row 1 has 'imgname'")


def test_a_row_that_tells_nothing_is_accepted_by_either_vqa_loader(tmp_path: Path) -> None:
    # question_id, question and answers only: TextVQA and ST-VQA both fit (the existing loader tests use this).
    path = tmp_path / "plain.json"
    path.write_text(json.dumps({"data": [{"question_id": 1, "question": "q", "answers": ["a"]}]}))
    assert detect_layout(json.loads(path.read_text())) is None
    assert [i.qid for i in load_gold(path, "textvqa")] == [i.qid for i in load_gold(path, "stvqa")] == ["1"]
    # ... unless the file says which dataset it is.
    path.write_text(
        json.dumps({"dataset_name": "ST-VQA", "data": [{"question_id": 1, "question": "q", "answers": ["a"]}]})
    )
    with pytest.raises(VqauditError, match=r"looks like a ST-VQA gold file \(its 'dataset_name' is 'ST-VQA'\)"):
        load_gold(path, "textvqa")


def test_audit_command_refuses_a_docvqa_gold_file_for_infovqa(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from vqaudit.cli import main

    gold = _write(tmp_path, "docvqa")
    preds = tmp_path / "preds.jsonl"
    preds.write_text('{"question_id": 337, "prediction": "1/8/93"}\n')
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "vqaudit",
            "audit",
            str(preds),
            "--benchmark",
            "infovqa",
            "--gold",
            str(gold),
            "--out",
            str(tmp_path / "audit"),
        ],
    )
    with pytest.raises(SystemExit) as info:
        main()
    err = capsys.readouterr().err
    assert info.value.code == 2 and "Traceback" not in err
    assert err == (
        f"error: {gold}: looks like a DocVQA gold file (row 1 has 'questionId' and no 'answer_type'), "
        "not the InfographicVQA layout expected (a 'data' list of rows with 'questionId', 'question', "
        "'answers' and 'answer_type'); give the InfographicVQA gold file, or --benchmark docvqa for this "
        "one\n"
    )
