"""A short-answer benchmark is one loader plus one BenchmarkSpec row; VizWiz is such a row.

The toy benchmark below is written as the files a contributor would add (one loader module, imported from a folder
on ``sys.path``, and one row) and audited end to end through ``vqaudit audit``. The VizWiz gold file is written
here in the layout of VizWiz's VQA annotations (``val.json``: ``image``, ``question``, 10 ``answers`` objects with
``answer`` and ``answer_confidence``, ``answer_type``, ``answerable``); its predictions carry VizWiz's result field
``answerable`` (the score that the question is answerable). Every expected value is computed by hand below from the
rules cited in :mod:`vqaudit.scoring.official` (variant ``vizwiz``) and :mod:`vqaudit.scoring.unanswerable`.
"""

from __future__ import annotations

import json
import math
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from vqaudit.errors import VqauditError
from vqaudit.scoring.official import vqa_accuracy
from vqaudit.scoring.unanswerable import average_precision, predicts_unanswerable, unanswerable_metrics
from vqaudit.shortanswer.benchmarks import BENCHMARKS, BenchmarkSpec, detect_layout, load_gold, register_benchmark

from .helpers import run_cli

TOY_LOADER = '''
"""A toy 10-answer benchmark: a JSON list of {"id", "q", "refs"} rows (10 annotator answers each)."""
import json
from pathlib import Path

from vqaudit.shortanswer.records import GoldItem


def load(path: Path) -> list[GoldItem]:
    rows = json.loads(path.read_text(encoding="utf-8"))
    return [GoldItem(str(r["id"]), r["q"], tuple(r["refs"]), "toyten", source=f"{path}:{i}")
            for i, r in enumerate(rows, start=1)]
'''


@pytest.fixture
def toy_loader(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "toy_tenqa.py").write_text(textwrap.dedent(TOY_LOADER), encoding="utf-8")
    sys.path.insert(0, str(folder))
    try:
        yield folder
    finally:
        sys.path.remove(str(folder))
        for name in ("toyten", "toyfew"):
            BENCHMARKS.pop(name, None)
        sys.modules.pop("toy_tenqa", None)


