"""Strict choice extraction for multiple-choice replies.

Seed 001, appendix 0.C.1 "Simplification of the matching algorithm" (MMBench's matcher as simplified by MM-UPD).

A reply selects letter ``L`` when, after stripping surrounding whitespace, it

1. is exactly ``L`` (rule ``letter``); or
2. starts with ``L)``, ``L.``, ``L,`` or ``(L)`` and nowhere contains another letter of ``A``-``G`` followed by
   ``.``, ``)`` or ``,`` (rule ``letter-prefix``: "whose text names no other option"); or
3. equals one option's full text, compared after :func:`normalize_text` (rule ``option-text``; MMBench's
   matcher also accepts the option text).

Letters are upper-case only, so "A man is riding a horse" selects nothing. When the rules give no letter, or
more than one, the matcher does not decide (it returns None) and a judge, if any, is asked. The matcher never
guesses and never raises on model output.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

PREFIX_LETTERS = "ABCDEFG"
"""Letters whose ``X.``/``X)``/``X,`` forms count as naming another option (as in the paper's matcher)."""


@dataclass(frozen=True)
class ChoiceMatch:
    """A decided reply.

    Attributes:
        letter: the selected letter (one of the valid letters).
        rule: ``letter``, ``letter-prefix`` or ``option-text``.
    """

    letter: str
    rule: str


def normalize_text(text: str) -> str:
    """The one normalizer of option texts and replies: for matching a reply to an option and for comparing options.

    Case-fold, unify curly apostrophes, collapse whitespace, strip spaces and trailing ``.``, ``!`` and ``。``.
    (Short answers are compared by :func:`vqaudit.scoring.answers.normalize_text`, which also applies NFKC and strips
    surrounding punctuation: a different purpose.)

    Args:
        text: an option text or a reply.

    Returns:
        The normalised text (possibly empty).
    """
    text = text.replace("\u2019", "'").replace("\u2018", "'").casefold()
    text = re.sub(r"\s+", " ", text).strip()
    return text.rstrip(".!。 ").strip()


def _names_other(reply: str, letter: str) -> bool:
    return any(f"{c}{p}" in reply for c in PREFIX_LETTERS if c != letter for p in ".),")


def match_letter(reply: str, letters: str) -> ChoiceMatch | None:
    """Rules 1-2: a bare letter or a lettered prefix that names no other option.

    Args:
        reply: the raw reply.
        letters: the valid letters, e.g. ``"ABCD"`` or ``"ABCDF"``.

    Returns:
        The match, or None when no letter or more than one letter qualifies.
    """
    text = reply.strip()
    if len(text) == 1 and text in letters:
        return ChoiceMatch(text, "letter")
    found = [
        c for c in letters
        if any(text.startswith(p) for p in (f"{c})", f"{c}.", f"{c},", f"({c})")) and not _names_other(text, c)
    ]
    return ChoiceMatch(found[0], "letter-prefix") if len(found) == 1 else None


def match_option_text(reply: str, options: Mapping[str, str]) -> ChoiceMatch | None:
    """Rule 3: the reply is one option's full text (normalised equality), and no other option's.

    Args:
        reply: the raw reply.
        options: ``letter -> option text``.

    Returns:
        The match, or None.
    """
    norm = normalize_text(reply)
    if not norm:
        return None
    hits = [c for c, t in options.items() if normalize_text(t) == norm]
    return ChoiceMatch(hits[0], "option-text") if len(hits) == 1 else None


def match_choice(reply: str, options: Mapping[str, str], extra_letters: str = "") -> ChoiceMatch | None:
    """The strict matcher: rules 1-2 over the option letters plus ``extra_letters``, then rule 3.

    Args:
        reply: the raw reply.
        options: ``letter -> option text`` of the options shown.
        extra_letters: further valid letters with no listed text (e.g. ``"F"`` in the instruction setting).

    Returns:
        The match, or None when the matcher cannot decide.
    """
    letters = "".join(options) + "".join(c for c in extra_letters if c not in options)
    return match_letter(reply, letters) or match_option_text(reply, options)


# --- Final-answer rules (issue 17, item 1) -------------------------------------------------------------------

MAX_ABSTAIN_CHARS = 400
"""Longest reply (characters, after stripping) searched for an abstention phrase anywhere in it. A longer reply
is reasoning that may quote or reject a refusal; only a final declaration decides it. vqaudit's own bound: no
reference scorer defines "short" (VLMEvalKit's ``can_infer_option`` looks for its four refusal strings in any
reply)."""

_LABEL = r"(?P<label>[A-Z])"
_AFTER_LABEL = r"(?=(?P<tail>(?:\*\*|\)|\]|[.,:;!?]|\s|$).{0,24}))"
_DECLARATIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # "the answer is (B)", "the correct answer is: **B**", "my final answer would be option B", "Answer: B"
    ("answer-is", re.compile(
        r"(?i:\b(?:final\s+|correct\s+|right\s+|best\s+)?(?:answer|choice|option)\s*(?:(?:is|would\s+be|will\s+be"
        r"|should\s+be|must\s+be)(?:\s*[:\uff1a])?|[:=\uff1a])[\s*\[(]*(?:(?:option|choice|letter)\s[\s*\[(]*)?)"
        + _LABEL + _AFTER_LABEL)),
    # "Option B", "Choice (C)" opening the reply or a line
    ("option-x", re.compile(r"(?m:^)[ \t]*(?i:option|choice)[ \t]+[\[(]?" + _LABEL + _AFTER_LABEL)),
    # "**B**", "**(B) a dog**", "**B.**"
    ("bold", re.compile(r"\*\*\s*[\[(]?" + _LABEL + r"(?=(?P<tail>(?:[.):\]]?\s*\*\*|[.):\]]\s).{0,24}))")),
    # "B is correct", "(B) is the correct answer", "B is right", "A is the best option"
    ("x-is-correct", re.compile(
        r"(?<![A-Za-z\[(*])[\[(*]{0,3}" + _LABEL
        + r"[\])*]*(?=(?P<tail>\s+is\s+(?:the\s+)?(?:correct|right|best)\b))")),
    # "\boxed{C}", "$\boxed{(C)}$", "\boxed{\text{C}}": the final-answer box reasoning models are prompted for
    ("boxed", re.compile(r"\\boxed\{\s*(?:\\(?:text|textbf|mathrm|mathbf)\{\s*)?[\[(]?" + _LABEL
                         + r"(?=(?P<tail>[\])]?\s*\}.{0,24}))")),
)
"""Explicit final declarations (issue 17 item 1), each naming one label; upper-case labels only, so the article
"a" is never read as option A. Sources of the forms: VLMEvalKit ``vlmeval/utils/matching_util.py``
(``_VERBOSE_ANSWER_RE`` "(correct) answer is **X**", commit a67ace50, PR #1552) and lmms-eval's multiple-choice
filters ("The answer is (X)"); ``\\boxed{X}``, a box holding only the label (``\\boxed{12}`` names none): the
answer box reasoning models are prompted for ("put your final answer within \\boxed{}", DeepSeek-R1 model card,
usage recommendations), and the first form of ``final_answer_letter`` in the multiple-choice audit; the stricter
reading (one label, last declaration wins, negation and a second label undecide) is vqaudit's."""

