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
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

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


_NAME_WORDS = frozenset(
    {
        "angle",
        "angles",
        "point",
        "points",
        "vertex",
        "vertices",
        "corner",
        "side",
        "sides",
        "edge",
        "line",
        "lines",
        "segment",
        "ray",
        "arc",
        "chord",
        "triangle",
        "quadrilateral",
        "polygon",
        "circle",
        "square",
        "rectangle",
        "plane",
        "axis",
        "vitamin",
        "vitamins",
        "type",
        "types",
        "group",
        "groups",
        "class",
        "plan",
        "hepatitis",
        "grade",
        "grades",
        "model",
        "person",
        "persons",
        "player",
        "players",
        "team",
        "company",
        "country",
        "city",
        "town",
        "village",
        "region",
        "zone",
        "area",
        "site",
        "building",
        "block",
        "room",
        "gate",
        "tank",
        "container",
        "box",
        "ball",
        "object",
        "objects",
        "particle",
        "particles",
        "body",
        "bodies",
        "mass",
        "masses",
        "charge",
        "charges",
        "node",
        "nodes",
        "cell",
        "cells",
        "sample",
        "samples",
        "species",
        "population",
        "strain",
        "allele",
        "gene",
        "chromosome",
        "blood",
        "sector",
        "phase",
        "star",
        "planet",
        "island",
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "st",
        "mount",
        "lake",
        "route",
        "highway",
        "interstate",
    }
)
"""Words after which a capital letter is a name, not a label: "angle A", "vitamin C", "point B", "type A",
"Mr. B" (vqaudit's rule; a careful reader of "angle A is the right angle" sees no choice)."""
_LAST_WORD = re.compile(r"(?P<word>[A-Za-z]+)\.?[ \t]+$")

_PREFIX_OTHER = re.compile(r"(?<![\w.'’])(?P<label>[" + PREFIX_LETTERS + r"])[.),]")
_INITIAL_NEXT = re.compile(r"\.[ \t]?[A-Z]\.")  # "C. E.", "D.C.": the letter opens an initialism
_INITIAL_PREV = re.compile(r"[A-Z]\.[ \t]?$")  # the "E." of "C. E.", the "C." of "D.C." closes one


def _is_name(text: str, start: int) -> bool:
    """The capital at ``start`` is a name in running text (a word of :data:`_NAME_WORDS` right before it)."""
    m = _LAST_WORD.search(text, max(0, start - 24), start)
    return m is not None and m.group("word").lower() in _NAME_WORDS


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
        if _is_name(reply, start):
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
    if _REJECTED.match(after) or _LIST_REJECTED.match(after):  # "D. a cow - no", "(A) is incorrect"
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

TAIL_CHARS = 80
"""Characters after a declared label that are read to find a second label or a rejection (bounded, so the time
to read a reply stays linear in its length)."""

_LABEL = r"(?P<label>[A-Z])"
_TAIL = rf"(?=(?P<tail>.{{0,{TAIL_CHARS}}}))"
_OPEN = r"[\s*\[(]{0,12}"  # spaces, bold markers and brackets between a declaring phrase and its label
_LOOSE_END = r"(?=(?:\*\*|[)\]}]|[.,:;!?/&]|\s|$))"  # what may follow a label in a declaring phrase
_CLOSED_END = (
    r"(?=[)\]}*]*(?:[.,:;!?]|[ \t]*(?:\n|$)"
    r"|[ \t]+(?:because|since|as|given|based|due|which|from|[-\u2013\u2014(])))"
)
_ADVERB = r"(?:(?:likely|probably|clearly|definitely|certainly|therefore|thus|then|either|most\s+likely)\s+)?"
_OPTION_WORD = r"(?i:(?:option|choice|letter|answer)\s" + _OPEN + r")?"

_BOTH_RIGHT = (
    r"(?i:(?:are|seem|both)\s+(?:both\s+|all\s+|equally\s+)?(?:to\s+be\s+)?(?:correct|right|possible|plausible|valid"
    r"|true|likely|acceptable|reasonable|good\s+(?:answers|choices|options)|the\s+(?:correct\s+|right\s+|best\s+)?"
    r"answers?)\b|(?:could|might|may)\s+(?:both\s+)?be\s+(?!ruled\b|eliminated\b|excluded\b|wrong\b|incorrect\b"
    r"|false\b|discarded\b|rejected\b))"
)
"""What makes two labels a hedge: "(A) and (B) are both possible", "A or B could be right"."""

_DECLARATIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # "the answer is (B)", "the correct answer is: **B**", "my final answer would be option B", "Answer: B",
    # "the correct choice is (A)", "the best match is C"
    (
        "answer-is",
        re.compile(
            r"(?i:(?:\b(?:(?:final|correct|right|best|most\s+likely|most\s+appropriate|most\s+suitable|closest|only)\s+)?"
            r"(?:answer|choice|option|selection|pick|match|response)|\b(?:closest|nearest|best\s+fit"
            r"|(?:best|correct|right|most\s+likely)\s+one))(?:\s+(?:here|then|therefore|thus|now|overall))?\s*(?:(?:is|would\s+be|will\s+be|should\s+be|must\s+be"
            r"|seems\s+to\s+be|appears\s+to\s+be|remains)(?:\s*[:\uff1a])?|[:=\uff1a]|\s[-\u2013\u2014])"
            + _OPEN
            + _ADVERB
            + _OPEN
            + _OPTION_WORD
            + ")"
            + _LABEL
            + _LOOSE_END
            + _TAIL
        ),
    ),
    # "\\boxed{E}", "\\boxed{\\text{E}}", "\\boxed{(E) 12}"
    (
        "boxed",
        re.compile(
            r"\\boxed\{\s*(?:\\(?:text|textbf|mathrm|mathbf)\{\s*)?[\[(]?" + _LABEL + r"(?=[\])]?\s*[}.:,\s])" + _TAIL
        ),
    ),
    # "I choose B", "I'd go with option (C)", "it is option C: a cat", "select C"
    (
        "chosen",
        re.compile(
            r"(?i:\b(?:(?:is|be)\s+(?:option|choice|letter)\s|(?:choose|chose|choosing|select|selected|selecting|pick"
            r"|picked|picking|go\s+with|going\s+with|opt\s+for)\s+(?:(?:option|choice|letter|answer)\s)?"
            r"|(?:points?|pointing)\s+to\s+(?=[\[(*]))" + _OPEN + ")" + _LABEL + _LOOSE_END + _TAIL
        ),
    ),
    # "so it would be D", "the most fitting would be (D)", "it's B."
    (
        "would-be",
        re.compile(
            r"(?i:\b(?:would|should|must|will)\s+be\s+|\b(?:it\s+is|it's|it\u2019s|that's|that\s+is|which\s+is|this\s+is)"
            r"\s+)" + _ADVERB + _OPEN + _OPTION_WORD + _LABEL + _CLOSED_END + _TAIL
        ),
    ),
    # "... the animal is a cat, option C.", "so option (B)" ending a line or the reply
    (
        "option-x-end",
        re.compile(r"(?i:\b(?:option|choice))[ \t]+[\[(*]?" + _LABEL + r"(?=[\])*]*[.!]?[ \t]*(?:\n|$))" + _TAIL),
    ),
    # "... the one with hooves and horns: D." a label after a colon ending a line or the reply
    ("colon-end", re.compile(r"[:\uff1a][ \t]*[\[(*]{0,3}" + _LABEL + r"(?=[\])*]*[.!]?[ \t]*(?:\n|$))" + _TAIL)),
    # "(C) a cat: correct", "C. a cat - this is the correct one" on a line it opens
    (
        "list-correct",
        re.compile(
            r"(?m:^)[ \t>*_-]*[\[(*]{0,3}" + _LABEL + r"(?=[\])*.:]*[^\n]{0,48}?[-:\u2013\u2014][ \t]*(?:\*\*)?"
            r"(?i:correct|right|yes|true|this\s+is\s+(?:the\s+)?(?:correct|right))\b)" + _TAIL
        ),
    ),
    # "Option B", "Choice (C): a cat" opening the reply or a line
    (
        "option-x",
        re.compile(
            r"(?m:^)[ \t>*_-]*(?i:option|choice)[ \t]+[\[(*]?"
            + _LABEL
            + r"(?=\*\*|[.):\]]|[ \t]*(?:\n|$)|[ \t]+[-\u2013\u2014(])"
            + _TAIL
        ),
    ),
    # "**B**", "**(B) a dog**", "**B.**", "**(E)**"
    ("bold", re.compile(r"\*\*\s*[\[(]?" + _LABEL + r"(?=(?:[.):\]]?\s*\*\*|[.):\]]\s))" + _TAIL)),
    # "B is correct", "(B) is the correct answer", "B is right", "A is the best option"
    (
        "x-is-correct",
        re.compile(
            r"(?<![A-Za-z\[(*])[\[(*]{0,3}" + _LABEL + r"[\])*]*(?=\s+is\s+(?:the\s+)?(?:correct|right|best|answer)\b"
            r"|\s+is\s+my\s+(?:final\s+)?(?:answer|choice|pick)\b)" + _TAIL
        ),
    ),
    # "either A or B", "both (A) and (B)", "A and B are both correct": a hedge, never one choice
    (
        "hedge",
        re.compile(
            r"(?i:\b(?:either|both)\s+)(?:(?i:option|choice)\s+)?[\[(*]{0,3}"
            + _LABEL
            + r"[\])*]*(?=\s*,?\s*(?i:or|and)\s)"
            + _TAIL
            + r"|(?<![A-Za-z\[(*])[\[(*]{0,3}"
            + _LABEL.replace("label", "label2")
            + r"[\])*]*(?=\s*(?:,|&|/|"
            r"(?i:or|and)\s)\s*[\[(*]{0,3}[A-Z][\])*]*\s+" + _BOTH_RIGHT + ")" + _TAIL.replace("tail", "tail2")
        ),
    ),
)
"""Explicit final declarations, each naming one label; upper-case labels only, so the article "a" is never read
as option A. Sources of the forms: VLMEvalKit ``vlmeval/utils/matching_util.py`` (``_VERBOSE_ANSWER_RE``
"(correct) answer is **X**", commit a67ace50, PR #1552), lmms-eval's multiple-choice filters ("The answer is
(X)") and MathVista's answer extraction prompt (``\\boxed{}``); the stricter reading (one label, last declaration
wins, negated, rejected and named letters skipped, a second label undecides) is vqaudit's."""

