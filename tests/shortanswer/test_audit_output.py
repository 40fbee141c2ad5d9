"""What ``vqaudit audit`` writes and prints: the output folder, its files and messages (docs/shortanswer.md).

Every expected value says where it comes from: the documented rule (docs/shortanswer.md), a hand computation on
the few rows written here, or the formula the output had before the speed work (the output is byte-identical).
Hand computations use TextVQA's VQA accuracy (mmf_textvqa, the EvalAI evaluator): a prediction's accuracy is the
mean over the 10 leave-one-out sets of 9 annotator answers of min(1, matches / 3), so 10 of 10 matching gives 1,
1 of 10 gives 9/10 * 1/3 = 0.3 and 0 of 10 gives 0; the audit shows the mean x 100 ("points").
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
from pathlib import Path
from typing import Any

import pytest

from shortanswer.helpers import audit_folder_held, run_cli
from vqaudit.files import json_ready
from vqaudit.folder_lock import LOCK_FILE
from vqaudit.report import shortanswer as report_module
from vqaudit.report.shortanswer import result_to_json, write_audit_report
from vqaudit.shortanswer.audit import run_audit
from vqaudit.signals import sigterm_raises

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "shortanswer"
CAT10 = ["cat"] * 10
THREE = [("cat", CAT10), ("dog", ["cat"] * 9 + ["dog"]), ("x", CAT10)]  # 1, 0.3, 0 -> mean 0.4333 -> 43.33
FILES = ("report.json", "report.md", "rows.jsonl")


def _preds(path: Path, rows: list[tuple[str, list[str]]] = THREE, first_id: int = 1) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(
            json.dumps({"question_id": first_id + i, "question": f"q{i}?", "prediction": p, "gt_answers": g}) + "\n"
            for i, (p, g) in enumerate(rows)
        ),
        encoding="utf-8",
    )
    return path


def _audit(monkeypatch: pytest.MonkeyPatch, preds: Path, out: Path, *extra: str) -> int:
    return run_cli(monkeypatch, "audit", str(preds), "--benchmark", "textvqa", "--out", str(out), *extra)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != LOCK_FILE}


# 5. An interrupted re-run never leaves a folder mixing two audits -------------------------------------------------


def test_a_sigterm_while_rendering_leaves_the_previous_audit_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The trial: SIGTERM after rows.jsonl was replaced and before report.json was (6 s apart at 107k rows) left
    # the new rows beside the old report (exit 143). Here SIGTERM arrives while report.json is being rendered.
    out = tmp_path / "mix"
    first = run_audit(_preds(tmp_path / "a.jsonl"), "textvqa", model="m")
    write_audit_report(first, out)
    before = _snapshot(out)
    second = run_audit(_preds(tmp_path / "b.jsonl", [("x", CAT10)] * 3), "textvqa", model="m")

    def stopped(*args: Any, **kwargs: Any) -> dict[str, Any]:
        os.kill(os.getpid(), signal.SIGTERM)
        return result_to_json(*args, **kwargs)

    monkeypatch.setattr(report_module, "result_to_json", stopped)
    with sigterm_raises(), pytest.raises(SystemExit) as exc:  # the CLI's SIGTERM handling: SystemExit(143)
        write_audit_report(second, out)
    assert exc.value.code == 143
    assert _snapshot(out) == before  # the first audit, byte for byte, and no temporary file left behind


def test_a_sigterm_during_the_renames_waits_until_the_new_set_is_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "mix"
    write_audit_report(run_audit(_preds(tmp_path / "a.jsonl"), "textvqa", model="m"), out)
    second = run_audit(_preds(tmp_path / "b.jsonl", [("x", CAT10)] * 3), "textvqa", model="m")
    real_replace = os.replace
    calls: list[str] = []

    def replace(src: Any, dst: Any) -> None:
        if not calls:
            os.kill(os.getpid(), signal.SIGTERM)  # held back until the last rename
        calls.append(Path(dst).name)
        real_replace(src, dst)

    monkeypatch.setattr("vqaudit.files.os.replace", replace)
    with sigterm_raises(), pytest.raises(SystemExit):
        write_audit_report(second, out)
    assert calls == ["rows.jsonl", "report.md", "report.json"]  # report.json, the file the guard reads, last
    assert json.loads((out / "report.json").read_text())["scores"]["Overall"] == 0.0  # the second audit
    assert (out / "rows.jsonl").read_text().count('"official": 0.0') == 3
    assert sorted(p.name for p in out.iterdir() if p.name != LOCK_FILE) == sorted(FILES)


def test_a_writer_stopped_between_two_renames_leaves_no_report_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SIGKILL cannot be held back; a failure at the second rename stands in for it. The old report.json is
    # removed before the first rename, so the folder is visibly incomplete, not the new rows beside the old report.
    out = tmp_path / "mix"
    write_audit_report(run_audit(_preds(tmp_path / "a.jsonl"), "textvqa", model="m"), out)
    second = run_audit(_preds(tmp_path / "b.jsonl", [("x", CAT10)] * 3), "textvqa", model="m")
    real_replace = os.replace
    calls: list[str] = []

    def replace(src: Any, dst: Any) -> None:
        calls.append(Path(dst).name)
        if len(calls) == 2:
            raise OSError("killed")
        real_replace(src, dst)

    monkeypatch.setattr("vqaudit.files.os.replace", replace)
    with pytest.raises(OSError, match="killed"):
        write_audit_report(second, out)
    # no report.json, no temp files
    assert sorted(p.name for p in out.iterdir() if p.name != LOCK_FILE) == ["report.md", "rows.jsonl"]


# 6. The overwrite guard uses the model name report.json stores, and the prediction file ------------------------


def test_rerunning_a_dotted_file_into_its_folder_is_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: the guard cut at the first dot ('llava-v1') while report.json stores 'llava-v1.5-13b': refused.
    preds, out = _preds(tmp_path / "llava-v1.5-13b.jsonl"), tmp_path / "X"
    assert _audit(monkeypatch, preds, out) == 0
    assert json.loads((out / "report.json").read_text())["model"] == "llava-v1.5-13b"
    assert _audit(monkeypatch, preds, out) == 0  # docs: rerunning the same audit into its own folder is allowed
    assert "error" not in capsys.readouterr().err


def test_an_audit_into_a_folder_another_audit_is_writing_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two audits of different models started together into one --out once both passed the guard,
    # both exited 0, and only the later audit survived. Now the folder is locked from the guard to the last write.
    out = tmp_path / "X"
    with audit_folder_held(out, "vqaudit audit other.jsonl"):
        assert _audit(monkeypatch, _preds(tmp_path / "m.jsonl"), out) == 2
        err = capsys.readouterr().err
        assert "vqaudit audit other.jsonl (pid" in err and "is writing this audit folder" in err
        assert not (out / "report.json").exists() and not (out / "rows.jsonl").exists()
    assert _audit(monkeypatch, _preds(tmp_path / "m.jsonl"), out) == 0  # the lock went with its process


def test_another_model_whose_name_shares_the_first_dot_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "X"
    assert _audit(monkeypatch, _preds(tmp_path / "llava-v1.jsonl"), out) == 0
    before = _snapshot(out)
    capsys.readouterr()
    assert _audit(monkeypatch, _preds(tmp_path / "llava-v1.5-7b.jsonl", [("x", CAT10)]), out) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds the audit of 'llava-v1' on 'textvqa'; this one ('llava-v1.5-7b'" in err
    assert _snapshot(out) == before


def test_the_same_model_name_from_another_file_is_refused_unless_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    step1 = _preds(tmp_path / "runs" / "step1000" / "predictions.jsonl")
    step2 = _preds(tmp_path / "runs" / "step2000" / "predictions.jsonl", [("x", CAT10)])
    out = tmp_path / "X"
    assert _audit(monkeypatch, step1, out) == 0
    assert json.loads((out / "report.json").read_text())["predictions_file"] == str(step1.resolve())
    before = _snapshot(out)
    capsys.readouterr()
    assert _audit(monkeypatch, step2, out) == 2  # both are model 'predictions': the step1000 audit would be lost
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"made from {step1.resolve()}" in err and "--model-name predictions" in err
    assert _snapshot(out) == before
    # the same file by another path (relative, from its folder) is the same file
    monkeypatch.chdir(step1.parent)
    assert _audit(monkeypatch, Path("predictions.jsonl"), out) == 0
    # naming the model explicitly says "this is that model's audit": replaced
    assert _audit(monkeypatch, step2, out, "--model-name", "predictions") == 0
    assert json.loads((out / "report.json").read_text())["predictions_file"] == str(step2.resolve())


def test_a_report_json_without_predictions_file_keeps_the_old_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # report.json of an earlier vqaudit (no predictions_file): same model and benchmark may rewrite, as before
    out = tmp_path / "X"
    assert _audit(monkeypatch, _preds(tmp_path / "a" / "p.jsonl"), out) == 0
    report = json.loads((out / "report.json").read_text())
    del report["predictions_file"]
    (out / "report.json").write_text(json.dumps(report))
    assert _audit(monkeypatch, _preds(tmp_path / "b" / "p.jsonl"), out) == 0


# 7. Files the audit did not write are never overwritten ------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("report.md", "# My notes\n", "report.md: exists and was not written by `vqaudit audit`"),
        ("rows.jsonl", "a,b\n1,2\n", "rows.jsonl: exists and was not written by `vqaudit audit`"),
        ("rows.jsonl", '{"id": 1}\n', "rows.jsonl: exists and was not written by `vqaudit audit`"),
        ("report.json", '{"title": "mine"}\n', "report.json: exists and is not the report.json of a `vqaudit audit`"),
        ("report.json", "[1, 2]\n", "report.json: exists and is not the report.json of a `vqaudit audit`"),
        ("report.json", "not json\n", "report.json: exists and is not the report.json of a `vqaudit audit`"),
    ],
)
def test_a_folder_holding_the_users_own_files_is_refused(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    text: str,
    message: str,
) -> None:
    # Before: only report.json was checked (and a foreign one read "holds the audit of None on None").
    out = tmp_path / "X"
    out.mkdir()
    (out / name).write_text(text)
    assert _audit(monkeypatch, _preds(tmp_path / "p.jsonl"), out) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "None" not in err
    assert _snapshot(out) == {name: text.encode()}


def test_an_audit_folder_without_its_report_json_may_be_rewritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # what a writer killed between two renames leaves (report.md and rows.jsonl of an audit, no report.json)
    out = tmp_path / "X"
    assert _audit(monkeypatch, _preds(tmp_path / "p.jsonl"), out) == 0
    (out / "report.json").unlink()
    assert _audit(monkeypatch, _preds(tmp_path / "p.jsonl"), out) == 0
    assert sorted(p.name for p in out.iterdir() if p.name != LOCK_FILE) == sorted(FILES)


# 14. Writing costs little and writes the same bytes ---------------------------------------------------------------


def _old_rows_jsonl(result: Any) -> str:
    """rows.jsonl by the formula of write_audit_report before the speed work (commit 9a0bf00)."""
    joined = {row.qid: row for row in result.join.rows}
    lines = []
    for row in result.rows:
        rec = json_ready(dataclasses.asdict(row))
        source = joined[row.qid]
        rec["question"] = source.question
        rec["prediction"] = source.prediction
        rec["answers"] = list(source.answers)
        rec["canonical_answers"] = rec.pop("overlay")
        lines.append(json.dumps(rec, ensure_ascii=False, sort_keys=True))
    return "".join(line + "\n" for line in lines)


def _old_report(result: Any) -> dict[str, Any]:
    """report.json's data by the formula before the speed work (every row copied by asdict, then dropped)."""
    data = dataclasses.asdict(result)
    data.pop("rows")
    if data["harness_scores"] is None:  # a field added later, written only when a harness's number differs
        data.pop("harness_scores")
    if data["answerability"] is None:  # added later, written only where it applies (VizWiz): old reports unchanged
        data.pop("answerability")
    join = data.pop("join")
    data["join"] = {
        "joined": len(join["rows"]),
        "predictions_without_gold": join["predictions_without_gold"],
        "gold_without_predictions": join["gold_without_predictions"],
        "gold_source": join["gold_source"],
        "notes": join["notes"],
    }
    old: dict[str, Any] = json_ready(data)
    return old


