"""The scenes benchmark builder: four certified views per group, byte-identical for a seed (seed 000 §3.1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vqaudit.errors import VqauditError
from vqaudit.files import read_json, sha256_file
from vqaudit.schema import Group, SceneGroupMeta, SceneViewMeta, View
from vqaudit.store import load_benchmark
from vqaudit.suites.scenes.build import build_group, build_scenes
from vqaudit.suites.scenes.check import check_group
from vqaudit.suites.scenes.programs import answer, dependency_set, execute, program_from_json
from vqaudit.suites.scenes.scene import scene_from_json

N_GROUPS = 2
SEED = 4


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    a = tmp_path_factory.mktemp("scenes_w1")
    b = tmp_path_factory.mktemp("scenes_w2")
    manifest = build_scenes(a, N_GROUPS, SEED, workers=1)
    build_scenes(b, N_GROUPS, SEED, workers=2)
    return a, b, manifest


def _groups(root: Path) -> list[tuple[Group, dict[str, View]]]:
    bench = load_benchmark(root)  # also checks every image against its SHA-256
    views: dict[str, dict[str, View]] = {}
    for v in bench.views:
        views.setdefault(v.group_id, {})[v.state] = v
    return [(g, views[g.group_id]) for g in bench.groups]


def test_same_seed_gives_byte_identical_folders_with_one_or_two_workers(built: tuple[Path, Path, Any]) -> None:
    a, b, _ = built
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert files_a == files_b and len(files_a) == 3 + 4 * N_GROUPS
    for rel in files_a:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_manifest_records_versions_credits_rejections_and_file_hashes(built: tuple[Path, Path, Any]) -> None:
    root, _, manifest = built
    assert read_json(root / "manifest.json") == manifest
    assert manifest["source"] == "scenes" and manifest["n_views"] == 4 * N_GROUPS
    assert manifest["states"] == ["original", "S", "C", "M"]
    assert sum(manifest["m_status"].values()) == N_GROUPS
    assert "CC BY 4.0" in manifest["credits"]["scenes"]
    assert manifest["renderer"] == "vqaudit-scenes-raycast/2"  # float32, adaptive soft shadows (docs/scenes.md)
    for path, digest in manifest["files"].items():
        assert sha256_file(root / path) == digest
    assert manifest["views_sha256"] == sha256_file(root / "views.jsonl")


def test_four_views_per_group_with_one_question_and_the_right_obligations(built: tuple[Path, Path, Any]) -> None:
    for group, views in _groups(built[0]):
        assert sorted(views) == ["C", "M", "S", "original"]
        assert {v.question for v in views.values()} == {group.question}
        assert all(v.source == "scenes" for v in views.values())
        for s in ("original", "S", "C"):
            assert views[s].obligation.kind == "answer"
        m = views["M"]
        assert m.obligation.kind == ("abstain" if m.meta["m_status"] == "ambiguous" else "answer")
        for v in views.values():
            gold = v.obligation.gold
            if gold:
                assert v.obligation.answer_type == ("number" if gold[0].isdigit() else "text")


def test_labels_follow_from_executing_the_program_on_each_views_scene(built: tuple[Path, Path, Any]) -> None:
    for group, views in _groups(built[0]):
        program = program_from_json(views["original"].meta["program"])
        scene = {
            s: scene_from_json({"objects": v.meta["objects"], "directions": group.meta["directions"]})
            for s, v in views.items()
        }
        orig = execute(program, scene["original"])
        assert answer(program, scene["S"]) == orig[-1]
        assert answer(program, scene["C"]) not in (None, orig[-1])
        change = views["S"].meta["evidence"]["change"]
        assert change["object"] not in dependency_set(program, orig)
        assert views["C"].meta["evidence"]["change"]["object"] in dependency_set(program, orig)
        assert len(scene["M"].objects) == len(scene["original"].objects) + 1  # the added occluder


def test_the_independent_checker_rederives_every_label_and_pixel(built: tuple[Path, Path, Any]) -> None:
    root = built[0]
    for group, views in _groups(root):
        assert check_group(list(views.values()), group.meta["camera"], group.meta["directions"], root) == []


def test_the_checker_rejects_designed_faults(built: tuple[Path, Path, Any]) -> None:
    root = built[0]
    group, views = _groups(root)[0]
    cam, dirs = group.meta["camera"], group.meta["directions"]

    def check(**replaced: View) -> list[str]:
        return check_group(list({**views, **replaced}.values()), cam, dirs, root)

    # M without its occluder: the referent is visible and the saved image is not its render
    m = views["M"]
    no_occluder = m.model_copy(update={"meta": {**m.meta, "objects": m.meta["objects"][:-1]}})
    problems = check(M=no_occluder)
    assert any("is visible" in p for p in problems) and any("not the render" in p for p in problems)
    # C relabelled with the original answer
    c = views["C"]
    wrong_gold = c.model_copy(update={"obligation": views["original"].obligation})
    assert any("gold" in p for p in check(C=wrong_gold))
    # S that changes nothing
    s = views["S"]
    no_change = s.model_copy(update={"meta": {**s.meta, "objects": views["original"].meta["objects"]}})
    assert any("S must change" in p for p in check(S=no_change))
    # a witness that is not pixel-identical: the hidden (small) referent made large shows above the occluder
    ev = m.meta["evidence"]
    assert ev["status"] == "ambiguous"  # group 0 of seed 4
    big = {"object": ev["witness"]["object"], "change": {"attribute": "size", "from": "small", "to": "large"}}
    bad = m.model_copy(update={"meta": {**m.meta, "evidence": {**ev, "witness": big}}})
    assert any("witness" in p for p in check(M=bad))
    # an ambiguous M view relabelled answerable
    answerable = m.model_copy(update={"obligation": views["original"].obligation})
    assert any("M view" in p for p in check(M=answerable))


def test_bad_arguments_and_a_non_empty_folder_are_refused(tmp_path: Path) -> None:
    with pytest.raises(VqauditError, match="at least 1"):
        build_scenes(tmp_path / "x", 0, 1)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "f").write_text("x")
    with pytest.raises(VqauditError, match="not empty"):
        build_scenes(tmp_path / "full", 1, 1)


@pytest.mark.slow
def test_without_determined_views_the_builder_redraws_until_m_obliges_abstention() -> None:
    # group 11 of seed 0 ("Are there fewer large purple shiny objects than matte objects?") is a determined
    # masked view in the seed-0 build of docs/scenes.md: hiding a small referent leaves the answer determined
    a = build_group(0, 11)
    assert a.group.meta["m_status"] == "determined"
    assert next(v for v in a.views if v.state == "M").obligation.kind == "answer"
    b = build_group(0, 11, allow_determined=False)
    assert b.group.meta["m_status"] == "ambiguous" and b.group.meta["rejected"].get("no_M_witness", 0) >= 1
    assert next(v for v in b.views if v.state == "M").obligation.kind == "abstain"


def test_a_scenes_benchmark_runs_and_scores_through_the_answerability_pipeline(
    built: tuple[Path, Path, Any], tmp_path: Path
) -> None:
    from vqaudit.run import run_benchmark
    from vqaudit.score import score_run

    root = built[0]
    run_benchmark(root, "reference:gold", tmp_path / "gold", progress=False)
    gold = score_run(tmp_path / "gold", n_draws=50)["scenes"]
    assert gold["Jk"] == 1.0 and gold["Bk"] == 1.0  # the gold policy meets every obligation
    run_benchmark(root, "reference:always-abstain", tmp_path / "abstain", progress=False)
    abstain = score_run(tmp_path / "abstain", n_draws=50)["scenes"]
    assert abstain["Jk"] == 0.0 and abstain["Bk"] == 0.0  # every group has supported views (SPEC section 1)


def test_typed_meta_reads_every_key_the_builder_wrote(built: tuple[Path, Path, Any]) -> None:
    """The typed readers hold exactly the builder's keys and values (the JSON itself is written as before)."""
    bench = load_benchmark(built[0], check_images=False)
    for g in bench.groups:
        assert SceneGroupMeta.of(g).model_dump(exclude_unset=True) == g.meta
    for v in bench.views:
        assert SceneViewMeta.of(v).model_dump(exclude_unset=True) == v.meta
    broken = bench.groups[0].model_copy(
        update={"meta": {k: x for k, x in bench.groups[0].meta.items() if k != "template"}}
    )
    with pytest.raises(VqauditError, match=rf"^group {broken.group_id}: field 'meta.template': Field required$"):
        SceneGroupMeta.of(broken)
