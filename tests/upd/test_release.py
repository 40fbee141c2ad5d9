"""The official MM-UPD release layout (AtsuMiyai/UPD): standard and UPD rows sharing an index, a ``type`` column.

The release files are made here in the published layout (``AtsuMiyai/UPD``, ``automatic_eval/calculate_scores.py``
reads them: rows of ``type`` standard and upd share ``index``, circular passes are ``index + k * 10**6``, AAD UPD
rows carry ``masked_answer`` and ``answer = "F"``) from the 20 real MMBench samples bundled with vqaudit. AAD
removes the correct option; every one of the 20 items is kept, also the two whose AAD side has one option left
(the release is taken as published, while vqaudit's own AAD rule would drop them: 18).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest

from vqaudit.errors import VqauditError
from vqaudit.metrics.upd import upd_metrics
from vqaudit.schema import Response
from vqaudit.scoring.upd import score_upd_views
from vqaudit.store import load_benchmark
from vqaudit.suites.upd.build import bundled_path
from vqaudit.suites.upd.release import read_release
from vqaudit.suites.upd.release_build import build_upd_release

COLUMNS = [
    "index",
    "question",
    "hint",
    "A",
    "B",
    "C",
    "D",
    "E",
    "answer",
    "masked_answer",
    "category",
    "image",
    "source",
    "l2-category",
    "split",
    "type",
]


def _samples() -> list[dict[str, str]]:
    text = bundled_path("mmbench_samples_en.tsv").read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text, newline=""), delimiter="\t"))


def _rows(kind: str, rec: dict[str, str], options: list[str], answer: str, masked: str) -> list[dict[str, Any]]:
    out = []
    n = len(options)
    for k in range(max(n, 1)):
        shown = options[k:] + options[:k]
        row = {c: "" for c in COLUMNS}
        row.update(
            {
                "index": str(int(rec["index"]) + k * 10**6),
                "question": rec["question"],
                "hint": rec["hint"],
                "category": rec["category"],
                "l2-category": rec["l2-category"],
                "split": "dev",
                "type": kind,
                "image": rec["image"] if k == 0 else rec["index"],
                "masked_answer": masked,
            }
        )
        row.update({"ABCDE"[i]: o for i, o in enumerate(shown)})
        row["answer"] = "ABCDE"[(("ABCDE".index(answer)) - k) % n] if kind == "standard" else "F"
        out.append(row)
    return out


def release_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rec in _samples():
        options = [rec[c] for c in "ABCD" if rec[c]]
        correct = options["ABCD".index(rec["answer"])]
        rows += _rows("standard", rec, options, rec["answer"], "")
        rows += _rows("upd", rec, [o for o in options if o != correct], "F", correct)
    return rows


def write_tsv(path: Path, rows: list[dict[str, Any]]) -> Path:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, delimiter="\t", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


def test_release_rows_pair_by_index_and_every_question_is_kept(tmp_path: Path) -> None:
    rows = release_rows()
    release = read_release(write_tsv(tmp_path / "mmaad_base.tsv", rows))
    assert (release.variant, release.setting, len(release.items), release.n_rows) == ("aad", "base", 20, len(rows))
    first = release.items[0]
    assert [r.kind for r in first.standard] == ["standard"] * 4 and len(first.upd) == 3
    assert first.upd[0].masked_answer == first.standard[0].options["ABCD".index(first.standard[0].answer)]
    assert first.upd[1].image == first.standard[0].image  # a digit image cell refers to that index's image


@pytest.mark.slow
def test_built_release_scores_like_any_upd_benchmark(tmp_path: Path) -> None:
    manifest = build_upd_release(tmp_path / "bench", [write_tsv(tmp_path / "mmaad_base.tsv", release_rows())])
    assert manifest["counts"] == {"aad/base": 20} and sum(manifest["counts_by_ability"]["aad"].values()) == 20
    bench = load_benchmark(tmp_path / "bench")
    views = list(bench.views)
    assert len(bench.groups) == 20 and len(views) == 78 + 58  # standard passes + UPD passes (one option fewer)
    # A policy that answers every standard pass right and abstains on every UPD pass: 100% standard, UPD, dual.
    replies = {
        v.view_id: Response(
            view_id=v.view_id,
            model="t",
            prompt_id="p",
            text=v.obligation.gold[0] if v.obligation.kind == "answer" else "None of the above",
        )
        for v in views
    }
    outcomes = score_upd_views(views, replies, run_dir=tmp_path, judge=None)
    config = upd_metrics(outcomes, views, n_draws=0, seed=0)["configs"]["aad/base"]
    assert (config["n_items"], config["standard"], config["upd"], config["dual"]) == (20, 1.0, 1.0, 1.0)
    # Naming the removed correct option also passes an AAD UPD pass (seed 001, 0.C.1).
    removed = {
        v.view_id: Response(view_id=v.view_id, model="t", prompt_id="p", text=str(v.meta["removed_text"]))
        for v in views
        if v.meta["kind"] == "upd"
    }
    assert all(
        o.task_correct
        for o in score_upd_views([v for v in views if v.view_id in removed], removed, run_dir=tmp_path, judge=None)
    )


def test_parquet_release_reads_like_its_tsv(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rows = release_rows()
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "mmaad_base.parquet")
    from_parquet = read_release(tmp_path / "mmaad_base.parquet")
    from_tsv = read_release(write_tsv(tmp_path / "mmaad_base.tsv", rows))
    assert from_parquet.items == from_tsv.items


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda rows: [r for r in rows if not (r["type"] == "standard" and int(r["index"]) % 10**6 == 1)],
            r"row \d+, field 'type': the upd row of index 1 has no standard row",
        ),
        (lambda rows: rows + [dict(rows[0])], r"field 'index': duplicate standard row for index 1"),
        (lambda rows: [{**r, "type": "UPD?"} if i == 2 else r for i, r in enumerate(rows)], r"row 3, field 'type'"),
        (
            lambda rows: [{**r, "A": r["B"], "B": r["A"]} if i == 1 else r for i, r in enumerate(rows)],
            r"rows 1 and 2 \(standard index 1 and its circular copy 1000001\), fields 'A'-'E'",
        ),
    ],
)
def test_bad_release_rows_name_file_row_and_field(tmp_path: Path, edit: Any, message: str) -> None:
    path = write_tsv(tmp_path / "mmaad_base.tsv", edit(release_rows()))
    with pytest.raises(VqauditError, match=message):
        read_release(path)


def test_the_configuration_comes_from_the_name_or_the_options(tmp_path: Path) -> None:
    path = write_tsv(tmp_path / "export.tsv", release_rows())
    with pytest.raises(VqauditError, match="give --variant and --setting"):
        read_release(path)
    assert read_release(path, variant="aad", setting="base").setting == "base"
    with pytest.raises(VqauditError, match="the file name says aad/base"):
        read_release(write_tsv(tmp_path / "mmaad_base.tsv", release_rows()), variant="ivqd")


@pytest.mark.slow
def test_build_upd_release_from_the_command_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from vqaudit.cli import app

    path = write_tsv(tmp_path / "mmaad_base.tsv", release_rows())
    res = CliRunner().invoke(app, ["build", "upd", "--out", str(tmp_path / "b"), "--release", str(path)])
    assert res.exit_code == 0, res.output
    assert "aad/base: 20 items" in res.output and "aad: 20 items (" in res.output
    bad = CliRunner().invoke(
        app, ["build", "upd", "--out", str(tmp_path / "c"), "--release", str(path), "--tsv", str(path)]
    )
    assert bad.exit_code != 0 and not (tmp_path / "c").exists()
