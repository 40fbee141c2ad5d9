"""The UPD judge against human labels: accuracy and Cohen's kappa (seed 001 App. 0.C.2, Fig. E).

Designed run: four AAD items (base setting, 3 UPD views each, one per rotation) whose UPD replies ("Hard to say.")
no pattern decides, so a replay judge gives each verdict. Ten labelled judged views:

    judge right, human right: 4 (tp)   judge right, human wrong: 2 (fp)
    judge wrong, human right: 1 (fn)   judge wrong, human wrong: 3 (tn)

By hand: accuracy p_o = (4 + 3) / 10 = 0.7; the judge says right on 6/10, the human on 5/10, so
p_e = 0.6 * 0.5 + 0.4 * 0.5 = 0.5 and kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4. One more label is on a standard view
the matcher decided: counted apart (n_not_judged = 1), not compared, as the paper compared only the replies pattern
matching left to ChatGPT.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shortanswer.helpers import run_cli
from upd.helpers import row, write_tsv
from vqaudit.errors import VqauditError
from vqaudit.metrics.judge_agreement import kappa_from_counts, read_view_labels
from vqaudit.report.html import write_html_report
from vqaudit.report.upd import write_upd_report
from vqaudit.run import run_benchmark
from vqaudit.score import score_run
from vqaudit.store import RunFolder, load_benchmark
from vqaudit.suites.upd.build import build_upd

# view -> (judge letter, human label); UPD judge letters: A-C the shown options (wrong), E the abstention (right)
DESIGN = {
    **{f"upd-aad-base-1-aad-r{r}": ("E", "correct") for r in range(3)},
    "upd-aad-base-2-aad-r0": ("E", "correct"),
    "upd-aad-base-2-aad-r1": ("E", "incorrect"),
    "upd-aad-base-2-aad-r2": ("E", "wrong"),
    "upd-aad-base-3-aad-r0": ("A", "right"),
    "upd-aad-base-3-aad-r1": ("A", "incorrect"),
    "upd-aad-base-3-aad-r2": ("B", "0"),
    "upd-aad-base-4-aad-r0": ("C", "no"),
}


def test_kappa_worked_example() -> None:
    # Wikipedia "Cohen's kappa", worked example: 50 proposals, both yes 20, A yes B no 5, A no B yes 10, both no
    # 15: p_o = 0.7, p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5, kappa = 0.4.
    assert kappa_from_counts(20, 5, 10, 15) == pytest.approx(0.4)
    assert kappa_from_counts(3, 0, 0, 0) is None  # one verdict throughout: p_e = 1, kappa undefined
    assert kappa_from_counts(0, 2, 2, 0) == pytest.approx(-1.0)  # total disagreement on a balanced split


@pytest.fixture
def judged_run(tmp_path: Path) -> tuple[Path, Path]:
    tsv = write_tsv(
        tmp_path / "four.tsv",
        [
            row(
                i,
                f"Which colour is shape {i}?",
                ["red", "green", "blue", "grey"],
                "ABCD"[i - 1],
                "attribute_recognition",
            )
            for i in range(1, 5)
        ],
    )
    bench = tmp_path / "bench"
    build_upd(bench, tsv=tsv, variant="aad", setting="base", seed=0)
    views = load_benchmark(bench).views
    replies = tmp_path / "replies.jsonl"
    replies.write_text(
        "".join(
            json.dumps(
                {
                    "view_id": v.view_id,
                    "text": v.obligation.gold[0] if v.obligation.kind == "answer" else "Hard to say.",
                }
            )
            + "\n"
            for v in views
        ),
        encoding="utf-8",
    )
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text(
        "".join(
            json.dumps({"view_id": v.view_id, "text": DESIGN.get(v.view_id, ("E", ""))[0]}) + "\n"
            for v in views
            if v.obligation.kind == "abstain"
        ),
        encoding="utf-8",
    )
    run_dir = tmp_path / "run"
    run_benchmark(bench, f"replay:{replies}", run_dir, progress=False)
    return run_dir, verdicts


def test_agreement_and_kappa_by_hand(
    judged_run: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir, verdicts = judged_run
    labels = tmp_path / "labels.csv"
    labels.write_text(
        "view_id,label\n" + "".join(f"{v},{h}\n" for v, (_, h) in DESIGN.items()) + "upd-aad-base-1-std-r0,correct\n",
        encoding="utf-8",
    )
    judge = f"replay:{verdicts}"
    assert run_cli(monkeypatch, "score", str(run_dir), "--judge", judge, "--labels", str(labels), "--draws", "1") == 0
    assert "agreement 70.0%, Cohen's kappa 0.400" in capsys.readouterr().err
    agree = json.loads(RunFolder(run_dir).metrics.read_text())["upd"]["judge_agreement"]
    assert agree["counts"] == {"tp": 4, "fp": 2, "fn": 1, "tn": 3}
    assert (agree["n_labels"], agree["n_compared"], agree["n_not_judged"]) == (11, 10, 1)
    assert agree["accuracy"] == pytest.approx(0.7) and agree["kappa"] == pytest.approx(0.4)
    assert agree["judge"] == judge and agree["labels"] == str(labels)
    # the report shows it: Markdown row and the HTML table (counts tp / fp / fn / tn)
    text = write_upd_report([run_dir], tmp_path / "report").read_text(encoding="utf-8")
    assert f"| run | `{judge}` | 10 | 6 / 5 | 70.0 | 0.400 | 1 |" in text
    html = write_html_report([run_dir], tmp_path / "html", n_draws=1).read_text(encoding="utf-8")
    assert "<td>10</td><td>4 / 2 / 1 / 3</td><td>70.0</td><td>0.400</td><td>1</td>" in html


def test_label_file_errors(judged_run: tuple[Path, Path], tmp_path: Path) -> None:
    run_dir, verdicts = judged_run
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"view_id": "upd-aad-base-1-aad-r0", "label": "maybe"}) + "\n", encoding="utf-8")
    with pytest.raises(VqauditError, match=r"bad.jsonl: row 1, field 'label': expected correct/incorrect"):
        read_view_labels(bad)
    twice = tmp_path / "twice.csv"
    twice.write_text("view_id,label\nv1,correct\nv1,wrong\n", encoding="utf-8")
    with pytest.raises(VqauditError, match=r"twice.csv: row 3, field 'view_id': 'v1' is labelled twice"):
        read_view_labels(twice)
    unknown = tmp_path / "unknown.csv"
    unknown.write_text("view_id,label\nnot-a-view,correct\n", encoding="utf-8")
    with pytest.raises(VqauditError, match=r"field 'view_id': 'not-a-view' is not a UPD view of this run"):
        score_run(run_dir, n_draws=1, judge=f"replay:{verdicts}", labels=unknown)
    with pytest.raises(VqauditError, match="give the --judge"):
        score_run(run_dir, n_draws=1, labels=unknown)
