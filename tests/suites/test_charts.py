"""Chart suite: labels, witnesses, determinism and the line-chart leak (seed 000, §3.1-3.2)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from vqaudit.errors import VqauditError
from vqaudit.files import read_json
from vqaudit.schema import ChartGroupMeta, ChartViewMeta, View
from vqaudit.store import load_benchmark
from vqaudit.suites.charts.build import build_charts
from vqaudit.suites.charts.masks import apply_mask, category_mask
from vqaudit.suites.charts.png import decode_png, pixel_sha256
from vqaudit.suites.charts.render import render
from vqaudit.suites.charts.tables import TABLE_NAMES, load_table
from vqaudit.suites.charts.witness import lookup, verify_certificate
from vqaudit.suites.charts.world import World, fraction_text, sample_world
from vqaudit.verify import verify_benchmark


def _world(view: View) -> World:
    return World.from_json(view.meta["world"])


def _by_group(bench_dir: Path) -> dict[str, dict[str, View]]:
    out: dict[str, dict[str, View]] = {}
    for v in load_benchmark(bench_dir).views:
        out.setdefault(v.group_id, {})[v.state] = v
    return out


def test_at_least_eight_real_tables_load_with_values_inside_their_declared_axes() -> None:
    assert len(TABLE_NAMES) >= 8
    for name in TABLE_NAMES:
        table = load_table(name)
        assert len(table.values) >= 12, name
        assert all(table.axis_lo <= Fraction(v) <= table.axis_hi for v in table.values.values())


def test_fraction_text_is_exact() -> None:
    # Hand-checked decimal expansions of terminating rationals; others stay as p/q.
    assert fraction_text(Fraction(25, 2)) == "12.5"
    assert fraction_text(Fraction(1, 4)) == "0.25"
    assert fraction_text(Fraction(3000)) == "3000"
    assert fraction_text(Fraction(-3, 8)) == "-0.375"
    assert fraction_text(Fraction(1, 3)) == "1/3"


def test_five_views_per_group_with_the_right_obligations(chart_bench: Path) -> None:
    groups = _by_group(chart_bench)
    assert len(groups) == 24
    for states in groups.values():
        assert sorted(states) == ["C", "I", "M", "S", "original"]
        for s in ("original", "S", "C"):
            assert states[s].obligation.kind == "answer" and states[s].obligation.answer_type == "number"
        for s in ("M", "I"):
            assert states[s].obligation.kind == "abstain"
        assert len({v.question for v in states.values()}) == 1  # one fixed question per group


def test_s_keeps_the_answer_c_changes_it_and_i_removes_the_category(chart_bench: Path) -> None:
    for states in _by_group(chart_bench).values():
        program = states["original"].meta["program"]
        series, category = program["series"], program["category"]
        answers = {s: lookup(_world(v), series, category) for s, v in states.items()}
        assert answers["original"] is not None
        assert answers["S"] == answers["original"]
        assert answers["C"] is not None and answers["C"] != answers["original"]
        assert answers["I"] is None  # the queried category no longer exists
        assert _world(states["S"]) != _world(states["original"])  # S really edits a cell
        assert fraction_text(answers["original"]) == states["original"].obligation.gold[0]
        assert fraction_text(answers["C"]) == states["C"].obligation.gold[0]


def test_every_world_is_admissible(chart_bench: Path) -> None:
    for v in load_benchmark(chart_bench).views:
        assert _world(v).admissibility_problems() == []


def test_every_witness_rerenders_pixel_identical_with_a_different_answer(chart_bench: Path) -> None:
    assert verify_benchmark(chart_bench) == []
    for states in _by_group(chart_bench).values():
        m = states["M"]
        cert = read_json(chart_bench / m.meta["certificate"])
        wa, wb = World.from_json(cert["world_a"]), World.from_json(cert["world_b"])
        rect = cert["mask"]["rect_px"]
        mask = category_mask(wa, cert["mask"]["category_index"], cert["mask"]["name"])
        assert [mask.x0, mask.y0, mask.x1, mask.y1] == rect
        saved = pixel_sha256(decode_png((chart_bench / m.image).read_bytes()))
        assert pixel_sha256(apply_mask(render(wa), mask)) == saved
        assert pixel_sha256(apply_mask(render(wb), mask)) == saved
        program = cert["program"]
        assert lookup(wa, program["series"], program["category"]) != lookup(wb, program["series"], program["category"])


def test_line_charts_leak_through_the_slot_mask_and_get_the_neighbor_mask(chart_bench: Path) -> None:
    certs = [read_json(p) for p in sorted((chart_bench / "certificates").glob("*.json"))]
    line = [c for c in certs if c["world_a"]["kind"] == "line"]
    assert line, "the fixture build should contain line charts"
    for cert in line:
        # The segments entering the hidden point leave the slot band, so the pixel check rejects it.
        assert cert["mask"]["name"] == "neighbors"
        assert cert["rejected_masks"][0]["mask"] == "slot" and cert["rejected_masks"][0]["differing_pixels"] > 0
    bars = [c for c in certs if c["world_a"]["kind"] in ("vbar", "hbar", "dot")]
    assert bars and all(c["mask"]["name"] == "slot" and c["rejected_masks"] == [] for c in bars)


def test_slot_mask_on_a_line_chart_is_caught_by_the_pixel_check() -> None:
    rng = np.random.default_rng(5)
    world = sample_world(load_table("unemployment"), "line", 1, 6, rng)
    assert world is not None
    other = world.with_value(0, 2, world.values[0][2] + 4)  # 4 percentage points higher, still on the grid
    slot = category_mask(world, 2, "slot")
    leaked = (apply_mask(render(world), slot) != apply_mask(render(other), slot)).any(axis=2).sum()
    assert leaked > 0


def test_checker_rejects_tampered_certificates(chart_bench: Path) -> None:
    m = next(v for v in load_benchmark(chart_bench).views if v.state == "M")
    cert = read_json(chart_bench / m.meta["certificate"])
    image = (chart_bench / m.image).read_bytes()
    assert verify_certificate(cert, image) == []

    same = json.loads(json.dumps(cert))
    same["world_b"] = same["world_a"]
    assert "answers do not differ" in verify_certificate(same, image)

    off_grid = json.loads(json.dumps(cert))
    off_grid["world_b"]["values"][0][0] = "1/7"
    assert any("off the grid" in p for p in verify_certificate(off_grid, image))

    autoscaled = json.loads(json.dumps(cert))
    autoscaled["world_a"]["axis_hi"] = str(Fraction(autoscaled["world_a"]["axis_hi"]) * 2)
    assert any("differs from the declared" in p for p in verify_certificate(autoscaled, image))

    shifted = json.loads(json.dumps(cert))
    shifted["mask"]["rect_px"][0] += 40
    assert any("not the layout" in p for p in verify_certificate(shifted, image))

    pixels = decode_png(image).copy()
    pixels[5, 5] = (0, 0, 0)
    from vqaudit.suites.charts.png import png_bytes

    assert any("differs from the saved image" in p for p in verify_certificate(cert, png_bytes(pixels)))


@pytest.mark.slow
def test_same_seed_gives_byte_identical_output_for_any_worker_count(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    build_charts(a, 6, 3, workers=1)
    build_charts(b, 6, 3, workers=2)
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert files_a == files_b and len(files_a) == 6 * 5 + 6 + 3  # images, certificates, views/groups/manifest
    for rel in files_a:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel
    c = tmp_path / "c"
    build_charts(c, 6, 4, workers=1)
    assert (c / "views.jsonl").read_bytes() != (a / "views.jsonl").read_bytes()


def test_manifest_hashes_match_the_files(chart_bench: Path) -> None:
    import hashlib

    manifest = read_json(chart_bench / "manifest.json")
    assert manifest["seed"] == 11 and manifest["n_groups"] == 24
    for rel, digest in manifest["files"].items():
        assert hashlib.sha256((chart_bench / rel).read_bytes()).hexdigest() == digest
    assert set(manifest["versions"]) >= {"vqaudit", "matplotlib", "numpy", "pillow", "zlib"}
    assert manifest["renderer"] == "vqaudit-charts-agg/2"  # /2: unfiltered PNG at zlib level 1 (chosen by measurement)


def test_build_refuses_a_non_empty_folder(tmp_path: Path) -> None:
    from vqaudit.errors import VqauditError

    (tmp_path / "keep.txt").write_text("precious")
    with pytest.raises(VqauditError, match="not empty"):
        build_charts(tmp_path, 1, 0)
    assert (tmp_path / "keep.txt").read_text() == "precious"


def test_a_build_that_fails_part_way_leaves_no_folder(tmp_path: Path) -> None:
    # Builders write into a temporary sibling (staging.staged_folder): a failure after group 0 was written leaves
    # no partial benchmark that would block ("not empty") or poison (eval reuses OUT/bench) a rerun.
    def fail_after_first(n: int) -> None:
        raise KeyboardInterrupt  # Ctrl-C after the first group was written

    with pytest.raises(KeyboardInterrupt):
        build_charts(tmp_path / "bench", 2, 0, on_group=fail_after_first)
    assert list(tmp_path.iterdir()) == []
    manifest = build_charts(tmp_path / "bench", 1, 0)
    assert manifest["n_groups"] == 1 and list(tmp_path.iterdir()) == [tmp_path / "bench"]


def test_typed_meta_reads_every_key_the_builder_wrote(chart_bench: Path) -> None:
    """The typed readers hold exactly the builder's keys and values (the JSON itself is written as before)."""
    bench = load_benchmark(chart_bench, check_images=False)
    for g in bench.groups:
        assert ChartGroupMeta.of(g).model_dump(exclude_unset=True) == g.meta
    for v in bench.views:
        assert ChartViewMeta.of(v).model_dump(exclude_unset=True) == v.meta
    group = bench.groups[0]
    broken = group.model_copy(update={"meta": {**group.meta, "colour": "red"}})
    with pytest.raises(VqauditError, match=rf"^group {group.group_id}: field 'meta.colour': Extra inputs are not "):
        ChartGroupMeta.of(broken)