def _write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_toy_ten_answer_benchmark_is_one_loader_and_one_row(
    toy_loader: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_benchmark(BenchmarkSpec("toyten", "vqa_accuracy", "vqaeval", loader="toy_tenqa:load", answers=10))
    gold = tmp_path / "toy_gold.json"
    gold.write_text(
        json.dumps(
            [
                {"id": 1, "q": "colour?", "refs": ["red"] * 10},
                {"id": 2, "q": "animal?", "refs": ["cat"] * 2 + ["dog"] * 8},
                {"id": 3, "q": "paint?", "refs": ["blue"] + ["green"] * 9},
            ]
        ),
        encoding="utf-8",
    )
    preds = _write_jsonl(
        tmp_path / "toy_preds.jsonl",
        [
            {"question_id": 1, "prediction": "red"},
            {"question_id": 2, "prediction": "cat"},
            {"question_id": 3, "prediction": "purple"},
        ],
    )
    out = tmp_path / "audit"
    assert (
        run_cli(monkeypatch, "audit", str(preds), "--benchmark", "toyten", "--gold", str(gold), "--out", str(out)) == 0
    )
    report = json.loads((out / "report.json").read_text())
    # VQA accuracy with 10 references, m of them matching: (m min(1, (m-1)/3) + (10-m) min(1, m/3)) / 10:
    # m=10 -> 1, m=2 -> (2/3 + 16/3) / 10 = 0.6, m=0 -> 0; mean (1 + 0.6 + 0) / 3, in points.
    assert (report["metric"], report["variant"]) == ("vqa_accuracy", "vqaeval")
    assert report["scores"]["Overall"] == pytest.approx(100 * 1.6 / 3)
    assert report["join"]["joined"] == 3 and "answerability" not in report  # the row has no answerability
    # The row's answers per question is what admits 10-annotator gold: the same loader under a row that says
    # nothing of it is refused (10 answers on every row mean the wrong benchmark).
    register_benchmark(BenchmarkSpec("toyfew", "vqa_accuracy", "vqaeval", loader="toy_tenqa:load"))
    with pytest.raises(VqauditError, match="3 of 3 rows have exactly 10 gold answers"):
        from vqaudit.shortanswer.audit import run_audit

        run_audit(preds, "toyfew", gold=gold)


def _answers(*pairs: tuple[str, int]) -> list[dict[str, str]]:
    return [{"answer": text, "answer_confidence": "yes"} for text, n in pairs for _ in range(n)]


VIZWIZ_GOLD = [
    {
        "image": "VizWiz_val_00000001.jpg",
        "question": "What is this?",
        "answers": _answers(("unanswerable", 10)),
        "answer_type": "unanswerable",
        "answerable": 0,
    },
    {
        "image": "VizWiz_val_00000002.jpg",
        "question": "What drink is this?",
        "answers": _answers(("coca cola", 4), ("coke", 3), ("soda", 2), ("unanswerable", 1)),
        "answer_type": "other",
        "answerable": 1,
    },
    {
        "image": "VizWiz_val_00000003.jpg",
        "question": "Is it on?",
        "answers": _answers(("yes", 10)),
        "answer_type": "yes/no",
        "answerable": 1,
    },
    {
        "image": "VizWiz_val_00000004.jpg",
        "question": "What colour is the shirt?",
        "answers": _answers(("unanswerable", 6), ("blue", 4)),
        "answer_type": "unanswerable",
        "answerable": 0,
    },
]
# LLaVA-1.5 answers "Unanswerable" capitalised; "Coke." with its period; "Yes" capitalised.
VIZWIZ_PREDICTIONS = [
    {"image": "VizWiz_val_00000001.jpg", "prediction": "Unanswerable", "answerable": 0.2},
    {"image": "VizWiz_val_00000002.jpg", "prediction": "Coke.", "answerable": 0.9},
    {"image": "VizWiz_val_00000003.jpg", "prediction": "Yes", "answerable": 0.45},
    {"image": "VizWiz_val_00000004.jpg", "prediction": "blue", "answerable": 0.6},
]


def test_vizwiz_gold_layout_loads_and_is_told_apart(tmp_path: Path) -> None:
    path = tmp_path / "val.json"
    path.write_text(json.dumps(VIZWIZ_GOLD), encoding="utf-8")
    assert detect_layout(VIZWIZ_GOLD) == ("vizwiz", "row 1 has 'image' and 'answerable'")
    items = load_gold(path, "vizwiz")
    assert [i.qid for i in items] == [g["image"] for g in VIZWIZ_GOLD]  # keyed by image, as VizWiz's scorer
    assert items[1].answers == ("coca cola",) * 4 + ("coke",) * 3 + ("soda",) * 2 + ("unanswerable",)
    assert [i.answerable for i in items] == [False, True, True, False]
    assert items[0].answer_type == "unanswerable"
    with pytest.raises(VqauditError, match=r"looks like a VizWiz gold file \(row 1 has 'image' and 'answerable'\)"):
        load_gold(path, "textvqa")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{**VIZWIZ_GOLD[0], "answerable": 2}]), encoding="utf-8")
    with pytest.raises(VqauditError, match=r"bad\.json: row 1, field 'answerable': expected 0 or 1, got 2"):
        load_gold(bad, "vizwiz")


def test_vizwiz_scorer_normalizes_the_prediction_even_against_unanimous_references() -> None:
    # vqaEval.py (a013f00) skips normalization when the ten references are identical: "Unanswerable" != 10 x
    # "unanswerable" scores 0. VizWiz's VQAEval.evaluate always normalizes the prediction (lower-cased): 1.
    ten = ["unanswerable"] * 10
    assert vqa_accuracy("Unanswerable", ten, variant="vqaeval") == 0.0
    assert vqa_accuracy("Unanswerable", ten, variant="vizwiz") == 1.0
    # The references are compared as written: a capitalised reference can never be matched.
    assert vqa_accuracy("Coke", ["Coke"] * 10, variant="vizwiz") == 0.0
    assert vqa_accuracy("Coke", ["Coke"] * 10, variant="vqaeval") == 1.0


