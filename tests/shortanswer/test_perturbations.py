"""Perturbation prompts (seed 002 §4), running them through a backend, flip rates and family deltas (§5.3)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from shortanswer.helpers import ScriptedBackend, run_cli
from vqaudit.backends import ModelOptions, Request
from vqaudit.metrics.flips import flip_rate, summarize_perturbations
from vqaudit.prompts.perturbations import BENIGN, PERTURBATIONS, SOURCE, get_variant
from vqaudit.shortanswer.perturb_ask import ask_perturbations
from vqaudit.shortanswer.records import AuditRow


def test_prompt_texts_are_the_papers() -> None:
    # Seed 002 §4, quoted wording; Base and A1-A5 share the suffix "Question: {question} Answer:".
    assert [v.variant_id for v in PERTURBATIONS] == ["Base", "A1", "A2", "A3", "A4", "A5", "B1", "B2", "B3"]
    assert get_variant("Base").render("What is 2+2?") == (
        "Answer the following question based on the image. Give a short exact answer only.\n"
        "Question: What is 2+2? Answer:"
    )
    assert get_variant("A3").template.startswith(
        "Based on the image, provide the exact answer below in as few words as possible."
    )
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
    out = ask_perturbations(
        rows,
        lambda r: (b"\x89PNG-" + r.qid.encode(), "image/png"),
        "scripted:test",
        tmp_path / "p.sqlite",
        variants=("Base", "A1"),
        backend=backend,
    ).replies
    assert out == {"Base": {"1": "3", "2": "red"}, "A1": {"1": "3 cats", "2": "3 cats"}}
    assert len(backend.requests) == 4 and backend.requests[0].image == b"\x89PNG-1"
    again = ScriptedBackend(lambda r: "never")
    ask_perturbations(
        rows,
        lambda r: (b"\x89PNG-" + r.qid.encode(), "image/png"),
        "scripted:test",
        tmp_path / "p.sqlite",
        variants=("Base", "A1"),
        backend=again,
    )
    assert again.requests == []


def test_flip_rates_and_family_deltas_hand_computed() -> None:
    base = {"1": 1.0, "2": 1.0, "3": 0.0, "4": 0.0}
    official = {
        "Base": base,
        "A1": {"1": 0.0, "2": 1.0, "3": 0.0, "4": 0.0},  # 1 flip of 4 -> 0.25; mean 25 vs 50: -25 pp
        "A2": {"1": 1.0, "2": 1.0, "3": 1.0, "4": 0.0},  # 1 flip -> 0.25; +25 pp
        "B1": {"1": 0.0, "2": 0.0, "3": 1.0, "4": 1.0},  # 4 flips -> 1.0; 0 pp
        "B3": {"1": 0.0, "2": 0.0, "3": 0.0, "4": 0.0},
    }  # control: 2 flips -> 0.5, kept apart
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
    from vqaudit.shortanswer.perturb import run_perturbation_audit, summary_markdown

    images = tmp_path / "images"
    images.mkdir()
    for name in ("a.jpg", "b.jpg"):
        (images / name).write_bytes(b"\xff\xd8" + name.encode())
    rows = [
        AuditRow("1", "How many cats?", "3", ("3",), "chartqa", image="a"),
        AuditRow("2", "What colour?", "red", ("red",), "chartqa", image="b.jpg"),
    ]

    def reply(request: Request) -> str:
        if request.prompt_id.endswith("B1"):  # B1 wraps the answer: official flip, canonical keeps it
            return "The answer is 3." if "cats" in request.prompt else "The answer is red."
        if request.prompt_id.endswith("A1"):
            return "4" if "cats" in request.prompt else "red"
        return "3" if "cats" in request.prompt else "red"

    summary, replies = run_perturbation_audit(
        rows,
        "chartqa",
        "scripted:test",
        images,
        tmp_path / "c.sqlite",
        variants=("Base", "A1", "B1"),
        backend=ScriptedBackend(reply),
    )
    assert replies["A1"] == {"1": "4", "2": "red"}
    assert summary.flip_rates == {"A1": 0.5, "B1": 1.0}
    assert summary.official_delta == {"A1": -50.0, "B1": -100.0}
    assert summary.canonical_delta == {"A1": -50.0, "B1": 0.0}  # B1 drift is realization, not task failure
    assert "| A1 | 2 | 50.0 | -50.00 | -50.00 |" in summary_markdown(summary)
    missing = [AuditRow("3", "q", "", ("x",), "chartqa", image="nope")]
    with pytest.raises(VqauditError, match=r"question '3', field 'image'"):
        run_perturbation_audit(
            missing,
            "chartqa",
            "scripted:test",
            images,
            tmp_path / "c.sqlite",
            variants=("Base", "A1"),
            backend=ScriptedBackend(reply),
        )


def test_perturb_command_with_a_replay_backend(tmp_path: Path) -> None:
    import json

    import typer
    from typer.testing import CliRunner

    from vqaudit.cli.perturb import perturb_cmd

    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "x.png").write_bytes(b"\x89PNG")
    preds = tmp_path / "p.jsonl"
    preds.write_text(
        json.dumps({"qid": "1", "prediction": "3", "answer": "3", "image": "x.png", "question": "How many?"}) + "\n"
    )
    replay = tmp_path / "replay.jsonl"
    replay.write_text(
        json.dumps({"view_id": "Base:1", "text": "3"}) + "\n" + json.dumps({"view_id": "A1:1", "text": "three"}) + "\n"
    )
    app = typer.Typer()
    app.command("perturb")(perturb_cmd)
    app.command("noop")(lambda: None)
    res = CliRunner().invoke(
        app,
        [
            "perturb",
            str(preds),
            "--benchmark",
            "chartqa",
            "--model",
            f"replay:{replay}",
            "--images",
            str(tmp_path / "img"),
            "--variants",
            "Base,A1",
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert res.exit_code == 0, res.output
    # "three" fails relaxed accuracy against "3" (a flip); the canonical layer's both-sided vqaEval normalization
    # maps the number word to "3", so the canonical delta is 0.
    assert "| A1 | 1 | 100.0 | -100.00 | +0.00 |" in (tmp_path / "out" / "perturbations.md").read_text()


def test_bucket_deltas_and_variants_without_replies_hand_computed() -> None:
    # Questions 1, 2 scalar, 3 readout. A1 has replies for all, A2 for none (asked, nothing came back), B1 for 2.
    buckets = {"1": "scalar", "2": "scalar", "3": "readout"}
    official = {
        "Base": {"1": 1.0, "2": 1.0, "3": 1.0},
        "A1": {"1": 0.0, "2": 1.0, "3": 1.0},  # scalar mean 50 vs 100 -> -50; readout 0
        "A2": {},
        "B1": {"1": 1.0, "3": 0.0},
    }  # scalar 100 vs 100 -> 0 over question 1; readout -100
    canonical = {
        "Base": dict(official["Base"]),
        "A1": {"1": 1.0, "2": 1.0, "3": 1.0},
        "A2": {},
        "B1": {"1": 1.0, "3": 1.0},
    }
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
    assert any(n.startswith("B1: replies for 2 of 3 questions, 2 of them also answered under Base") for n in s.notes)
    assert any(n.startswith("the benign means average 2 of the 7 benign variants (A1, B1)") for n in s.notes)


def _perturb_files(tmp_path: Path, replay_lines: list[dict[str, str]], out: str = "out") -> list[str]:
    import json

    (tmp_path / "img").mkdir(exist_ok=True)
    (tmp_path / "img" / "x.png").write_bytes(b"\x89PNG")
    (tmp_path / "img" / "y.png").write_bytes(b"\x89PNG-y")
    preds = tmp_path / "p.jsonl"
    preds.write_text(
        json.dumps({"qid": "1", "prediction": "3", "answer": "3", "image": "x.png", "question": "How many?"})
        + "\n"
        + json.dumps(
            {
                "qid": "2",
                "prediction": "[a, b]",
                "answer": "[Austria, Chile]",
                "image": "y.png",
                "question": "Which two countries?",
            }
        )
        + "\n"
    )
    replay = tmp_path / "replay.jsonl"
    replay.write_text("".join(json.dumps(r) + "\n" for r in replay_lines))
    return [
        "perturb",
        str(preds),
        "--benchmark",
        "chartqa",
        "--model",
        f"replay:{replay}",
        "--images",
        str(tmp_path / "img"),
        "--variants",
        "Base,A1",
        "--out",
        str(tmp_path / out),
    ]


def test_perturb_writes_perturbations_json_with_bucket_deltas(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    args = _perturb_files(
        tmp_path,
        [
            {"view_id": "Base:1", "text": "3"},
            {"view_id": "A1:1", "text": "4"},
            {"view_id": "Base:2", "text": "[Austria, Chile]"},
            {"view_id": "A1:2", "text": "[Austria, Chile]"},
        ],
    )
    assert run_cli(monkeypatch, *[*args, "--model-name", "m1"]) == 0
    data = json.loads((tmp_path / "out" / "perturbations.json").read_text())
    assert (data["benchmark"], data["model"], data["metric"], data["n_questions"]) == (
        "chartqa",
        "m1",
        "relaxed_accuracy",
        2,
    )
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


def test_perturb_without_any_matching_reply_is_a_user_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Replay ids are VARIANT:question_id; ids carrying only the question id match nothing.
    args = _perturb_files(tmp_path, [{"view_id": "1", "text": "3"}, {"view_id": "2", "text": "x"}])
    assert run_cli(monkeypatch, *args) == 2
    err = capsys.readouterr().err
    assert "no reply was received for any question under Base, A1" in err
    assert "VARIANT:question_id (e.g. Base:1; question ids here: '1', '2')" in err and "Traceback" not in err
    assert not (tmp_path / "out" / "perturbations.json").exists()
    # Replies for A1 only: nothing to compare against, also an error naming the Base ids.
    args = _perturb_files(tmp_path, [{"view_id": "A1:1", "text": "3"}], out="out2")  # a fresh reply cache
    assert run_cli(monkeypatch, *args) == 2
    assert "no reply was received for any question under Base" in capsys.readouterr().err
    # Replies for Base only although A1 was asked: the flip table would be all n/a, so it is an error too.
    args = _perturb_files(
        tmp_path, [{"view_id": "Base:1", "text": "3"}, {"view_id": "Base:2", "text": "x"}], out="out3"
    )
    assert run_cli(monkeypatch, *args) == 2
    assert "no reply was received for any question under A1 (only Base answered)" in capsys.readouterr().err


def _refused_url() -> str:
    """The URL of a 127.0.0.1 port nothing listens on (bound, then closed): every connection is refused."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _cached(path: Path) -> list[tuple[str, str | None, str | None]]:
    import sqlite3

    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT view_id, text, error FROM responses ORDER BY view_id").fetchall()


