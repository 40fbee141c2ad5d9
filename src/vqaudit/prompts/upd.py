"""MM-UPD prompts: the three settings, the standard-accuracy prompt, and the choice-extraction judge prompt.

Seed 001, §4 "Evaluation Settings", §5 (the "Original Standard" prompt) and appendix 0.C.1 (judge). A prompt is
the hint (if any), the question and the lettered options ``A. ...`` one per line, as in the LLaVA MMBench
evaluation the paper uses, followed by the setting's text:

- ``base``: nothing more (Fig. 2a);
- ``option``: the extra option is already the view's last option (``None of the above`` for AAD/IASD, ``The
  image and question are irrelevant.`` for IVQD) and the line "Answer with the option's letter from the given
  choices directly." follows (Fig. 2b);
- ``instruction``: 'If all the options are incorrect, answer "F. None of the above".' (AAD/IASD) or 'If the given
  image is irrelevant to the question, answer "F. The image and question are irrelevant.".' (IVQD) (Fig. 2c);
- ``original``: "Answer with the option's letter from the given choices directly." (LLaVA's prompt, Fig. 2d; the
  "Original Standard" row of Table 1; standard views only).

The same text is given to the standard and the UPD view of a pair.
"""

from __future__ import annotations

from dataclasses import dataclass

from vqaudit.schema import UPDViewMeta, View

LETTERS = "ABCDEFGHIJ"
SETTINGS = ("base", "option", "instruction", "original")
LETTER_INSTRUCTION = "Answer with the option's letter from the given choices directly."
INSTRUCTION_LETTER = "F"
EXTRA_OPTION = {
    "aad": "None of the above",
    "iasd": "None of the above",
    "ivqd": "The image and question are irrelevant.",
}
INSTRUCTION = {
    "aad": 'If all the options are incorrect, answer "F. None of the above".',
    "iasd": 'If all the options are incorrect, answer "F. None of the above".',
    "ivqd": 'If the given image is irrelevant to the question, answer "F. The image and question are irrelevant.".',
}
JUDGE_ABSTAIN_OPTION = {
    "aad": "The correct answer is No answer, None of the above, all provided options are incorrect, "
    "or I cannot answer.",
    "iasd": "The correct answer is No answer, None of the above, all provided options are irrelevant or incorrect, "
    "or I cannot answer.",
    "ivqd": "The correct answer is that The image is incompatible with the question, or I cannot answer.",
}
"""The abstention option the judge sees (appendix 0.C.1, Fig. C)."""
JUDGE_PROMPT_ID = "upd-judge-v1"


def _family(variant: str) -> str:
    return "irrelevant" if variant == "ivqd" else "nota"


def upd_prompt(view: View) -> tuple[str, str]:
    """Return ``(prompt_id, prompt_text)`` for a UPD benchmark view.

    Args:
        view: a view with ``source == "upd"`` whose ``meta`` holds ``setting``, ``variant`` and ``hint``, and whose
            ``options`` are the options exactly as shown (rotated; with the extra option in the option setting).

    Returns:
        The prompt id (``upd-base-v1``, ``upd-original-v1``, ``upd-option-nota-v1``, ``upd-option-irrelevant-v1``,
        ``upd-instruction-nota-v1`` or ``upd-instruction-irrelevant-v1``) and the text.

    Raises:
        ValueError: an unknown setting or variant, or more options than letters.
    """
    meta = UPDViewMeta.of(view)
    setting, variant = meta.setting, meta.variant
    if len(view.options) > len(LETTERS):
        raise ValueError(f"view {view.view_id}: too many options ({len(view.options)})")
    hint = meta.hint.strip()
    lines = ([hint] if hint else []) + [view.question.strip()]
    lines += [f"{LETTERS[k]}. {text}" for k, text in enumerate(view.options)]
    if setting in ("option", "original"):
        lines.append(LETTER_INSTRUCTION)
    elif setting == "instruction":
        lines.append(INSTRUCTION[variant])
    prompt_id = f"upd-{setting}-v1" if setting in ("base", "original") else f"upd-{setting}-{_family(variant)}-v1"
    return prompt_id, "\n".join(lines)


