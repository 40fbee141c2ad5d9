"""Seed 002 appendix B: eta squared of judge false negatives and benign flips by dataset, numeric/text, contract.

eta squared of a 0/1 outcome with cells (n_g, s_g), N = sum n_g, S = sum s_g:
SS_total = S - S^2/N, SS_between = sum s_g^2/n_g - S^2/N, eta^2 = SS_between / SS_total.
Every expected value below is that formula worked by hand on a designed set (the sums of squares are shown).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from shortanswer.helpers import ScriptedBackend, perturb_folder
from vqaudit.backends import Request
from vqaudit.errors import VqauditError
from vqaudit.metrics.variance import answer_kind, eta_squared
from vqaudit.report.audit_inputs import read_audit, read_perturbation
from vqaudit.report.audit_summary import summarize_audits
from vqaudit.report.audit_summary_render import render_summary_markdown
from vqaudit.report.shortanswer import write_audit_report
from vqaudit.shortanswer.audit import audit_rows
from vqaudit.shortanswer.records import AuditRow, JoinReport

CAR, GYM, CATS = ("What colour is the car?", "blue"), ("Where is the gym?", "C-5"), ("How many cats?", "4")


def test_eta_squared_by_hand() -> None:
    """Cells A (4 items, 3 ones) and B (4, 1): N 8, S 4, SS_total = 4 - 16/8 = 2.

    SS_between = 9/4 + 1/4 - 2 = 0.5, eta^2 = 0.25. A perfect split (4, 4), (4, 0): SS_between = 4 - 2 = 2, eta^2 1.
    Equal rates (4, 2), (4, 2): SS_between = 1 + 1 - 2 = 0. Every outcome equal: SS_total 0, undefined (NaN).
    """
    assert eta_squared({"A": (4, 3), "B": (4, 1)}) == pytest.approx(0.25)
    assert eta_squared({"A": (4, 4), "B": (4, 0)}) == pytest.approx(1.0)
    assert eta_squared({"A": (4, 2), "B": (4, 2)}) == 0.0
    assert math.isnan(eta_squared({"A": (3, 3), "B": (2, 2)})) and math.isnan(eta_squared({}))
    with pytest.raises(ValueError, match="cell 'A'"):
        eta_squared({"A": (2, 3)})


@pytest.mark.parametrize(
    ("answers", "kind"),
    [
        (["4"], "numeric"),
        (["$1,200"], "numeric"),  # currency and thousands separator
        (["45%"], "numeric"),
        (["3/4"], "numeric"),  # a fraction
        (["2 million"], "numeric"),  # a magnitude word
        (["12", "12", "twelve"], "numeric"),  # the most frequent answer decides
        (["twelve", "twelve", "12"], "text"),
        (["yes"], "text"),
        (["C-5"], "text"),  # a code
        (["March 3, 2010"], "text"),  # a date
        (["blue"], "text"),
    ],
)
def test_numeric_text_reads_the_representative_gold(answers: list[str], kind: str) -> None:
    assert answer_kind(answers) == kind


def _judge(request: Request) -> str:
    """Accepts when the gold (letters and digits, lower-cased) occurs in the output."""

    def norm(text: str) -> str:
        return "".join(ch for ch in text.lower() if ch.isalnum())

    field = {line.split(": ", 1)[0]: line.split(": ", 1)[1] for line in request.prompt.splitlines() if ": " in line}
    return "yes" if norm(field["Reference answer(s)"]) in norm(field["Model answer"]) else "no"


def _audit(tmp: Path, bench: str, rows: list[tuple[tuple[str, str], str]]) -> Path:
    out = tmp / bench
    joined = tuple(AuditRow(f"q{i}", q, pred, (gold,), bench) for i, ((q, gold), pred) in enumerate(rows))
    result = audit_rows(
        JoinReport(joined),
        bench,
        model="m",
        metric="exact_match",
        variant="pix2struct",
        judge="scripted:judge",
        cache_dir=out,
        judge_backend=ScriptedBackend(_judge),
        n_draws=10,
    )
    write_audit_report(result, out)
    return out


@pytest.fixture(scope="module")
def audits(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("audits")
    return [
        _audit(
            tmp,
            "docvqa",
            [(CATS, "4"), (CATS, "The answer is 4."), (CATS, "9"), (CAR, "Blue"), (CAR, "red")],
        ),
        _audit(tmp, "stvqa", [(GYM, "C5"), (CAR, "Blue"), (CATS, "9")]),
    ]


def test_judge_false_negative_eta_squared(audits: list[Path]) -> None:
    """Official errors and verdicts (1 = judge accepts), from the audits' rows.jsonl.

    docvqa: "The answer is 4." scalar/numeric 1, "9" scalar/numeric 0, "Blue" other-open/text 1, "red"
    other-open/text 0 ("4" is right: not an error). stvqa: "C5" identifier/text 1, "Blue" other-open/text 1, "9"
    scalar/numeric 0. N 7, S 4, SS_total = 4 - 16/7 = 12/7.

    - dataset: docvqa (4, 2), stvqa (3, 2): SS_between = 1 + 4/3 - 16/7 = 1/21, eta^2 = (1/21)/(12/7) = 1/36.
    - numeric/text: numeric (3, 1), text (4, 3): SS_between = 1/3 + 9/4 - 16/7 = 25/84, eta^2 = 25/144.
    - contract: scalar (3, 1), other-open (3, 2), identifier (1, 1): SS_between = 1/3 + 4/3 + 1 - 16/7 = 8/21,
      eta^2 = 2/9.
    """
    rows = [json.loads(line) for line in (audits[0] / "rows.jsonl").read_text().splitlines()]
    assert [(r["bucket"], r["official"], r["judge"]) for r in rows] == [
        ("scalar", 1.0, None),
        ("scalar", 0.0, True),
        ("scalar", 0.0, False),
        ("other-open", 0.0, True),
        ("other-open", 0.0, False),
    ]
    s = summarize_audits([read_audit(f) for f in audits])
    block = s.appendix_b["judge_fn"]
    assert block["items"] == 7 and block["rate_pct"] == pytest.approx(400 / 7)
    assert block["cells"]["contract"] == {"scalar": [3, 1], "other-open": [3, 2], "identifier": [1, 1]}
    assert block["eta_squared"]["dataset"] == pytest.approx(1 / 36)
    assert block["eta_squared"]["numeric_text"] == pytest.approx(25 / 144)
    assert block["eta_squared"]["contract"] == pytest.approx(2 / 9)
    assert math.isnan(s.appendix_b["flips"]["eta_squared"]["contract"])  # no perturbation run given
    md = render_summary_markdown(s)
    assert "## Share of variance by grouping (appendix B)" in md
    assert "| judge false negative (per official error) | 7 | 57.1 | 0.028 | 0.174 | 0.222 |" in md


def test_benign_flip_eta_squared(audits: list[Path], tmp_path: Path) -> None:
    """Flips per (question, benign variant) against Base; the B3 control is left out.

    docvqa (s "4", o "blue"): A1 s flips, A1 o flips, B1 s stays, B1 o flips ("Blue"); B3 s flips (control: out).
    stvqa (s "4", car, sky "blue", gym "C-5"): A1 s flips, car flips, sky stays, gym flips ("C5").
    Outcomes: docvqa scalar 1, 0, other 1, 1; stvqa scalar 1, other 1, 0, identifier 1. N 8, S 6,
    SS_total = 6 - 36/8 = 3/2.

    - dataset: (4, 3), (4, 3): SS_between = 9/4 + 9/4 - 9/2 = 0, eta^2 = 0.
    - numeric/text: numeric (3, 2), text (5, 4): SS_between = 4/3 + 16/5 - 9/2 = 1/30, eta^2 = 1/45.
    - contract: scalar (3, 2), other-open (4, 3), identifier (1, 1): SS_between = 4/3 + 9/4 + 1 - 9/2 = 1/12,
      eta^2 = 1/18.
    """
    doc = [
        AuditRow("s", CATS[0], "", ("4",), "docvqa", image="s"),
        AuditRow("o", CAR[0], "", ("blue",), "docvqa", image="o"),
    ]
    p1 = perturb_folder(
        tmp_path,
        "m",
        "docvqa",
        doc,
        {
            "Base": {"s": "4", "o": "blue"},
            "A1": {"s": "The answer is 4.", "o": "red"},
            "B1": {"s": "4", "o": "Blue"},
            "B3": {"s": "9", "o": "blue"},
        },
    )
    st = [
        AuditRow("s", CATS[0], "", ("4",), "stvqa", image="s"),
        AuditRow("car", CAR[0], "", ("blue",), "stvqa", image="car"),
        AuditRow("sky", "What colour is the sky?", "", ("blue",), "stvqa", image="sky"),
        AuditRow("gym", GYM[0], "", ("C-5",), "stvqa", image="gym"),
    ]
    p2 = perturb_folder(
        tmp_path,
        "m",
        "stvqa",
        st,
        {
            "Base": {"s": "4", "car": "blue", "sky": "blue", "gym": "C-5"},
            "A1": {"s": "5", "car": "red", "sky": "blue", "gym": "C5"},
        },
    )
    runs = [read_perturbation(p1), read_perturbation(p2)]
    assert runs[0].flip_cells == {
        "contract": {"scalar": [2, 1], "other-open": [2, 2]},
        "numeric_text": {"numeric": [2, 1], "text": [2, 2]},
    }
    s = summarize_audits([read_audit(f) for f in audits], runs)
    block = s.appendix_b["flips"]
    assert block["items"] == 8 and block["rate_pct"] == 75.0
    assert block["eta_squared"]["dataset"] == 0.0
    assert block["eta_squared"]["numeric_text"] == pytest.approx(1 / 45)
    assert block["eta_squared"]["contract"] == pytest.approx(1 / 18)


def test_bad_rows_and_older_runs(audits: list[Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("report.json", "rows.jsonl"):
        (broken / name).write_bytes((audits[1] / name).read_bytes())
    lines = (broken / "rows.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    rec["answers"] = "C-5"
    (broken / "rows.jsonl").write_text("\n".join([json.dumps(rec), *lines[1:]]) + "\n")
    with pytest.raises(VqauditError, match=r"rows.jsonl: row 1, field 'answers': expected a list of strings"):
        summarize_audits([read_audit(audits[0]), read_audit(broken)])
    (broken / "rows.jsonl").unlink()
    s = summarize_audits([read_audit(audits[0]), read_audit(broken)])
    assert any("has no rows.jsonl: left out" in n for n in s.notes) and s.appendix_b["judge_fn"]["items"] == 4