def _image_rows(tmp_path: Path, n: int) -> tuple[Path, list[AuditRow]]:
    images = tmp_path / "images"
    images.mkdir(exist_ok=True)
    rows = []
    for i in range(n):
        (images / f"im{i}.png").write_bytes(b"\x89PNG-" + str(i).encode())
        rows.append(AuditRow(f"q{i}", f"What is item {i}?", str(i), (str(i),), "chartqa", image=f"im{i}"))
    return images, rows


def test_perturb_stops_early_when_the_model_is_unreachable(tmp_path: Path) -> None:
    from vqaudit.backends import load_backend
    from vqaudit.backends.judge import EARLY_STOP_CALLS
    from vqaudit.errors import VqauditError
    from vqaudit.shortanswer.perturb import run_perturbation_audit

    url = _refused_url()
    spec = f"openai:m@{url}"

    def backend() -> Any:  # one retry, millisecond backoff: a refused connection fails at once
        return load_backend(spec, ModelOptions(max_retries=1, backoff_base_s=0.001, timeout_s=2.0))

    # 2 questions x (Base, A1) = 4 calls to ask: fewer than 8, so the stop comes when all 4 have failed.
    images, rows = _image_rows(tmp_path, 6)
    cache = tmp_path / "few.sqlite"
    with pytest.raises(VqauditError) as info:
        run_perturbation_audit(rows[:2], "chartqa", spec, images, cache, variants=("Base", "A1"), backend=backend())
    message = str(info.value)
    assert message.startswith(f"model {spec}: its first 4 calls all failed after their retries (last: ")
    assert "connection error" in message and f"cached in {cache}" in message
    assert "VARIANT:question_id" not in message  # no replay advice for a server that is down
    assert len(_cached(cache)) == 4 and all(t is None and e and "connection error" in e for _, t, e in _cached(cache))
    # 6 questions x 2 = 12 calls, one at a time: exactly min(8, 12) = 8 are made, the other 4 never sent.
    cache = tmp_path / "many.sqlite"
    with pytest.raises(VqauditError, match=r"its first 8 calls all failed .*the other 4\. Is the server up\?"):
        run_perturbation_audit(
            rows, "chartqa", spec, images, cache, variants=("Base", "A1"), backend=backend(), concurrency=1
        )
    assert len(_cached(cache)) == EARLY_STOP_CALLS == 8


