r"""Explicit final declarations in a multiple-choice reply: "the answer is (B)", "\boxed{E}", "I choose C".

Rule 4 of the choice reader (:func:`vqaudit.parsing.choice.read_choice`; the rules, with an example each, are in
``docs/upd.md``, "How a choice is read"): every explicit declaration of one label, read as a careful reader reads
it (negated, rejected and named letters skipped, a second label in the same sentence makes it ambiguous). This
module finds them (:func:`declarations`); the reader decides on the last one. Also the rejection and negation
patterns the rest of the reader shares (:data:`REJECTED`, :data:`LIST_REJECTED`, :data:`NEGATED`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vqaudit.parsing.letter_names import is_name

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
REJECTED = re.compile(r"(?i:^[\])*}.:]*\s+" + _REJECT_WORDS + ")")
"""A label directly followed by its rejection: "Option A is incorrect", "(D) can be ruled out", "B doesn't fit"."""
LIST_REJECTED = re.compile(
    r"(?i:^[\])*}.:]*\s*(?:[^.!?\n]{0,48}?[-\u2013\u2014:,(]\s*)?(?:(?:this|it|which|that)\s+)?(?:"
    + _REJECT_WORDS
    + r"|no\b(?![ \t]+(?:doubt|question)\b)|not\s+(?:correct|right|it|this|the\s+(?:answer|one)|a\s+match|matching"
    r"|possible|likely|plausible|applicable|relevant)\b))"
)
"""An option reviewed and dismissed on a line it opens: "Option A: a horse - incorrect", "**D**: no"."""
NEGATED = re.compile(
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
    if REJECTED.match(rest) or (
        second in _ARTICLE_LIKE and re.match(r"\s+[a-z]", rest) and not _CONJUNCTION.match(rest)
    ):
        return "", -1
    if is_name(tail, m.start("second")):
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
    if bare and is_name(reply, start):  # "angle A", "vitamin C", "point B"
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
    if NEGATED.search(reply[max(0, m.start() - 40) : m.start()]) or REJECTED.match(tail):
        return None
    if form == "x-is-correct" and not _DECLARING_NOUNS.match(re.sub(r"^[\])*]+", "", tail)):
        return None
    if form in ("option-x", "bold") and _line_opening(reply, m.start()) and LIST_REJECTED.match(tail):
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