_HEDGE_WORDS = r"(?:(?:possibly|maybe|perhaps|also|even|potentially|probably|either|option|choice|answer)\s+){0,2}"
_SECOND_LABEL = re.compile(
    r"^[\])*}.:]*(?P<mid>[^.!?;\n]{0,48}?)(?:\s*(?:,|/|&|\bor\b|\band\b|\bvs\.?|[.;]\s*(?i:or)\b))\s*"
    + _HEDGE_WORDS
    + r"[\[(*]{0,3}(?P<second>[A-Z])(?![A-Za-z'\u2019])(?![.][ \t]?[A-Z]\.)"
)
"""A second label after a declared one in the same sentence: "A or B", "(A) and (B)", "B/C", "D: a cow, or maybe
E", "D (a cow). Or E". A clause opened by "because", "not", "rather", ... (:data:`_ARGUMENT`) is an argument,
not a second label."""
_CONNECTOR = re.compile(r"[,/&]|(?i:\bor\b|\band\b|\bvs\b)")  # a cheap test before :data:`_SECOND_LABEL`
_ARGUMENT = re.compile(r"(?i:\b(?:because|since|as|but|while|not|which|that|so|than|unlike|over|rather|instead)\b)")

_REJECT_WORDS = (
    r"(?:(?:is|are|seems|appears|looks|was)\s+(?:not\b|incorrect|wrong|false|unlikely|implausible|impossible"
    r"|ruled\s+out|eliminated|excluded)|(?:can|could|should|must|may)\s+be\s+(?:ruled\s+out|eliminated|excluded"
    r"|discarded|rejected)|(?:can't|cannot|can\s+not|doesn't|does\s+not|isn't|aren't|don't|do\s+not)\b"
    r"|(?:incorrect|wrong|false)\b)"
)
_REJECTED = re.compile(r"(?i:^[\])*}.:]*\s+" + _REJECT_WORDS + ")")
"""A label directly followed by its rejection: "Option A is incorrect", "(D) can be ruled out", "B doesn't fit"."""
_LIST_REJECTED = re.compile(
    r"(?i:^[\])*}.:]*\s*(?:[^.!?\n]{0,48}?[-\u2013\u2014:,(]\s*)?(?:(?:this|it|which|that)\s+)?(?:"
    + _REJECT_WORDS
    + r"|no\b(?![ \t]+(?:doubt|question)\b)|not\s+(?:correct|right|it|this|the\s+(?:answer|one)|a\s+match|matching"
    r"|possible|likely|plausible|applicable|relevant)\b))"
)
"""An option reviewed and dismissed on a line it opens: "Option A: a horse - incorrect", "**D**: no"."""
_NEGATED = re.compile(
    r"(?i:(?:\bnot|\bnever|n't|n\u2019t)\s+(?!sure\b|certain\b|100)(?:\w+\s+){0,3}$"
    r"|\b(?:rule[sd]?\s+out|ruling\s+out|eliminat\w*|exclud\w*|except(?:\s+for)?|other\s+than|rather\s+than"
    r"|instead\s+of|unlike|against|reject\w*)\s+(?:\w+\s+){0,2}$)"
)
"""A negation or rejection right before a declaration ("I don't think the answer is B", "we can rule out B",
"rather than (A)", "not option C")."""
_DECLARING_NOUNS = re.compile(
    r"(?i:^\s+is\s+(?:my\s+|the\s+)?(?:(?:final\s+)?(?:answer|choice|pick)\b|(?:correct|right|best)(?:\s*$|\s*[^\sA-Za-z]|\s+(?!the\b|a\b|an\b)"
    r"(?:answer|choice|option|one|match|fit|description|pick|selection|response|letter|explanation|statement"
    r"|interpretation|conclusion|reading)\b|\s+(?:because|since|as|here|given|based|for|so|and|but|in)\b)))"
)
"""After "X is the correct/right/best" only a declaring noun (answer, choice, option, ...) or the end of the clause:
"angle A is the right angle" declares nothing."""
_CONJUNCTION = re.compile(r"^[ \t]+(?:because|since|as|given|based|due|which|from)\b")
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