def test_no_reply_errors_carry_the_last_backend_error(tmp_path: Path) -> None:
    from vqaudit.backends import BackendCallError
    from vqaudit.errors import VqauditError
    from vqaudit.shortanswer.perturb import run_perturbation_audit

    images, rows = _image_rows(tmp_path, 2)

    def reply(request: Request) -> str:  # Base always fails (a non-fatal error), A1 answers
        if request.prompt_id.endswith("Base"):
            raise BackendCallError("HTTP 500 after 6 attempts: overloaded")
        return "1"

    with pytest.raises(VqauditError) as info:
        run_perturbation_audit(
            rows,
            "chartqa",
            "scripted:test",
            images,
            tmp_path / "c.sqlite",
            variants=("Base", "A1"),
            backend=ScriptedBackend(reply),
        )
    # A1 answered, so there is no early stop; Base has no reply, and the message says why, without replay advice.
    assert str(info.value) == (
        "model scripted:test: no reply was received for any question under Base, which every "
        "flip rate and delta compares against (last error: HTTP 500 after 6 attempts: "
        "overloaded)"
    )


def test_perturb_replay_without_matching_ids_names_the_last_error_and_the_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A replay file answers at once, so it is exempt from the early stop: all 4 ids are tried, then the
    # check names both the backend's last error and the ids the replies must carry.
    args = _perturb_files(tmp_path, [{"view_id": "1", "text": "3"}, {"view_id": "2", "text": "x"}])
    assert run_cli(monkeypatch, *args) == 2
    err = capsys.readouterr().err
    assert "under Base, A1 (last error: replay file has no reply for view '" in err
    assert err.rstrip().endswith(
        "replies must carry the ids VARIANT:question_id (e.g. Base:1; question ids here: '1', '2')"
    )