_SECOND_LABEL = re.compile(r"^[\])*.:]*\s*(?:,|/|&|\bor\b|\band\b)\s*[\[(*]*[A-Z](?![A-Za-z])")
_REJECTED = re.compile(r"(?i:^[\])*.:]*\s+(?:is|are|seems|appears)\s+(?:not|incorrect|wrong|false|ruled)\b)")
_NEGATED = re.compile(r"(?i:(?:\bnot|\bnever|n't)\s+(?:\w+\s+){0,3}$)")
_FINAL_LINE = re.compile(r"(?:^|\n)[ \t]*(?:\*\*)?[\[(]?(?P<label>[A-Z])[\])]?[.:]?(?:\*\*)?[ \t]*$")
_ARTICLE_LIKE = frozenset("AI")  # upper-case letters that are also English words at a sentence start

_ABSTAIN_PATTERNS = re.compile(
    r"(?i:\bsorry\b[^.!?\n]{0,20}\b(?:i\s+)?(?:can\s*not|can't|cannot|am\s+unable|unable)"
    r"|\b(?:i\s+)?(?:cannot|can\s+not|can't|am\s+unable\s+to|are\s+unable\s+to|unable\s+to)\s+"
    r"(?:determine|tell|answer|identify|say|decide|be\s+sure|be\s+certain|infer|know|see\s+the\s+image)"
    r"|\b(?:cannot|can't|can\s+not)\s+be\s+(?:determined|answered|inferred|told)"
    r"|\bnot\s+(?:possible|able)\s+to\s+(?:determine|tell|answer|say)"
    r"|\bimpossible\s+to\s+(?:determine|tell|answer|say)"
    r"|\bnone\s+of\s+the\s+(?:options|choices|answers|above|given|provided|listed)"
    r"|\bno\s+(?:correct|right|valid|suitable)\s+(?:option|answer|choice)"
    r"|\bi\s+(?:don't|do\s+not|dont)\s+know\b"
    r"|\bnot\s+enough\s+information\b"
    r"|\b(?:the\s+)?question\s+(?:is\s+)?unanswerable\b)"
)
"""Refusals and abstentions recognised anywhere in a reply of at most :data:`MAX_ABSTAIN_CHARS` characters
(issue 17 item 1: "sorry, I can't ...", "cannot determine", "none of the options", "I don't know"). Learned
from VLMEvalKit's ``reject_to_answer`` list (``can_infer_option``, commit 2cf2a36c: "Sorry, I can't help with
images of people yet.", "Cannot determine the answer", ...), widened to their phrase families."""