@pytest.mark.parametrize(
    ("name", "bench"), [("vila15_13b_chartqa_test.xlsx", "chartqa"), ("mocr_mplugowl_docvqa_val.json.gz", "docvqa")]
)
def test_rows_and_report_are_the_bytes_of_the_old_formula(tmp_path: Path, name: str, bench: str) -> None:
    result = run_audit(FIXTURES / name, bench)
    write_audit_report(result, tmp_path)
    assert (tmp_path / "rows.jsonl").read_text(encoding="utf-8") == _old_rows_jsonl(result)
    assert result_to_json(result) == _old_report(result)
    written = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert written == _old_report(result)  # no predictions_file unless the caller gives one
    path = tmp_path / "p.jsonl"
    assert result_to_json(result, predictions=path) == {**_old_report(result), "predictions_file": str(path)}


def test_rows_with_nan_scores_and_odd_text_match_the_old_formula(tmp_path: Path) -> None:
    # NaN becomes null, lone surrogates and non-ASCII text as before; more rows than one write chunk
    result = run_audit(
        _preds(tmp_path / "p.jsonl", [("caf\u00e9 \ud800", CAT10), ("dog", CAT10)] * 6000), "textvqa", model="m"
    )
    rows = tuple(
        dataclasses.replace(r, official=float("nan"), repaired={**r.repaired, "x": float("nan")}) if i % 7 == 0 else r
        for i, r in enumerate(result.rows)
    )
    result = dataclasses.replace(result, rows=rows)
    write_audit_report(result, tmp_path / "out")
    expected = _old_rows_jsonl(result).replace("\ud800", "\\ud800").encode("utf-8")  # atomic_write_text's rule
    assert (tmp_path / "out" / "rows.jsonl").read_bytes() == expected


