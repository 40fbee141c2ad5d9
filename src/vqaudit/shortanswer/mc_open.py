r"""Open (non-choice) rows of MMMU and MathVista scored by each benchmark's own rules (``vqaudit audit``).

**MMMU** (MMMU-Benchmark/MMMU, ``mmmu/utils/eval_utils.py`` at commit bb0b95a945998d91dfef37e969e07d49d1139438,
``parse_open_response`` and ``eval_open``; re-implemented from the rules, no code copied):

1. the reply is stripped, its leading and trailing periods removed, and lower-cased;
2. it is cut into lines (MMMU also cuts at ". " before a capital letter, which never fires after lower-casing);
3. in each line, the shortest tail after an indicator ("could be ", "so ", "is ", "thus ", "therefore ",
   "final ", "answer ", "result "; in the last line also "=") is a key response, unless it is only punctuation;
   no key response: the whole reply is the one;
4. the predictions are the key responses and every number in them (thousands with commas, scientific notation,
   plain decimals), each normalized: a number (commas dropped) becomes a float rounded to 2 places, other text
   is lower-cased (a one-character text becomes " x" and "x " so it cannot match inside a word);
5. a prediction that is text is right when a normalized gold text occurs in it; a number is right when it equals
   a normalized gold number. Any gold form (MMMU lists several) may match.

**MathVista** (lupantech/MathVista, ``evaluation/calculate_score.py`` ``normalize_extracted_answer`` and
``safe_equal``, ``evaluation/extract_answer.py``, commit 53d525874bdde205128e6b160b7357a88277d479):
MathVista extracts each answer with GPT-4 and then normalizes it by the question's ``answer_type``: ``integer``
``str(int(float(x)))``, ``float`` ``str(round(float(x), precision))``, ``list`` ``str(x)``; a multiple-choice
extraction is a letter (also inside "(B)") naming a choice, else the choice nearest in edit distance (always some
choice); the row is right when the normalized text equals the gold ``answer``. Its headline is the accuracy over
every row, choice and free-form together.

- ``--read extraction`` (:func:`mathvista_from_extraction`): MathVista's own ``extraction`` field normalized and
  compared exactly so, reproducing its ``true_false``.
- the default, the raw ``response`` (:func:`mathvista_from_reply`): choice rows by the one choice reader; a
  free-form row's answer is the value of the last answer declaration (``\boxed{..}``, "final answer", "the
  answer is", "answer:"), else the whole final answer; for ``integer``/``float`` the last number there, its
  units and thousands commas dropped ("1,000 g" is 1000), for ``list`` the last bracketed list; then normalized
  and compared as above. A ``text`` free-form answer (MathVista's normalizer has no branch for it) compares the
  stated text exactly after stripping; a ``float`` without ``precision`` compares ``str(float(x))``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = [
    "edit_distance",
    "mathvista_choice",
    "mathvista_from_extraction",
    "mathvista_from_reply",
    "mathvista_normalize",
    "mmmu_eval_open",
    "mmmu_normalize",
    "mmmu_parse_open",
]

_MMMU_INDICATORS = ("could be ", "so ", "is ", "thus ", "therefore ", "final ", "answer ", "result ")
_MMMU_TRIVIAL = frozenset({":", ",", ".", "!", "?", ";", "'"})
_COMMA_NUMBER = re.compile(r"-?\b\d{1,3}(?:,\d{3})+\b")
_SCIENTIFIC = re.compile(r"-?\d+(?:\.\d+)?[eE][+-]?\d+")
_SIMPLE_NUMBER = re.compile(r"-?(?:\d+\.\d+|\.\d+|\d+\b)(?![eE][+-]?\d+)(?![,\d])")

MMMUPred = str | float


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True


def mmmu_normalize(text: str) -> list[MMMUPred]:
    """MMMU's normalization of one answer or prediction (module docstring, rule 4): ``[float]`` or text forms."""
    text = text.strip()
    if _is_number(text):
        return [round(float(text.replace(",", "")), 2)]
    text = text.lower()
    return [" " + text, text + " "] if len(text) == 1 else [text]


def _numbers(text: str) -> list[str]:
    return _COMMA_NUMBER.findall(text) + _SCIENTIFIC.findall(text) + _SIMPLE_NUMBER.findall(text)