@dataclass(frozen=True)
class Abstention:
    """A reply that refuses or abstains.

    Attributes:
        rule: ``abstain-phrase`` (a phrase of :data:`_ABSTAIN_PATTERNS` inside a short reply).
        phrase: the matched phrase as written in the reply.
    """

    rule: str
    phrase: str


@dataclass(frozen=True)
class Declaration:
    r"""One explicit final declaration found in a reply.

    Attributes:
        form: the declaration form (``answer-is``, ``option-x``, ``bold``, ``x-is-correct``, ``boxed``
            (``\boxed{B}``), ``final-line``: the reply's last line is a bare label such as "B", "(B)" or
            "**B.**").
        label: the label it names.
        start: its offset in the reply (characters).
        ambiguous: it names a second label ("the answer is A or B").
    """

    form: str
    label: str
    start: int
    ambiguous: bool


def declarations(reply: str) -> list[Declaration]:
    """Every explicit final declaration in ``reply``, in order of position (:data:`_DECLARATIONS`).

    A declaration preceded in its clause by a negation ("not", "n't", "never" up to three words before) is
    skipped, and so is a label followed by "is not", "is incorrect", "is wrong" ("Option A is incorrect").
    ``A`` and ``I`` followed by a space and a lower-case word are English words, not labels. Time is
    linear in ``len(reply)`` (each pattern has a bounded look-ahead).

    Args:
        reply: the raw reply.

    Returns:
        The declarations, sorted by ``start``; one per position (the first form listed wins a tie).
    """
    found: dict[int, Declaration] = {}
    for form, pattern in _DECLARATIONS:
        for m in pattern.finditer(reply):
            label, tail, start = m.group("label"), m.group("tail"), m.start("label")
            second = bool(_SECOND_LABEL.match(tail))
            if form != "x-is-correct" and label in _ARTICLE_LIKE and re.match(r"\s+[a-z]", tail) and not second:
                continue
            if _NEGATED.search(reply[max(0, m.start() - 40):m.start()]) or _REJECTED.match(tail):
                continue
            if start not in found:
                found[start] = Declaration(form, label, start, second)
    last_line = _FINAL_LINE.search(reply.rstrip())
    if last_line and last_line.start("label") not in found:
        start = last_line.start("label")
        found[start] = Declaration("final-line", last_line.group("label"), start, False)
    return [found[k] for k in sorted(found)]


def match_declaration(reply: str, letters: str) -> ChoiceMatch | None:
    """Rule 4: the last explicit final declaration decides when it names exactly one valid label.

    Args:
        reply: the raw reply.
        letters: the valid labels.

    Returns:
        ``ChoiceMatch(letter, "final-declaration")``, or None when there is no declaration, when the last one
        names two labels or a label not in ``letters``. Never guesses.
    """
    decl = declarations(reply)
    if not decl:
        return None
    last = decl[-1]
    if last.ambiguous or last.label not in letters:
        return None
    return ChoiceMatch(last.label, "final-declaration")


def find_abstention(reply: str) -> Abstention | None:
    """Rule 5: a refusal or abstention phrase anywhere in a reply of at most :data:`MAX_ABSTAIN_CHARS` chars.

    Args:
        reply: the raw reply.

    Returns:
        The abstention, or None (also for a longer reply).
    """
    text = reply.strip().replace("\u2019", "'")
    if len(text) > MAX_ABSTAIN_CHARS:
        return None
    m = _ABSTAIN_PATTERNS.search(text)
    return Abstention("abstain-phrase", m.group(0)) if m else None


_WORD_EDGE = r"(?<![\w'])"


