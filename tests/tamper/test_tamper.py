"""The tamper suite: a forged benchmark fails ``vqaudit verify``, and a run changed after ``score`` is refused.

Benchmarks (small builds, once per module): 3 chart groups (seed 0; states original, S, C, M, I), 1 scene group
(seed 0), 2 groups of the bundled photos (seed 0), and the first 6 bundled MM-UPD items. Each forgery is what
an attacker who rewrites ``manifest.json`` would leave (:mod:`tests.tamper.forge`: every hash recomputed), so the
hash checks pass and only the re-derivation can catch it. The expected gold in each message is the builder's own
label of the unforged view (read from the untouched benchmark), which verify must re-derive from the view's world
or graph.

The run (reference:gold on the chart benchmark, scored with 200 draws and bootstrap seed 7) is tampered the ways a
new user tried: metrics.json from another run, outcomes.jsonl edited, a reply changed by an SQL UPDATE, the model
in run.json edited; each is refused with exit 2 and one line naming the file, before any report file is written.
"""

from __future__ import annotations

import json
import math
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.tamper.forge import forge_view, rehash, swap_image

from vqaudit.errors import VqauditError
from vqaudit.score import score_run
from vqaudit.scored_state import metric_problems
from vqaudit.suites.charts.build import build_charts
from vqaudit.suites.photos.build import build_photos
from vqaudit.suites.scenes.build import build_scenes
from vqaudit.suites.upd.build import build_upd
from vqaudit.verify import rebuild_problems, verify_benchmark


def _views(bench: Path) -> dict[str, dict[str, Any]]:
    return {r["view_id"]: r for r in map(json.loads, (bench / "views.jsonl").read_text().splitlines())}


