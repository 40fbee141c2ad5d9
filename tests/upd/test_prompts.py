"""The three prompt settings and the standard-accuracy prompt (seed 001, §4 "Evaluation Settings", §5, Fig. 2)."""

from __future__ import annotations

from vqaudit.prompts.upd import judge_options, upd_prompt
from vqaudit.schema import View
from vqaudit.suites.registry import prompt_for


def _first(views: list[View], variant: str, setting: str, state: str) -> View:
    return next(
        v
        for v in views
        if v.meta["variant"] == variant
        and v.meta["setting"] == setting
        and v.state == state
        and v.meta["rotation"] == 0
    )


def test_setting_texts_follow_the_paper(small_views: list[View]) -> None:
    base = upd_prompt(_first(small_views, "aad", "base", "aad"))[1]
    assert not base.endswith("directly.") and "None of the above" not in base
    # Option setting: extra option + LLaVA's instruction (§4, item 2); the same text for the standard question.
    for state in ("standard", "aad"):
        pid, text = upd_prompt(_first(small_views, "aad", "option", state))
        assert pid == "upd-option-nota-v1"
        lines = text.splitlines()
        assert lines[-1] == "Answer with the option's letter from the given choices directly."
        assert lines[-2].endswith(". None of the above")
    pid, text = upd_prompt(_first(small_views, "ivqd", "option", "ivqd"))
    assert text.splitlines()[-2].endswith(". The image and question are irrelevant.")
    # Instruction setting (§4, item 3).
    text = upd_prompt(_first(small_views, "iasd", "instruction", "standard"))[1]
    assert text.endswith('If all the options are incorrect, answer "F. None of the above".')
    text = upd_prompt(_first(small_views, "ivqd", "instruction", "ivqd"))[1]
    assert text.endswith(
        'If the given image is irrelevant to the question, answer "F. The image and question are irrelevant.".'
    )
    # The standard-accuracy ("Original Standard") prompt asks for the letter directly, without an extra option.
    pid, text = upd_prompt(_first(small_views, "aad", "original", "standard"))
    assert pid == "upd-original-v1" and text.endswith("directly.") and "None of the above" not in text


def test_prompt_lists_hint_question_and_lettered_options(small_views: list[View]) -> None:
    view = next(v for v in small_views if v.meta["hint"] and v.meta["setting"] == "base")
    text = upd_prompt(view)[1].splitlines()
    assert text[0] == view.meta["hint"] and text[1] == view.question
    assert prompt_for(view) == upd_prompt(view)


def test_judge_options_add_the_upd_answers(small_views: list[View]) -> None:
    # Appendix 0.C.1, Fig. C: the masked correct option and the abstention option are added for AAD.
    view = _first(small_views, "aad", "instruction", "aad")
    jo = judge_options(view)
    meanings = [jo.meaning[c] for c in jo.texts]
    assert meanings.count("removed") == 1 and meanings.count("abstain") == 2  # + "F. None of the above"
    assert jo.texts["F"] == "None of the above" and jo.meaning[jo.none_letter] == "none"