def test_vizwiz_audit_vqa_accuracy_and_answerability(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gold = tmp_path / "val.json"
    gold.write_text(json.dumps(VIZWIZ_GOLD), encoding="utf-8")
    preds = _write_jsonl(tmp_path / "llava_vizwiz_val.jsonl", VIZWIZ_PREDICTIONS)
    out = tmp_path / "audit"
    assert (
        run_cli(
            monkeypatch,
            "audit",
            str(preds),
            "--benchmark",
            "vizwiz",
            "--gold",
            str(gold),
            "--id-field",
            "image",
            "--out",
            str(out),
        )
        == 0
    )
    report = json.loads((out / "report.json").read_text())
    assert (report["metric"], report["variant"]) == ("vqa_accuracy", "vizwiz")
    # Per row, the prediction normalized (lower-cased, periods dropped) against the references as written:
    # "unanswerable" 10 of 10 -> 1; "coke" 3 of 10 -> (3 x 2/3 + 7 x 1) / 10 = 0.9; "yes" 10 -> 1; "blue" 4 -> 1.
    assert report["scores"]["Overall"] == pytest.approx(100 * 3.9 / 4)
    # Answerability from the scores: unanswerable score 1 - answerable = 0.8, 0.1, 0.55, 0.4; predicted
    # unanswerable when > 0.5: rows 1 and 3; gold unanswerable: rows 1 and 4. tp 1, fp 1, fn 1: P = R = F1 = 1/2.
    # AP: ranked 0.8 (pos), 0.55 (neg), 0.4 (pos), 0.1 (neg): 0.5 x 1 + 0.5 x 2/3 = 5/6.
    a = report["answerability"]
    assert (a["tp"], a["fp"], a["fn"], a["decided_by"]) == (1, 1, 1, "score")
    assert (a["precision"], a["recall"], a["f1"]) == (0.5, 0.5, 0.5)
    assert a["average_precision"] == pytest.approx(5 / 6)
    text = (out / "report.md").read_text()
    assert "## Answerability" in text and "| 50.00 | 50.00 | 50.00 | 83.33 | 1 | 1 | 1 |" in text
    # Under vqaEval.py's rule the unanimous rows 1 and 3 score 0: (0 + 0.9 + 0 + 1) / 4.
    assert (
        run_cli(
            monkeypatch,
            "audit",
            str(preds),
            "--benchmark",
            "vizwiz",
            "--gold",
            str(gold),
            "--id-field",
            "image",
            "--metric-variant",
            "vqaeval",
            "--out",
            str(tmp_path / "vqaeval"),
        )
        == 0
    )
    other = json.loads((tmp_path / "vqaeval" / "report.json").read_text())
    assert other["scores"]["Overall"] == pytest.approx(100 * 1.9 / 4)


def test_answerability_without_a_score_reads_the_answers() -> None:
    # No score: a prediction is unanswerable when its normalized answer is "unanswerable" (rows 1 only here):
    # tp 1 (row 1), fp 0, fn 1 (row 4): precision 1, recall 1/2, F1 2 / 3; no average precision.
    m = unanswerable_metrics([False, True, True, False], ["Unanswerable", "Coke.", "Yes", "blue"])
    assert (m.tp, m.fp, m.fn, m.decided_by, m.average_precision) == (1, 0, 1, "answer", None)
    assert (m.precision, m.recall) == (1.0, 0.5) and m.f1 == pytest.approx(2 / 3)
    assert predicts_unanswerable("Unanswerable.") and not predicts_unanswerable("it is unanswerable")
    # Nothing predicted unanswerable: precision undefined (NaN), F1 0 as scikit-learn's f1_score gives.
    none = unanswerable_metrics([False, True], ["red", "blue"])
    assert math.isnan(none.precision) and none.recall == 0.0 and none.f1 == 0.0
    # Tied scores enter together: labels 1, 0 at 0.5 and 1 at 0.2: P 1/2 at recall 1/2, then 2/3 at 1 -> 7/12.
    assert average_precision([True, False, True], [0.5, 0.5, 0.2]) == pytest.approx(0.5 * 0.5 + 0.5 * 2 / 3)
