"""VLMEvalKit sheets whose gold is a Python-list string, and JSON files keyed by question id (docs/shortanswer.md).

The TextVQA sheet is written here in VLMEvalKit's layout from the real LLaVA-1.5-13B TextVQA val predictions
(``tests/fixtures/shortanswer/CREDITS.md``): VLMEvalKit's TextVQA TSV stores the 10 annotator answers as
``str(list)`` in its ``answer`` column, and the result sheet keeps that column. The expected 61.25 is the
published number (LLaVA's eval_textvqa.py, mmf TextVQAAccuracyEvaluator; model zoo 61.3), already reproduced
from the JSONL in ``test_published.py``; the sheet must give the same number under every variant that needs
the 10 answers.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from upd.helpers import write_xlsx
from vqaudit.errors import VqauditError
from vqaudit.shortanswer.audit import run_audit
from vqaudit.shortanswer.importers import read_predictions

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "shortanswer"


@pytest.fixture(scope="module")
def sheet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    with gzip.open(FIXTURES / "llava15_13b_textvqa_val.jsonl.gz", "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    path = tmp_path_factory.mktemp("sheet") / "llava_TextVQA_VAL.xlsx"
    return write_xlsx(
        path,
        ["index", "question", "answer", "prediction"],
        [[r["textvqa_question_id"], "q", str(r["gt_answers"]), r["prediction"]] for r in rows],
    )


@pytest.mark.slow
def test_textvqa_sheet_with_list_string_gold_reproduces_61_25(sheet: Path) -> None:
    preds = read_predictions(sheet)
    assert len(preds) == 5000 and all(len(p.gold) == 10 for p in preds)
    assert preds[0].gold[:2] == ("nous les gosses", "dakota")
    default = run_audit(sheet, "textvqa")
    assert f"{default.scores['Overall']:.2f}" == "61.25"
    vlmevalkit = run_audit(sheet, "textvqa", variant="vlmevalkit")
    assert vlmevalkit.scores["Overall"] > 60  # VLMEvalKit's own rule on the same 10 answers, no longer 0.00


def test_only_lists_of_strings_are_expanded(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text(
        "index,question,answer,prediction\n1,q,\"['a', 'b']\",a\n2,q,\"[2014, 2016]\",2014\n"
        '3,q,"[Gambia, Niger]",x\n4,q,"[__import__(\'os\')]",x\n',
        encoding="utf-8",
    )
    golds = [p.gold for p in read_predictions(path, "vlmevalkit")]
    # ChartQA's numeric and unquoted lists stay one string (the relaxed-accuracy variants decide); a call is
    # not a literal and is never evaluated.
    assert golds == [("a", "b"), ("[2014, 2016]",), ("[Gambia, Niger]",), ("[__import__('os')]",)]


def test_json_object_keyed_by_question_id_reads_like_a_list(tmp_path: Path) -> None:
    path = tmp_path / "output.json"
    path.write_text(
        json.dumps(
            {"7": {"response": "12", "answer": "12"}, "9": {"pid": "9", "response": "x", "answer": "y", "id": "nine"}}
        )
    )
    preds = read_predictions(path)
    assert [(p.qid, p.prediction, p.gold) for p in preds] == [("7", "12", ("12",)), ("nine", "x", ("y",))]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"7": "A", "8": {"response": "B"}}))
    with pytest.raises(VqauditError, match="keyed by question id"):
        read_predictions(bad)