@dataclass(frozen=True)
class Declaration:
    """One explicit final declaration found in a reply.

    Attributes:
        form: the declaration form (``answer-is``, ``boxed``, ``chosen``, ``would-be``, ``option-x``, ``bold``,
            ``x-is-correct``, ``hedge``, ``final-line``: the reply's last line is a bare label such as "B",
            "(B)" or "**B.**").
        label: the label it names.
        start: its offset in the reply (characters).
        ambiguous: it names a second label ("the answer is A or B").
        second: that second label, or ``""``.
        second_start: the second label's offset in the reply, or -1.
    """

    form: str
    label: str
    start: int
    ambiguous: bool
    second: str = ""
    second_start: int = -1


def _second_label(tail: str) -> tuple[str, int]:
    """The second label a declaration's tail names, and its offset in ``tail``.

    ``("", -1)`` when none names one, when that label is itself rejected ("A and B is wrong"), or when it is the
    article or a name.
    """
    if not _CONNECTOR.search(tail):
        return "", -1
    m = _SECOND_LABEL.match(tail)
    if m is None or _ARGUMENT.search(m.group("mid")):
        return "", -1
    second = m.group("second")
    rest = tail[m.end() :]
    if _REJECTED.match(rest) or (
        second in _ARTICLE_LIKE and re.match(r"\s+[a-z]", rest) and not _CONJUNCTION.match(rest)
    ):
        return "", -1
    if _is_name(tail, m.start("second")):
        return "", -1
    return second, m.start("second")


def _line_opening(reply: str, start: int) -> bool:
    """Only spaces, list marks and bold marks stand between the line's start and ``start``."""
    line_start = reply.rfind("\n", max(0, start - 16), start) + 1
    return (
        start - line_start <= 16
        and line_start <= start
        and re.fullmatch(r"[ \t>*_\-\d.()\[]*", reply[line_start:start]) is not None
        and (line_start > 0 or start <= 16)
    )


_CONCLUDING = re.compile(
    r"(?i:(?:^|[,:;\u2013\u2014\-.!?\n][ \t*]*|\b(?:so|thus|hence|therefore|then|namely|i\.e\.|is|it's|choose"
    r"|pick|answer)[ \t]+))$"
)
"""What may stand before an "option X." that ends a line for it to conclude: a sentence or clause start, "so",
"thus", "is", ... ("It barks, so option B."); "Let's look at option A." concludes nothing."""


