"""The UPD matcher and judge reader with the final-answer rules of the choice reader."""

from __future__ import annotations

import json
from pathlib import Path

from vqaudit.parsing.choice import ChoiceMatch, extract_choice
from vqaudit.prompts.upd import judge_options
from vqaudit.schema import UPDViewMeta, View
from vqaudit.scoring.upd import match_reply, parse_judge_reply


def _standard(views: list[View]) -> View:
    # The first standard base view with short options: upd-aad-base-544-std-r0, happiness / sadness / anger / love.
    return next(
        v
        for v in views
        if v.state == "standard"
        and v.meta["setting"] == "base"
        and len(v.options) >= 3
        and all(len(o) <= 12 for o in v.options)
    )


def test_final_declarations_abstentions_and_option_text(small_views: list[View]) -> None:
    view = _standard(small_views)
    verdict = match_reply(view, "Looking at the image carefully, the answer is (B).")
    assert verdict is not None and (verdict.meaning, verdict.decided_by) == ("option:B", "matcher:final-declaration")
    verdict = match_reply(view, "Answer: A. On second thought, the correct answer is **C**.")
    assert verdict is not None and verdict.meaning == "option:C"  # the last declaration wins
    assert match_reply(view, "The answer is A or B.") is None  # two labels: left to the judge
    verdict = match_reply(view, "Sorry, I cannot determine this from the picture.")
    assert verdict is not None and (verdict.meaning, verdict.decided_by) == ("abstain", "matcher:abstain-phrase")
    assert view.options == ("happiness", "sadness", "anger", "love")
    verdict = match_reply(view, "The person looks full of anger.")
    assert verdict is not None and (verdict.meaning, verdict.decided_by) == ("option:C", "matcher:option-text-in-reply")
    assert match_reply(view, "Not anger, more like love.") is None  # a negated option text undecides


def test_json_answer_goes_through_the_final_rules(small_views: list[View]) -> None:
    view = _standard(small_views)
    verdict = match_reply(view, '{"answerable": true, "answer": "The answer is C", "reason": "r"}')
    assert verdict is not None
    assert (verdict.meaning, verdict.decided_by) == ("option:C", "matcher:json-final-declaration")


def test_json_answer_beyond_the_float_range_is_not_the_option_inf(small_views: list[View]) -> None:
    # New-user trial: 1e999 decoded as float inf, whose text "inf" then matched an option reading "inf";
    # it is undecided, as the literal Infinity always was (the answerability contract refuses both).
    view = _standard(small_views).model_copy(update={"options": ("inf", "-inf", "0", "1")})
    assert match_reply(view, '{"answerable": true, "answer": "inf", "reason": "r"}') is not None  # the text does
    for number in ("1e999", "-1e999", "1E400", "Infinity", "-Infinity", "NaN"):
        assert match_reply(view, '{"answerable": true, "answer": ' + number + ', "reason": "r"}') is None


def test_judge_replies_in_fences_json_and_declarations(small_views: list[View]) -> None:
    view = _standard(small_views)
    jo = judge_options(view)
    none_letter = next(k for k, m in jo.meaning.items() if m == "none")
    assert parse_judge_reply(view, "B", "j").meaning == "option:B"
    assert parse_judge_reply(view, "The answer is (C).", "j").meaning == "option:C"
    assert parse_judge_reply(view, "```\nA\n```", "j").meaning == "option:A"
    assert parse_judge_reply(view, '{"answer": "B"}', "j").meaning == "option:B"
    assert parse_judge_reply(view, f"**{none_letter}**", "j").meaning == "none"
    assert parse_judge_reply(view, "A or B", "j").meaning == "undecided"
    assert parse_judge_reply(view, "Z", "j").meaning == "undecided"


def test_upd_scoring_reads_the_hand_checked_replies_as_the_choice_reader_does(small_views: list[View]) -> None:
    # The 247 hand-checked replies (tests/fixtures/upd/verbose_choice_replies.jsonl) read through UPD scoring's
    # matcher on a standard base view carrying the row's options, and through parsing.choice.extract_choice: the
    # same letter, abstention or undecided (an ambiguous reply is undecided in both) on every row.
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "upd" / "verbose_choice_replies.jsonl"
    rows = [json.loads(line) for line in fixture.read_text(encoding="utf-8").splitlines()]
    base = _standard(small_views)
    assert UPDViewMeta.of(base).abstain_letter is None and UPDViewMeta.of(base).kind == "standard"
    differ = []
    for row in rows:
        options: dict[str, str] = row["options"]
        assert "".join(options) == "ABCDE"[: len(options)]
        view = base.model_copy(update={"options": tuple(options.values())})
        verdict = match_reply(view, row["reply"])
        upd = None if verdict is None else verdict.meaning.removeprefix("option:")
        found = extract_choice(row["reply"], options)
        ours = found.letter if isinstance(found, ChoiceMatch) else None if found is None else "abstain"
        if upd != ours:
            differ.append((row["reply"], upd, ours))
    assert len(rows) == 247 and differ == []