def vqaudit(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the command line in this process (as ``python -m vqaudit``): ``(exit status, stdout, stderr)``."""
    from vqaudit.cli import _run

    capsys.readouterr()
    monkeypatch.setattr(sys, "argv", ["vqaudit", *args])
    code = _run()
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def charts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("charts") / "bench"
    build_charts(out, 3, 0)
    return out


@pytest.fixture(scope="module")
def scenes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("scenes") / "bench"
    build_scenes(out, 1, 0)
    return out


@pytest.fixture(scope="module")
def photos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("photos") / "bench"
    build_photos(out, 2, 0)
    return out


@pytest.fixture(scope="module")
def upd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("upd") / "bench"
    build_upd(out, tsv=None, variant="aad", setting="base,option", seed=0, max_items=6)
    return out


def test_the_true_benchmarks_verify_and_rebuild_byte_identically(
    charts: Path, photos: Path, upd: Path, scenes: Path
) -> None:
    for bench in (charts, photos, upd, scenes):
        assert verify_benchmark(bench) == [], bench
    for bench in (charts, photos, upd):
        assert rebuild_problems(bench) == [], bench


@pytest.mark.parametrize("state", ["original", "S", "C", "I"])
def test_a_forged_chart_gold_fails_verify_with_one_line(charts: Path, tmp_path: Path, state: str) -> None:
    view_id = f"charts-00001-{state}"
    true = _views(charts)[view_id]["obligation"]
    forged_gold = {"kind": "answer", "gold": ["999"], "answer_type": "number", "unit": None}
    bench = forge_view(charts, tmp_path / "b", view_id, lambda r: r.__setitem__("obligation", forged_gold))
    want = "abstain" if true["kind"] == "abstain" else repr(true["gold"])
    assert verify_benchmark(bench) == [
        (
            view_id,
            f"views.jsonl, view {view_id}, field 'obligation': gold ['999'] "
            f"but the view's world and program give {want}",
        )
    ]


def test_a_forged_masked_chart_gold_fails_its_rederivation_and_its_certificate(charts: Path, tmp_path: Path) -> None:
    view_id = "charts-00000-M"
    forged_gold = {"kind": "answer", "gold": ["1"], "answer_type": "number", "unit": None}
    bench = forge_view(charts, tmp_path / "b", view_id, lambda r: r.__setitem__("obligation", forged_gold))
    assert verify_benchmark(bench) == [
        (
            view_id,
            f"views.jsonl, view {view_id}, field 'obligation': gold ['1'] but the view's world and program "
            "give abstain",
        ),
        (view_id, "a witnessed (unanswerable) view must oblige abstention"),
    ]


def test_a_swapped_chart_image_fails_verify(charts: Path, tmp_path: Path) -> None:
    bench = swap_image(charts, tmp_path / "b", "charts-00002-original", "charts-00002-C")
    assert verify_benchmark(bench) == [
        (
            "charts-00002-original",
            "views.jsonl, view charts-00002-original, field "
            "'image': images/charts-00002-original.png is not the render of the view's "
            "world",
        )
    ]


def test_a_chart_world_edited_with_its_gold_still_fails_on_its_image(charts: Path, tmp_path: Path) -> None:
    """A consistent forgery of the S view's world and gold is caught by the image (and by the state rules)."""
    view_id = "charts-00000-S"

    def edit(row: dict[str, Any]) -> None:
        row["meta"]["world"]["title"] = row["meta"]["world"]["title"] + " (forged)"

    bench = forge_view(charts, tmp_path / "b", view_id, edit)
    faults = verify_benchmark(bench)
    assert {v for v, _ in faults} == {view_id}
    assert [p for _, p in faults] == [
        f"views.jsonl, view {view_id}, field 'meta.world': S must change exactly one cell of the original",
        f"views.jsonl, view {view_id}, field 'image': images/{view_id}.png is not the render of the view's world",
    ]


def test_verify_rebuild_names_the_files_a_forgery_changed(charts: Path, tmp_path: Path) -> None:
    bench = forge_view(charts, tmp_path / "b", "charts-00001-C", lambda r: r["obligation"].__setitem__("gold", ["999"]))
    assert [p for p, _ in rebuild_problems(bench)] == ["manifest.json", "views.jsonl"]


def test_a_forged_scene_gold_fails_verify(scenes: Path, tmp_path: Path) -> None:
    view_id, row = next((v, r) for v, r in _views(scenes).items() if r["state"] == "S")
    true = row["obligation"]["gold"][0]
    forged = "no" if true == "yes" else "yes"
    bench = forge_view(scenes, tmp_path / "b", view_id, lambda r: r["obligation"].__setitem__("gold", [forged]))
    assert verify_benchmark(bench) == [
        (
            row["group_id"],
            f"views.jsonl, view {view_id}, field 'obligation': gold "
            f"[{forged!r}] but the program answers {true!r} on the "
            "view's scene",
        )
    ]


@pytest.mark.parametrize("state", ["original", "control"])
def test_a_forged_photo_gold_fails_verify(photos: Path, tmp_path: Path, state: str) -> None:
    view_id = f"photos-00000-{state}"
    answer = _views(photos)[view_id]["obligation"]["gold"][0]
    bench = forge_view(photos, tmp_path / "b", view_id, lambda r: r["obligation"].__setitem__("gold", ["forged"]))
    (fault,) = verify_benchmark(bench)
    assert fault[0] == view_id
    assert fault[1].startswith(
        f"views.jsonl, view {view_id}, field 'obligation': gold ['forged'] but the program answers {answer!r}"
    )


def test_a_forged_photo_m_gold_and_a_swapped_photo_fail_verify(photos: Path, tmp_path: Path) -> None:
    forged = {"kind": "answer", "gold": ["yes"], "answer_type": "text", "unit": None}
    bench = forge_view(photos, tmp_path / "g", "photos-00001-M", lambda r: r.__setitem__("obligation", forged))
    assert verify_benchmark(bench) == [
        (
            "photos-00001-M",
            "views.jsonl, view photos-00001-M, field 'obligation': "
            "gold ['yes'] but the masks remove the evidence (abstain)",
        )
    ]
    swapped = swap_image(photos, tmp_path / "s", "photos-00001-M", "photos-00001-control")
    assert verify_benchmark(swapped) == [
        (
            "photos-00001-M",
            "views.jsonl, view photos-00001-M, field 'image': "
            "images/photos-00001-M.png is not the original photo with the view's "
            "masks (fill) applied",
        )
    ]


def test_a_forged_upd_gold_fails_verify(upd: Path, tmp_path: Path) -> None:
    rows = _views(upd)
    view_id = next(v for v, r in rows.items() if r["state"] == "standard")
    true = rows[view_id]["obligation"]["gold"][0]
    wrong = "A" if true != "A" else "B"
    bench = forge_view(upd, tmp_path / "b", view_id, lambda r: r["obligation"].__setitem__("gold", [wrong]))
    (fault,) = verify_benchmark(bench)
    assert fault[0] == view_id and fault[1].startswith(
        f"views.jsonl, view {view_id}, field 'obligation': answer ['{wrong}'], but the option"
    )
    assert fault[1].endswith(f" is '{true}'")
    aad = next(v for v, r in rows.items() if r["state"] == "aad")
    bench = forge_view(upd, tmp_path / "c", aad, lambda r: r.__setitem__("obligation", rows[view_id]["obligation"]))
    assert (aad, f"views.jsonl, view {aad}, field 'obligation': a aad view must oblige abstention") in verify_benchmark(
        bench
    )


def test_verify_on_the_command_line_exits_1_with_one_line_per_problem(
    charts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = forge_view(charts, tmp_path / "b", "charts-00001-S", lambda r: r["obligation"].__setitem__("gold", ["9"]))
    code, out, _ = vqaudit(monkeypatch, capsys, "verify", str(bench), "--workers", "1")
    true = _views(charts)["charts-00001-S"]["obligation"]["gold"]
    assert code == 1
    assert out.splitlines() == [
        f"FAIL charts-00001-S: views.jsonl, view charts-00001-S, field 'obligation': gold "
        f"['9'] but the view's world and program give {true!r}"
    ]


# --- sealed runs --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scored(charts: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from vqaudit.run import run_benchmark

    run = tmp_path_factory.mktemp("run") / "run"
    run_benchmark(charts, "reference:gold", run)
    score_run(run, n_draws=200, seed=7)
    return run


def _copy(run: Path, tmp_path: Path, name: str = "run") -> Path:
    return Path(shutil.copytree(run, tmp_path / name))


def test_draws_and_seed_are_recorded_and_every_report_states_them(
    scored: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _copy(scored, tmp_path)
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["charts"]["bootstrap"] == {"draws": 200, "seed": 7}
    sealed = json.loads((run / "scored.json").read_text())
    assert sealed["format"] == "vqaudit-scored/2" and sealed["bootstrap"] == {"draws": 200, "seed": 7}
    assert sorted(sealed["files"]) == ["diagnostics.json", "metrics.json", "outcomes.jsonl", "run.json"]
    code, _, err = vqaudit(monkeypatch, capsys, "report", str(run), "--out", str(tmp_path / "rep"))
    assert code == 0, err
    assert "intervals from 200 group-bootstrap draws (bootstrap seed 7)" in (tmp_path / "rep" / "report.md").read_text()
    assert (
        "intervals from 200 group-bootstrap draws (bootstrap seed 7), as scored"
        in (tmp_path / "rep" / "index.html").read_text()
    )
    assert "10,000" not in (tmp_path / "rep" / "report.md").read_text()


def _other_metrics(run: Path) -> None:
    """metrics.json swapped in from another run: the same run rescored with another seed."""
    other = run.parent / "other"
    shutil.copytree(run, other)
    score_run(other, n_draws=200, seed=8)
    shutil.copy(other / "metrics.json", run / "metrics.json")


def _edit_outcomes(run: Path) -> None:
    lines = (run / "outcomes.jsonl").read_text().splitlines()
    row = json.loads(lines[0])
    row["task_correct"] = False
    lines[0] = json.dumps(row)
    (run / "outcomes.jsonl").write_text("\n".join(lines) + "\n")


def _update_reply(run: Path) -> None:
    with sqlite3.connect(run / "responses.sqlite") as db:
        db.execute(
            "UPDATE responses SET text = ? WHERE rowid = 1",
            ('{"answerable": true, "answer": "0", "reason": "edited"}',),
        )


def _edit_model(run: Path) -> None:
    info = json.loads((run / "run.json").read_text())
    info["model"] = "openai:a-better-model@http://127.0.0.1:1/v1"
    (run / "run.json").write_text(json.dumps(info))


@pytest.mark.parametrize(
    ("tamper", "named"),
    [
        (_other_metrics, "metrics.json: changed since `vqaudit score`"),
        (_edit_outcomes, "outcomes.jsonl: changed since `vqaudit score`"),
        (_update_reply, "responses.sqlite: a stored reply was edited since `vqaudit score`"),
        (_edit_model, "run.json: changed since `vqaudit score`"),
    ],
)
def test_a_run_changed_after_score_is_refused_naming_the_file(
    scored: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tamper: Any,
    named: str,
) -> None:
    run = _copy(scored, tmp_path)
    tamper(run)
    code, _, err = vqaudit(monkeypatch, capsys, "report", str(run), "--out", str(tmp_path / "rep"))
    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith(f"error: {run}/{named}") and line.endswith(f"; run `vqaudit score {run}` first")
    assert not (tmp_path / "rep").exists()  # refused before anything was written
    good = _copy(scored, tmp_path, "good")  # a comparison with a good run is refused too, naming the bad one
    code, _, err = vqaudit(monkeypatch, capsys, "report", str(good), str(run), "--out", str(tmp_path / "cmp"))
    assert code == 2 and f"{run}/{named}" in err and not (tmp_path / "cmp").exists()


def test_an_edited_seal_is_refused(
    scored: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _copy(scored, tmp_path)
    _other_metrics(run)
    sealed = json.loads((run / "scored.json").read_text())
    sealed["files"]["metrics.json"] = __import__("hashlib").sha256((run / "metrics.json").read_bytes()).hexdigest()
    (run / "scored.json").write_text(json.dumps(sealed))
    code, _, err = vqaudit(monkeypatch, capsys, "report", str(run), "--out", str(tmp_path / "rep"))
    assert code == 2 and err.strip() == (
        f"error: {run}/scored.json: edited after `vqaudit score` (its seal digest "
        f"does not match); run `vqaudit score {run}` first"
    )


def test_a_run_scored_before_the_seal_reports_with_a_warning(
    scored: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _copy(scored, tmp_path)
    sealed = json.loads((run / "scored.json").read_text())
    old = {
        k: sealed[k] for k in ("n_responses", "n_errors", "last_write", "view_keys_sha256", "benchmark_manifest_sha256")
    }
    (run / "scored.json").write_text(json.dumps({"format": "vqaudit-scored/1", **old}))
    metrics = json.loads((run / "metrics.json").read_text())
    del metrics["charts"]["bootstrap"]  # scored before the settings were recorded
    (run / "metrics.json").write_text(json.dumps(metrics))
    code, _, err = vqaudit(monkeypatch, capsys, "report", str(run), "--out", str(tmp_path / "rep"))
    assert code == 0 and "scored before vqaudit sealed its scored runs" in err
    assert (
        "group-bootstrap draws (run: not recorded, scored before vqaudit recorded them)"
        in (tmp_path / "rep" / "report.md").read_text()
    )


def test_the_report_refuses_a_metric_that_breaks_an_invariant(
    scored: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hand-edited Jk of 0.99 beside Bk 0.417 (an unsealed run: nothing else refuses it) is not printed."""
    run = _copy(scored, tmp_path)
    (run / "scored.json").unlink()
    metrics = json.loads((run / "metrics.json").read_text())
    metrics["charts"].update({"Jk": 0.99, "Bk": 0.417})
    (run / "metrics.json").write_text(json.dumps(metrics))
    code, _, err = vqaudit(monkeypatch, capsys, "report", str(run), "--out", str(tmp_path / "rep"))
    assert code == 2 and not (tmp_path / "rep").exists()
    assert err.strip().splitlines()[-1] == (
        f"error: {run}/metrics.json: run {run}, source charts, metric Jk: 0.99 is "
        f"above Bk 0.417 (Jk <= Bk); not reported (run `vqaudit score {run}` "
        "again)"
    )


def test_metric_invariants() -> None:
    """Finite values, Jk <= Bk, each estimate inside its interval (docs/metrics.md)."""
    good = {
        "charts": {"Jk": 0.25, "Bk": 0.5, "EU": None, "ci": {"Jk": [0.0, 0.5], "Bk": [0.25, 0.75], "EU": [None, None]}}
    }
    assert metric_problems(good) == []
    nan = {"charts": {**good["charts"], "Ebal": math.nan}}
    assert metric_problems(nan) == ["source charts, metric Ebal: not a finite number (nan)"]
    outside = {"charts": {**good["charts"], "Jk": 0.6, "Bk": 0.8}}
    assert metric_problems(outside) == [
        "source charts, metric Jk: 0.6 is outside its interval [0.0, 0.5]",
        "source charts, metric Bk: 0.8 is outside its interval [0.25, 0.75]",
    ]
    swapped = {"charts": {**good["charts"], "Jk": 0.5, "Bk": 0.25, "ci": {}}}
    assert metric_problems(swapped) == ["source charts, metric Jk: 0.5 is above Bk 0.25 (Jk <= Bk)"]
    coarse = {"charts": {**outside["charts"], "bootstrap": {"draws": 5, "seed": 0}}}
    assert metric_problems(coarse) == []  # intervals of fewer than 40 draws need not hold their estimate
    assert len(metric_problems({"charts": {**coarse["charts"], "bootstrap": {"draws": 40, "seed": 0}}})) == 2
    inf_ci = {"upd": {"configs": [{"standard": 0.5, "ci": {"standard": [0.4, math.inf]}}]}}
    assert metric_problems(inf_ci) == ["source upd, metric configs[0].ci.standard[1]: not a finite number (inf)"]
    assert rehash  # the forger's helper is shared with the benchmark forgeries above


def test_coco_fixture_photos_verify_and_a_forgery_fails(tmp_path: Path) -> None:
    """Photos from the COCO fixture (not bundled): masks are re-applied to the benchmark's own original."""
    fixture = Path(__file__).parents[1] / "fixtures" / "photos" / "coco"
    bench = tmp_path / "coco"
    build_photos(
        bench,
        2,
        1,
        images_dir=fixture / "images",
        annotations=fixture / "instances_subset.json",
        mask="inpaint",
        matched=True,
    )
    assert verify_benchmark(bench) == []
    forged = swap_image(bench, tmp_path / "f", "photos-00000-M", "photos-00000-original")
    assert verify_benchmark(forged) == [
        (
            "photos-00000-M",
            "views.jsonl, view photos-00000-M, field 'image': "
            "images/photos-00000-M.png is not the original photo with the view's "
            "masks (inpaint) applied",
        )
    ]
    with pytest.raises(
        VqauditError,
        match=r"manifest.json, field 'input': a benchmark built from coco files is "
        r"rebuilt from them",
    ):
        rebuild_problems(bench)


def test_verify_rebuild_on_the_command_line(
    charts: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = vqaudit(monkeypatch, capsys, "verify", str(charts), "--workers", "1", "--rebuild")
    assert code == 0, err
    # 3 groups x 5 views; one certificate per M view; files = 15 images + 3 certificates
    assert out.strip() == (
        f"{charts}: every image matches views.jsonl; verified 15 chart views, 3 chart "
        "certificates, 0 scene groups, 0 photo groups, 0 UPD views, 18 files in the manifest; a "
        "rebuild from its manifest is byte-identical"
    )
