"""One reader of choices: ``vqaudit score`` on a UPD run and ``vqaudit audit --benchmark mc`` read a reply alike.

36 hand-written replies (plain letters, verbose declarations, self-corrections, abstentions, reasoning spans in
the Qwen3 / Kimi-VL / GLM-4.5V / Sky-T1 / template-opened formats holding a different letter than the final
answer, and thinking that never finished) are given to the 36 standard views of a 9-item MM-UPD benchmark
(setting ``original``: 4 circular rotations per item, options cat / dog / bird / fish rotated), once through
``vqaudit run`` (a ``replay:`` model) + ``vqaudit score``, once as a multiple-choice prediction file through
``vqaudit audit --benchmark mc``. Both must give the letter written beside each reply (or none).

The expected letters follow the documented rules (``vqaudit.scoring.upd``, ``vqaudit.parsing.choice``,
``vqaudit.parsing.reasoning``): only the final answer after the thinking is read; the last explicit declaration
decides ("The answer is A. Hmm, no... B" declares A: the trailing bare "B" is no declaration, it is not a line of
its own); two letters, a negated declaration, an abstention or a reply never finished decide no letter.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shortanswer.helpers import run_cli
from upd.helpers import row, write_tsv
from vqaudit.shortanswer.mc_extract import extract_choices
from vqaudit.shortanswer.mc_records import MCRow
from vqaudit.store import load_benchmark
from vqaudit.suites.upd.build import build_upd

ANIMALS = ["cat", "dog", "bird", "fish"]
UNFINISHED = "reasoning not finished"

# (reply, expected): a letter, ("text", option) for the letter of that option in the view, or None (no letter)
REPLIES: list[tuple[str, str | tuple[str, str] | None]] = [
    ("B", "B"),
    ("(C)", "C"),
    ("D.", "D"),
    ("A", "A"),
    ("The answer is B.", "B"),
    ("Answer: **D**", "D"),
    ("The answer is A. Hmm, no... B", "A"),
    ("The answer is A. Hmm, no... the answer is C.", "C"),
    ("The animal has feathers and a beak, so the correct option is (C).", "C"),
    ("\\boxed{B}", "B"),
    ("Let me think step by step.\nThe fur is orange.\n\nD", "D"),
    ("A or B", None),
    ("The answer is not A.", None),
    ("I cannot tell from this image.", None),
    ("maybe", None),
    ("", None),
    ("<think>The answer is A.</think>The answer is C.", "C"),
    ("<think>\nB looks right... no, wait. Option B is wrong.\n</think>\n\nD", "D"),
    ("<think>It is clearly A</think>\n\n**B**", "B"),
    ("Looking at it, A seems right.\n</think>\n\nC", "C"),
    ("\u25c1think\u25b7The answer is D.\u25c1/think\u25b7A", "A"),
    ("\u25c1think\u25b7Hmm, C?\u25c1/think\u25b7The answer is (B)", "B"),
    ("<think>A? B?</think><answer><|begin_of_box|>C<|end_of_box|></answer>", "C"),
    ("<think>The box should hold D</think><answer><|begin_of_box|>A<|end_of_box|></answer>", "A"),
    ("<think>The answer is B, I am sure. Let me double-check the", None),
    ("<think>", None),
    ("\u25c1think\u25b7The answer is C", None),
    ("The answer is B.<think>Actually, A", None),  # a span opened after the answer and never closed
    ("<|begin_of_thought|>A<|end_of_thought|><|begin_of_solution|>The answer is D<|end_of_solution|>", "D"),
    ("<thinking>C is tempting</thinking>B", "B"),
    ("<think>The answer is B.</think>", None),  # thinking, then an empty answer
    ('{"answerable": true, "answer": "C"}', "C"),
    ('<think>{"answer": "A"}</think>{"answerable": true, "answer": "B"}', "B"),
    ("It's the dog", ("text", "dog")),
    ("<think>It might be the cat.</think>It is the bird.", ("text", "bird")),
    ("none of the options", None),
]
NEVER_FINISHED = {24, 25, 26, 27}  # the replies whose thinking never closed (indexes into REPLIES)


Read = tuple[list[str], dict[str, tuple[str, ...]], dict[str, dict[str, object]], dict[str, dict[str, object]]]


@pytest.fixture(scope="module")
def read_both_ways(tmp_path_factory: pytest.TempPathFactory) -> Read:
    """``(view ids in REPLIES order, options by view id, score's outcomes by view id, the mc audit's rows by id)``."""
    tmp = tmp_path_factory.mktemp("one-reader")
    items = [row(i, f"Which animal is in picture {i}?", ANIMALS, "B", "attribute_recognition") for i in range(1, 10)]
    build_upd(tmp / "bench", tsv=write_tsv(tmp / "items.tsv", items), variant="aad", setting="original", seed=0)
    views = [v for v in load_benchmark(tmp / "bench").views if v.state == "standard"]
    assert len(views) == len(REPLIES) == 36
    replay = tmp / "replies.jsonl"
    replay.write_text(
        "".join(
            json.dumps({"view_id": v.view_id, "text": reply}) + "\n"
            for v, (reply, _) in zip(views, REPLIES, strict=True)
        ),
        encoding="utf-8",
    )
    mc = tmp / "predictions.jsonl"
    mc.write_text(
        "".join(
            json.dumps(
                {
                    "id": v.view_id,
                    "question": v.question,
                    **dict(zip("ABCD", v.options, strict=True)),
                    "answer": v.obligation.gold[0],
                    "prediction": reply,
                }
            )
            + "\n"
            for v, (reply, _) in zip(views, REPLIES, strict=True)
        ),
        encoding="utf-8",
    )
    monkeypatch = pytest.MonkeyPatch()
    try:
        assert (
            run_cli(monkeypatch, "run", str(tmp / "bench"), "--model", f"replay:{replay}", "--out", str(tmp / "run"))
            == 0
        )
        assert run_cli(monkeypatch, "score", str(tmp / "run"), "--draws", "10") == 0
        assert run_cli(monkeypatch, "audit", str(mc), "--benchmark", "mc", "--out", str(tmp / "audit")) == 0
    finally:
        monkeypatch.undo()
    outcomes = {o["view_id"]: o for o in map(json.loads, (tmp / "run" / "outcomes.jsonl").read_text().splitlines())}
    audit = {r["id"]: r for r in map(json.loads, (tmp / "audit" / "rows.jsonl").read_text().splitlines())}
    options = {v.view_id: v.options for v in views}
    assert set(outcomes) == set(audit) == set(options)
    return [v.view_id for v in views], options, outcomes, audit


def _expected(k: int, options: tuple[str, ...]) -> str | None:
    """The letter REPLIES[k] names in a view showing ``options`` (an option's text: that option's letter)."""
    want = REPLIES[k][1]
    if isinstance(want, tuple):
        return "ABCD"[options.index(want[1])]  # rotations move an option, never drop it
    return want


def test_score_and_the_mc_audit_read_every_reply_alike(read_both_ways: Read) -> None:
    ids, options, outcomes, audit = read_both_ways
    for k, view_id in enumerate(ids):
        outcome, record = outcomes[view_id], audit[view_id]
        by_score = outcome["answer"] if outcome["decision"] == "answer" else None
        want = _expected(k, options[view_id])
        assert (by_score, record["extracted"]) == (want, want), (
            k,
            REPLIES[k][0],
            outcome["decided_by"],
            record["extracted_by"],
        )
        assert record["correct"] is outcome["task_correct"]  # and both score it alike


def test_unfinished_thinking_is_never_credited_and_says_why(read_both_ways: Read) -> None:
    ids, _, outcomes, audit = read_both_ways
    for k, view_id in enumerate(ids):
        unfinished = k in NEVER_FINISHED
        assert (outcomes[view_id]["invalid_reason"] == UNFINISHED) is unfinished
        assert (audit[view_id].get("unparsed_reason") == UNFINISHED) is unfinished
        if unfinished:
            assert audit[view_id]["extracted"] is None and audit[view_id]["correct"] is False
            assert outcomes[view_id]["task_correct"] is False
            assert audit[view_id]["reply"] == REPLIES[k][0]  # kept as read


def test_the_deciding_rule_is_recorded(read_both_ways: Read) -> None:
    ids, _, outcomes, audit = read_both_ways
    by_reply = {REPLIES[k][0]: (outcomes[v]["decided_by"], audit[v]["extracted_by"]) for k, v in enumerate(ids)}
    assert by_reply["B"] == ("matcher:letter", "strict")
    assert by_reply["The answer is B."] == ("matcher:final-declaration", "final-answer")
    assert by_reply["\\boxed{B}"] == ("matcher:final-declaration", "final-answer")
    assert by_reply["It's the dog"] == ("matcher:option-text-in-reply", "matcher:option-text-in-reply")
    assert by_reply['{"answerable": true, "answer": "C"}'][0] == by_reply['{"answerable": true, "answer": "C"}'][1]


def test_the_thinking_would_change_the_letter_if_it_were_read() -> None:
    # Not vacuous: read whole (--reasoning-format none), these replies name the thinking's letter or none at all.
    rows = [
        MCRow(str(k), str(k), "Which animal?", tuple(ANIMALS), "B", REPLIES[k][0], "choice", None, "", f"f:{k}")
        for k in (20, 23, 26, 27)
    ]
    split = [v.extracted for v in extract_choices(rows)]
    whole = [v.extracted for v in extract_choices(rows, reasoning_format="none")]
    assert split == ["A", "A", None, None]
    # whole: the thinking's "The answer is D." is the last declaration; the box's "A" inside tags is no reply the
    # matcher reads; the unfinished thinking's "The answer is C" would be credited; "The answer is B.<think>Actually,
    # A" read whole names B and then a correction to A, which the choice reader leaves undecided (a second label
    # after a declaration in the same breath)
    assert whole == ["D", None, "C", None]


def test_the_hand_checked_verbose_replies_are_read_alike_by_score_and_the_audit(tmp_path: Path) -> None:
    # The 247 hand-checked verbose replies (tests/fixtures/upd/verbose_choice_replies.jsonl), each as a standard
    # MM-UPD view scored by `vqaudit score`'s reader (scoring.upd.score_upd_views) and as a multiple-choice row
    # read by `vqaudit audit --benchmark mc` (shortanswer.mc_extract.extract_choices): the same letter, or none.
    from vqaudit.schema import Response
    from vqaudit.scoring.upd import score_upd_views
    from vqaudit.shortanswer.mc_extract import _view

    path = Path(__file__).resolve().parents[1] / "fixtures" / "upd" / "verbose_choice_replies.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(records) >= 150
    rows = [
        MCRow(
            f"q{k}", f"q{k}", "Which one?", tuple(r["options"].values()), "A", r["reply"], "choice", None, "", f"f:{k}"
        )
        for k, r in enumerate(records)
    ]
    audit = [v.extracted for v in extract_choices(rows)]
    views = [_view(r) for r in rows]
    responses = {r.qid: Response(view_id=r.qid, model="m", prompt_id="p", text=r.reply) for r in rows}
    scored = [
        o.answer if o.decision == "answer" else None
        for o in score_upd_views(views, responses, run_dir=tmp_path, judge=None)
    ]
    assert audit == scored
    # against the hand reading (a letter, or none for an abstention or an undecided reply): no letter differs from
    # the hand's, no letter is read where the hand reads none, and 10 letters the hand reads are left undecided
    # (the KNOWN_UNDECIDED replies of tests/parsing/test_choice_final.py, and the abstentions read as none)
    hand = [r["expected"] if r["expected"] not in (None, "abstain") else None for r in records]
    pairs = list(zip(audit, hand, strict=True))
    assert sum(a is not None and a != h for a, h in pairs) == 0
    assert sum(a is None and h is not None for a, h in pairs) == 10