def _declaration(form: str, m: re.Match[str], reply: str) -> Declaration | None:
    """One match of a declaration form read as a careful reader reads it, or None when it declares nothing."""
    if form == "option-x-end" and not _CONCLUDING.search(reply, max(0, m.start() - 24), m.start()):
        return None
    hedge_pair = form == "hedge" and m.group("label") is None
    label = m.group("label2") if hedge_pair else m.group("label")
    tail = m.group("tail2") if hedge_pair else m.group("tail")
    start = m.start("label2") if hedge_pair else m.start("label")
    bare = start == 0 or reply[start - 1] in " \t"
    if bare and _is_name(reply, start):  # "angle A", "vitamin C", "point B"
        return None
    if re.match(r"['\u2019]s\b", tail):  # "A's side": a name
        return None
    second, offset = _second_label(tail)
    if (
        form not in ("x-is-correct", "hedge")
        and label in _ARTICLE_LIKE
        and re.match(r"\s+[a-z]", tail)
        and not second
        and not _CONJUNCTION.match(tail)
    ):
        return None  # the article "A", the pronoun "I"
    if _NEGATED.search(reply[max(0, m.start() - 40) : m.start()]) or _REJECTED.match(tail):
        return None
    if form == "x-is-correct" and not _DECLARING_NOUNS.match(re.sub(r"^[\])*]+", "", tail)):
        return None
    if form in ("option-x", "bold") and _line_opening(reply, m.start()) and _LIST_REJECTED.match(tail):
        return None
    if form == "hedge" and not second:
        return None
    tail_start = m.start("tail2") if hedge_pair else m.start("tail")
    return Declaration(form, label, start, bool(second), second, tail_start + offset if second else -1)


def declarations(reply: str) -> list[Declaration]:
    """Every explicit final declaration in ``reply``, in order of position (:data:`_DECLARATIONS`).

    Skipped, as a careful reader skips them: a declaration preceded in its clause by a negation or a rejection
    ("not", "n't", "never" up to three words before; "rule out", "except", "rather than" up to two); a label
    followed by its rejection ("Option A is incorrect", "(D) can be ruled out"); an option opening a line that
    dismisses it ("Option A: a horse - no"); a capital used as a name ("angle A", "vitamin C", "point B",
    "A's"); ``A`` and ``I`` followed by a lower-case word (the article, the pronoun) unless a conjunction
    ("A because ...") or a second label follows; "X is the right <noun>" unless the noun declares (answer,
    choice, option, ...). A declaration naming a second label in the same sentence ("A or B", "(A) and (B)",
    "D: a cow, or maybe E") is ``ambiguous``. Time is linear in ``len(reply)``: every pattern reads a bounded
    window (:data:`TAIL_CHARS` after a label, 40 characters before).

    Args:
        reply: the raw reply.

    Returns:
        The declarations, sorted by ``start``; one per position (the first form listed wins a tie).
    """
    found: dict[int, Declaration] = {}
    for form, pattern in _DECLARATIONS:
        for m in pattern.finditer(reply):
            decl = _declaration(form, m, reply)
            if decl is not None and decl.start not in found:
                found[decl.start] = decl
    last_line = _FINAL_LINE.search(reply.rstrip())
    if last_line and last_line.start("label") not in found:
        start = last_line.start("label")
        found[start] = Declaration("final-line", last_line.group("label"), start, False)
    out: list[Declaration] = []
    hedge_end = -1
    for k in sorted(found):
        if k <= hedge_end:  # the second label of a hedge ("**B** or **C**") is part of it, not a new declaration
            continue
        out.append(found[k])
        hedge_end = max(hedge_end, found[k].second_start)
    return out


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
                _NEGATED.search(norm[max(0, m.start() - 40) : m.start()])
                or re.search(r"\bno\s+$", norm[: m.start()])
                or _REJECTED.match(after)
                or _LIST_REJECTED.match(after)
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


# --- Yes/no replies -------------------------------------------------------------------------------------------

_LEADING_YES_NO = re.compile(
    r"^[\s*_\"'`(\[]*(?P<word>yes|no)(?P<end>[*_\"'`)\]]*(?:\s*[.,:;!\n\-\u2013\u2014]|\s*$))", re.IGNORECASE
)
_DECLARED_YES_NO = re.compile(
    r"(?i:\b(?:final\s+|correct\s+)?answer\s*(?:is|would\s+be|[:=]))[\s*\"'(\[]*"
    r"(?P<word>(?i:yes|no))[*\"')\]]*(?:[.,:;!\n]|\s*$)"
)


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