# 10. The unit of the scores ---------------------------------------------------------------------------------------


def test_report_md_says_scores_are_points(tmp_path: Path) -> None:
    text = report_module.render_markdown(run_audit(_preds(tmp_path / "p.jsonl"), "textvqa", model="m"))
    # (1 + 0.3 + 0) / 3 = 0.4333 (hand computation, module docstring) -> 43.33 points
    assert (
        "Scores in points: the mean per-row VQA accuracy (0 to 1) x 100 (Overall 43.33 = mean VQA accuracy 0.4333)."
    ) in text
    assert "| official | 43.33 |" in text  # the numbers themselves unchanged
    # ANLS, the trial's case: 1 exact answer of 4, the others at normalized distance 1 -> mean ANLS 0.25
    anls = tmp_path / "d.jsonl"
    anls.write_text(
        "".join(
            json.dumps({"questionId": i, "prediction": p, "answers": ["abc"]}) + "\n"
            for i, p in enumerate(["abc", "xyz", "xyz", "xyz"], start=1)
        ),
        encoding="utf-8",
    )
    text = report_module.render_markdown(run_audit(anls, "docvqa", model="m"))
    assert "Scores in points: the mean per-row ANLS (0 to 1) x 100 (Overall 25.00 = mean ANLS 0.25)." in text


