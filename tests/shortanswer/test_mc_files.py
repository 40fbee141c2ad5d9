"""Published multiple-choice files audited as they are: defective rows, VLMEvalKit MMMU sheets, MathVista's fields.

Every file below is written for the test in its harness's real layout (VLMEvalKit's MMMU sheet: ``index``,
``question``, ``A``-``D``, ``answer``, ``prediction``, open questions with empty options, as its ``MMMU_preproc``
expects; MMMU's ``output.json``; MathVista's pid-keyed output with ``response`` and ``extraction``), and every
expected number is worked out by hand in the comments from the rules of MMMU's ``mmmu/utils/eval_utils.py``
(commit bb0b95a) and MathVista's ``evaluation/calculate_score.py`` (commit 53d5258), restated in
``src/vqaudit/shortanswer/mc_open.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.shortanswer.helpers import run_cli
from tests.upd.helpers import write_xlsx
from typer.testing import CliRunner

from vqaudit.cli import app
from vqaudit.errors import VqauditError
from vqaudit.shortanswer.mc_open import (
    edit_distance,
    mathvista_choice,
    mathvista_from_extraction,
    mathvista_from_reply,
    mmmu_eval_open,
    mmmu_parse_open,
)
from vqaudit.shortanswer.mc_read import read_mc_file
from vqaudit.shortanswer.multichoice import run_mc_audit

_SHEET_HEADER = ["index", "question", "A", "B", "C", "D", "answer", "prediction", "category"]
_SHEET_ROWS: list[list[object]] = [
    # 1: choice, "The answer is (B)." -> B = gold: right
    [1, "Which?", "w", "x", "y", "z", "B", "The answer is (B).", "Art"],
    # 2: option D empty while the gold is D (the option text lost upstream): defective, left out
    [2, "Which?", "w", "x", "y", "", "D", "D", "Art"],
    # 3: open (no options): "so the total is 24 dollars" -> shortest tail "24 dollars" (after "is "), its number
    #    24.0 = the gold 24.0: right
    [3, "How much?", "", "", "", "", "24", "So the total is 24 dollars.", "Econ"],
    # 4: choice, "A" while the gold is C: wrong
    [4, "Which?", "w", "x", "y", "", "C", "A", "Art"],
    # 5: open: "i think it could be london" -> "london" holds no "paris": wrong
    [5, "Capital?", "", "", "", "", "Paris", "I think it could be London.", "Geo"],
]


def _sheet(tmp_path: Path, suffix: str) -> Path:
    path = tmp_path / f"VILA_MMMU_DEV_VAL{suffix}"
    if suffix == ".xlsx":
        return write_xlsx(path, _SHEET_HEADER, _SHEET_ROWS)
    lines = ["\t".join(_SHEET_HEADER)] + ["\t".join(str(v) for v in row) for row in _SHEET_ROWS]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", [".xlsx", ".tsv"])
def test_a_vlmevalkit_mmmu_sheet_is_read_and_its_defective_row_left_out(tmp_path: Path, suffix: str) -> None:
    summary, rows = run_mc_audit(_sheet(tmp_path, suffix), "mmmu")
    assert summary["layout"] == "vlmevalkit-mmmu" and summary["read_field"] == "prediction"
    # choice rows 1 and 4: one right; open rows 3 and 5: one right; overall 2 of 4
    assert (summary["choice"]["rows"], summary["choice"]["correct"]) == (2, 1)
    assert (summary["open"]["rows"], summary["open"]["correct"]) == (2, 1)
    assert summary["overall"] == {"rows": 4, "correct": 2, "accuracy": 0.5}
    assert summary["defects"] == {
        "excluded": 1,
        "of": 5,
        "rows": [
            {
                "file": f"VILA_MMMU_DEV_VAL{suffix}",
                "row": 2,
                "id": "2",
                "field": "answer",
                "reason": "the gold D is not among the options (A, B, C): option D is empty or missing",
            }
        ],
    }
    assert [r["id"] for r in rows] == ["1", "3", "4", "5"]
    assert {r["id"]: r["extracted"] for r in rows}["3"] == "24 dollars | 24.0"


def test_the_cli_warns_once_reports_the_defect_and_exits_0_and_strict_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sheet = _sheet(tmp_path, ".xlsx")
    res = CliRunner().invoke(app, ["audit", str(sheet), "--benchmark", "mmmu", "--out", str(tmp_path / "a")])
    assert res.exit_code == 0, res.output
    warnings = [line for line in res.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: 1 of 5 rows of {sheet} excluded as defective (first: row 2, field 'answer': the "
        "gold D is not among the options (A, B, C): option D is empty or missing); listed in "
        f"{tmp_path / 'a' / 'report.md'}; --strict refuses the file instead"
    ]
    md = (tmp_path / "a" / "report.md").read_text()
    assert "**1 of 5 rows excluded as defective**" in md
    assert "| VILA_MMMU_DEV_VAL.xlsx | 2 | 2 | answer | the gold D is not among the options" in md
    assert "Overall accuracy (choice and open rows together, the benchmark's headline): 50.00 (2 of 4)" in md
    report = json.loads((tmp_path / "a" / "report.json").read_text())
    assert report["defects"]["rows"][0]["row"] == 2
    assert (
        run_cli(monkeypatch, "audit", str(sheet), "--benchmark", "mmmu", "--strict", "--out", str(tmp_path / "b")) == 2
    )
    assert capsys.readouterr().err.strip() == (
        f"error: {sheet}: row 2, field 'answer': the gold D is not among the options (A, B, C): option D "
        "is empty or missing"
    )


def test_mmmu_output_json_counts_rows_as_the_sheet_does(tmp_path: Path) -> None:
    four = ["A", "B", "C", "D"]
    records = [
        {
            "id": "v_1",
            "question_type": "multiple-choice",
            "answer": "A",
            "all_choices": four,
            "index2ans": {c: f"t{c}" for c in four},
            "response": "A",
        },
        # the gold option's text is empty: defective, data row 2 as in the sheet
        {
            "id": "v_2",
            "question_type": "multiple-choice",
            "answer": "D",
            "all_choices": four,
            "index2ans": {"A": "1", "B": "2", "C": "3", "D": ""},
            "response": "D",
        },
    ]
    path = tmp_path / "output.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    read = read_mc_file(path, "mmmu")
    assert [(d.row, d.qid, d.field, d.reason) for d in read.defects] == [
        (2, "v_2", "answer", "the gold D names option D, which is empty")
    ]
    with pytest.raises(VqauditError, match=r"output.json: row 2, field 'answer': the gold D names option D"):
        read_mc_file(path, "mmmu", strict=True)


def test_an_open_question_as_vlmevalkit_s_mmmu_preproc_rewrote_it_is_read_back_as_open(tmp_path: Path) -> None:
    # VLMEvalKit's evaluated sheet: A = the open answer's text, B = "Other Answers", the answer cell "A"
    path = tmp_path / "MMMU_result.tsv"
    path.write_text(
        "index\tquestion\tA\tB\tC\tanswer\tprediction\n"
        "1\tHow far?\t3.5\tOther Answers\t\tA\tThe distance is 3.50 km.\n"
        "2\tWhich?\tx\ty\tz\tC\tC\n",
        encoding="utf-8",
    )
    summary, rows = run_mc_audit(path, "mmmu")
    # row 1: open, gold 3.5; "the distance is 3.50 km" -> "3.50 km" and 3.5 = 3.5: right; row 2 a choice, right
    assert (summary["open"]["rows"], summary["open"]["correct"]) == (1, 1)
    assert (summary["choice"]["rows"], summary["choice"]["correct"]) == (1, 1)
    assert rows[0]["gold"] == "3.5" and rows[0]["kind"] == "open"


def test_a_sheet_of_another_layout_under_mmmu_points_to_mc(tmp_path: Path) -> None:
    path = tmp_path / "other.tsv"
    path.write_text("index\tquestion\tanswer\tprediction\n1\tq\tB\tB\n", encoding="utf-8")
    with pytest.raises(
        VqauditError,
        match=r"other.tsv: row 1, field 'A': neither an MMMU output.json record .*"
        r"use --benchmark mc",
    ):
        read_mc_file(path, "mmmu")


def _mathvista(tmp_path: Path) -> Path:
    def row(pid: str, **kw: object) -> dict[str, object]:
        base: dict[str, object] = {
            "pid": pid,
            "question": "q",
            "choices": None,
            "question_type": "free_form",
            "answer_type": "integer",
            "precision": None,
        }
        return {**base, **kw}

    mc: dict[str, object] = {"question_type": "multi_choice", "answer_type": "text"}
    data = {
        # choice, "B" both ways: right both ways
        "1": row("1", choices=["2", "3", "4"], answer="3", response="B", extraction="B", **mc),
        # two identical choices, the gold among them: defective
        "2": row("2", choices=["red", "blue", "red"], answer="red", response="A", extraction="A", **mc),
        # integer: "1,000 g" -> 1000 (units and commas dropped) = "1000"; the extraction "1000" too
        "3": row("3", answer="1000", response="The cup holds 1,000 g.", extraction="1000"),
        # float at 2 places: 1.249 -> str(round(1.249, 2)) = "1.25" = the gold, both ways
        "4": row(
            "4", answer="1.25", answer_type="float", precision=2, response="So the ratio is 1.249.", extraction="1.249"
        ),
        # choice: the reply says (B) smaller, the upstream extraction says "larger" (nearest choice: A): right from
        # the response, wrong from the extraction
        "5": row(
            "5",
            choices=["larger", "smaller"],
            answer="smaller",
            response="The answer is (B) smaller.",
            extraction="larger",
            **mc,
        ),
        # list: the bracketed list "[1, 2]" = the gold, both ways
        "6": row("6", answer="[1, 2]", answer_type="list", response="The roots are [1, 2].", extraction="[1, 2]"),
        # no reply: no answer, wrong
        "7": row("7", answer="7", response="", extraction=""),
    }
    path = tmp_path / "output_model.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_mathvista_reads_the_raw_response_by_default_and_the_extraction_on_request(tmp_path: Path) -> None:
    path = _mathvista(tmp_path)
    summary, rows = run_mc_audit(path, "mathvista")
    assert summary["read_field"] == "response"
    # response: choice rows 1, 5 right; free-form 3, 4, 6 right, 7 not; overall 5 of 6 (row 2 defective)
    assert (summary["choice"]["correct"], summary["open"]["correct"], summary["open"]["rows"]) == (2, 3, 4)
    assert summary["overall"] == {"rows": 6, "correct": 5, "accuracy": 5 / 6}
    assert summary["defects"]["rows"] == [
        {
            "file": "output_model.json",
            "row": 2,
            "id": "2",
            "field": "answer",
            "reason": "the gold 'red' is the text of options A, C (duplicate choices)",
        }
    ]
    assert {r["id"]: r["extracted"] for r in rows}["4"] == "1.25"
    summary, rows = run_mc_audit(path, "mathvista", read="extraction")
    assert summary["read_field"] == "extraction"
    # extraction: row 5 becomes A (the choice nearest "larger"), wrong; overall 4 of 6
    assert summary["overall"] == {"rows": 6, "correct": 4, "accuracy": 4 / 6}
    by_id = {r["id"]: r for r in rows}
    assert (by_id["5"]["extracted"], by_id["5"]["extracted_by"]) == ("A", "extraction:nearest")
    assert (by_id["1"]["extracted"], by_id["1"]["extracted_by"]) == ("B", "extraction:letter")


def test_mathvista_cli_names_the_field_read_and_read_is_refused_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _mathvista(tmp_path)
    res = CliRunner().invoke(
        app, ["audit", str(path), "--benchmark", "mathvista", "--read", "extraction", "--out", str(tmp_path / "a")]
    )
    assert res.exit_code == 0, res.output
    assert "Replies read from the field `extraction` (MathVista's own extracted answer" in res.stdout
    assert "Overall accuracy (choice and open rows together, the benchmark's headline): 66.67 (4 of 6)" in res.stdout
    assert (
        run_cli(
            monkeypatch, "audit", str(path), "--benchmark", "mc", "--read", "extraction", "--out", str(tmp_path / "b")
        )
        == 2
    )
    assert "--read applies only to --benchmark mathvista (not --benchmark mc)" in capsys.readouterr().err


def test_mathvista_answer_type_rules() -> None:
    # calculate_score.py: integer str(int(float(x))) truncates, float rounds at `precision`
    assert mathvista_from_reply("x = 2.7", answer_type="integer", precision=None) == "2"
    assert mathvista_from_reply("Final answer: 3.14159 cm", answer_type="float", precision=2) == "3.14"
    assert mathvista_from_reply("\\boxed{12} apples, not 13", answer_type="integer", precision=None) == "12"
    assert mathvista_from_reply("I cannot tell.", answer_type="integer", precision=None) is None
    # the extraction is read as MathVista reads it: "1,000" is no float there, so no answer
    assert mathvista_from_extraction("1,000", choices=(), gold="1000", answer_type="integer", precision=None) == (
        None,
        False,
    )
    assert mathvista_choice("(c) blue", ["red", "green", "blue"]) == (2, True)
    assert mathvista_choice("gren", ["red", "green", "blue"]) == (1, False)  # edit distance 1
    assert edit_distance("kitten", "sitting") == 3


def test_mmmu_open_rules() -> None:
    # "the answer is 5" -> tails "is 5" (after "answer ") and "5" (after "is "): the shortest, 5.0
    assert mmmu_parse_open("The answer is 5.") == [5.0]
    assert mmmu_eval_open(["5"], mmmu_parse_open("The answer is 5.")) is True
    assert mmmu_eval_open(["5.001"], [5.0]) is True  # both rounded to 2 places
    # a one-letter gold must stand alone: " a" / "a " in the prediction
    assert mmmu_eval_open(["a"], mmmu_parse_open("Thus the answer is a")) is True
    assert mmmu_eval_open(["a"], mmmu_parse_open("banana")) is False
    # text golds match by containment (MMMU's rule): "cat" is in "concatenate"
    assert mmmu_eval_open(["cat"], mmmu_parse_open("so it is concatenate")) is True
    # several gold forms: any one
    assert mmmu_eval_open(["Paris", "paris, france"], mmmu_parse_open("Paris, France")) is True
    assert mmmu_parse_open("") == []


def test_a_gap_in_the_options_is_a_defect_and_a_file_of_defects_only_is_refused(tmp_path: Path) -> None:
    gap = tmp_path / "gap.csv"
    gap.write_text("index,question,A,B,C,answer,prediction\n1,q,x,,z,A,A\n2,q,x,y,z,B,B\n", encoding="utf-8")
    read = read_mc_file(gap, "mc")
    assert [r.qid for r in read.rows] == ["2"]
    assert [(d.row, d.field, d.reason) for d in read.defects] == [
        (1, "B", "option B is empty but a later option is set")
    ]
    only = tmp_path / "only.csv"
    only.write_text("index,question,A,B,C,answer,prediction\n1,q,x,,z,A,A\n", encoding="utf-8")
    with pytest.raises(
        VqauditError,
        match=r"only.csv: row 1, field 'B': option B is empty but a later option is "
        r"set; the file's only row is defective: nothing to score",
    ):
        read_mc_file(only, "mc")


def test_strict_and_read_are_refused_by_a_short_answer_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"question_id": "1", "prediction": "a", "answer": "a"}) + "\n", encoding="utf-8")
    assert (
        run_cli(monkeypatch, "audit", str(path), "--benchmark", "chartqa", "--strict", "--out", str(tmp_path / "a"))
        == 2
    )
    assert "--strict applies only to a multiple-choice audit" in capsys.readouterr().err