def _set(args: list[str], option: str, value: str) -> list[str]:
    """``args`` with ``option``'s value replaced (or the option added)."""
    out = list(args)
    if option in out:
        out[out.index(option) + 1] = value
    else:
        out += [option, value]
    return out


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--metric-variant", "bogus", "metric 'relaxed_accuracy' has no variant 'bogus'; expected one of"),
        ("--metric-variant", "bogus", "metric 'relaxed_accuracy' has no variant 'bogus'; expected one of"),
        ("--metric", "bogus", "'bogus' is not one of 'vqa_accuracy'"),
        (
            "--benchmark",
            "textvqa",
            "p.jsonl: row 1 (question id '1'), field 'answers': variant 'mmf_textvqa' needs "
            "exactly 10 answers (the script asserts it), got 1 (metric vqa_accuracy, variant "
            "mmf_textvqa)",
        ),
    ],
)
def test_perturb_checks_its_scoring_options_and_the_gold_before_any_call(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    option: str,
    value: str,
    message: str,
) -> None:
    # The replay file would answer everything; the response cache is created only when the first call is about
    # to be made, so its absence shows that nothing was asked.
    args = _perturb_files(tmp_path, [{"view_id": f"{v}:{q}", "text": "3"} for v in ("Base", "A1") for q in "12"])
    assert run_cli(monkeypatch, *_set(args, option, value)) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out" / "responses.sqlite").exists()


