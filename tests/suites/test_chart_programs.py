"""Chart groups over every program kind, certified by the answerability certifier (docs/certifier.md)."""

from __future__ import annotations

import copy
from pathlib import Path

from vqaudit.files import read_json
from vqaudit.store import load_benchmark
from vqaudit.suites.charts.certify import Domain, certify_enumeration
from vqaudit.suites.charts.program_text import program_from_json
from vqaudit.suites.charts.programs import answer_text, category_cells, evaluate_world, world_table
from vqaudit.suites.charts.world import World
from vqaudit.verify import check_certificate, verify_benchmark


def test_program_kinds_and_labels(program_bench: Path) -> None:
    views = load_benchmark(program_bench).views
    ops = {v.meta["program"]["op"] for v in views}
    assert len(ops) >= 6  # 16 groups drawn over 11 program kinds
    for v in views:
        program = program_from_json(v.meta["program"])
        answer = evaluate_world(program, World.from_json(v.meta["world"]))
        if v.state == "I":
            assert answer is None and v.obligation.kind == "abstain"
        elif v.state == "M":
            assert v.obligation.kind == "abstain"
        else:
            assert answer is not None and v.obligation.gold == (answer_text(answer),)
            assert "/" not in v.obligation.gold[0]  # only terminating decimals are asked for


def test_every_certificate_verifies_and_d_views_are_really_determined(program_bench: Path) -> None:
    assert verify_benchmark(program_bench, workers=2) == []
    d_views = [v for v in load_benchmark(program_bench).views if v.state == "D"]
    assert d_views, "the fixture build should contain determined masked views"
    for v in d_views:
        cert = read_json(program_bench / v.meta["certificate"])
        world = World.from_json(cert["world"])
        program = program_from_json(cert["program"])
        category = world.categories[cert["mask"]["category_index"]]
        # Brute force, independent of the recorded proof: every admissible completion gives the gold answer.
        hidden = category_cells(world, category)
        again = certify_enumeration(world_table(world), hidden, Domain.of_world(world), program)
        assert again.determined and answer_text(again.answer) == v.obligation.gold[0]


def test_checker_rejects_a_forged_determined_certificate(program_bench: Path) -> None:
    v = next(v for v in load_benchmark(program_bench).views if v.state == "D")
    cert = read_json(program_bench / v.meta["certificate"])
    image = (program_bench / v.image).read_bytes()
    assert check_certificate(v, cert, image) == []
    other_mask = copy.deepcopy(cert)
    # Claim the mask hides another category while the proof speaks of the first one.
    idx = other_mask["mask"]["category_index"]
    other_mask["mask"]["category_index"] = 0 if idx != 0 else 1
    assert any("hidden cells" in p or "layout" in p for p in check_certificate(v, other_mask, image))
    wrong_answer = copy.deepcopy(cert)
    wrong_answer["answer"] = "123456"
    assert check_certificate(v, wrong_answer, image)
    bad_proof = copy.deepcopy(cert)
    bad_proof["answerability"]["table"][0][2] = "99999"
    assert check_certificate(v, bad_proof, image)
