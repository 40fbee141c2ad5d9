"""The photo benchmark builder (seed 000 §3.1): folders, labels re-derived from the files, determinism."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from vqaudit.errors import VqauditError
from vqaudit.files import read_json, sha256_file
from vqaudit.schema import Group, PhotoGroupMeta, PhotoViewMeta, View
from vqaudit.store import load_benchmark
from vqaudit.suites.photos.build import build_photos
from vqaudit.suites.photos.gqa import answer_text, execute
from vqaudit.suites.photos.graph import Step, parse_scene_graph
from vqaudit.suites.photos.masks import FILL_RGB, raster
from vqaudit.suites.photos.sheet import contact_sheet

FIX = Path(__file__).parents[2] / "fixtures" / "photos"
N = 4
SEED = 7


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    a, b = tmp_path_factory.mktemp("photos_w1"), tmp_path_factory.mktemp("photos_w2")
    manifest = build_photos(a, N, SEED, workers=1, matched=True)
    build_photos(b, N, SEED, workers=2, matched=True)
    return a, b, manifest


def _groups(root: Path) -> list[tuple[Group, dict[str, View]]]:
    bench = load_benchmark(root)  # also checks every image against its SHA-256
    views: dict[str, dict[str, View]] = {}
    for v in bench.views:
        views.setdefault(v.group_id, {})[v.state] = v
    return [(g, views[g.group_id]) for g in bench.groups]


def test_same_seed_gives_byte_identical_folders_with_one_or_two_workers(bundled: Any) -> None:
    a, b, manifest = bundled
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files_a == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert len(files_a) == 3 + manifest["n_views"]
    for rel in files_a:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_manifest(bundled: Any) -> None:
    root, _, manifest = bundled
    assert read_json(root / "manifest.json") == manifest
    assert (manifest["source"], manifest["input"], manifest["mask"]) == ("photos", "bundled", "fill")
    assert manifest["states"][:3] == ["original", "control", "M"]
    assert manifest["candidates"] > N and sum(manifest["families"].values()) == N
    assert all("public domain" in c or "CC0" in c for c in manifest["credits"].values())
    for path, digest in manifest["files"].items():
        assert sha256_file(root / path) == digest


def test_labels_follow_from_re_executing_the_program_without_the_masked_objects(bundled: Any) -> None:
    for group, views in _groups(bundled[0]):
        graph = parse_scene_graph(group.meta["image_id"], group.meta["scene_graph"])
        program = tuple(Step(s["operation"], s["argument"], tuple(s["dependencies"])) for s in group.meta["program"])
        gold = answer_text(execute(program, graph).answer)
        assert views["original"].obligation.gold == (gold,) == (group.meta["answer"],)
        assert views["M"].obligation.kind == "abstain"
        for state, same in (("control", True), ("M", False), ("matched", True)):
            if state not in views:
                continue
            removed = set(views[state].meta["masked"]["removed"])
            assert (answer_text(execute(program, graph.without(removed)).answer) == gold) is same, state
        assert set(group.meta["dependencies"]) <= set(views["M"].meta["masked"]["removed"])
        assert not set(group.meta["dependencies"]) & set(views["control"].meta["masked"]["removed"])
        assert group.meta["residual_cue"] == bool(group.meta["residual_cue_reasons"])


def test_masked_pixels_are_grey_and_the_rest_is_the_original(bundled: Any) -> None:
    root = bundled[0]
    for _, views in _groups(root):
        original = np.asarray(Image.open(root / views["original"].image))
        for state in ("control", "M"):
            pixels = np.asarray(Image.open(root / views[state].image))
            inside = raster([tuple(r) for r in views[state].meta["masked"]["rects"]], *original.shape[1::-1])
            assert (pixels[inside] == FILL_RGB).all() and np.array_equal(pixels[~inside], original[~inside])


@pytest.mark.slow
def test_real_coco_photos_with_inpainting(tmp_path: Path) -> None:
    manifest = build_photos(
        tmp_path / "b",
        3,
        1,
        images_dir=FIX / "coco" / "images",
        annotations=FIX / "coco" / "instances_subset.json",
        mask="inpaint",
    )
    assert manifest["input"] == "coco" and manifest["n_views"] == 9
    assert all("Attribution" in c for c in manifest["credits"].values())
    for _, views in _groups(tmp_path / "b"):
        assert [v.meta["mask"] for v in views.values()] == [None, "inpaint", "inpaint"]
    again = build_photos(
        tmp_path / "c",
        3,
        1,
        images_dir=FIX / "coco" / "images",
        workers=2,
        annotations=FIX / "coco" / "instances_subset.json",
        mask="inpaint",
    )
    assert again["files"] == manifest["files"]  # inpainted pixels are identical across processes
    sheet = contact_sheet(tmp_path / "b", tmp_path / "sheet.png")
    assert Image.open(sheet).size[0] == 3 * (300 + 8) + 8  # three states, 300 px cells


def test_gqa_source_on_the_hand_written_files(tmp_path: Path) -> None:
    images = tmp_path / "images"
    images.mkdir()
    Image.new("RGB", (300, 200), (40, 120, 200)).save(images / "img1.jpg")
    manifest = build_photos(
        tmp_path / "b",
        3,
        0,
        source="gqa",
        images_dir=images,
        annotations=FIX / "gqa" / "sceneGraphs.json",
        questions=FIX / "gqa" / "questions.json",
    )
    # 13 questions: q05 and q06 have no control (test_plan.py), the other 11 are candidates.
    assert manifest["candidates"] == 11 and manifest["rejected_candidates"] == {"no_control": 2}
    with pytest.raises(VqauditError, match="only 11 certifiable"):
        build_photos(
            tmp_path / "c",
            12,
            0,
            source="gqa",
            images_dir=images,
            annotations=FIX / "gqa" / "sceneGraphs.json",
            questions=FIX / "gqa" / "questions.json",
        )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_groups": 0}, "--groups must be at least 1"),
        ({"mask": "paint"}, "--mask must be one of fill, blur, inpaint"),
        ({"source": "vqa"}, "--source must be 'coco' or 'gqa'"),
        ({"annotations": FIX / "coco" / "instances_subset.json"}, "needs --images"),
        ({"source": "gqa", "images_dir": FIX, "annotations": FIX / "gqa" / "sceneGraphs.json"}, "needs --questions"),
        ({"images_dir": FIX / "nowhere", "annotations": FIX / "coco" / "instances_subset.json"}, "not found"),
    ],
)
def test_bad_arguments(tmp_path: Path, kwargs: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {"n_groups": 1, **kwargs}
    n = args.pop("n_groups")
    with pytest.raises(VqauditError, match=message):
        build_photos(tmp_path / "b", n, 0, **args)


def test_refuses_a_non_empty_folder_and_a_missing_photo(tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(VqauditError, match="not empty"):
        build_photos(tmp_path / "full", 1, 0)
    with pytest.raises(VqauditError, match="not found in"):
        build_photos(tmp_path / "b", 2, 0, images_dir=tmp_path, annotations=FIX / "coco" / "instances_subset.json")


def test_scored_through_the_answerability_pipeline_with_strata(bundled: Any) -> None:
    import json

    from vqaudit.schema import Response
    from vqaudit.scoring import score_view
    from vqaudit.suites.photos.cues import stratified_metrics

    bench = load_benchmark(bundled[0])

    def reply(view: View, always_answer: bool) -> Response:
        gold = view.obligation.gold[0] if view.obligation.gold else "yes"
        body = (
            {"answerable": True, "answer": gold, "reason": "seen"}
            if always_answer or view.obligation.gold
            else {"answerable": False, "answer": None, "reason": "masked"}
        )
        return Response(view_id=view.view_id, model="test", prompt_id="p", text=json.dumps(body))

    for always_answer, expected in ((False, 1.0), (True, 0.0)):
        outcomes = [score_view(v, reply(v, always_answer)) for v in bench.views]
        report = stratified_metrics(outcomes, bench.groups, stratum="residual_cue", n_draws=0)
        assert report["n_groups"] == N and report["all"]["Jk"] == report["all"]["Bk"] == expected
        flagged = sum(bool(g.meta["residual_cue"]) for g in bench.groups)
        assert report["n_flagged"] == flagged
        for part, n in (("without", N - flagged), ("only", flagged)):
            assert (report[part] or {"n_groups": 0})["n_groups"] == n


def _cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """Run the real console entry point (exit code and one-line errors as a user sees them)."""
    import sys

    from vqaudit.cli import main

    monkeypatch.setattr(sys, "argv", ["vqaudit", *args])
    with pytest.raises(SystemExit) as info:
        main()
    code = info.value.code
    return (code if isinstance(code, int) else 1), capsys.readouterr().err


def test_a_build_that_fails_part_way_leaves_nothing_and_the_rerun_succeeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    coco = FIX / "coco"
    reference = build_photos(
        tmp_path / "ref", 2, 0, images_dir=coco / "images", annotations=coco / "instances_subset.json"
    )
    first, second = (g.meta["file"] for g in load_benchmark(tmp_path / "ref").groups)
    assert first != second  # seed 0: groups 0 and 1 use two different photos of the fixture
    images = tmp_path / "images"
    images.mkdir()
    shutil.copy(coco / "images" / first, images / first)  # group 0 builds, group 1 finds no photo
    out = tmp_path / "work" / "bench"
    args = (
        "build",
        "photos",
        "--images",
        str(images),
        "--annotations",
        str(coco / "instances_subset.json"),
        "--groups",
        "2",
        "--seed",
        "0",
        "--out",
        str(out),
    )
    code, err = _cli(monkeypatch, capsys, *args)
    assert code == 2 and "Traceback" not in err
    assert f"{images / second}: image of" in err and "not found in the --images folder" in err
    assert not out.exists()  # group 0 was written, but only into the temporary folder, now deleted
    assert list((tmp_path / "work").iterdir()) == []  # no hidden leftovers either
    shutil.copy(coco / "images" / second, images / second)
    code, err = _cli(monkeypatch, capsys, *args)  # the same command again: nothing blocks it
    assert code == 0, err
    assert read_json(out / "manifest.json")["files"] == reference["files"]  # same bytes as an unbroken build
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["bench"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--annotations", str(FIX / "coco" / "instances_subset.json")),
            "--source coco needs --images (or neither --images nor --annotations, for the bundled photos)",
        ),
        (
            ("--images", str(FIX / "coco" / "images")),
            "--source coco needs --annotations (or neither --images nor --annotations, for the bundled photos)",
        ),
        (
            ("--source", "gqa", "--images", str(FIX), "--annotations", str(FIX / "gqa" / "sceneGraphs.json")),
            "--source gqa needs --questions",
        ),
        (
            ("--images", str(FIX / "nowhere"), "--annotations", str(FIX / "coco" / "instances_subset.json")),
            f"--images {FIX / 'nowhere'}: not found",
        ),
        (
            ("--images", str(FIX / "coco" / "images"), "--annotations", str(FIX / "none.json")),
            f"--annotations {FIX / 'none.json'}: not found",
        ),
        (
            (
                "--source",
                "gqa",
                "--images",
                str(FIX),
                "--annotations",
                str(FIX / "gqa" / "sceneGraphs.json"),
                "--questions",
                str(FIX / "q.json"),
            ),
            f"--questions {FIX / 'q.json'}: not found",
        ),
    ],
)
def test_photo_errors_name_the_command_line_flags(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    message: str,
) -> None:
    code, err = _cli(monkeypatch, capsys, "build", "photos", *args, "--groups", "1", "--out", str(tmp_path / "b"))
    assert code == 2 and err == f"error: {message}\n"  # one line, the flag the user typed, no Python names
    assert not (tmp_path / "b").exists()


def test_typed_meta_reads_every_key_the_builder_wrote(bundled: Any) -> None:
    """The typed readers hold exactly the builder's keys and values (the JSON itself is written as before)."""
    bench = load_benchmark(bundled[0], check_images=False)
    for g in bench.groups:
        assert PhotoGroupMeta.of(g).model_dump(exclude_unset=True) == g.meta
    for v in bench.views:
        assert PhotoViewMeta.of(v).model_dump(exclude_unset=True) == v.meta
    view = bench.views[0]
    broken = view.model_copy(update={"meta": {**view.meta, "mask": 3}})
    with pytest.raises(VqauditError, match=rf"^view {view.view_id}: field 'meta.mask': Input should be a valid str"):
        PhotoViewMeta.of(broken)