@dataclass(frozen=True)
class JudgeOptions:
    """The options the judge chooses among and what each letter means.

    Attributes:
        texts: ``letter -> option text``, in letter order.
        meaning: ``letter -> "option:<L>"`` (the view's option L), ``"removed"`` (the removed correct option),
            ``"abstain"`` (an abstention) or ``"none"`` (no option matches).
        none_letter: the letter meaning "no option matches".
    """

    texts: dict[str, str]
    meaning: dict[str, str]
    none_letter: str


def judge_options(view: View) -> JudgeOptions:
    """The judge's option list for a view (appendix 0.C.1, Fig. C), with the UPD-specific options added.

    The view's own options come first (``option:<L>``; in the option setting the last one is the extra option,
    whose meaning is ``abstain``);
    then, in the next free letters (``F`` is kept for the instruction setting's answer), the removed correct
    option (AAD/IASD UPD views), the variant's abstention option, the instruction setting's "F. ..." option, and
    last the "no option matches" letter.
    """
    meta = UPDViewMeta.of(view)
    variant, setting = meta.variant, meta.setting
    texts: dict[str, str] = {}
    meaning: dict[str, str] = {}
    abstain_letter = meta.abstain_letter
    for k, text in enumerate(view.options):
        texts[LETTERS[k]] = text
        # the option setting's extra option ("None of the above") among the view's own: choosing it abstains,
        # as the matcher reads that letter (seed 001 §3, the option setting)
        meaning[LETTERS[k]] = "abstain" if LETTERS[k] == abstain_letter else f"option:{LETTERS[k]}"
    reserved = {INSTRUCTION_LETTER} if setting == "instruction" else set()
    free = iter(c for c in LETTERS[len(view.options) :] if c not in reserved)
    removed = meta.removed_text
    if meta.kind == "upd" and removed:
        letter = next(free)
        texts[letter], meaning[letter] = str(removed), "removed"
    letter = next(free)
    texts[letter], meaning[letter] = JUDGE_ABSTAIN_OPTION[variant], "abstain"
    if setting == "instruction":
        texts[INSTRUCTION_LETTER], meaning[INSTRUCTION_LETTER] = EXTRA_OPTION[variant], "abstain"
    none_letter = next(free)
    meaning[none_letter] = "none"
    order = sorted(texts)
    return JudgeOptions(texts={c: texts[c] for c in order}, meaning=meaning, none_letter=none_letter)


def judge_prompt(view: View, reply: str, options: JudgeOptions) -> str:
    """The judge's query: match a reply to one option, or answer the "none" letter (0.C.1, Fig. D).

    Args:
        view: the view whose reply is judged (its question and hint are quoted).
        reply: the model's raw reply.
        options: the judge options of :func:`judge_options`.

    Returns:
        The full judge prompt text.
    """
    none = options.none_letter
    letters = ", ".join([*options.texts, none])
    variant = UPDViewMeta.of(view).variant
    abstain_example = EXTRA_OPTION[variant].rstrip(".")
    abstain_answer = "The image and the question do not match." if variant == "ivqd" else "no answer"
    option_text = " ".join(f"{c}. {t}" for c, t in options.texts.items())
    return (
        "You are an AI assistant who will help me to match an answer with several options of a single-choice "
        "question. You are provided with a question, several options, and an answer, and you need to find which "
        "option is most similar to the answer. If the meaning of all options are significantly different from the "
        f"answer, output {none}. You should output a single uppercase character in {letters}.\n"
        "Example 1:\nQuestion: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. dog "
        f"E. {abstain_example}\nAnswer: a cute teddy bear\nYour output: A\n"
        "Example 2:\nQuestion: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. dog "
        f"E. {abstain_example}\nAnswer: {abstain_answer}\nYour output: E\n"
        "Example 3:\nQuestion: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. dog "
        f"E. {abstain_example}\nAnswer: fish\nYour output: {none}\n"
        f"Example 4:\nQuestion: {view.question.strip()}\nOptions: {option_text}\nAnswer: {reply.strip()}\n"
        "Your output: "
    )
