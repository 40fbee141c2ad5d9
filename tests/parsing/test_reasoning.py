"""The reasoning split: each model family's documented format, read as a careful reader reads it.

The replies are written for these tests in each family's documented output format:
- Qwen3 / Qwen3-VL Thinking and DeepSeek-R1: ``<think>\\n...\\n</think>\\n\\nANSWER``; with the chat template's
  ``add_generation_prompt`` the template itself ends with ``<think>\\n`` so the reply holds only ``</think>``
  (Qwen3 model card, "Thinking mode"; DeepSeek-R1 usage recommendations);
- GLM-4.5V / GLM-4.1V-Thinking: ``<think>...</think><answer>...<|begin_of_box|>X<|end_of_box|>...</answer>``
  (the GLM-V repository's inference notes: the answer box marks the final answer);
- Kimi-VL-Thinking: ``◁think▷...◁/think▷ANSWER`` (its model card);
- Sky-T1 / OpenThoughts: ``<|begin_of_thought|>...<|end_of_thought|>`` then
  ``<|begin_of_solution|>...<|end_of_solution|>`` (their system prompt);
- prompted chain of thought in ``<thinking>``/``<reasoning>`` tags.
"""

from __future__ import annotations

import json

import pytest

from vqaudit.parsing import parse_answerability
from vqaudit.parsing.answerability import draft_decision
from vqaudit.parsing.reasoning import NOT_FINISHED, check_reasoning_format, split_reasoning

ABSTAIN = '{"answerable": false, "answer": null, "reason": "the bar is covered"}'
ANSWER7 = '{"answerable": true, "answer": "7", "reason": "guess"}'


@pytest.mark.parametrize(
    ("reply", "final", "fmt", "finished"),
    [
        # Qwen3-VL Thinking, both tags in the reply
        ("<think>\nThe bar for 2019 reads 42.\n</think>\n\n42", "42", "think", True),
        # Qwen3 / DeepSeek-R1: the chat template opened the span; only the closing tag is in the reply
        ("The bar for 2019 reads 42.\n</think>\n\n42", "42", "think", True),
        # GLM-4.5V: answer box inside the answer wrapper
        (
            "<think>Counting the bars: 7.</think><answer>There are <|begin_of_box|>7<|end_of_box|> bars.</answer>",
            "7",
            "think",
            True,
        ),
        # Kimi-VL-Thinking
        ("\u25c1think\u25b7Looking at the legend...\u25c1/think\u25b7B", "B", "kimi", True),
        # Sky-T1 / OpenThoughts: the solution block is the answer
        (
            "<|begin_of_thought|>A or B? B.<|end_of_thought|>\n\n<|begin_of_solution|>\nB\n<|end_of_solution|>",
            "B",
            "thought",
            True,
        ),
        ("<thinking>It is 3.</thinking>3", "3", "thinking", True),
        ("<reasoning>It is 3.</reasoning> 3 ", "3", "reasoning", True),
        # tags are case-insensitive for the <word> spellings
        ("<THINK>x</THINK>y", "y", "think", True),
        # several spans: the final answer is after the last closing tag
        ("<think>a</think>draft<think>b</think>final", "final", "think", True),
        # budget ran out while thinking: never scored from the content
        (f"<think>A draft: {ANSWER7}", None, "think", False),
        (f"\u25c1think\u25b7{ANSWER7}", None, "kimi", False),
        ("<think>a</think>B<think>wait, maybe", None, "think", False),
    ],
)
def test_documented_formats(reply: str, final: str | None, fmt: str, finished: bool) -> None:
    split = split_reasoning(reply)
    assert (split.final, split.format, split.finished) == (final, fmt, finished)
    assert split.reasoning is not None and split.reasoning_chars == len(split.reasoning)


def test_a_reply_without_reasoning_is_returned_as_the_same_object() -> None:
    # readers of replies without reasoning must see exactly what they saw before (no strip, no copy)
    reply = "  The answer is (B).  "
    split = split_reasoning(reply)
    assert split.final is reply and split.reasoning is None and split.finished


def test_format_none_and_a_named_format_split_only_what_they_name() -> None:
    reply = "<think>x</think>y"
    assert split_reasoning(reply, "none").final == reply
    assert split_reasoning(reply, "kimi").final == reply
    assert split_reasoning("<thinking>x</thinking>y", "think").final == "<thinking>x</thinking>y"
    with pytest.raises(ValueError, match="unknown reasoning format 'o1'"):
        check_reasoning_format("o1")


