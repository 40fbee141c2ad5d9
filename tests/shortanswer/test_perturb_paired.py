"""Perturbation deltas are paired: each variant against Base over the questions both answered (seed 002 §5.3).

The new-user trial (8 DocVQA questions; Base has no reply for q0, A1 none for q1, A1's q0 reply is wrong) got an
A1 flip rate of 0 % but a delta of -14.29 pp (6/7 - 7/7: two different sets of 7). Every value below is a hand
computation over the paired question sets, stated next to the assertion.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from shortanswer.helpers import gap_perturb_args, run_cli
from vqaudit.metrics.flips import paired_delta, summarize_perturbations


def test_the_trials_run_has_no_change_over_the_questions_both_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run_cli(monkeypatch, *gap_perturb_args(tmp_path)) == 0
    s = json.loads((tmp_path / "p6" / "perturbations.json").read_text())["summary"]
    # A1 and Base both answered q2-q7 (6), all right on both sides: 0 flips of 6, delta 6/6 - 6/6 = 0.
    # B1 and Base both answered q1-q7 (7), all right: 0 of 7, delta 0.
    assert s["paired"] == {"A1": 6, "B1": 7} and s["scored"] == {"Base": 7, "A1": 7, "B1": 8}
    assert s["flip_rates"] == {"A1": 0.0, "B1": 0.0}
    assert s["official_delta"] == {"A1": 0.0, "B1": 0.0} and s["canonical_delta"] == {"A1": 0.0, "B1": 0.0}
    assert s["family_official_delta"] == {"A": 0.0, "B": 0.0} and s["mean_benign_official_delta"] == 0.0
    assert s["benign_bucket_canonical_delta"]["other-open"] == 0.0
    notes = s["notes"]
    assert (
        "Base: replies for 7 of 8 questions; every flip rate and delta compares only questions Base "
        "answered too" in notes
    )
    assert any(
        n.startswith(
            "A1: replies for 7 of 8 questions, 6 of them also answered under Base; its flip rate "
            "and official/canonical deltas (per bucket too) compare those 6 questions only"
        )
        for n in notes
    )
    assert any("each over its own questions (n: A1 6, B1 7)" in n for n in notes)
    md = (tmp_path / "p6" / "perturbations.md").read_text()
    assert "| A1 | 6 | 0.0 | +0.00 | +0.00 |" in md and "| B1 | 7 | 0.0 | +0.00 | +0.00 |" in md


def test_a_nonzero_paired_delta_through_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Same gaps; B1 also gets q7 wrong. B1 pairs with Base on q1-q7: 1 flip of 7; delta 6/7 - 7/7 = -14.29 pp
    # (the unpaired difference, B1 over 8 = 7/8 minus Base over 7 = 7/7, would be -12.5).
    args = gap_perturb_args(tmp_path, wrong=(("A1", 0), ("B1", 7)))
    assert run_cli(monkeypatch, *args) == 0
    s = json.loads((tmp_path / "p6" / "perturbations.json").read_text())["summary"]
    assert s["flip_rates"]["B1"] == pytest.approx(1 / 7)
    assert s["official_delta"]["B1"] == pytest.approx(-100 / 7)
    assert s["canonical_delta"]["B1"] == pytest.approx(-100 / 7)  # "zzzzzz" is no form of "hotel" either
    assert s["official_delta"]["A1"] == 0.0  # A1's wrong q0 has no Base reply to pair with
    assert s["mean_benign_official_delta"] == pytest.approx(-50 / 7)  # (0 - 100/7) / 2


def test_paired_deltas_families_and_buckets_hand_computed() -> None:
    # Base misses q5, A1 misses q1; A2 answers all. Buckets: q1, q2 scalar; q3-q5 readout.
    buckets = {"1": "scalar", "2": "scalar", "3": "readout", "4": "readout", "5": "readout"}
    official = {
        "Base": {"1": 1.0, "2": 0.0, "3": 1.0, "4": 1.0},
        "A1": {"2": 1.0, "3": 0.0, "4": 0.0, "5": 1.0},
        "A2": {"1": 1.0, "2": 1.0, "3": 1.0, "4": 1.0, "5": 1.0},
    }
    canonical = {k: dict(v) for k, v in official.items()}
    canonical["A1"]["3"] = 1.0  # A1's q3 is a realization drift: canonically still right
    s = summarize_perturbations(official, canonical, buckets, n_questions=5)
    # A1 vs Base over q2, q3, q4: Base 0, 1, 1 (2/3); A1 1, 0, 0 (1/3): 3 flips of 3, delta -33.33 pp
    # (unpaired: A1 2/4 - Base 3/4 = -25). Canonical: A1 1, 1, 0 (2/3) -> 0.
    assert s.paired == {"A1": 3, "A2": 4}
    assert s.flip_rates["A1"] == 1.0
    assert s.official_delta["A1"] == pytest.approx(-100 / 3)
    assert s.canonical_delta["A1"] == pytest.approx(0.0)
    # A2 vs Base over q1-q4: 4/4 - 3/4 = +25 pp, 1 flip of 4.
    assert s.official_delta["A2"] == pytest.approx(25.0) and s.flip_rates["A2"] == 0.25
    assert s.family_official_delta["A"] == pytest.approx((-100 / 3 + 25) / 2)
    assert s.family_canonical_delta["A"] == pytest.approx((0 + 25) / 2)
    # Per bucket, A1: scalar pairs on q2 only (1 - 0 = +100; unpaired 100 - 50 = +50); readout on q3, q4
    # (0 - 2) / 2 = -100. A2: scalar q1, q2: (2 - 1) / 2 = +50; readout q3, q4: 0.
    assert s.bucket_official_delta["A1"]["scalar"] == 100.0 and s.bucket_official_delta["A1"]["readout"] == -100.0
    assert s.bucket_official_delta["A2"]["scalar"] == 50.0 and s.bucket_official_delta["A2"]["readout"] == 0.0
    assert s.family_bucket_official_delta["A"]["scalar"] == 75.0
    assert s.benign_bucket_canonical_delta["readout"] == pytest.approx(-25.0)  # A1 (1 - 2) / 2 = -50, A2 0


def test_a_variant_with_replies_but_none_paired_is_left_out_of_the_means() -> None:
    # B1 answered only q2, which Base did not: no flip rate, no delta, and not averaged as 0 or NaN.
    official = {"Base": {"1": 1.0}, "A1": {"1": 0.0}, "B1": {"2": 1.0}}
    s = summarize_perturbations(official, official, n_questions=2)
    assert math.isnan(s.flip_rates["B1"]) and math.isnan(s.official_delta["B1"]) and s.paired["B1"] == 0
    assert s.mean_benign_official_delta == -100.0  # A1 alone: 0 - 1
    assert math.isnan(s.family_official_delta["B"])
    assert any(
        n.startswith(
            "B1: replies for 1 of 2 questions, none of them also answered under Base; so it has no flip rate or delta"
        )
        for n in s.notes
    )
    assert math.isnan(paired_delta({"1": 1.0}, {}))


def test_a_server_whose_calls_fail_now_and_then_gets_paired_deltas(tmp_path: Path) -> None:
    from shortanswer.helpers import DOC_WORDS, ScriptedBackend
    from vqaudit.backends import BackendCallError, Request
    from vqaudit.shortanswer.perturb import run_perturbation_audit
    from vqaudit.shortanswer.records import AuditRow

    (tmp_path / "imgs").mkdir()
    rows = []
    for i, word in enumerate(DOC_WORDS):
        (tmp_path / "imgs" / f"d{i}.png").write_bytes(b"\x89PNG" + bytes([i]))
        rows.append(AuditRow(f"q{i}", f"What is word {i}?", word, (word,), "docvqa", image=f"d{i}.png"))

    def reply(request: Request) -> str:  # the trial's pattern, from a server: Base:q0 and A1:q1 fail (HTTP 500)
        variant, _, qid = request.request_id.partition(":")
        if (variant, qid) in {("Base", "q0"), ("A1", "q1")}:
            raise BackendCallError("HTTP 500 after 6 attempts: overloaded")
        return "zzzzzz" if (variant, qid) == ("A1", "q0") else DOC_WORDS[int(qid[1:])]

    s, replies = run_perturbation_audit(
        rows,
        "docvqa",
        "scripted:test",
        tmp_path / "imgs",
        tmp_path / "c.sqlite",
        variants=("Base", "A1", "B1"),
        backend=ScriptedBackend(reply),
    )
    assert replies["Base"]["q0"] is None and replies["A1"]["q1"] is None
    # As the replay run: A1 pairs with Base on q2-q7, no flip, delta 0 (unpaired it was 6/7 - 7/7 = -14.29).
    assert (s.paired["A1"], s.flip_rates["A1"], s.official_delta["A1"], s.canonical_delta["A1"]) == (6, 0.0, 0.0, 0.0)
