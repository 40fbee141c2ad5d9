"""`vqaudit build upd --drop-image-agnostic`: the items blind runs answer correctly are dropped (seed 001 App. 0.B.1).

A designed pair of blind replay runs on a four-item MMBench-layout TSV (AAD, base setting: each item has 4 standard
views, one per circular rotation). Run A answers items 1, 2 and 3 right in every rotation and item 4 right in
rotation 0 only; run B answers item 2 right in every rotation, item 3 right except in rotation 1, and items 1 and 4
wrong. Under circular evaluation (an item is answered when every standard view is right), A answers {1, 2, 3} and B
answers {2}: with k = 2 (the default, all runs) only item 2 is dropped; with k = 1, items 1, 2 and 3.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shortanswer.helpers import run_cli
from upd.helpers import row, write_tsv
from vqaudit.errors import VqauditError
from vqaudit.prompts.upd import LETTERS
from vqaudit.run import run_benchmark
from vqaudit.schema import UPDViewMeta
from vqaudit.score import score_run
from vqaudit.store import RunFolder, load_benchmark
from vqaudit.suites.upd.build import build_upd

RIGHT = {"A": {1: "all", 2: "all", 3: "all", 4: {0}}, "B": {2: "all", 3: {0, 2, 3}}}
"""Per blind run: item -> the rotations answered right ("all": every one)."""


@pytest.fixture(scope="module")
def tsv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rows = [
        row(i, f"Which colour is shape {i}?", ["red", "green", "blue", "grey"], "ABCD"[i - 1], "attribute_recognition")
        for i in range(1, 5)
    ]
    return write_tsv(tmp_path_factory.mktemp("tsv") / "four.tsv", rows)


@pytest.fixture(scope="module")
def blind_runs(tsv: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("blind")
    bench_dir = root / "bench"
    build_upd(bench_dir, tsv=tsv, variant="aad", setting="base", seed=0)
    views = load_benchmark(bench_dir).views
    runs: dict[str, Path] = {}
    for name, right in RIGHT.items():
        lines = []
        for v in views:
            meta = UPDViewMeta.of(v)
            if v.obligation.kind == "abstain":
                text = "None of the above"
            else:
                gold = v.obligation.gold[0]
                wanted = right.get(meta.item_index, set())
                ok = wanted == "all" or (isinstance(wanted, set) and meta.rotation in wanted)
                text = gold if ok else LETTERS[(LETTERS.index(gold) + 1) % 4]
            lines.append(json.dumps({"view_id": v.view_id, "text": text}))
        replies = root / f"{name}.jsonl"
        replies.write_text("\n".join(lines) + "\n", encoding="utf-8")
        runs[name] = root / f"run-{name}"
        run_benchmark(bench_dir, f"replay:{replies}", runs[name], blind=True, progress=False)
        score_run(runs[name], n_draws=1)
    return runs


def _items(bench_dir: Path) -> set[int]:
    return {UPDViewMeta.of(v).item_index for v in load_benchmark(bench_dir, check_images=False).views}


@pytest.mark.parametrize(("k", "dropped"), [(None, [2]), (2, [2]), (1, [1, 2, 3])])
def test_items_dropped_with_k(
    tsv: Path, blind_runs: dict[str, Path], tmp_path: Path, k: int | None, dropped: list[int]
) -> None:
    out = tmp_path / "bench"
    manifest = build_upd(
        out,
        tsv=tsv,
        variant="aad",
        setting="base",
        seed=0,
        drop_image_agnostic=[blind_runs["A"], blind_runs["B"]],
        drop_k=k,
    )
    assert _items(out) == {1, 2, 3, 4} - set(dropped)
    record = manifest["image_agnostic"]
    assert record["dropped"] == dropped and record["n_dropped"] == len(dropped)
    assert record["k"] == (k or 2) and record["n_runs"] == 2
    assert [(r["path"], r["n_items"], r["n_correct"]) for r in record["runs"]] == [
        (str(blind_runs["A"].resolve()), 4, 3),
        (str(blind_runs["B"].resolve()), 4, 1),
    ]
    assert all(
        r["model"].startswith("replay:") and r["model_identity"].startswith(r["model"] + "@sha256:")
        for r in record["runs"]
    )
    assert "by hand" in record["hand_check"]
    assert json.loads((out / "manifest.json").read_text())["image_agnostic"] == record


def test_cli_drops_and_records(
    tsv: Path,
    blind_runs: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "bench"
    code = run_cli(
        monkeypatch,
        "build",
        "upd",
        "--out",
        str(out),
        "--tsv",
        str(tsv),
        "--variant",
        "aad",
        "--setting",
        "base",
        "--drop-image-agnostic",
        str(blind_runs["A"]),
        "--drop-image-agnostic",
        str(blind_runs["B"]),
        "--drop-k",
        "1",
    )
    assert code == 0
    assert "3 image-agnostic items dropped" in capsys.readouterr().out
    assert _items(out) == {4}


def test_refusals(tsv: Path, blind_runs: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(VqauditError, match="--drop-k: expected 1 to 2"):
        build_upd(
            tmp_path / "a",
            tsv=tsv,
            variant="aad",
            setting="base",
            seed=0,
            drop_image_agnostic=[blind_runs["A"], blind_runs["B"]],
            drop_k=3,
        )
    with pytest.raises(VqauditError, match="--drop-k counts blind runs"):
        build_upd(tmp_path / "b", tsv=tsv, variant="aad", setting="base", seed=0, drop_k=1)
    # a run made with images is not a blind pass
    sighted = tmp_path / "sighted"
    bench_dir = RunFolder(blind_runs["A"]).benchmark()
    run_benchmark(bench_dir, "reference:gold", sighted, progress=False)
    score_run(sighted, n_draws=1)
    with pytest.raises(VqauditError, match="field 'blind': the run was made with images"):
        build_upd(tmp_path / "c", tsv=tsv, variant="aad", setting="base", seed=0, drop_image_agnostic=[sighted])
    # a blind run on a build of other input files: its item indices name other questions
    other = write_tsv(
        tmp_path / "other.tsv",
        [row(i, f"Which shape {i}?", ["a", "b", "c", "d"], "A", "attribute_recognition") for i in range(1, 5)],
    )
    with pytest.raises(VqauditError, match="built from other input files"):
        build_upd(
            tmp_path / "d", tsv=other, variant="aad", setting="base", seed=0, drop_image_agnostic=[blind_runs["A"]]
        )
