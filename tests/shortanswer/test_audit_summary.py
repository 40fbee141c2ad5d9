"""``vqaudit audit-summary``: seed 002 Tables 2-7 across audits, checked against hand computations.

Four small judged audits (exact match, so every row scores 0 or 1) are built with ``audit_rows`` and written
with ``write_audit_report``; two scripted judges decide the error pools. Row behaviour used below (each checked
in ``test_row_behaviour_the_hand_computations_rest_on``): "4" is right for gold "4"; "The answer is 4." is an
official error that the canonical layer and output-only repair both fix (a sentence wrapper, Table 12); "Blue"
for gold "blue" is an official error the canonical layer fixes (one-sided normalization) and no repair changes;
"C5" for gold "C-5" is fixed by reference-only repair only (overlay form "C5"); "9" and "red" stay wrong.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest

from shortanswer.helpers import ScriptedBackend, gap_perturb_args, perturb_folder, run_cli
from vqaudit.backends import Request
from vqaudit.report.audit_inputs import read_audit, read_perturbation
from vqaudit.report.audit_pooling import pearson_r
from vqaudit.report.audit_summary import summarize_audits
from vqaudit.report.shortanswer import write_audit_report
from vqaudit.shortanswer.audit import audit_rows, run_audit
from vqaudit.shortanswer.records import AuditRow, JoinReport

FIXTURES = Path(__file__).parent.parent / "fixtures" / "shortanswer"
QUESTIONS = {"s": ("How many cats?", "4"), "o": ("What colour is the car?", "blue"), "i": ("Where is the gym?", "C-5")}


def _norm(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _field(prompt: str, name: str) -> str:
    return prompt.split(f"{name}: ")[1].split("\n")[0]


def judge_one(request: Request) -> str:
    """Accepts when the gold (letters and digits only) occurs in the output: wrappers, case, "C5"."""
    return (
        "yes"
        if _norm(_field(request.prompt, "Reference answer(s)")) in _norm(_field(request.prompt, "Model answer"))
        else "no"
    )


def judge_two(request: Request) -> str:
    """Judge one, plus it also accepts "red" (the one place the two judges disagree)."""
    return "yes" if _field(request.prompt, "Model answer") == "red" else judge_one(request)


# (model, benchmark) -> the item kinds (s scalar, o other-open, i identifier) and the predictions.
AUDITS = {
    ("m1", "docvqa"): ("sssooo", ["4", "The answer is 4.", "9", "blue", "Blue", "red"]),
    ("m2", "docvqa"): ("sssooo", ["4", "4", "9", "Blue", "red", "red"]),
    ("m1", "infovqa"): ("ssoo", ["The answer is 4.", "9", "Blue", "Blue"]),
    ("m1", "stvqa"): ("sio", ["9", "C5", "red"]),
}


def _rows(kinds: str, preds: list[str], bench: str) -> tuple[AuditRow, ...]:
    return tuple(
        AuditRow(f"{k}{i}", QUESTIONS[k][0], p, (QUESTIONS[k][1],), bench)
        for i, (k, p) in enumerate(zip(kinds, preds, strict=True))
    )


def _audit(tmp: Path, model: str, bench: str, kinds: str, preds: list[str], *, judge: bool = True) -> Path:
    out = tmp / f"{model}-{bench}"
    result = audit_rows(
        JoinReport(_rows(kinds, preds, bench)),
        bench,
        model=model,
        metric="exact_match",
        variant="pix2struct",
        judge="scripted:one" if judge else None,
        cache_dir=out,
        judge_backend=ScriptedBackend(judge_one),
        second_judge="scripted:two" if judge else None,
        second_backend=ScriptedBackend(judge_two, spec="scripted:two"),
        n_draws=20,
    )
    write_audit_report(result, out)
    return out


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("audits")
    return [_audit(tmp, m, b, kinds, preds) for (m, b), (kinds, preds) in AUDITS.items()]


def test_row_behaviour_the_hand_computations_rest_on(folders: list[Path]) -> None:
    rows = [json.loads(line) for line in (folders[0] / "rows.jsonl").read_text().splitlines()]
    by_pred = dict(zip(AUDITS[("m1", "docvqa")][1], rows, strict=True))
    wrap, blue, red = by_pred["The answer is 4."], by_pred["Blue"], by_pred["red"]
    assert (wrap["official"], wrap["canonical"], wrap["judge"]) == (0.0, 1.0, True)
    assert wrap["repaired"] == {"output-only": 1.0, "reference-only": 0.0, "bidirectional": 1.0}
    assert (blue["official"], blue["canonical"], blue["judge"], blue["repaired"]["bidirectional"]) == (0, 1, True, 0)
    assert (red["bucket"], red["judge"]) == ("other-open", False)
    c5 = json.loads((folders[3] / "rows.jsonl").read_text().splitlines()[1])
    assert (c5["bucket"], c5["canonical"], c5["judge"]) == ("identifier", 0.0, True)
    assert c5["repaired"] == {"output-only": 0.0, "reference-only": 1.0, "bidirectional": 1.0}


def test_table3_official_judge_delta_and_accepted_errors(folders: list[Path]) -> None:
    s = summarize_audits([read_audit(f) for f in folders])
    doc = s.table3["docvqa"]
    # m1 docvqa: 2 of 6 right (33.3); errors "The answer is 4.", "9", "Blue", "red"; judge one accepts 2 of the 4:
    # judged (2 + 2) / 6 = 66.7, delta +33.3, Acc. Err. 2 / 4 = 50%.
    assert doc["m1"]["official"] == pytest.approx(100 / 3)
    assert doc["m1"]["judge"] == pytest.approx(200 / 3) and doc["m1"]["delta"] == pytest.approx(100 / 3)
    assert doc["m1"]["acc_err"] == 50.0
    # m2 docvqa: 2 of 6 right; errors "9", "Blue", "red", "red": 1 accepted: judged 3 / 6, Acc. Err. 25%.
    assert (doc["m2"]["judge"], doc["m2"]["acc_err"]) == (50.0, 25.0)
    assert s.table3_mean_delta["docvqa"] == pytest.approx(25.0)  # (33.3 + 16.7) / 2
    # m1 infovqa: 0 of 4 right, 3 of 4 errors accepted; m1 stvqa: 0 of 3, only "C5" accepted.
    assert s.table3["infovqa"]["m1"] == {"official": 0.0, "judge": 75.0, "delta": 75.0, "acc_err": 75.0}
    assert s.table3["stvqa"]["m1"]["acc_err"] == pytest.approx(100 / 3)
    assert s.models == ("m1", "m2") and s.benchmarks == ("docvqa", "infovqa", "stvqa")


def test_table5_counts_and_table4_pooled_rates(folders: list[Path]) -> None:
    s = summarize_audits([read_audit(f) for f in folders])
    zero = {"readout": 0, "multi-span": 0}
    assert s.table5 == {
        "docvqa": {"total": 6, "scalar": 3, "identifier": 0, "other-open": 3, **zero},
        "infovqa": {"total": 4, "scalar": 2, "identifier": 0, "other-open": 2, **zero},
        "stvqa": {"total": 3, "scalar": 1, "identifier": 1, "other-open": 1, **zero},
    }
    assert not any("Table 5" in n for n in s.notes)  # m1 and m2 audited the same docvqa gold
    t4 = s.table4
    # Judge FN, scalar: errors 2 + 1 + 2 + 1 = 6, accepted 1 + 0 + 1 + 0 = 2 -> 33.3% pooled; the mean of the
    # per-audit rates (50, 0, 50, 0) would be 25%.
    assert (t4["scalar"]["judge_accepted"], t4["scalar"]["judge_errors"]) == (2, 6)
    assert t4["scalar"]["judge_fn_pct"] == pytest.approx(100 / 3)
    # other-open: errors 2 + 3 + 2 + 1 = 8, accepted 1 + 1 + 2 + 0 = 4 -> 50% (mean of rates: 45.8%).
    assert t4["other-open"]["judge_fn_pct"] == 50.0
    assert t4["identifier"]["judge_fn_pct"] == 100.0 and math.isnan(t4["readout"]["judge_fn_pct"])
    # Auto gap, scalar: canonical fixes 2 wrapped rows of the 9 scalar rows -> +22.2 pp (row-weighted);
    # other-open: 4 "Blue" rows of 9 -> +44.4 pp; identifier: "C5" stays wrong canonically -> 0.
    assert t4["scalar"]["auto_gap_pp"] == pytest.approx(200 / 9) and t4["scalar"]["n"] == 9
    assert t4["other-open"]["auto_gap_pp"] == pytest.approx(400 / 9)
    assert t4["identifier"]["auto_gap_pp"] == 0.0
    assert math.isnan(t4["scalar"]["delta_true_pp"])  # no --perturb


def test_table7_repair_pooled_by_rows(folders: list[Path]) -> None:
    s = summarize_audits([read_audit(f) for f in folders])
    out, ref, bi = (s.table7_by_dataset[v] for v in ("output-only", "reference-only", "bidirectional"))
    # output-only recovers the two "The answer is 4." rows: m1 docvqa 1/6, m2 docvqa 0/6 -> docvqa 1/12 pooled;
    # infovqa 1/4; Overall 2 of all 19 rows = 10.53 pp (the mean of the dataset gains would be 11.1).
    assert out["docvqa"] == pytest.approx(100 / 12) and out["infovqa"] == pytest.approx(25.0)
    assert out["Overall"] == pytest.approx(200 / 19)
    assert ref["stvqa"] == pytest.approx(100 / 3) and ref["Overall"] == pytest.approx(100 / 19)  # "C5" only
    assert bi["Overall"] == pytest.approx(300 / 19)
    buckets = s.table7_by_bucket
    assert buckets["output-only"]["scalar"] == pytest.approx(200 / 9)  # 2 of the 9 scalar rows
    assert buckets["reference-only"]["identifier"] == 100.0 and buckets["bidirectional"]["other-open"] == 0.0
    assert buckets["bidirectional"]["Overall"] == bi["Overall"]
    t = s.table7_totals["bidirectional"]
    # 3 rows recovered, no break, of 4 + 4 + 4 + 3 = 15 official errors (20%); all 3 are judge-accepted errors
    # among the 2 + 1 + 3 + 1 = 7 the judge accepted: 42.86% judge-FN recovery (§5.4's 17.44% analogue).
    assert (t["recovered"], t["breaks"], t["net"], t["errors_before"]) == (3, 0, 3, 15)
    assert t["error_recovery_pct"] == 20.0 and t["judge_fn_recovery_pct"] == pytest.approx(300 / 7)


def test_table2_cross_judge_pearson_and_pooled_agreement(folders: list[Path]) -> None:
    s = summarize_audits([read_audit(f) for f in folders])
    t = s.table2
    # Per-benchmark FN rates (judge one, judge two), pooled over the benchmark's audits:
    # docvqa (2 + 1) / 8 = 37.5 and (3 + 3) / 8 = 75; infovqa 3/4 = 75 and 75; stvqa 1/3 and 2/3.
    assert t["benchmarks"]["docvqa"] == [37.5, 75.0] and t["benchmarks"]["infovqa"] == [75.0, 75.0]
    assert t["benchmarks"]["stvqa"] == pytest.approx([100 / 3, 200 / 3])
    # By hand: means 875/18 and 650/9; Sxy = 6875/54, Sxx = 56875/54, Syy = 1250/27.
    r = float(Fraction(6875, 54)) / math.sqrt(float(Fraction(56875, 54) * Fraction(1250, 27)))
    assert t["pearson_r"] == pytest.approx(r) and r == pytest.approx(0.5766, abs=1e-4)
    # Agreement: 3/4, 2/4, 4/4 and 2/3 of the items both judged -> (3 + 2 + 4 + 2) / 15 pooled
    # (the mean of the four agreements would be 72.9%).
    assert t["agreement_pct"] == pytest.approx(1100 / 15)
    assert t["first_fn_pct"] == pytest.approx(700 / 15) and t["second_fn_pct"] == pytest.approx(1100 / 15)
    assert t["reason"] is None
    # Cross-judge kappa from the summed confusion counts (judge one vs judge two; two accepts all one accepts,
    # plus "red"): tp 2+1+3+1 = 7, fp 0, fn 1+2+0+1 = 4, tn 4, n 15. p_o = 11/15, p_e = (7*11 + 8*4)/225 =
    # 109/225, kappa = (165 - 109) / (225 - 109) = 56/116 = 14/29.
    assert t["kappa"] == pytest.approx(14 / 29)
    two = summarize_audits([read_audit(f) for f in folders[:2]])
    assert math.isnan(two.table2["pearson_r"]) and "at least 3 benchmarks" in two.table2["reason"]
    assert any("Pearson r: n/a" in n for n in two.notes)
    assert pearson_r([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]) == pytest.approx(1.0)
    assert math.isnan(pearson_r([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]))


def test_perturbation_runs_give_table4_delta_true_and_table6(folders: list[Path], tmp_path: Path) -> None:
    car, sky = ("What colour is the car?", "blue"), ("What colour is the sky?", "blue")
    p1 = perturb_folder(
        tmp_path,
        "m1",
        "docvqa",
        [
            AuditRow("s", "How many cats?", "", ("4",), "docvqa", image="s"),
            AuditRow("o", car[0], "", (car[1],), "docvqa", image="o"),
        ],
        {"Base": {"s": "4", "o": "blue"}, "A1": {"s": "The answer is 4.", "o": "red"}, "B1": {"s": "4", "o": "Blue"}},
    )
    p2 = perturb_folder(
        tmp_path,
        "m1",
        "stvqa",
        [
            AuditRow("s", "How many cats?", "", ("4",), "stvqa", image="s"),
            AuditRow("car", car[0], "", (car[1],), "stvqa", image="car"),
            AuditRow("sky", sky[0], "", (sky[1],), "stvqa", image="sky"),
        ],
        {"Base": {"s": "4", "car": "blue", "sky": "blue"}, "A1": {"s": "5", "car": "red", "sky": "red"}},
    )
    s = summarize_audits([read_audit(f) for f in folders], [read_perturbation(p1), read_perturbation(p2)])
    # Delta True (canonical, mean over the benign variants run) per bucket:
    # run 1 scalar: A1 wrapper is canonically right (0), B1 0 -> 0 (n 1); run 2 scalar: "5" -> -100 (n 1);
    # pooled (0 - 100) / 2 = -50. other-open: run 1: A1 "red" -100, B1 "Blue" 0 -> -50 (n 1); run 2: -100 (n 2);
    # pooled (-50 - 200) / 3 = -83.3 (the mean of the runs would be -75).
    assert s.table4["scalar"]["delta_true_pp"] == pytest.approx(-50.0)
    assert s.table4["other-open"]["delta_true_pp"] == pytest.approx(-250 / 3)
    assert math.isnan(s.table4["identifier"]["delta_true_pp"])
    # Table 6: run 1 flips A1 2/2, B1 1/2 -> 75%, official deltas -100 and -50 -> -75; run 2: 3/3 flip, -100.
    assert s.table6["docvqa"]["m1"] == {"flip_rate_pct": 75.0, "official_delta_pp": -75.0}
    assert s.table6["stvqa"]["m1"] == {"flip_rate_pct": 100.0, "official_delta_pp": -100.0}
    # Family A: official (-100 - 100) / 2; true (A1 canonical: run 1 (1 + 0) / 2 - 1 = -50, run 2 -100) -> -75.
    assert s.table6_family["A"] == {"official_delta_pp": -100.0, "true_delta_pp": -75.0, "runs": 2.0}
    assert s.table6_family["B"] == {"official_delta_pp": -50.0, "true_delta_pp": 0.0, "runs": 1.0}
    assert any("average 1 of the 7 benign variants (A1)" in n and "stvqa" in n for n in s.notes)


def test_tables_4_and_6_take_the_paired_deltas_of_a_run_with_missing_replies(
    folders: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The new-user trial's run (8 DocVQA questions; no Base reply for q0, no A1 reply for q1, A1 wrong on q0)
    # with B1 also wrong on q7; all 8 are other-open. Paired: A1 vs Base over q2-q7: 0 flips of 6, delta 0;
    # B1 vs Base over q1-q7: 1 flip of 7, delta 6/7 - 7/7 = -14.29 pp (unpaired: A1 6/7 - 7/7 = -14.29,
    # B1 7/8 - 7/7 = -12.5, which Table 6 showed before).
    args = gap_perturb_args(tmp_path, wrong=(("A1", 0), ("B1", 7)))
    assert run_cli(monkeypatch, *args, "--model-name", "m1") == 0
    s = summarize_audits([read_audit(f) for f in folders], [read_perturbation(tmp_path / "p6")])
    # Table 6: mean flip (0 + 1/7) / 2 = 7.14 %; mean official delta (0 - 100/7) / 2 = -7.14 pp.
    assert s.table6["docvqa"]["m1"]["flip_rate_pct"] == pytest.approx(50 / 7)
    assert s.table6["docvqa"]["m1"]["official_delta_pp"] == pytest.approx(-50 / 7)
    assert s.table6_family["A"] == {"official_delta_pp": 0.0, "true_delta_pp": 0.0, "runs": 1.0}
    assert s.table6_family["B"]["official_delta_pp"] == pytest.approx(-100 / 7)
    # Table 4 Delta True, other-open: the benign canonical mean (0 - 100/7) / 2, this run alone.
    assert s.table4["other-open"]["delta_true_pp"] == pytest.approx(-50 / 7)
    assert any("each over its own questions (n: A1 6, B1 7)" in n for n in s.notes)


def test_table5_mismatch_and_missing_judge_are_noted(tmp_path: Path) -> None:
    a = _audit(tmp_path, "m1", "docvqa", "ss", ["4", "9"], judge=False)
    b = _audit(tmp_path, "m2", "docvqa", "so", ["4", "9"], judge=False)  # another gold: 1 scalar + 1 other-open
    s = summarize_audits([read_audit(a), read_audit(b)])
    assert s.table5["docvqa"]["scalar"] == 2  # the first audit's counts are shown ...
    assert any(n.startswith("Table 5, docvqa: the contract counts of m2") for n in s.notes)  # ... the clash noted
    assert math.isnan(s.table3["docvqa"]["m1"]["judge"]) and math.isnan(s.table4["scalar"]["judge_fn_pct"])
    assert any("m1 on docvqa" in n and "no judge ran" in n for n in s.notes)
    assert "no audit ran a second judge" in s.table2["reason"]


def test_cli_writes_both_files_and_refuses_bad_folders(
    folders: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "summary"
    assert run_cli(monkeypatch, "audit-summary", *map(str, folders), "--out", str(out)) == 0
    md = (out / "summary.md").read_text()
    assert "| docvqa | Official | 33.3 | 33.3 |  |" in md  # Table 3; the mean delta sits on the delta row
    assert "|  | Δ | +33.3 | +16.7 | +25.0 |" in md
    assert "| stvqa | 3 | 1 | 0 | 1 | 0 | 1 |" in md  # Table 5 row
    data = json.loads((out / "summary.json").read_text())
    assert data["table4"]["readout"]["judge_fn_pct"] is None  # NaN written as null
    assert data["table2"]["agreement_pct"] == pytest.approx(1100 / 15)
    capsys.readouterr()

    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_cli(monkeypatch, "audit-summary", str(empty), "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert f"{empty}: no report.json" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "report.json").write_text("{not json")
    assert run_cli(monkeypatch, "audit-summary", str(broken), "--out", str(out)) == 2
    assert f"{broken / 'report.json'}: not valid JSON" in capsys.readouterr().err

    old = tmp_path / "old"
    old.mkdir()
    report = json.loads((folders[0] / "report.json").read_text())
    del report["contract_mix"]["scalar"]["errors"]
    (old / "report.json").write_text(json.dumps(report))
    assert run_cli(monkeypatch, "audit-summary", str(old), "--out", str(out)) == 2
    assert "field 'contract_mix.scalar.errors': missing" in capsys.readouterr().err

    assert run_cli(monkeypatch, "audit-summary", str(folders[0]), str(folders[0]), "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert "model 'm1' on benchmark 'docvqa'" in err and err.count(str(folders[0])) == 2

    assert run_cli(monkeypatch, "audit-summary", str(folders[0]), "--perturb", str(empty), "--out", str(out)) == 2
    assert f"{empty}: no perturbations.json" in capsys.readouterr().err


def test_real_fixture_audits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chart = tmp_path / "chartqa"
    write_audit_report(run_audit(FIXTURES / "vila15_13b_chartqa_test.xlsx", "chartqa", variant="vlmevalkit"), chart)
    doc = tmp_path / "docvqa"
    write_audit_report(run_audit(FIXTURES / "mocr_mplugowl_docvqa_val.json.gz", "docvqa"), doc)
    out = tmp_path / "summary"
    assert run_cli(monkeypatch, "audit-summary", str(chart), str(doc), "--out", str(out)) == 0
    data = json.loads((out / "summary.json").read_text())
    reports = {f.name: json.loads((f / "report.json").read_text()) for f in (chart, doc)}
    for bench, report in reports.items():
        counts = {b: v["n"] for b, v in report["contract_mix"].items()}
        assert data["table5"][bench] == {"total": report["join"]["joined"], **counts}
    assert data["table5"]["docvqa"]["total"] == 5349  # seed 002 Table 5: DocVQA val has 5,349 items
    # VLMEvalKit's published overall ChartQA score for VILA1.5-13B (vila15_13b_chartqa_test_acc.csv).
    assert data["table3"]["chartqa"]["vila15_13b_chartqa_test"]["official"] == 58.720000000000006
    gains = {b: {r["variant"]: r["gain_pp"] for r in rep["repair"]} for b, rep in reports.items()}
    pooled = (2500 * gains["chartqa"]["bidirectional"] + 5349 * gains["docvqa"]["bidirectional"]) / 7849
    assert data["table7_by_dataset"]["bidirectional"]["Overall"] == pytest.approx(pooled)
    assert any("chartqa audits pool the human and augmented splits" in n for n in data["notes"])


def test_table2_human_label_validation_is_pooled_from_confusion_counts(tmp_path: Path) -> None:
    # Two validated audits. m1 docvqa errors s1, s2, o4, o5: judge one says yes, no, yes, no; the labels say
    # yes, no, no, yes -> tp 1, fp 1, fn 1, tn 1 (kappa 0). m1 infovqa errors s0, s1, o2, o3: judge yes, no, yes,
    # yes; labels the same -> tp 3, tn 1 (kappa 1). Pooled: tp 4, fp 1, fn 1, tn 2: precision = recall = 4/5,
    # p_o = 6/8, p_e = (5*5 + 3*3)/64 = 34/64, kappa = (48 - 34)/(64 - 34) = 7/15 (the mean of the kappas is 0.5).
    labels = {
        "docvqa": "question_id,label\ns1,yes\ns2,no\no4,no\no5,yes\n",
        "infovqa": "question_id,label\ns0,yes\ns1,no\no2,yes\no3,yes\n",
    }
    folders = []
    for bench, text in labels.items():
        kinds, preds = AUDITS[("m1", bench)]
        out = tmp_path / bench
        (tmp_path / f"{bench}.csv").write_text(text)
        result = audit_rows(
            JoinReport(_rows(kinds, preds, bench)),
            bench,
            model="m1",
            metric="exact_match",
            variant="pix2struct",
            judge="scripted:one",
            cache_dir=out,
            judge_backend=ScriptedBackend(judge_one),
            labels=tmp_path / f"{bench}.csv",
            n_draws=20,
        )
        write_audit_report(result, out)
        folders.append(out)
    v = summarize_audits([read_audit(f) for f in folders]).table2["validation"]
    assert v["n"] == 8 and v["precision_pct"] == pytest.approx(80.0) and v["recall_pct"] == pytest.approx(80.0)
    assert v["kappa"] == pytest.approx(7 / 15)