def test_server_reasoning_is_reasoning_and_null_content_is_unfinished() -> None:
    split = split_reasoning(ABSTAIN, server_reasoning=f"Draft {ANSWER7} but no.")
    assert (split.final, split.format, split.finished) == (ABSTAIN, "server", True)
    split = split_reasoning(None, server_reasoning="still thinking")
    assert (split.final, split.finished, split.invalid_reason) == (None, False, NOT_FINISHED)


# --- the answerability contract reads only the final answer (replies measured with thinking models) ---


def test_a_contradicting_draft_in_the_thinking_does_not_decide() -> None:
    reply = f"<think>A draft: {ANSWER7}. But the bar is covered, so I abstain.</think>{ABSTAIN}"
    parsed = parse_answerability(reply)
    assert (parsed.decision, parsed.answer, parsed.raw, parsed.final) == ("abstain", None, reply, ABSTAIN)
    assert parsed.reasoning_chars == len(f"A draft: {ANSWER7}. But the bar is covered, so I abstain.")
    assert draft_decision(split_reasoning(reply).reasoning) == "answer"  # the draft the report counts


def test_an_object_in_the_thinking_does_not_make_the_reply_invalid() -> None:
    reply = '<think>{"x": 1}</think>{"answerable": true, "answer": 3, "reason": "read off the axis"}'
    parsed = parse_answerability(reply)
    assert (parsed.decision, parsed.answer) == ("answer", "3")


def test_unfinished_thinking_is_invalid_whatever_it_holds() -> None:
    for reply in (f"<think>{ANSWER7}", f"{ABSTAIN}\n<think>{ANSWER7}"):
        parsed = parse_answerability(reply)
        assert (parsed.decision, parsed.invalid_reason, parsed.raw) == ("invalid", NOT_FINISHED, reply)


def test_null_or_empty_content_cut_by_the_budget_is_unfinished() -> None:
    assert parse_answerability(None, server_reasoning="...").invalid_reason == NOT_FINISHED
    # OpenAI o-series: hidden reasoning, empty content, finish_reason "length"
    assert parse_answerability("", finish_reason="length").invalid_reason == NOT_FINISHED
    # an empty reply that stopped normally is what it always was
    assert parse_answerability("", finish_reason="stop").invalid_reason == "no JSON object in the reply"
    assert parse_answerability(None).invalid_reason == "no reply: missing"


def test_format_none_reads_the_tags_as_text() -> None:
    # a model whose answers legitimately hold the tags: with none, the first object is read, as before
    reply = f"<think>{ANSWER7}</think>{ABSTAIN}"
    assert parse_answerability(reply, reasoning_format="none").decision == "answer"


def test_a_final_answer_too_long_is_too_long_but_long_thinking_is_not() -> None:
    long_thought = "<think>" + "hmm " * 10_000 + "</think>" + ABSTAIN
    assert parse_answerability(long_thought).decision == "abstain"
    assert parse_answerability("<think>x</think>" + "y" * 20_000).invalid_reason == "too long"


def test_draft_decision_takes_the_last_valid_object() -> None:
    assert draft_decision(f"first {ABSTAIN} then {ANSWER7}") == "answer"
    assert draft_decision(f'first {ANSWER7} then {{"answerable": 1}}') == "answer"  # an invalid draft decides nothing
    assert draft_decision("no object") is None
    assert draft_decision(None) is None


def test_hostile_replies_never_raise_and_take_linear_time() -> None:
    # many openers and closers interleaved, lone surrogates, nested tags: every call returns
    replies = [
        "<think>" * 5_000,
        "</think>" * 5_000,
        "<think></think>" * 5_000 + "x",
        "\ud800<think>\udfff",
        "<|begin_of_solution|>" * 100,
        "<answer>" * 1000 + "</answer>",
        json.dumps({"a": "<think>"}),
        "\u25c1think\u25b7" * 3000 + "\u25c1/think\u25b7",
    ]
    for reply in replies:
        split = split_reasoning(reply)
        assert split.final is None or isinstance(split.final, str)
        parse_answerability(reply)


# --- rule 5: a span the chat template opens ---------------------------------------------------------------------


