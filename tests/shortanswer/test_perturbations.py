"""Perturbation prompts (seed 002 §4), running them through a backend, flip rates and family deltas (§5.3)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from shortanswer.helpers import ScriptedBackend
from vqaudit.backends import Request
from vqaudit.metrics.flips import flip_rate, summarize_perturbations
from vqaudit.prompts.perturbations import BENIGN, PERTURBATIONS, SOURCE, get_variant, run_perturbations
from vqaudit.suites.shortanswer.records import AuditRow


def test_prompt_texts_are_the_papers() -> None:
    # Seed 002 §4, quoted wording; Base and A1-A5 share the suffix "Question: {question} Answer:".
    assert [v.variant_id for v in PERTURBATIONS] == ["Base", "A1", "A2", "A3", "A4", "A5", "B1", "B2", "B3"]
    assert get_variant("Base").render("What is 2+2?") == (
        "Answer the following question based on the image. Give a short exact answer only.\n"
        "Question: What is 2+2? Answer:")
    assert get_variant("A3").template.startswith(
        "Based on the image, provide the exact answer below in as few words as possible.")
    assert get_variant("B1").render("Q?") == "Q? Answer in one word or number."
    assert get_variant("B2").render("Q?") == "Q? Give only the final short answer."
    assert get_variant("B3").render("Q?") == "Q?."
    assert "B3" not in BENIGN and len(BENIGN) == 7
    assert "§4" in SOURCE


def test_run_perturbations_through_a_backend_is_cached(tmp_path: Path) -> None:
    rows = [AuditRow("1", "How many cats?", "", ("3",), "textvqa"), AuditRow("2", "Colour?", "", ("red",), "textvqa")]

    def reply(request: Request) -> str:
        return "3 cats" if request.prompt_id.endswith("A1") else ("3" if "cats" in request.prompt else "red")

    backend = ScriptedBackend(reply)
    out = run_perturbations(rows, lambda r: (b"\x89PNG-" + r.qid.encode(), "image/png"), "scripted:test",
                            tmp_path / "p.sqlite", variants=("Base", "A1"), backend=backend)
    assert out == {"Base": {"1": "3", "2": "red"}, "A1": {"1": "3 cats", "2": "3 cats"}}
    assert len(backend.requests) == 4 and backend.requests[0].image == b"\x89PNG-1"
    again = ScriptedBackend(lambda r: "never")
    run_perturbations(rows, lambda r: (b"\x89PNG-" + r.qid.encode(), "image/png"), "scripted:test",
                      tmp_path / "p.sqlite", variants=("Base", "A1"), backend=again)
    assert again.requests == []


def test_flip_rates_and_family_deltas_hand_computed() -> None:
    base = {"1": 1.0, "2": 1.0, "3": 0.0, "4": 0.0}
    official = {"Base": base,
                "A1": {"1": 0.0, "2": 1.0, "3": 0.0, "4": 0.0},  # 1 flip of 4 -> 0.25; mean 25 vs 50: -25 pp
                "A2": {"1": 1.0, "2": 1.0, "3": 1.0, "4": 0.0},  # 1 flip -> 0.25; +25 pp
                "B1": {"1": 0.0, "2": 0.0, "3": 1.0, "4": 1.0},  # 4 flips -> 1.0; 0 pp
                "B3": {"1": 0.0, "2": 0.0, "3": 0.0, "4": 0.0}}  # control: 2 flips -> 0.5, kept apart
    canonical = {k: dict(v) for k, v in official.items()}
    canonical["A1"]["1"] = 1.0  # the A1 flip is a realization drift: canonical layer keeps the row correct
    s = summarize_perturbations(official, canonical)
    assert s.flip_rates == {"A1": 0.25, "A2": 0.25, "B1": 1.0, "B3": 0.5}
    assert s.mean_benign_flip_rate == pytest.approx(0.5)  # (0.25 + 0.25 + 1.0) / 3; B3 excluded
    assert s.control_flip_rate == 0.5
    assert s.family_official_delta["A"] == pytest.approx(0.0)  # (-25 + 25) / 2
    assert s.family_canonical_delta["A"] == pytest.approx(12.5)  # (0 + 25) / 2
    assert s.family_official_delta["B"] == pytest.approx(0.0)
    assert math.isnan(flip_rate({}, {}))


def test_perturbation_audit_over_a_prediction_set(tmp_path: Path) -> None:
    from vqaudit.errors import VqauditError
    from vqaudit.suites.shortanswer.perturb import run_perturbation_audit, summary_markdown

    images = tmp_path / "images"
    images.mkdir()
    for name in ("a.jpg", "b.jpg"):
        (images / name).write_bytes(b"\xff\xd8" + name.encode())
    rows = [AuditRow("1", "How many cats?", "3", ("3",), "chartqa", image="a"),
            AuditRow("2", "What colour?", "red", ("red",), "chartqa", image="b.jpg")]

    def reply(request: Request) -> str:
        if request.prompt_id.endswith("B1"):  # B1 wraps the answer: official flip, canonical keeps it
            return "The answer is 3." if "cats" in request.prompt else "The answer is red."
        if request.prompt_id.endswith("A1"):
            return "4" if "cats" in request.prompt else "red"
        return "3" if "cats" in request.prompt else "red"

    summary, replies = run_perturbation_audit(rows, "chartqa", "scripted:test", images, tmp_path / "c.sqlite",
                                              variants=("Base", "A1", "B1"), backend=ScriptedBackend(reply))
    assert replies["A1"] == {"1": "4", "2": "red"}
    assert summary.flip_rates == {"A1": 0.5, "B1": 1.0}
    assert summary.official_delta == {"A1": -50.0, "B1": -100.0}
    assert summary.canonical_delta == {"A1": -50.0, "B1": 0.0}  # B1 drift is realization, not task failure
    assert "| A1 | 50.0 | -50.00 | -50.00 |" in summary_markdown(summary)
    missing = [AuditRow("3", "q", "", ("x",), "chartqa", image="nope")]
    with pytest.raises(VqauditError, match=r"question '3', field 'image'"):
        run_perturbation_audit(missing, "chartqa", "scripted:test", images, tmp_path / "c.sqlite",
                               variants=("Base",), backend=ScriptedBackend(reply))


def test_perturb_command_with_a_replay_backend(tmp_path: Path) -> None:
    import json

    import typer
    from typer.testing import CliRunner

    from vqaudit.cli_shortanswer import perturb_cmd

    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "x.png").write_bytes(b"\x89PNG")
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"qid": "1", "prediction": "3", "answer": "3", "image": "x.png",
                                 "question": "How many?"}) + "\n")
    replay = tmp_path / "replay.jsonl"
    replay.write_text(json.dumps({"view_id": "Base:1", "text": "3"}) + "\n"
                      + json.dumps({"view_id": "A1:1", "text": "three"}) + "\n")
    app = typer.Typer()
    app.command("perturb")(perturb_cmd)
    app.command("noop")(lambda: None)
    res = CliRunner().invoke(app, ["perturb", str(preds), "--benchmark", "chartqa", "--model", f"replay:{replay}",
                                   "--images", str(tmp_path / "img"), "--variants", "Base,A1",
                                   "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    # "three" fails relaxed accuracy against "3" (a flip); the canonical layer's both-sided vqaEval normalization
    # maps the number word to "3", so the canonical delta is 0.
    assert "| A1 | 100.0 | -100.00 | +0.00 |" in (tmp_path / "out" / "perturbations.md").read_text()
