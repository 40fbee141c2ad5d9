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
guesses and never raises on model output. In rule 2 a letter inside a word ("U.S.A."), of an initialism ("C. E.",
"B.C.") or used as a name ("vitamin C,") names no other option, and a later final declaration of another label
overrides the opening letter.

Then the final-answer rules (4: the last explicit declaration, 5: an abstention phrase in a short reply, 6: one
option's text in a short reply). :func:`read_choice` is the one reader of a multiple-choice reply, for UPD
scoring and the multiple-choice audits alike; its rules, with an example each, are in ``docs/upd.md`` ("How a
choice is read").

The declarations of rule 4 are found by :mod:`vqaudit.parsing.declarations`; when a capital letter is a name and
not a label ("angle A", "vitamin C") is :mod:`vqaudit.parsing.letter_names`; yes/no replies are read by
:mod:`vqaudit.parsing.yes_no`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from vqaudit.parsing.declarations import (
    LIST_REJECTED,
    NEGATED,
    REJECTED,
    TAIL_CHARS,
    Declaration,
    declarations,
)
from vqaudit.parsing.letter_names import is_name

# Re-exported: the short-answer judge reads its yes/no replies with it from here (:mod:`vqaudit.parsing.yes_no`).
from vqaudit.parsing.yes_no import extract_yes_no as extract_yes_no

PREFIX_LETTERS = "ABCDEFG"
"""Letters whose ``X.``/``X)``/``X,`` forms count as naming another option (as in the paper's matcher)."""


@dataclass(frozen=True)
class ChoiceMatch:
    """A decided reply.

    Attributes:
        letter: the selected letter (one of the valid letters).
        rule: ``letter``, ``letter-prefix``, ``option-text``, ``final-declaration`` or ``option-text-in-reply``.
        form: for ``final-declaration``, the declaration form that decided (see :class:`Declaration`); else
            ``""``. Not compared: two matches of the same letter by the same rule are equal.
    """

    letter: str
    rule: str
    form: str = field(default="", compare=False)


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


_PREFIX_OTHER = re.compile(r"(?<![\w.'’])(?P<label>[" + PREFIX_LETTERS + r"])[.),]")
_INITIAL_NEXT = re.compile(r"\.[ \t]?[A-Z]\.")  # "C. E.", "D.C.": the letter opens an initialism
_INITIAL_PREV = re.compile(r"[A-Z]\.[ \t]?$")  # the "E." of "C. E.", the "C." of "D.C." closes one


def _names_other(reply: str, letter: str) -> bool:
    """Another letter of ``A``-``G`` stands in ``reply`` as a label, followed by ``.``, ``)`` or ``,``.

    A letter inside a word ("U.S.A."), one of an initialism ("C. E.", "B. C.", "D.C.") and a named letter
    ("vitamin C,", "point B.") is no label: "B. sixth or seventh century C. E." names option B only.
    """
    for m in _PREFIX_OTHER.finditer(reply):
        c, start = m.group("label"), m.start()
        if c == letter:
            continue
        if m.group(0)[1] == "." and (
            _INITIAL_NEXT.match(reply, start + 1) or _INITIAL_PREV.search(reply[max(0, start - 4) : start])
        ):
            continue
        if is_name(reply, start):
            continue
        return True
    return False


def match_letter(reply: str, letters: str) -> ChoiceMatch | None:
    """Rules 1-2: a bare letter, or a lettered prefix that names no other option.

    The prefix must not be rejected ("D. a cow - no", "(A) is incorrect") nor overridden by a later declaration
    of another label ("B) a dog. Wait, the answer is C").

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
        c
        for c in letters
        if any(text.startswith(p) for p in (f"{c})", f"{c}.", f"{c},", f"({c})")) and not _names_other(text, c)
    ]
    if len(found) != 1:
        return None
    after = text[text.index(found[0]) + 1 :][:TAIL_CHARS]
    if REJECTED.match(after) or LIST_REJECTED.match(after):  # "D. a cow - no", "(A) is incorrect"
        return None
    # A later final declaration naming another label, or two, overrides the opening letter ("B) a dog. Wait,
    # the answer is C"): a careful reader takes the reply's last word on it. vqaudit's rule.
    later = [d for d in declarations(text) if d.start > 3]
    if later and (later[-1].ambiguous or later[-1].label != found[0]):
        return None
    return ChoiceMatch(found[0], "letter-prefix")


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


# --- Final-answer rules ----------------------------------------------------------------------------------------

MAX_ABSTAIN_CHARS = 400
"""Longest reply (characters, after stripping) searched for an abstention phrase anywhere in it. A longer reply
is reasoning that may quote or reject a refusal; only a final declaration decides it. vqaudit's own bound: no
reference scorer defines "short" (VLMEvalKit's ``can_infer_option`` looks for its four refusal strings in any
reply)."""

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
("sorry, I can't ...", "cannot determine", "none of the options", "I don't know"). Learned from VLMEvalKit's
``reject_to_answer`` list (``can_infer_option``, commit 2cf2a36c: "Sorry, I can't help with images of people
yet.", "Cannot determine the answer", ...), widened to their phrase families."""


@dataclass(frozen=True)
class Abstention:
    """A reply that refuses or abstains.

    Attributes:
        rule: ``abstain-phrase`` (a phrase of :data:`_ABSTAIN_PATTERNS` inside a short reply).
        phrase: the matched phrase as written in the reply.
    """

    rule: str
    phrase: str


AMBIGUOUS = "ambiguous"
"""The rule name of a reply that names two options as its answer (:class:`Ambiguous`)."""


@dataclass(frozen=True)
class Ambiguous:
    """A reply whose final declaration names two options ("the answer is (A) or (B)"): undecided, counted apart.

    Attributes:
        labels: the labels it names, in the reply's order (two upper-case letters, e.g. ``"AB"``).
        rule: always :data:`AMBIGUOUS`.
    """

    labels: str
    rule: str = AMBIGUOUS


def match_declaration(reply: str, letters: str) -> ChoiceMatch | None:
    """Rule 4: the last explicit final declaration decides when it names exactly one valid label.

    Args:
        reply: the raw reply.
        letters: the valid labels.

    Returns:
        ``ChoiceMatch(letter, "final-declaration", form)``, or None when there is no declaration, when the last
        one names two labels (see :func:`read_choice` for telling that case apart) or a label not in
        ``letters``. Never guesses.
    """
    return _decide(declarations(reply), letters)


def _decide(decl: list[Declaration], letters: str) -> ChoiceMatch | None:
    if not decl:
        return None
    last = decl[-1]
    if last.ambiguous or last.label not in letters:
        return None
    return ChoiceMatch(last.label, "final-declaration", last.form)


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
    occurrence preceded by a negation or rejection within three words ("it is not red", "rules out red") or by
    "no", or followed by its rejection ("red is wrong", "red - no"), undecides the reply. Unlike
    ``can_infer_text``, "a horse" is not found in "a horseshoe" and an option text of one or two characters is
    never searched.

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
            after = norm[m.end() : m.end() + TAIL_CHARS]
            if (
                NEGATED.search(norm[max(0, m.start() - 40) : m.start()])
                or re.search(r"\bno\s+$", norm[: m.start()])
                or REJECTED.match(after)
                or LIST_REJECTED.match(after)
            ):  # "it is not red", "red - no"
                return None
            hits.append(letter)
            break
    return ChoiceMatch(hits[0], "option-text-in-reply") if len(hits) == 1 else None


def read_choice(
    reply: str, options: Mapping[str, str], extra_letters: str = ""
) -> ChoiceMatch | Abstention | Ambiguous | None:
    r"""The one choice reader: what a reply selects, with the deciding rule, ambiguity told apart.

    Order: rules 1-3 (:func:`match_choice`, the paper's strict matcher; a lettered opening gives way to a later
    declaration of another label), rule 4 (:func:`declarations`: "the answer is (X)", "Answer: X", "\boxed{X}",
    "I choose X", "would be X", "Option X", "**X**", "X is correct"; the last one decides; when it names two
    labels the reply is :class:`Ambiguous`; when it names a label that is no option, undecided), rule 5
    (:func:`find_abstention`), rule 6 (:func:`match_option_in_reply`). The rules, with an example each, are in
    ``docs/upd.md`` ("How a choice is read").

    Args:
        reply: the raw reply (after any reasoning split).
        options: ``letter -> option text`` of the options shown.
        extra_letters: further valid letters with no listed text.

    Returns:
        A :class:`ChoiceMatch` (``rule`` names the deciding rule, ``form`` the declaration form), an
        :class:`Abstention`, an :class:`Ambiguous` (undecided: two options named as the answer), or None
        (undecided). Never raises on model output.
    """
    letters = "".join(options) + "".join(c for c in extra_letters if c not in options)
    strict = match_choice(reply, options, extra_letters)
    if strict is not None:
        return strict
    decl = declarations(reply)
    if decl:
        last = decl[-1]
        if last.ambiguous:
            return Ambiguous(last.label + last.second)
        return _decide(decl, letters)
    return find_abstention(reply) or match_option_in_reply(reply, options)


def extract_choice(reply: str, options: Mapping[str, str], extra_letters: str = "") -> ChoiceMatch | Abstention | None:
    """:func:`read_choice` for callers that need no ambiguity marker: an :class:`Ambiguous` reply gives None.

    Args:
        reply: the raw reply.
        options: ``letter -> option text`` of the options shown.
        extra_letters: further valid letters with no listed text.

    Returns:
        A :class:`ChoiceMatch`, an :class:`Abstention`, or None (undecided, ambiguous included). Never raises on
        model output.
    """
    found = read_choice(reply, options, extra_letters)
    return None if isinstance(found, Ambiguous) else found