def test_perturb_names_the_gold_file_row_of_a_gold_the_metric_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    args = _perturb_files(tmp_path, [{"view_id": "Base:1", "text": "3"}])
    gold = tmp_path / "gold.json"  # TextVQA layout; the second row has 1 answer instead of the 10 annotators'
    ten = {"question_id": 2, "question": "Which two countries?", "image_id": "y", "answers": ["austria"] * 10}
    one = {"question_id": 1, "question": "How many?", "image_id": "x", "answers": ["3"]}
    gold.write_text(json.dumps({"dataset_name": "textvqa", "data": [ten, one]}))
    assert run_cli(monkeypatch, *[*_set(args, "--benchmark", "textvqa"), "--gold", str(gold)]) == 2
    err = capsys.readouterr().err
    assert f"{gold}: row 2 (question id '1'), field 'answers': variant 'mmf_textvqa' needs exactly 10" in err
    assert not (tmp_path / "out" / "responses.sqlite").exists()


def test_perturb_metric_and_the_variant_alias_reach_the_scores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    replies = [
        {"view_id": "Base:1", "text": "3"},
        {"view_id": "A1:1", "text": "3.1"},
        {"view_id": "Base:2", "text": "[Austria, Chile]"},
        {"view_id": "A1:2", "text": "[Austria, Chile]"},
    ]
    # --variant (the metric variant, as in `audit`) and --variants (the perturbations) side by side.
    args = _perturb_files(tmp_path, replies)
    assert run_cli(monkeypatch, *[*args, "--metric-variant", "vlmevalkit"]) == 0
    data = json.loads((tmp_path / "out" / "perturbations.json").read_text())
    assert (data["metric"], data["metric_variant"], data["variants"]) == (
        "relaxed_accuracy",
        "vlmevalkit",
        ["Base", "A1"],
    )
    # "3.1" is within relaxed accuracy's 5% of "3" (no flip); under --metric exact_match it is a miss: question 1
    # flips, question 2 (the same list) does not, so the A1 flip rate is 1 of 2.
    assert data["summary"]["flip_rates"] == {"A1": 0.0}
    args = _perturb_files(tmp_path, replies, out="exact")
    assert run_cli(monkeypatch, *[*args, "--metric", "exact_match"]) == 0
    data = json.loads((tmp_path / "exact" / "perturbations.json").read_text())
    assert (data["metric"], data["metric_variant"]) == ("exact_match", "pix2struct")
    assert data["summary"]["flip_rates"] == {"A1": 0.5}


@pytest.mark.parametrize(
    ("variants", "message"),
    [
        ("Base", "--variants Base: no variant besides Base, so there is nothing to compare"),
        ("Base,Base,A1", "--variants Base,Base,A1: Base is listed twice"),
        ("Base,A1,A1", "--variants Base,A1,A1: A1 is listed twice"),
        ("Base,A9", "--variants Base,A9: unknown perturbation 'A9'; known: Base, A1, A2, A3, A4, A5, B1, B2, B3"),
        ("A1,B1", "--variants A1,B1: Base is missing"),
    ],
)
def test_perturb_refuses_a_bad_variant_list_before_reading_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], variants: str, message: str
) -> None:
    args = _perturb_files(tmp_path, [{"view_id": "Base:1", "text": "3"}])
    assert run_cli(monkeypatch, *_set(args, "--variants", variants)) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()  # refused before the output folder was made or anything asked


@pytest.mark.parametrize("spec", ["reference:gold", "reference:always-answer"])
def test_perturb_refuses_a_reference_policy_as_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], spec: str
) -> None:
    # A reference policy answers a benchmark view's contract (the answerability JSON), not the short answer the
    # perturbation prompts ask for; its replies would be scored as answers.
    args = _perturb_files(tmp_path, [])
    assert run_cli(monkeypatch, *_set(args, "--model", spec)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --model {spec!r}: a reference policy replies in a benchmark view's contract")
    assert not (tmp_path / "out").exists()  # nothing was read, made or asked