def mmmu_parse_open(reply: str) -> list[MMMUPred]:
    """The predictions MMMU reads from an open reply (module docstring, rules 1-4), duplicates removed.

    Returns:
        Normalized predictions (texts and floats rounded to 2 places), in first-seen order; ``[]`` for an empty
        reply.
    """
    text = reply.strip().strip(".").lower()
    if not text:
        return []
    lines = text.split("\n")
    keys: list[str] = []
    for index, line in enumerate(lines):
        indicators = (*_MMMU_INDICATORS, "=") if index == len(lines) - 1 else _MMMU_INDICATORS
        shortest: str | None = None
        for ind in indicators:  # MMMU's order: the first shortest tail; an empty tail is replaced by the next one
            if ind in line:
                tail = line.split(ind)[-1].strip()
                if not shortest or len(tail) < len(shortest):
                    shortest = tail
        if shortest and shortest not in _MMMU_TRIVIAL:
            keys.append(shortest)
    if not keys:
        keys = [text]
    found = list(keys)
    for key in keys:
        found.extend(_numbers(key))
    preds: list[MMMUPred] = []
    for item in found:
        for norm in mmmu_normalize(item):
            if norm not in preds:
                preds.append(norm)
    return preds


def mmmu_eval_open(golds: Sequence[str], preds: Sequence[MMMUPred]) -> bool:
    """MMMU's ``eval_open`` rule (module docstring, rule 5): any prediction matching any gold form."""
    answers: list[MMMUPred] = []
    for gold in golds:
        answers.extend(mmmu_normalize(gold))
    for pred in preds:
        if isinstance(pred, str):
            if any(isinstance(a, str) and a in pred for a in answers):
                return True
        elif pred in answers:
            return True
    return False


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions of one character each)."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        cur = [i]
        for j, cb in enumerate(b, start=1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def mathvista_choice(extraction: str, choices: Sequence[str]) -> tuple[int, bool]:
    """``(index of the choice, named by its letter)`` MathVista's normalization gives a choice extraction.

    A letter (also inside "(B)", either case there) names a choice; anything else is the choice nearest in edit
    distance, the first of the nearest on ties (module docstring).
    """
    text = extraction.strip()
    paren = re.search(r"\(([a-zA-Z])\)", text)
    if paren:
        text = paren.group(1).upper()
    letters = [chr(ord("A") + i) for i in range(len(choices))]
    if text in letters:
        return letters.index(text), True
    distances = [edit_distance(text, c) for c in choices]
    return distances.index(min(distances)), False


def mathvista_normalize(
    extraction: str, *, choices: Sequence[str], answer_type: str, precision: int | None
) -> str | None:
    """MathVista's normalization of an extracted answer (module docstring); None when it yields no answer.

    Args:
        extraction: the extracted answer text.
        choices: the row's choice texts (empty for a free-form row).
        answer_type: ``integer``, ``float``, ``list`` or ``text``.
        precision: decimal places of a ``float`` answer.

    Returns:
        A choice's text (choice rows: always one, the nearest by edit distance when no letter is named), or the
        normalized free-form answer, or None.
    """
    if choices:
        return choices[mathvista_choice(extraction, choices)[0]]
    try:
        if answer_type == "integer":
            return str(int(float(extraction)))
        if answer_type == "float":
            return str(float(extraction)) if precision is None else str(round(float(extraction), precision))
    except (ValueError, OverflowError):
        return None
    return extraction.strip() or None


def mathvista_from_extraction(
    extraction: str, *, choices: Sequence[str], gold: str, answer_type: str, precision: int | None
) -> tuple[str | None, bool]:
    """``(normalized answer, right)`` of MathVista's ``extraction`` field, as its ``calculate_score.py`` scores.

    ``gold``: the answer text (a choice row: the gold choice's text).
    """
    norm = mathvista_normalize(extraction, choices=choices, answer_type=answer_type, precision=precision)
    return norm, norm is not None and norm == gold


_DECLARED = re.compile(r"(?i:\b(?:final answer|the answer is|answer)\s*(?:is)?\s*[:：]?)\s*([^\n]+)")
_BOXED = re.compile(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}")
_MV_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)")
_LIST = re.compile(r"\[([^\[\]]*)\]")


def _stated(reply: str) -> str:
    boxed: list[str] = _BOXED.findall(reply)
    if boxed:
        return boxed[-1].strip()
    declared: list[str] = _DECLARED.findall(reply)
    return declared[-1].strip().rstrip(".") if declared else reply.strip()


def mathvista_from_reply(reply: str, *, answer_type: str, precision: int | None) -> str | None:
    """The normalized answer of a free-form row read from the raw reply (module docstring), or None."""
    if not reply.strip():
        return None
    text = _stated(reply)
    if answer_type in ("integer", "float"):
        numbers = _MV_NUMBER.findall(text) or _MV_NUMBER.findall(reply)
        if not numbers:
            return None
        return mathvista_normalize(
            numbers[-1].replace(",", ""), choices=(), answer_type=answer_type, precision=precision
        )
    if answer_type == "list":
        lists = _LIST.findall(text) or _LIST.findall(reply)
        if not lists:
            return None
        return "[" + ", ".join(x.strip() for x in lists[-1].split(",")) + "]"
    return text or None
