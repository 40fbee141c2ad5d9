"""The short-answer audit, its judge and the perturbations read only a reasoning model's final answer.

Hand-written predictions in the documented formats (``vqaudit.parsing.reasoning``): Qwen3 ``<think>...</think>``,
Kimi-VL ``◁think▷...◁/think▷``, GLM-4.5V ``<think>..</think><answer><|begin_of_box|>..<|end_of_box|></answer>``,
a reply that starts inside the span (the chat template opened it) with only ``</think>``, and one whose thinking
never closed. Each row's expected final text is what a careful reader takes; the scores are hand computations
of ANLS (DocVQA's metric: 1 for an exact match, 0 for a word with normalized edit distance >= 0.5).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shortanswer.helpers import ScriptedBackend, run_cli
from vqaudit.backends import Completion, Request
from vqaudit.errors import VqauditError
from vqaudit.shortanswer.audit import audit_rows, run_audit
from vqaudit.shortanswer.judge import parse_verdict
from vqaudit.shortanswer.perturb import score_replies
from vqaudit.shortanswer.records import AuditRow, JoinReport

QWEN3_THINKING = "The total looks like 42, or is it 24? The header says 24."
ROWS: list[tuple[str, str, str, str | None]] = [
    # (qid, prediction as the model wrote it, gold, the final answer a careful reader takes; None: never finished)
    ("q1", f"<think>\n{QWEN3_THINKING}\n</think>\n\n24", "24", "24"),
    ("q2", "\u25c1think\u25b7The sign might read STOP or SHOP.\u25c1/think\u25b7SHOP", "SHOP", "SHOP"),
    (
        "q3",
        "<think>The city is Paris or Lyon; the caption says Lyon.</think>"
        "<answer><|begin_of_box|>Lyon<|end_of_box|></answer>",
        "Lyon",
        "Lyon",
    ),
    ("q4", "The stamp could read 1999, but it says 2001.\n</think>\n\n2001", "2001", "2001"),
    # the gold appears only in the thinking: never credited, by no layer (RA-Eval would find "Paris" in it)
    ("q5", "<think>Is it Paris? No, the tower is Blackpool Tower.</think>Blackpool", "Paris", "Blackpool"),
    ("q6", "<think>The answer is clearly 7 because the", "7", None),
    ("q7", "Tokyo", "Tokyo", "Tokyo"),
]


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "thinking-model.jsonl"
    path.write_text(
        "".join(
            json.dumps({"question_id": q, "question": f"question {q}?", "prediction": p, "answers": [g]}) + "\n"
            for q, p, g, _ in ROWS
        ),
        encoding="utf-8",
    )
    return path


def _rows_jsonl(folder: Path) -> dict[str, dict[str, Any]]:
    lines = (folder / "rows.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["qid"]: r for r in map(json.loads, lines)}


def test_every_layer_scores_the_final_answer_and_rows_keep_the_raw_prediction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "audit"
    assert run_cli(monkeypatch, "audit", str(_file(tmp_path)), "--benchmark", "docvqa", "--out", str(out)) == 0
    rows = _rows_jsonl(out)
    for qid, raw, _, final in ROWS:
        assert rows[qid]["prediction"] == raw  # byte-exact, as read
        if qid == "q7":  # no reasoning: the row is written as before the split existed
            assert "final" not in rows[qid] and "reasoning_chars" not in rows[qid]
        else:
            assert rows[qid]["final"] == final
    # ANLS by hand: q1-q4 and q7 exact (1); "Blackpool" vs "Paris" and the unfinished "" score 0: 5 / 7
    assert {q: r["official"] for q, r in rows.items()} == {
        "q1": 1.0,
        "q2": 1.0,
        "q3": 1.0,
        "q4": 1.0,
        "q5": 0.0,
        "q6": 0.0,
        "q7": 1.0,
    }
    assert rows["q1"]["reasoning_chars"] == len(QWEN3_THINKING)  # the span's text, tags and outer blanks off
    assert rows["q6"]["reasoning_not_finished"] is True and rows["q6"]["final"] is None
    assert not any("reasoning_not_finished" in r for q, r in rows.items() if q != "q6")
    assert rows["q5"]["ra_eval"] is False and rows["q6"]["ra_eval"] is False  # gold only in the thinking
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["scores"]["Overall"] == pytest.approx(100 * 5 / 7)
    assert report["reasoning"] == {"with_reasoning": 6, "not_finished": 1}  # q1-q6 held reasoning; q6 never closed
    assert report["ra_eval"]["recovered"] == 0.0
    assert report["failures"]["empty"] == 1  # q6: its final answer is empty
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "Reasoning: 6 of 7 joined predictions held reasoning" in md and "reasoning not finished: 1" in md


def test_without_the_split_the_thinking_would_be_scored(tmp_path: Path) -> None:
    # The same file under --reasoning-format none: the layers read the raw replies, RA-Eval credits the "Paris"
    # of q5's thinking, and only q7 scores (every other raw reply is a long text against a short gold).
    result = run_audit(_file(tmp_path), "docvqa", reasoning_format="none")
    by_qid = {r.qid: r for r in result.rows}
    assert by_qid["q5"].ra_eval is True
    assert result.scores["Overall"] == pytest.approx(100 / 7)
    assert result.reasoning is None


def test_a_file_without_reasoning_reports_no_reasoning_key(tmp_path: Path) -> None:
    path = tmp_path / "plain.jsonl"
    path.write_text(json.dumps({"question_id": "1", "prediction": "24", "answers": ["24"]}) + "\n", encoding="utf-8")
    result = run_audit(path, "docvqa")
    assert result.reasoning is None and result.join.rows[0].raw is None


# --- the judge: shown the final answer; read after its own thinking ----------------------------------------------


def _joined(tmp_path: Path) -> JoinReport:
    return run_audit(_file(tmp_path), "docvqa").join


def test_the_judge_sees_the_final_answer_and_is_read_after_its_thinking(tmp_path: Path) -> None:
    def reply(request: Request) -> str:  # thinks "yes" first, then answers no: the verdict is no
        return "<think>Maybe yes, they could be the same place... no.</think>\n\nNo."

    judge = ScriptedBackend(reply)
    result = audit_rows(
        _joined(tmp_path),
        "docvqa",
        judge="scripted:test",
        cache_dir=tmp_path / "cache",
        judge_backend=judge,
        n_draws=20,
    )
    prompts = {r.request_id: r.prompt for r in judge.requests}
    assert sorted(prompts) == ["judge:q5", "judge:q6"]  # the official error pool
    assert "Model answer: Blackpool\n" in prompts["judge:q5"] and "Is it Paris" not in prompts["judge:q5"]
    assert "Model answer: \n" in prompts["judge:q6"] and "clearly 7" not in prompts["judge:q6"]
    assert result.judge is not None and (result.judge.accepted, result.judge.undecided) == (0, 0)


def test_a_replay_judge_that_never_finishes_thinking_says_so_and_shows_a_reply(tmp_path: Path) -> None:
    replay = tmp_path / "judge.jsonl"
    thinking = "<think>Let me compare the two answers carefully. The reference is " + "x" * 300
    replay.write_text(
        "".join(json.dumps({"view_id": f"judge:{q}", "text": thinking}) + "\n" for q in ("q5", "q6")), encoding="utf-8"
    )
    with pytest.raises(VqauditError) as info:
        audit_rows(_joined(tmp_path), "docvqa", judge=f"replay:{replay}", cache_dir=tmp_path / "cache", n_draws=20)
    message = str(info.value)
    assert "2 of 2 verdicts are undecided" in message
    assert "2 of them reasoning never finished" in message
    assert repr(thinking[:200]) + "..." in message  # one reply, as stored, cut to 200 characters


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("<think>yes? The model says 24, the gold is 42.</think>no", False),  # Qwen3
        ("The two differ... or do they? They are the same number.\n</think>\n\nYes", True),  # template-opened
        ("\u25c1think\u25b7Not equivalent at first sight.\u25c1/think\u25b7equivalent", True),  # Kimi-VL
        ("<think>Looks equivalent.</think><answer><|begin_of_box|>no<|end_of_box|></answer>", False),  # GLM-4.5V
        ("<think>The answer is yes", None),  # never finished: undecided, whatever the thinking says
        ("Yes.", True),  # no thinking: read as before
    ],
)
def test_parse_verdict_reads_after_the_thinking(reply: str, verdict: bool | None) -> None:
    assert parse_verdict(reply) is verdict


def test_parse_verdict_with_reasoning_sent_apart() -> None:
    assert parse_verdict("no", server_reasoning="They are equivalent, yes.") is False
    assert parse_verdict(None, server_reasoning="Still thinking: yes") is None  # no content: never finished


class _ServerThinkingJudge:
    """A judge whose server sends the reasoning apart from the content (``reasoning_content``)."""

    spec = "scripted:server"

    async def complete(self, request: Request) -> Completion:
        if request.request_id == "judge:q5":
            return Completion(text="no", reasoning="Blackpool is not Paris. Yes, certainly not.")
        return Completion(text=None, reasoning="The model said nothing, so", finish_reason="length")

    async def aclose(self) -> None:
        return None


def test_a_judge_whose_server_sends_reasoning_apart(tmp_path: Path) -> None:
    rows = _joined(tmp_path)
    one_unfinished = audit_rows(
        rows,
        "docvqa",
        judge="scripted:server",
        cache_dir=tmp_path / "c",
        judge_backend=_ServerThinkingJudge(),
        n_draws=20,
    )
    judge = one_unfinished.judge
    assert judge is not None and (judge.pool, judge.accepted, judge.undecided) == (2, 0, 1)
    by_qid = {r.qid: r.judge for r in one_unfinished.rows}
    assert by_qid["q5"] is False and by_qid["q6"] is None


# --- perturbations: every variant's reply is split before it is scored ---------------------------------------------


def test_perturbation_replies_are_split_before_scoring() -> None:
    rows = [
        AuditRow("q1", "What is the total?", "", ("24",), "docvqa"),
        AuditRow("q2", "Which city?", "", ("Lyon",), "docvqa"),
    ]
    replies: dict[str, dict[str, str | None]] = {
        "Base": {"q1": "<think>42? no.</think>24", "q2": "\u25c1think\u25b7Lyon?\u25c1/think\u25b7Paris"},
        "A1": {"q1": "<think>It is 24", "q2": None},  # q1 never finished; q2: no text, reasoning sent apart
    }
    official, canonical = score_replies(rows, replies, "anls", "paper", reasoning={"A1": {"q2": "Lyon, I think"}})
    # Base: "24" exact (1), "Paris" vs "Lyon" (0); A1: both unfinished, scored as the empty answer (0)
    assert official == {"Base": {"q1": 1.0, "q2": 0.0}, "A1": {"q1": 0.0, "q2": 0.0}}
    assert canonical["Base"] == {"q1": 1.0, "q2": 0.0}
    raw, _ = score_replies(rows, replies, "anls", "paper", reasoning_format="none")
    assert raw["Base"]["q1"] == 0.0 and "q2" not in raw["A1"]  # unsplit: the thinking is scored; no text, no score


def test_audit_reasoning_format_option_reaches_every_layer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "none"
    args = ["audit", str(_file(tmp_path)), "--benchmark", "docvqa", "--out", str(out)]
    assert run_cli(monkeypatch, *args, "--reasoning-format", "none") == 0
    rows = _rows_jsonl(out)
    assert rows["q1"]["official"] == 0.0 and rows["q5"]["ra_eval"] is True  # the raw replies were read
    assert "reasoning" not in json.loads((out / "report.json").read_text(encoding="utf-8"))
    # a named format splits only its own spans: "kimi" leaves Qwen3's <think> in place and splits q2's ◁think▷
    assert run_cli(monkeypatch, *args[:-1], str(tmp_path / "kimi"), "--reasoning-format", "kimi") == 0
    kimi = _rows_jsonl(tmp_path / "kimi")
    assert (kimi["q1"]["official"], kimi["q2"]["official"]) == (0.0, 1.0)


def test_perturb_scores_each_variants_final_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "x.png").write_bytes(b"\x89PNG")
    preds = tmp_path / "p.jsonl"
    preds.write_text(
        json.dumps({"qid": "1", "prediction": "3", "answer": "3", "image": "x.png", "question": "How many?"}) + "\n"
    )
    replay = tmp_path / "replay.jsonl"
    replay.write_text(
        "".join(
            json.dumps(r) + "\n"
            for r in (
                {"view_id": "Base:1", "text": "<think>Four? No, three bars.</think>3"},
                {"view_id": "A1:1", "text": "\u25c1think\u25b7It is 3.\u25c1/think\u25b74"},
            )
        )
    )
    args = [
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
    ]
    assert run_cli(monkeypatch, *args, "--out", str(tmp_path / "out")) == 0
    summary = json.loads((tmp_path / "out" / "perturbations.json").read_text())["summary"]
    # relaxed accuracy: Base's final "3" is right, A1's final "4" is wrong (25% off): one flip, -100 points
    assert summary["flip_rates"] == {"A1": 1.0} and summary["official_delta"] == {"A1": -100.0}
    replies = json.loads((tmp_path / "out" / "replies.json").read_text())
    assert replies["A1"]["1"] == "\u25c1think\u25b7It is 3.\u25c1/think\u25b74"  # kept as received
    # read whole, neither reply is a number alone: both wrong, no flip
    assert run_cli(monkeypatch, *args, "--out", str(tmp_path / "whole"), "--reasoning-format", "none") == 0
    whole = json.loads((tmp_path / "whole" / "perturbations.json").read_text())["summary"]
    assert whole["flip_rates"] == {"A1": 0.0}


def test_every_tag_the_splitter_knows_starts_with_a_tag_start() -> None:
    # split_predictions skips the splitter for predictions holding no TAG_STARTS character: true only while
    # every span and box tag of parsing.reasoning starts with one of them
    from vqaudit.parsing import reasoning
    from vqaudit.shortanswer.join import TAG_STARTS, split_predictions

    tags = [t for f in reasoning.FORMATS for t in (f.open, f.close, *(f.answer or ()))]
    tags += [t for pair in reasoning._BOXES for t in pair]
    assert tags and all(t[0] in TAG_STARTS for t in tags)
    from vqaudit.shortanswer.records import Prediction

    splits = split_predictions([Prediction("1", "24"), Prediction("2", "<think>a</think>b")])
    assert splits[0] is None and splits[1] is not None and splits[1].final == "b"


# --- a judge served as vLLM serves a Qwen3 thinking model (tests/fixtures/reasoning_server.py, 127.0.0.1) ---------


def _reasoning_server() -> Any:
    from fixture_modules import FIXTURES, load_fixture_module

    return load_fixture_module("reasoning_server", FIXTURES / "reasoning_server.py")


def test_a_thinking_judge_behind_a_local_server(tmp_path: Path) -> None:
    from vqaudit.backends import ModelOptions, load_backend

    server_module = _reasoning_server()
    chat_reply = server_module.chat_reply

    def reply(body: dict[str, Any]) -> Any:
        prompt = body["messages"][0]["content"]
        if "Model answer: Blackpool" in prompt:  # reasoning parser on: the thinking comes apart from the verdict
            return chat_reply("no", reasoning_content="Blackpool and Paris... yes? No, different cities.")
        return chat_reply("<think>An empty answer. Yes or no? no.</think>\n\nno")  # no parser: the span in content

    with server_module.ReasoningServer(reply) as server:
        spec = f"openai:qwen3@{server.url}"
        judge = load_backend(spec, ModelOptions(max_retries=0, timeout_s=5.0))
        result = audit_rows(
            _joined(tmp_path), "docvqa", judge=spec, cache_dir=tmp_path / "a", judge_backend=judge, n_draws=20
        )
        assert result.judge is not None and (result.judge.accepted, result.judge.undecided) == (0, 0)
        assert {r.qid: r.judge for r in result.rows if r.judge is not None} == {"q5": False, "q6": False}
        assert all("Is it Paris" not in b["messages"][0]["content"] for b in server.bodies)  # final answers only

    def cut(body: dict[str, Any]) -> Any:  # out of tokens while thinking: no content at all
        return chat_reply(None, finish_reason="length", reasoning_content="Let me compare the reference and")

    with server_module.ReasoningServer(cut) as server:
        spec = f"openai:qwen3@{server.url}"
        judge = load_backend(spec, ModelOptions(max_retries=0, timeout_s=5.0))
        with pytest.raises(VqauditError) as info:
            audit_rows(
                _joined(tmp_path), "docvqa", judge=spec, cache_dir=tmp_path / "b", judge_backend=judge, n_draws=20
            )
    message = str(info.value)
    assert "2 of 2 verdicts are undecided" in message and "2 of them reasoning never finished" in message
    assert "no content; reasoning sent apart 'Let me compare the reference and'" in message