def match_option_in_reply(reply: str, options: Mapping[str, str]) -> ChoiceMatch | None:
    """Rule 6: exactly one option's text occurs in a short reply, as whole words, not negated.

    The reply must be at most twice the total option text long (VLMEvalKit's ``can_infer_text`` bound, commit
    2cf2a36c) and at most :data:`MAX_ABSTAIN_CHARS`; texts are compared after :func:`normalize_text`; an
    occurrence preceded by "not"/"n't"/"never"/"no" within three words undecides the reply ("it is not red").
    Unlike ``can_infer_text``, "a horse" is not found in "a horseshoe" and an option text of one or two
    characters is never searched.

    Args:
        reply: the raw reply.
        options: ``letter -> option text``.

    Returns:
        ``ChoiceMatch(letter, "option-text-in-reply")`` or None.
    """
    norm = normalize_text(reply)
    total = sum(len(normalize_text(t)) for t in options.values())
    if not norm or len(norm) > min(2 * total, MAX_ABSTAIN_CHARS):
        return None
    hits: list[str] = []
    for letter, text in options.items():
        opt = normalize_text(text)
        if len(opt) < 3:
            continue
        for m in re.finditer(_WORD_EDGE + re.escape(opt) + r"(?![\w'])", norm):
            if _NEGATED.search(norm[max(0, m.start() - 40):m.start()]) or re.search(r"\bno\s+$", norm[:m.start()]):
                return None
            hits.append(letter)
            break
    return ChoiceMatch(hits[0], "option-text-in-reply") if len(hits) == 1 else None


def extract_choice(reply: str, options: Mapping[str, str], extra_letters: str = "") -> ChoiceMatch | Abstention | None:
    """The full extractor: the strict matcher, then the final declaration, then an abstention phrase.

    Order (issue 17 item 1): rules 1-3 (:func:`match_choice`, the paper's strict matcher, unchanged), rule 4
    (:func:`match_declaration`: "the answer is (X)", "Answer: X", "Option X", "**X**", "X is correct"; last one
    wins; two labels undecide), rule 5 (:func:`find_abstention`), rule 6 (:func:`match_option_in_reply`).
    The deciding rule is in the result's ``rule``.

    Args:
        reply: the raw reply.
        options: ``letter -> option text`` of the options shown.
        extra_letters: further valid letters with no listed text.

    Returns:
        A :class:`ChoiceMatch`, an :class:`Abstention`, or None (undecided). Never raises on model output.
    """
    letters = "".join(options) + "".join(c for c in extra_letters if c not in options)
    strict = match_choice(reply, options, extra_letters)
    if strict is not None:
        return strict
    if declarations(reply):
        return match_declaration(reply, letters)
    return find_abstention(reply) or match_option_in_reply(reply, options)


# --- Yes/no replies -------------------------------------------------------------------------------------------

_LEADING_YES_NO = re.compile(r"^[\s*_\"'`(\[]*(?P<word>yes|no)(?P<end>[*_\"'`)\]]*(?:\s*[.,:;!\n\-\u2013\u2014]|\s*$))",
                             re.IGNORECASE)
_DECLARED_YES_NO = re.compile(r"(?i:\b(?:final\s+|correct\s+)?answer\s*(?:is|would\s+be|[:=]))[\s*\"'(\[]*"
                              r"(?P<word>(?i:yes|no))[*\"')\]]*(?:[.,:;!\n]|\s*$)")


def extract_yes_no(reply: str) -> tuple[bool, str] | None:
    """Read a yes/no reply: the leading token, else the last final declaration ("the answer is no").

    The leading ``yes``/``no`` counts only as a whole token followed by punctuation, a line end or the end of
    the reply ("Yes.", "**No** - different", "No, it is not"); "No dog is visible", "Nothing", "Not sure",
    "None", "know" never decide. VLMEvalKit's ``YOrN_Extraction`` (``vlmeval/dataset/utils/yorn.py``, commit
    2cf2a36c) instead takes "yes"/"no" anywhere when only one of them occurs, so "no" in "there is no doubt,
    yes" makes it undecided and "no" inside a phrase decides; vqaudit does not.

    Args:
        reply: the raw reply.

    Returns:
        ``(True|False, rule)`` with rule ``leading-token`` or ``final-declaration``, or None.
    """
    m = _LEADING_YES_NO.match(reply)
    if m:
        return m.group("word").lower() == "yes", "leading-token"
    found = list(_DECLARED_YES_NO.finditer(reply))
    if found:
        return found[-1].group("word").lower() == "yes", "final-declaration"
    return None
