"""Reference-only contract repair: the overlay of canonical forms beside each gold answer (seed 002 §5.4, app. D).

The rules are those of :mod:`vqaudit.scoring.repair` (its module docstring): contract-aware canonical forms of
each gold answer, kept as *new overlay columns* beside the original gold (never an overwrite, appendix D):
dash/trailing-punctuation clean-ups; number forms without (or with) thousands separators; ``45%`` <-> ``45`` for
percent gold (or percent questions); ``C-5`` -> ``C5``, ``C 5``; list golds as ``A, B`` / ``A and B`` /
``B and A``, never deleting or adding a word. :func:`reference_overlay` builds the overlay of
one item; :func:`reference_overlays` those of a whole column, the same tuples, in one loop.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from vqaudit.scoring.canonical import is_single_entity, parse_plain_number, strip_trailing, unify_dashes
from vqaudit.scoring.columns import gc_paused
from vqaudit.scoring.contracts import Contract

Overlay = tuple[tuple[str, ...], ...]
"""Per reference answer, its extra accepted forms (same order as the answers)."""

_DIGIT = re.compile(r"\d")
_PERCENT_Q = re.compile(r"%|percent|percentage|share|proportion", re.IGNORECASE)


def _number_forms(ref: str, question: str) -> list[str]:
    if _PLAIN_DECIMAL.fullmatch(ref):
        # What parse_plain_number reads from ASCII digits with an optional decimal part (its number pattern with
        # no sign, "$", separator or percent): the value, no percent, the text itself as the digits.
        value, percent, digits = float(ref), False, ref
    else:
        parsed = parse_plain_number(ref) if _may_be_number(ref) else None
        if parsed is None:
            return []
        value, percent, digits = parsed
    forms: list[str] = []
    core = ref.strip().rstrip("%").strip()
    if "," in core:
        forms.append(core.replace(",", "") + ("%" if percent else ""))
    elif value.is_integer() and abs(value) >= 10000 and not digits.startswith("0"):
        forms.append(f"{int(value):,}" + ("%" if percent else ""))
    if percent:
        forms += [core, core + " %"]
    elif _percent_question(question):
        forms.append(core + "%")
    return forms


_PLAIN_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_NUMBER_START = frozenset("+-$.0123456789")
_NUMBER_END = frozenset("0123456789%")


def _may_be_number(text: str) -> bool:
    """False only when ``parse_plain_number(text)`` is None (a prefilter; True means "read it").

    An ASCII text the reader accepts starts, once stripped, with a sign, "$", "." or a digit and ends with a
    digit, "%" or "percent" (an optional sign and "$", digits, an optional decimal part, then "%" or "percent";
    thousands separators only between digits).
    """
    if not text.isascii():
        return True
    t = text.strip()
    end = t[-1:]
    return t[:1] in _NUMBER_START and (end in _NUMBER_END or (end in "tT" and t.lower().endswith("percent")))


@lru_cache(maxsize=1 << 16)
def _percent_question(question: str) -> bool:
    """The question asks for a percentage (``_PERCENT_Q``); memoized, as questions repeat across models."""
    return _PERCENT_Q.search(question) is not None


_LIST_MARK = re.compile(r"[,;/&]")
_WORD = re.compile(r"[^\W_]+(?:['\u2019.-][^\W_]+)*")


def _words(text: str) -> list[str]:
    """The sorted words of ``text`` without the joiner "and" (case-folded): what a span overlay must keep."""
    return sorted(w for w in (m.group(0).casefold() for m in _WORD.finditer(text)) if w != "and")


_HARD_SPLIT = re.compile(r"\s*[,;/&]\s*")
_AND = re.compile(r"\s+and\s+", re.IGNORECASE)


def _overlay_spans(text: str) -> tuple[str, ...]:
    """The spans of a list gold for its overlay forms, never cut inside a multi-word span.

    Split at ``, ; / &``; at "and" only when every piece then is one word ("health, education and welfare");
    "interactions of essential and toxic elements" stays whole.
    """
    t = text.strip()
    if t.startswith("[") and t.endswith("]"):
        t = t[1:-1]
    parts = [p.strip(" '\"") for p in _HARD_SPLIT.split(t)]
    pieces = [q.strip(" '\"") for p in parts for q in _AND.split(p)]
    chosen = pieces if all(len(q.split()) == 1 for q in pieces) else parts
    return tuple(q for q in chosen if q)


@lru_cache(maxsize=262144)
def _overlay_one(ref: str, bucket: str, question: str) -> tuple[str, ...]:
    core = ref.strip()
    if ref.isascii() and len(core) > 1 and core[0].isalnum() and core[-2:].isalnum():
        # strip_trailing(unify_dashes(ref)) == core: an ASCII text is its own unify_dashes, and with an alnum at
        # the start and two at the end of its stripped core, only the surrounding whitespace is trailing
        # punctuation (the end is no single-letter word, so the "U.S." rule cannot keep the run).
        cleaned = core
    else:
        cleaned = strip_trailing(unify_dashes(ref))
    forms = [cleaned] if cleaned and cleaned != ref else []
    if not cleaned.isascii() or _DIGIT.search(cleaned):  # an ASCII string without a digit is not a number
        forms += _number_forms(cleaned, question)
    if bucket == "identifier" and "-" in cleaned and " " not in cleaned:
        forms += [cleaned.replace("-", ""), cleaned.replace("-", " ")]
    if bucket == "multi-span" and _LIST_MARK.search(cleaned) and not is_single_entity(cleaned):
        spans = _overlay_spans(cleaned)
        if len(spans) >= 2:
            span_forms = [", ".join(spans), ", ".join(spans[:-1]) + " and " + spans[-1]]
            if len(spans) == 2:
                span_forms += [f"{spans[1]}, {spans[0]}", f"{spans[1]} and {spans[0]}"]
            # Never a word deleted or added. Every span form has the same words (the spans', as each joiner holds a
            # space, which no word crosses), so one comparison decides for all of them.
            if _words(span_forms[0]) == _words(cleaned):
                forms += span_forms
    if not forms:
        return ()
    return tuple(dict.fromkeys(f for f in forms if f and f != ref))


def reference_overlay(answers: Sequence[str], contract: Contract, question: str = "") -> Overlay:
    """Canonical overlay forms for each gold answer (new columns; the answers themselves are not changed).

    Args:
        answers: the original gold answers.
        contract: the item's contract (decides which forms apply).
        question: the question text (a percent question accepts ``N%`` for a bare ``N`` gold).

    Returns:
        One tuple of extra forms per answer, in answer order (empty tuples when nothing applies).
    """
    plain = _PLAIN_REF.fullmatch
    if len(answers) == 1:
        only = answers[0]
        return ((),) if plain(only) else (_forms_of(only, contract.bucket, question),)
    distinct = set(answers)  # annotators repeat answers
    if all(map(plain, distinct)):
        return ((),) * len(answers)
    forms = {a: () if plain(a) else _forms_of(a, contract.bucket, question) for a in distinct}
    return tuple(map(forms.__getitem__, answers))


# A gold answer of ASCII letters, spaces, periods and apostrophes, starting and ending with a letter, has no overlay
# form in any bucket (what _overlay_one would find): strip_trailing and unify_dashes leave it unchanged (an ASCII
# text with a letter at each end), it has no digit (no number forms), no "-" (no identifier forms) and no list
# separator (no span forms). (Linear time: the one star can only give back characters to the final letter.)
_PLAIN_REF = re.compile(r"[A-Za-z](?:[A-Za-z .']*[A-Za-z])?")


def _forms_of(ref: str, bucket: str, question: str) -> tuple[str, ...]:
    """``_overlay_one(ref, bucket, question)``; a plain gold padded with spaces is done without it.

    Its one form is the gold without the spaces: strip_trailing removes them (the core ends with two letters, so
    the single-letter rule cannot keep the trailing run), and the core has no other form (see _PLAIN_REF).
    """
    core = ref.strip(" ")
    if len(core) > 1 and core[-2].isalpha() and _PLAIN_REF.fullmatch(core):
        return (core,)
    return _overlay_one(ref, bucket, question)


def reference_overlays(
    answers: Sequence[Sequence[str]], contracts: Sequence[Contract], questions: Sequence[str]
) -> list[Overlay]:
    """``reference_overlay(a, c, q)`` of every row ``(a, c, q)``, in row order (equal tuples).

    The rule of :func:`reference_overlay` inline in one loop, and a short gold of ASCII digits (under 10,000: no
    thousands form) takes its one possible form (``N%`` for a percent question) without the overlay builder.
    (Measured: collecting the distinct golds of the whole column first and testing each once cost more than the
    per-row tests, which stop at the first gold that is not plain; cold-pool rows share few golds.) The cyclic
    garbage collector is paused meanwhile (:func:`vqaudit.scoring.columns.gc_paused`).

    Args:
        answers: the original gold answers of each row.
        contracts: each row's contract (its bucket decides which forms apply).
        questions: each row's question text.

    Returns:
        One overlay per row: per answer, its extra forms (empty tuples when nothing applies).

    Raises:
        ValueError: columns of different lengths.
    """
    with gc_paused():
        return _overlay_rows(answers, contracts, questions)


def _overlay_rows(
    answers: Sequence[Sequence[str]], contracts: Sequence[Contract], questions: Sequence[str]
) -> list[Overlay]:
    plain = _PLAIN_REF.fullmatch
    percent: dict[str, bool] = {}
    out: list[Overlay] = []
    append = out.append
    for golds, contract, question in zip(answers, contracts, questions, strict=True):
        if len(golds) == 1:
            only = golds[0]
            append(_NO_FORMS if plain(only) else (_forms_in(only, contract.bucket, question, percent),))
            continue
        distinct = set(golds)  # annotators repeat answers
        if all(map(plain, distinct)):
            n = len(golds)
            append(_NO_FORMS_OF[n] if n < len(_NO_FORMS_OF) else ((),) * n)  # one shared tuple per length
            continue
        bucket = contract.bucket
        forms = {a: () if plain(a) else _forms_in(a, bucket, question, percent) for a in distinct}
        append(tuple(map(forms.__getitem__, golds)))
    return out


_NO_FORMS: Overlay = ((),)
_NO_FORMS_OF: tuple[Overlay, ...] = tuple(((),) * n for n in range(33))
"""The overlay of ``n`` references without forms, for ``n`` < 33 (tuples are immutable: rows share them)."""


def _forms_in(ref: str, bucket: str, question: str, percent: dict[str, bool]) -> tuple[str, ...]:
    """``_forms_of(ref, bucket, question)``; ``percent`` memoizes ``_PERCENT_Q`` per question.

    A gold of one to four ASCII digits is read by ``_number_forms`` as a plain decimal below 10,000 with no
    separator: no thousands form, no percent of its own, so its only form is ``N%`` when the question asks for a
    percentage; ``strip_trailing``/``unify_dashes`` keep it (ASCII, alphanumeric at both ends) and it has no "-"
    and no list mark (no identifier or span form).
    """
    if len(ref) <= 4 and ref.isdigit() and ref.isascii():
        pq = percent.get(question)
        if pq is None:
            pq = percent[question] = _PERCENT_Q.search(question) is not None
        return (ref + "%",) if pq else ()
    return _forms_of(ref, bucket, question)
