"""Multiple-choice prediction audits from the command line (docs/shortanswer.md).

Expected values:
- LLaVA-1.5-13B on MMBench dev, CircularEval 67.7 (LLaVA model zoo; 796 of 1,176 questions right in every
  circular copy = 67.69%; ``tests/fixtures/upd/CREDITS.md``), from the real result sheet ``.xlsx``;
- the hand-made MMMU and MathVista files below, whose counts are worked out by hand in the comments.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vqaudit.backends.base import Request
from vqaudit.cli import app
from vqaudit.errors import VqauditError
from vqaudit.shortanswer.mc_extract import final_answer_letter, is_refusal
from vqaudit.shortanswer.mc_read import read_mc_predictions
from vqaudit.shortanswer.multichoice import run_mc_audit

UPD_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "upd"


def test_cli_reproduces_the_published_mmbench_circular_67_7(tmp_path: Path) -> None:
    sheet = UPD_FIXTURES / "llava15_13b_mmbench_dev.xlsx"
    res = CliRunner().invoke(app, ["audit", str(sheet), "--benchmark", "mmbench", "--out", str(tmp_path / "a")])
    assert res.exit_code == 0, res.output
    report = json.loads((tmp_path / "a" / "report.json").read_text())
    circ = report["circular"]
    assert (circ["groups"], circ["right"]) == (1176, 796)
    assert f"{100 * circ['accuracy']:.1f}" == "67.7" and f"{100 * circ['accuracy']:.2f}" == "67.69"
    assert report["choice"]["rows"] == 4377 and report["choice"]["unparsed"] == 0
    assert "| 1176 | 796 | 67.69 |" in res.output
    assert len((tmp_path / "a" / "rows.jsonl").read_text().splitlines()) == 4377


def _mmmu(tmp_path: Path) -> Path:
    nine = {c: f"option {c}" for c in "ABCDEFGHI"}
    records = [
        {
            "id": "v_1",
            "question_type": "multiple-choice",
            "answer": "I",
            "all_choices": list(nine),
            "index2ans": nine,
            "response": "I",
        },  # strict, right
        {
            "id": "v_2",
            "question_type": "multiple-choice",
            "answer": "B",
            "all_choices": ["A", "B", "C", "D"],
            "index2ans": {c: f"t{c}" for c in "ABCD"},
            "response": "Looking at the graph, A seems low. The answer is (B).",
        },  # final-answer, right
        {
            "id": "v_3",
            "question_type": "multiple-choice",
            "answer": "C",
            "all_choices": ["A", "B", "C"],
            "index2ans": {"A": "cat", "B": "dog", "C": "bird"},
            "response": "I cannot tell from this image.",
        },
        {
            "id": "v_4",
            "question_type": "multiple-choice",
            "answer": "A",
            "all_choices": ["A", "B"],
            "index2ans": {"A": "yes", "B": "no"},
            "response": "Final answer: B",
        },  # final-answer, wrong
        {
            "id": "v_5",
            "question_type": "multiple-choice",
            "answer": "A",
            "all_choices": ["A", "B"],
            "index2ans": {"A": "yes", "B": "no"},
            "response": "maybe",
        },  # unparsed, not a refusal
        {"id": "v_6", "question_type": "open", "answer": "12.5", "response": "The length is 12.50 cm."},
        {"id": "v_7", "question_type": "open", "answer": ["Paris", "paris, france"], "response": "London"},
    ]
    path = tmp_path / "output.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def test_mmmu_raw_replies_accuracy_over_all_and_parsed_rows(tmp_path: Path) -> None:
    summary, rows = run_mc_audit(_mmmu(tmp_path), "mmmu")
    c = summary["choice"]
    # 5 choice rows; parsed: v_1 (strict), v_2, v_4 (final-answer) = 3; right: v_1, v_2 = 2.
    assert (c["rows"], c["parsed"], c["unparsed"], c["refusals"], c["correct"]) == (5, 3, 2, 1, 2)
    assert c["accuracy_all"] == pytest.approx(2 / 5) and c["accuracy_parsed"] == pytest.approx(2 / 3)
    assert c["extracted_by"] == {"final-answer": 2, "strict": 1, "unparsed": 2}
    # open rows apart, by MMMU's eval_open: "the length is 12.50 cm" -> the tail after "is ", "12.50 cm", and its
    # number 12.5 (rounded to 2 places) = the gold 12.5; "london" holds neither "paris" nor "paris, france".
    assert summary["open"] == {"rows": 2, "answered": 2, "refusals": 0, "correct": 1, "accuracy": 0.5}
    assert "circular" not in summary
    assert [r["extracted"] for r in rows] == ["I", "B", None, "B", None, "12.50 cm | 12.5", "london"]
    # MMMU's headline: 3 of 7 rows right (v_1, v_2, v_6)
    assert summary["overall"] == {"rows": 7, "correct": 3, "accuracy": 3 / 7}
    assert summary["read_field"] == "response" and summary["layout"] == "mmmu-output"


def test_mathvista_pid_keyed_json(tmp_path: Path) -> None:
    data = {
        "1": {
            "pid": "1",
            "question": "Which is larger?",
            "choices": ["larger than", "equal to", "smaller than"],
            "answer": "equal to",
            "question_type": "multi_choice",
            "answer_type": "text",
            "precision": None,
            "response": "(B) equal to",
        },  # strict letter prefix, right
        "2": {
            "pid": "2",
            "question": "Volume?",
            "choices": None,
            "answer": "1000",
            "question_type": "free_form",
            "answer_type": "integer",
            "precision": None,
            "response": "The cup holds 1,000 g.",
        },
        "3": {
            "pid": "3",
            "question": "d?",
            "choices": None,
            "answer": "1.2",
            "question_type": "free_form",
            "answer_type": "float",
            "precision": 1.0,
            "response": "d = 1.23 m",
        },  # 1.23 -> 1.2 at 1 place
        "4": {
            "pid": "4",
            "question": "x?",
            "choices": None,
            "answer": "3",
            "question_type": "free_form",
            "answer_type": "integer",
            "precision": None,
            "response": "Sorry, I can't see the figure.",
        },
    }
    path = tmp_path / "output_bard.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    summary, _ = run_mc_audit(path, "mathvista")
    assert summary["choice"]["rows"] == 1 and summary["choice"]["correct"] == 1
    assert summary["open"] == {"rows": 3, "answered": 2, "refusals": 1, "correct": 2, "accuracy": 2 / 3}


def test_an_answer_that_is_no_option_names_file_row_and_field(tmp_path: Path) -> None:
    data = {
        "1": {"question": "q", "choices": ["a", "b"], "answer": "c", "question_type": "multi_choice", "response": "A"}
    }
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(VqauditError, match=r"bad.json: row 1, field 'answer': 'c' is neither a letter"):
        read_mc_predictions(path, "mathvista")
    gap = tmp_path / "gap.csv"
    gap.write_text("index,question,A,B,C,answer,prediction\n1,q,x,,z,A,A\n", encoding="utf-8")
    with pytest.raises(VqauditError, match=r"gap.csv: row 1, field 'B': option B is empty"):
        read_mc_predictions(gap, "mc")


def test_final_answer_rules() -> None:
    assert final_answer_letter("so \\boxed{C}", "ABCD") == "C"
    assert final_answer_letter("Answer: **D**", "ABCD") == "D"
    assert final_answer_letter("The answer is A. No wait, the answer is (C).", "ABCD") == "C"
    assert final_answer_letter("The answer is a cat", "ABCD") is None  # lower-case: a word, not a letter
    assert final_answer_letter("Reasoning...\nB", "ABCD") == "B"
    assert final_answer_letter("Answer: E", "ABCD") is None  # not an option
    assert is_refusal("I cannot answer") and is_refusal("Unanswerable") and not is_refusal("B")


class _Judge:
    spec = "stub:judge"

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def complete(self, request: Request) -> str:
        self.asked.append(request.request_id)
        return "A"

    async def aclose(self) -> None:
        return None


def test_the_judge_sees_only_what_the_rules_cannot_decide(tmp_path: Path) -> None:
    judge = _Judge()
    summary, rows = run_mc_audit(
        _mmmu(tmp_path),
        "mmmu",
        judge="stub:judge",
        judge_backend=judge,  # type: ignore[arg-type]
        cache_dir=tmp_path / "cache",
    )
    # only v_5: v_3 ("I cannot tell from this image.") is an abstention the rules read (the abstention
    # phrases of docs/upd.md), and v_1, v_2, v_4 and the open rows are decided before any judge
    assert judge.asked == ["v_5"]
    by_id_first = {r["id"]: r for r in rows}
    assert by_id_first["v_3"]["extracted"] is None and by_id_first["v_3"]["refusal"] is True
    by_id = {r["id"]: r for r in rows}
    assert by_id["v_5"]["extracted"] == "A" and by_id["v_5"]["correct"] is True
    assert by_id["v_5"]["extracted_by"] == "judge:stub:judge"
    assert summary["choice"]["correct"] == 3
