"""Seed 002 audit folders in the HTML report: Table 8 per subtype and the contract mix, computed by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from shortanswer.helpers import run_cli
from vqaudit.errors import VqauditError
from vqaudit.report.html import write_html_report
from vqaudit.report.html_audit import is_audit_folder, load_audit, subtype_table

ROWS = [  # (bucket, subtype, official, canonical, judge)
    ("identifier", "alnum code", 0.0, 1.0, True),
    ("identifier", "alnum code", 0.0, 0.0, False),
    ("identifier", "alnum code", 1.0, 1.0, None),
    ("identifier", "short upper", 0.0, 0.0, None),
    ("scalar", None, 0.5, 1.0, True),
]


def audit_folder(root: Path, judge: bool = True) -> Path:
    folder = root / "audit"
    folder.mkdir(parents=True)
    lines = [
        json.dumps({"qid": str(i), "bucket": b, "subtype": s, "official": o, "canonical": c, "judge": j})
        for i, (b, s, o, c, j) in enumerate(ROWS)
    ]
    (folder / "rows.jsonl").write_text("\n".join(lines) + "\n")
    report = {
        "benchmark": "textvqa",
        "model": "m <script>x</script>",
        "metric": "vqa_accuracy",
        "variant": "official",
        "scores": {"Overall": 30.0},
        "canonical_scores": {"Overall": 60.0},
        "contract_mix": {
            "scalar": {"n": 1, "share": 20.0, "official": 50.0, "canonical": 100.0},
            "identifier": {"n": 4, "share": 80.0, "official": 25.0, "canonical": 50.0},
        },
        "judge": {"spec": "replay:judge.jsonl"} if judge else None,
    }
    (folder / "report.json").write_text(json.dumps(report))
    return folder


def test_table8_by_hand(tmp_path: Path) -> None:
    lines = {(r.parent, r.subtype): r for r in subtype_table(load_audit(audit_folder(tmp_path)))}
    assert list(lines) == [
        ("scalar", None),
        ("identifier", None),
        ("identifier", "alnum code"),
        ("identifier", "short upper"),
    ]
    # alnum code: official (0 + 0 + 1) / 3, canonical (1 + 0 + 1) / 3 -> +33.3 pp; 2 official errors, 1 accepted
    alnum = lines[("identifier", "alnum code")]
    assert (alnum.n, alnum.errors, alnum.judge_accepted) == (3, 2, 1)
    assert alnum.gap_pp == pytest.approx(100 / 3) and alnum.fn_pct == pytest.approx(50.0)
    # identifier overall: official 25, canonical 50 -> +25 pp; 3 errors, 1 accepted -> 33.3 %
    ident = lines[("identifier", None)]
    assert ident.gap_pp == pytest.approx(25.0) and ident.fn_pct == pytest.approx(100 / 3)
    # scalar: the 0.5 row is an official error (score < 1) the judge accepted
    assert lines[("scalar", None)].fn_pct == pytest.approx(100.0)


def test_without_a_judge_fn_is_na(tmp_path: Path) -> None:
    lines = subtype_table(load_audit(audit_folder(tmp_path, judge=False)))
    assert all(math.isnan(r.fn_pct) for r in lines)


def test_index_shows_table8_and_escapes(tmp_path: Path) -> None:
    folder = audit_folder(tmp_path)
    assert is_audit_folder(folder)
    html = write_html_report([folder], tmp_path / "report", n_draws=0).read_text()
    assert '<tr data-parent="identifier" data-subtype="alnum code">' in html
    row = html.split('data-subtype="alnum code">')[1].split("</tr>")[0]
    assert '<td class="gap">+33.3 pp</td><td class="fn">50.0</td>' in row
    assert "m &lt;script&gt;x&lt;/script&gt;" in html and "<script>x" not in html


def test_bad_rows_name_file_row_and_field(tmp_path: Path) -> None:
    folder = audit_folder(tmp_path)
    with (folder / "rows.jsonl").open("a") as f:
        f.write(json.dumps({"bucket": "scalar", "official": 2, "canonical": 0}) + "\n")
    with pytest.raises(VqauditError, match=r"rows.jsonl: row 6, field 'official'"):
        load_audit(folder)


def test_report_command_takes_an_audit_folder_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = audit_folder(tmp_path)
    assert run_cli(monkeypatch, "report", str(folder), "--out", str(tmp_path / "r")) == 0
    assert (tmp_path / "r" / "index.html").is_file() and not (tmp_path / "r" / "report.md").exists()


def test_index_shows_the_raw_split(tmp_path: Path) -> None:
    """Appendix A from report.json's ``raw_split``; a report without it says it was not recorded."""
    folder = audit_folder(tmp_path)
    html = write_html_report([folder], tmp_path / "old", n_draws=0).read_text()
    assert "<li>not recorded (report.json written by an older vqaudit" in html
    report = json.loads((folder / "report.json").read_text())
    report["raw_split"] = {
        "questions": 7,
        "ocr": {
            "questions_with_tokens": 6,
            "extractable": 4,
            "not_extractable": 3,
            "definition": "some gold answer is an OCR token or run",
        },
        "answer_types": None,
        "ocr_reason": None,
        "answer_types_reason": "not available (the gold file has no answer types)",
    }
    (folder / "report.json").write_text(json.dumps(report))
    html = write_html_report([folder], tmp_path / "new", n_draws=0).read_text()
    raw = html.split('<ul class="raw-split">')[1].split("</ul>")[0]
    assert "<li>OCR-extractable: 4 of 7 questions (57.1%), not extractable: 3 (6 questions have OCR tokens)." in raw
    assert "<li>Answer types: not available (the gold file has no answer types)</li>" in raw