def test_the_html_report_shows_the_digits_of_report_md(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "X"
    assert _audit(monkeypatch, _preds(tmp_path / "p.jsonl"), out) == 0
    assert run_cli(monkeypatch, "report", str(out), "--out", str(tmp_path / "r")) == 0
    html = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert "<td>43.33</td>" in html and "<td>43.3</td>" not in html  # report.md: 43.33
    assert "Scores in points" in html


# 4. Gold questions without a prediction ---------------------------------------------------------------------------


def test_missing_predictions_print_a_warning_and_exit_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    gold = tmp_path / "gold.json"
    gold.write_text(
        json.dumps({"data": [{"question_id": i, "question": f"q{i - 1}?", "answers": CAT10} for i in (1, 2, 3)]}),
        encoding="utf-8",
    )
    preds = tmp_path / "p.jsonl"
    preds.write_text(
        "".join(json.dumps({"question_id": i, "prediction": "cat"}) + "\n" for i in (1, 2)), encoding="utf-8"
    )
    assert _audit(monkeypatch, preds, tmp_path / "X", "--gold", str(gold)) == 0  # LLaVA's script does the same
    captured = capsys.readouterr()
    assert (
        f"warning: 1 gold question of {gold} has no prediction in {preds}; the scores average the 2 joined rows only\n"
    ) in captured.err
    assert "| official | 100.00 |" in captured.out
    # all gold answered: no warning
    assert _audit(monkeypatch, _preds(tmp_path / "q.jsonl"), tmp_path / "Y") == 0
    assert "warning" not in capsys.readouterr().err


# 17. --help --------------------------------------------------------------------------------------------------------


def test_audit_help_says_columns_default_out_units_and_xlsx_gz(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert run_cli(monkeypatch, "audit", "--help") == 0
    text = " ".join(re.sub(r"[│╭╮╰╯─]", " ", capsys.readouterr().out).split())
    for said in (
        "question_id, questionId",
        "prediction, pred, text",
        "gt_answers, answers",
        "beside the prediction file",
        "Scores are in points",
        ".xlsx (each optionally .gz)",
    ):
        assert said in text
    for name in ("textvqa", "docvqa", "infovqa", "chartqa-human", "chartqa-machine", "mathvista"):
        assert re.search(rf"(^|[ ,:]){re.escape(name)}[,;]", text), name  # whole, not wrapped mid-word
    assert run_cli(monkeypatch, "report", "--help") == 0
    text = " ".join(re.sub(r"[│╭╮╰╯─]", " ", capsys.readouterr().out).split())
    assert "`vqaudit audit` folders appear in index.html only" in text


def test_the_multiple_choice_branch_keeps_the_same_guard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: `audit --benchmark mmbench` checked nothing and overwrote any report.md / rows.jsonl / report.json.
    sheet = tmp_path / "mc.csv"
    sheet.write_text("index,question,A,B,answer,prediction\n1,q,x,y,A,A\n2,q,x,y,B,A\n", encoding="utf-8")

    def mc(out: Path) -> int:
        return run_cli(monkeypatch, "audit", str(sheet), "--benchmark", "mmbench", "--out", str(out))

    own = tmp_path / "own"
    own.mkdir()
    (own / "report.md").write_text("# My notes\n")
    assert mc(own) == 2 and "report.md: exists and was not written by `vqaudit audit`" in capsys.readouterr().err
    assert _snapshot(own) == {"report.md": b"# My notes\n"}
    short = tmp_path / "short"
    assert _audit(monkeypatch, _preds(tmp_path / "p.jsonl"), short) == 0
    before = _snapshot(short)
    capsys.readouterr()
    assert mc(short) == 2 and "holds the audit of 'p' on 'textvqa'" in capsys.readouterr().err
    assert _snapshot(short) == before
    folder = tmp_path / "mc"
    assert mc(folder) == 0 and mc(folder) == 0  # rerunning the same multiple-choice audit is allowed
    capsys.readouterr()
    assert _audit(monkeypatch, _preds(tmp_path / "p.jsonl"), folder) == 2
    assert "holds the multiple-choice audit of 'mc.csv' on 'mmbench'" in capsys.readouterr().err
