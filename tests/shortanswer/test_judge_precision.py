"""Table 2's judge validation (seed 002 §3.3): precision with its 95% interval, recall, kappa, precision per bucket.

Everything goes through the real commands: ``vqaudit audit PREDS --benchmark docvqa --judge replay:FILE --labels
LABELS`` (a replay judge: its verdict per question is a line of a file) and ``vqaudit audit-summary``.

The 19 DocVQA questions below: 17 official errors in the five contract buckets (each bucket as
``scalar.classify`` puts it, checked in ``test_the_items_fall_in_the_buckets_intended``), one more official error
without a label (``u1``: judged, not compared) and one correct row (``x1``, gold "7", answer "7": labelled but
outside the error pool, so ignored). Judge 1's verdicts and the human labels, per bucket:

==========  ===================  ===================  ===================
bucket      judge 1              human                counts
==========  ===================  ===================  ===================
scalar      s1 Y s2 Y s3 Y s4 N  s1 Y s2 Y s3 N s4 N  tp 2 fp 1 fn 0 tn 1
readout     r1 Y r2 Y r3 N       r1 Y r2 Y r3 Y       tp 2 fp 0 fn 1 tn 0
identifier  i1 Y i2 N i3 N       i1 Y i2 N i3 N       tp 1 fp 0 fn 0 tn 2
multi-span  m1 Y m2 Y m3 N       m1 Y m2 N m3 N       tp 1 fp 1 fn 0 tn 1
other-open  o1 Y o2 Y o3 Y o4 N  all Y                tp 3 fp 0 fn 1 tn 0
==========  ===================  ===================  ===================

Totals: tp 9, fp 2, fn 2, tn 4, n 17. Precision = 9/11 = 81.82%, recall = 9/11 = 81.82%;
p_o = 13/17, p_e = (11 * 11 + 6 * 6) / 17^2 = 157/289, kappa = (221 - 157) / (289 - 157) = 64/132 = 16/33 = 0.4848.

The 95% interval is Wilson's (z = 1.959964, z^2 = 3.841459): for x of n, p = x/n, d = 1 + z^2/n,
centre = (p + z^2/(2n)) / d, half = z * sqrt(p(1-p)/n + z^2/(4n^2)) / d. For 9/11: d = 1.349224,
centre = (0.818182 + 0.174612) / 1.349224 = 0.735829, half = 1.959964 * sqrt(0.0135237 + 0.0079369) / 1.349224
= 0.212805, so [52.30, 94.86]. Per bucket: when x = n the interval is [n / (n + z^2), 1]: 2/2 -> 34.24, 1/1 ->
20.65, 3/3 -> 43.85; 2/3: d = 2.280486, centre = 0.573085, half = 0.365425 -> [20.77, 93.85]; 1/2: centre 0.5,
half = 1.959964 * sqrt(0.125 + 0.240091) / 2.920730 = 0.405469 -> [9.45, 90.55].

Judge 2 (a second audit, model ``m2``) accepts all 18 errors: tp 11, fp 6 against the labels. Pooled with judge 1
by summing counts: tp 20, fp 8, fn 2, tn 4 (n 34): precision 20/28 = 71.43%, recall 20/22 = 90.91%,
kappa = (24 * 34 - (28 * 22 + 6 * 12)) / (34^2 - 688) = 128/468 = 0.2735; Wilson 20/28: d = 1.137195,
centre = (0.714286 + 0.068597) / 1.137195 = 0.688434, half = 1.959964 * sqrt(0.00728863 + 0.00122496) / 1.137195
= 0.159026 -> [52.941, 84.746]. Per bucket pooled: scalar 4/7, readout 5/5, identifier 2/4, multi-span 2/5,
other-open 7/7.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shortanswer.helpers import run_cli
from vqaudit.metrics.proportion import wilson_interval
from vqaudit.report.audit_inputs import read_audit
from vqaudit.report.audit_summary import summarize_audits
from vqaudit.scoring.contracts import classify

# qid -> (question, gold, bucket, judge 1 verdict, human label); None: no label.
ITEMS: dict[str, tuple[str, str, str, bool, bool | None]] = {
    "s1": ("How many pages?", "4", "scalar", True, True),
    "s2": ("What is the total?", "$1,200", "scalar", True, True),
    "s3": ("In which year?", "1990", "scalar", True, False),
    "s4": ("Is it signed?", "yes", "scalar", False, False),
    "r1": ("What is the name of the company?", "Acme Corporation", "readout", True, True),
    "r2": ("Who signed the letter?", "John Smith", "readout", True, True),
    "r3": ("What is written at the top?", "Confidential memo", "readout", False, True),
    "i1": ("Which room?", "C-5", "identifier", True, True),
    "i2": ("What is the code?", "B12", "identifier", False, False),
    "i3": ("What is the form number?", "XK-200", "identifier", False, False),
    "m1": ("Which colours?", "red and blue", "multi-span", True, True),
    "m2": ("Which fruits?", "apples, pears", "multi-span", True, False),
    "m3": ("Which cities?", "Paris/London", "multi-span", False, False),
    "o1": ("What colour is the car?", "blue", "other-open", True, True),
    "o2": ("What is shown?", "a bar chart", "other-open", True, True),
    "o3": ("What is the trend?", "increasing", "other-open", True, True),
    "o4": ("What animal?", "dog", "other-open", False, True),
    "u1": ("What animal is it?", "cat", "other-open", True, None),  # an error without a label
}


def test_the_items_fall_in_the_buckets_intended() -> None:
    assert {q: classify(question, [gold]).bucket for q, (question, gold, *_) in ITEMS.items()} == {
        q: item[2] for q, item in ITEMS.items()
    }


def test_wilson_interval_matches_published_values() -> None:
    # Newcombe (1998), Stat. Med. 17:857-872, Table II, method 3 (Wilson score, no continuity correction).
    for (x, n), expected in {
        (81, 263): (0.2553, 0.3662),
        (15, 148): (0.0624, 0.1605),
        (0, 20): (0.0, 0.1611),
        (1, 29): (0.0061, 0.1718),
    }.items():
        assert wilson_interval(x, n) == pytest.approx(expected, abs=5e-5), (x, n)
    # Seed 002 Table 2: precision 97.6% with 95% CI 95.3-98.8; 320 of 328 accepted items gives both.
    low, high = wilson_interval(320, 328)
    assert (round(100 * 320 / 328, 1), round(100 * low, 1), round(100 * high, 1)) == (97.6, 95.3, 98.8)


def _write_inputs(tmp: Path) -> tuple[Path, Path, Path, Path]:
    preds = [
        {"question_id": q, "question": question, "prediction": "zzzzzz", "answers": [gold]}
        for q, (question, gold, *_) in ITEMS.items()
    ]
    preds.append({"question_id": "x1", "question": "How many stamps?", "prediction": "7", "answers": ["7"]})
    (tmp / "preds.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds), encoding="utf-8")
    labels = [(q, item[4]) for q, item in ITEMS.items() if item[4] is not None] + [("x1", True)]
    (tmp / "labels.csv").write_text(
        "question_id,label\n" + "".join(f"{q},{'yes' if h else 'no'}\n" for q, h in labels), encoding="utf-8"
    )
    for name, verdict in (("judge1.jsonl", lambda item: item[3]), ("judge2.jsonl", lambda item: True)):
        (tmp / name).write_text(
            "".join(
                json.dumps({"view_id": f"judge:{q}", "text": "yes" if verdict(item) else "no"}) + "\n"
                for q, item in ITEMS.items()
            ),
            encoding="utf-8",
        )
    return tmp / "preds.jsonl", tmp / "labels.csv", tmp / "judge1.jsonl", tmp / "judge2.jsonl"


def _audit(monkeypatch: pytest.MonkeyPatch, tmp: Path, model: str, judge: Path) -> Path:
    preds, labels = tmp / "preds.jsonl", tmp / "labels.csv"
    out = tmp / f"audit-{model}"
    args = ["audit", str(preds), "--benchmark", "docvqa", "--judge", f"replay:{judge}", "--labels", str(labels)]
    assert run_cli(monkeypatch, *args, "--model-name", model, "--draws", "20", "--out", str(out)) == 0
    return out


@pytest.fixture
def audits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    _, _, judge1, judge2 = _write_inputs(tmp_path)
    return _audit(monkeypatch, tmp_path, "m1", judge1), _audit(monkeypatch, tmp_path, "m2", judge2)


@pytest.mark.slow
def test_audit_reports_precision_interval_and_per_bucket_precision(audits: tuple[Path, Path]) -> None:
    folder = audits[0]
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    v = report["judge"]["validation"]
    assert report["judge"]["pool"] == 18  # 17 labelled errors and u1; x1 is officially right
    assert (v["n"], v["tp"], v["fp"], v["fn"], v["tn"]) == (17, 9, 2, 2, 4)
    assert v["precision"] == pytest.approx(9 / 11) and v["recall"] == pytest.approx(9 / 11)
    assert v["kappa"] == pytest.approx(16 / 33)
    assert v["precision_ci_method"] == "wilson"
    assert v["precision_ci"] == pytest.approx([0.523024, 0.948634], abs=1e-5)
    expected = {  # bucket: (n labelled, tp, fp, fn, tn, precision, interval)
        "scalar": (4, 2, 1, 0, 1, 2 / 3, [0.20766, 0.93851]),
        "readout": (3, 2, 0, 1, 0, 1.0, [2 / (2 + 3.841459), 1.0]),
        "identifier": (3, 1, 0, 0, 2, 1.0, [1 / (1 + 3.841459), 1.0]),
        "multi-span": (3, 1, 1, 0, 1, 0.5, [0.094531, 0.905469]),
        "other-open": (4, 3, 0, 1, 0, 1.0, [3 / (3 + 3.841459), 1.0]),
    }
    for bucket, (n, tp, fp, fn, tn, precision, interval) in expected.items():
        block = v["by_bucket"][bucket]
        assert (block["n"], block["accepted"], block["tp"], block["fp"], block["fn"], block["tn"]) == (
            n,
            tp + fp,
            tp,
            fp,
            fn,
            tn,
        ), bucket
        assert block["precision"] == pytest.approx(precision), bucket
        assert block["precision_ci"] == pytest.approx(interval, abs=1e-5), bucket
    md = (folder / "report.md").read_text(encoding="utf-8")
    assert (
        "- Validation vs human labels (n=17): precision 81.8% (9/11) [95% CI 52.3, 94.9] (Wilson interval over "
        "the accepted items), recall 81.8%, Cohen's kappa 0.485." in md
    )
    assert (
        "scalar 66.7% (2/3) [95% CI 20.8, 93.9], n=4; readout 100.0% (2/2) [95% CI 34.2, 100.0], n=3; "
        "identifier 100.0% (1/1) [95% CI 20.7, 100.0], n=3; multi-span 50.0% (1/2) [95% CI 9.5, 90.5], n=3; "
        "other-open 100.0% (3/3) [95% CI 43.9, 100.0], n=4." in md
    )


@pytest.mark.slow
def test_audit_summary_pools_the_interval_and_the_buckets(
    audits: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "summary"
    assert run_cli(monkeypatch, "audit-summary", *map(str, audits), "--out", str(out)) == 0
    v = json.loads((out / "summary.json").read_text(encoding="utf-8"))["table2"]["validation"]
    assert (v["audits"], v["n"]) == (2, 34)
    assert v["precision_pct"] == pytest.approx(100 * 20 / 28) and v["recall_pct"] == pytest.approx(100 * 20 / 22)
    assert v["kappa"] == pytest.approx(128 / 468)
    assert v["precision_ci_pct"] == pytest.approx([52.941, 84.746], abs=1e-3)
    pooled = {b: (block["tp"], block["accepted"]) for b, block in v["by_bucket"].items()}
    assert pooled == {
        "scalar": (4, 7),
        "readout": (5, 5),
        "identifier": (2, 4),
        "multi-span": (2, 5),
        "other-open": (7, 7),
    }
    assert v["by_bucket"]["scalar"]["precision_pct"] == pytest.approx(100 * 4 / 7)
    assert v["by_bucket"]["scalar"]["n"] == 8  # 4 labelled scalar errors in each audit
    assert v["by_bucket"]["scalar"]["precision_ci_pct"] == pytest.approx(
        [100 * x for x in wilson_interval(4, 7)], abs=1e-9
    )
    md = (out / "summary.md").read_text(encoding="utf-8")
    assert "| Precision 95% CI (Wilson) | 52.9–84.7 |" in md
    assert "| Readout precision | 100.0% (5/5 accepted; 95% CI 56.6–100.0; n=6 labelled) |" in md  # 5/(5+z^2)


@pytest.mark.slow
def test_a_report_without_per_bucket_counts_still_pools_the_rest(audits: tuple[Path, Path]) -> None:
    path = audits[1] / "report.json"
    old = json.loads(path.read_text(encoding="utf-8"))
    del old["judge"]["validation"]["by_bucket"]  # as an older vqaudit wrote it
    path.write_text(json.dumps(old), encoding="utf-8")
    summary = summarize_audits([read_audit(a) for a in audits])
    v = summary.table2["validation"]
    assert v["n"] == 34 and v["precision_pct"] == pytest.approx(100 * 20 / 28) and v["by_bucket"] == {}
    assert any("per-bucket judge precision is not pooled" in note for note in summary.notes)
