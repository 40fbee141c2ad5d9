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


def test_bucket_deltas_and_variants_without_replies_hand_computed() -> None:
    # Questions 1, 2 scalar, 3 readout. A1 has replies for all, A2 for none (asked, nothing came back), B1 for 2.
    buckets = {"1": "scalar", "2": "scalar", "3": "readout"}
    official = {"Base": {"1": 1.0, "2": 1.0, "3": 1.0},
                "A1": {"1": 0.0, "2": 1.0, "3": 1.0},  # scalar mean 50 vs 100 -> -50; readout 0
                "A2": {},
                "B1": {"1": 1.0, "3": 0.0}}  # scalar 100 vs 100 -> 0 over question 1; readout -100
    canonical = {"Base": dict(official["Base"]), "A1": {"1": 1.0, "2": 1.0, "3": 1.0}, "A2": {},
                 "B1": {"1": 1.0, "3": 1.0}}
    s = summarize_perturbations(official, canonical, buckets, n_questions=3)
    assert s.bucket_n == {"scalar": 2, "readout": 1, "identifier": 0, "multi-span": 0, "other-open": 0}
    assert s.bucket_official_delta["A1"]["scalar"] == -50.0 and s.bucket_official_delta["B1"]["readout"] == -100.0
    assert math.isnan(s.bucket_official_delta["A1"]["identifier"])  # no identifier question
    # Family A = A1 alone (A2 has no reply and is left out, not averaged in as NaN or 0).
    assert s.family_bucket_official_delta["A"]["scalar"] == -50.0
    assert s.family_official_delta["A"] == pytest.approx(-100 / 3)  # 66.7 - 100
    assert s.benign_bucket_official_delta["scalar"] == -25.0  # (A1 -50 + B1 0) / 2
    assert s.benign_bucket_canonical_delta["readout"] == 0.0
    assert s.mean_benign_flip_rate == pytest.approx((1 / 3 + 1 / 2) / 2)  # A1 1 of 3, B1 1 of 2
    assert s.mean_benign_official_delta == pytest.approx((-100 / 3 - 50) / 2)  # B1: 50 - 100
    assert math.isnan(s.flip_rates["A2"]) and s.scored == {"Base": 3, "A1": 3, "A2": 0, "B1": 2}
    assert "A2: no reply was received for any question; left out of every mean" in s.notes
    assert "B1: replies for 2 of 3 questions; its flip rate and deltas use those 2" in s.notes
    assert any(n.startswith("the benign means average 2 of the 7 benign variants (A1, B1)") for n in s.notes)


def _perturb_files(tmp_path: Path, replay_lines: list[dict[str, str]], out: str = "out") -> list[str]:
    import json

    (tmp_path / "img").mkdir(exist_ok=True)
    (tmp_path / "img" / "x.png").write_bytes(b"\x89PNG")
    (tmp_path / "img" / "y.png").write_bytes(b"\x89PNG-y")
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"qid": "1", "prediction": "3", "answer": "3", "image": "x.png",
                                 "question": "How many?"}) + "\n"
                     + json.dumps({"qid": "2", "prediction": "[a, b]", "answer": "[Austria, Chile]",
                                   "image": "y.png", "question": "Which two countries?"}) + "\n")
    replay = tmp_path / "replay.jsonl"
    replay.write_text("".join(json.dumps(r) + "\n" for r in replay_lines))
    return ["perturb", str(preds), "--benchmark", "chartqa", "--model", f"replay:{replay}",
            "--images", str(tmp_path / "img"), "--variants", "Base,A1", "--out", str(tmp_path / out)]


def _main(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> int:
    import sys

    from vqaudit.cli import main

    monkeypatch.setattr(sys, "argv", ["vqaudit", *args])
    with pytest.raises(SystemExit) as exc:
        main()
    return int(exc.value.code or 0)


def test_perturb_writes_perturbations_json_with_bucket_deltas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    import json

    args = _perturb_files(tmp_path, [{"view_id": "Base:1", "text": "3"}, {"view_id": "A1:1", "text": "4"},
                                     {"view_id": "Base:2", "text": "[Austria, Chile]"},
                                     {"view_id": "A1:2", "text": "[Austria, Chile]"}])
    assert _main(monkeypatch, [*args, "--model-name", "m1"]) == 0
    data = json.loads((tmp_path / "out" / "perturbations.json").read_text())
    assert (data["benchmark"], data["model"], data["metric"], data["n_questions"]) == ("chartqa", "m1",
                                                                                       "relaxed_accuracy", 2)
    s = data["summary"]
    # Question 1 ("3", scalar) flips under A1 ("4" is more than 5% off); question 2 (a list: multi-span) keeps.
    assert s["flip_rates"] == {"A1": 0.5} and s["official_delta"] == {"A1": -50.0}
    assert s["bucket_n"]["scalar"] == 1 and s["bucket_n"]["multi-span"] == 1
    assert s["bucket_official_delta"]["A1"]["scalar"] == -100.0
    assert s["bucket_official_delta"]["A1"]["multi-span"] == 0.0
    assert s["bucket_official_delta"]["A1"]["readout"] is None  # NaN (no readout question) written as null
    assert s["family_bucket_canonical_delta"]["A"]["scalar"] == -100.0
    assert s["family_official_delta"]["B"] is None  # B not run
    assert any("the benign means average 1 of the 7" in n for n in s["notes"])
    assert "| scalar | 1 | -100.00 | -100.00 | n/a | n/a | -100.00 | -100.00 |" in capsys.readouterr().out


def test_perturb_without_any_matching_reply_is_a_user_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    # Replay ids are VARIANT:question_id; ids carrying only the question id match nothing.
    args = _perturb_files(tmp_path, [{"view_id": "1", "text": "3"}, {"view_id": "2", "text": "x"}])
    assert _main(monkeypatch, args) == 2
    err = capsys.readouterr().err
    assert "no reply was received for any question under Base, A1" in err
    assert "VARIANT:question_id (e.g. Base:1; question ids here: '1', '2')" in err and "Traceback" not in err
    assert not (tmp_path / "out" / "perturbations.json").exists()
    # Replies for A1 only: nothing to compare against, also an error naming the Base ids.
    args = _perturb_files(tmp_path, [{"view_id": "A1:1", "text": "3"}], out="out2")  # a fresh reply cache
    assert _main(monkeypatch, args) == 2
    assert "no reply was received for any question under Base" in capsys.readouterr().err
    # Replies for Base only although A1 was asked: the flip table would be all n/a, so it is an error too.
    args = _perturb_files(tmp_path, [{"view_id": "Base:1", "text": "3"}, {"view_id": "Base:2", "text": "x"}],
                          out="out3")
    assert _main(monkeypatch, args) == 2
    assert "no reply was received for any question under A1 (only Base answered)" in capsys.readouterr().err