def test_a_template_opened_run_is_detected_from_one_reply() -> None:
    from vqaudit.parsing.reasoning import effective_format, opened_by_template

    # Qwen3 / DeepSeek-R1 templates end the prompt with "<think>": the replies hold only the closing tag
    assert opened_by_template([ABSTAIN, f"The bar is covered.\n</think>\n\n{ABSTAIN}"]) == "think-open"
    assert opened_by_template([f"<think>x</think>{ABSTAIN}", ABSTAIN, None]) is None
    assert effective_format("auto", [f"x</think>{ABSTAIN}"]) == "auto:think-open"
    assert effective_format("none", [f"x</think>{ABSTAIN}"]) == "none"


def test_under_a_detected_template_span_only_a_reply_cut_by_the_budget_is_unfinished() -> None:
    cut = f"The queried bar is covered. Draft: {ANSWER7}. Hmm, but maybe the"
    # the server said the budget cut it: the draft is not the answer
    parsed = parse_answerability(cut, reasoning_format="auto:think-open", finish_reason="length")
    assert (parsed.decision, parsed.invalid_reason) == ("invalid", NOT_FINISHED)
    # a reply that stopped (or of unknown finish) is read as auto reads it: one stray closing tag elsewhere in a
    # run never turns the other replies into unfinished ones
    assert parse_answerability(ABSTAIN, reasoning_format="auto:think-open", finish_reason="stop").decision == "abstain"
    assert parse_answerability(ABSTAIN, reasoning_format="auto:think-open").decision == "abstain"
    # given explicitly, think-open applies to every reply: one that closes no span never left its thinking
    assert parse_answerability(ABSTAIN, reasoning_format="think-open").invalid_reason == NOT_FINISHED
    assert parse_answerability(f"x</think>{ABSTAIN}", reasoning_format="think-open").decision == "abstain"
    # every format is still known under it (a Kimi-VL span in the same run)
    kimi = f"\u25c1think\u25b7{ANSWER7}\u25c1/think\u25b7{ABSTAIN}"
    assert parse_answerability(kimi, reasoning_format="think-open").decision == "abstain"
    with pytest.raises(ValueError, match="unknown reasoning format"):
        check_reasoning_format("auto:think")


def test_a_reply_of_five_million_characters_is_still_split() -> None:
    # above any HTTP body cap (8 MiB) an in-process backend may still return this much thinking
    reply = "<think>" + "x" * 5_000_000 + "</think>" + ABSTAIN
    parsed = parse_answerability(reply)
    assert (parsed.decision, parsed.reasoning_chars) == ("abstain", 5_000_000)


@pytest.mark.parametrize(
    ("reply", "fmt"),
    [
        # Qwen3 / DeepSeek-R1 <think> spans (their documented format), a span opened inside the open one
        ("<think>a <think>b</think> c</think>answer", "think"),
        # Kimi-VL-Thinking's ◁think▷ spans (its model card), nested the same way
        ("\u25c1think\u25b7a \u25c1think\u25b7b\u25c1/think\u25b7 c\u25c1/think\u25b7answer", "kimi"),
        # Sky-T1 / OpenThoughts thought spans (their system prompt), the answer in the solution block
        (
            "<|begin_of_thought|>a <|begin_of_thought|>b<|end_of_thought|> c<|end_of_thought|>"
            "<|begin_of_solution|>answer<|end_of_solution|>",
            "thought",
        ),
    ],
)
def test_nested_spans_count_all_the_reasoning_before_the_final_answer(reply: str, fmt: str) -> None:
    # Rule 1: the final answer is the text after the last closing tag, so the inner span and the text after it
    # (" c") are reasoning too. By hand: the reasoning is "a " + "b" + " c" with the tags removed, the inner
    # closing tag read as the newline that joins spans: "a b\n c", 6 characters (the 5 of the model's text + 1).
    for named in (fmt, "auto"):
        split = split_reasoning(reply, named)
        assert (split.final, split.reasoning, split.format, split.finished) == ("answer", "a b\n c", fmt, True)
        assert split.reasoning_chars == 6
    # the server's reasoning (rule 4) comes first and is counted as well: "srv\n" + "a b\n c"
    split = split_reasoning(reply, server_reasoning="srv")
    assert (split.final, split.reasoning, split.reasoning_chars) == ("answer", "srv\na b\n c", 10)
    # the answerability reader records the same count
    assert parse_answerability(reply).reasoning_chars == 6
