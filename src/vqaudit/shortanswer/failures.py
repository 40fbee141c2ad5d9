"""Failure notes of Table 13 (seed 002 appendix I): empty, truncated and formatting failures, counted apart.

Table 13 asks for "empty outputs, partial answers, and formatting failures, reported separately from semantic
mismatch". The rules here are deterministic heuristics on the output text alone (no gold):

- ``empty``: nothing but whitespace;
- ``truncated`` (a partial answer): ends with ``...`` / ``…``, has unbalanced brackets or an odd number of
  double quotes, or is longer than :data:`LONG_WORDS` words and stops without final punctuation (the shape of
  an output cut at the token limit);
- formatting, one count per kind (a row may have several): ``sentence`` (more than :data:`SENTENCE_WORDS`
  words), ``wrapper`` (a leading answer wrapper such as "The answer is"), ``trailing-punctuation``,
  ``markdown`` (``**``, backticks, a leading ``#`` or bullet), ``multi-line``, ``quoted``;
- ``abstention``: an explicit refusal or "Unanswerable" (VizWiz's instruction asks for it); ``unanswerable``
  counts only outputs that *are* the VizWiz abstention answer ("unanswerable" after vqaEval normalization).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress

from vqaudit.scoring.canonical import strip_wrapper
from vqaudit.scoring.vqa_normalize import PUNCTUATION, fast_vqaeval_process

LONG_WORDS = 20
SENTENCE_WORDS = 5
FORMAT_KINDS: tuple[str, ...] = ("sentence", "wrapper", "trailing-punctuation", "markdown", "multi-line", "quoted")

_ABSTAIN_START = (
    r"(?:unanswerable|unknown|not answerable|cannot be determined|can ?not be determined|"
    r"it is not possible|not possible to (?:determine|tell|answer)|"
    r"i (?:cannot|can't|can not|am unable to)\b|there is no (?:way|information)|n/a\b)"
)
_ABSTAIN = re.compile(r"^\s*" + _ABSTAIN_START, re.IGNORECASE)
_MARKDOWN = re.compile(r"\*\*|`|^\s*(?:#|[-*] )", re.MULTILINE)
_DROP_PUNCT = dict.fromkeys(map(ord, "".join(PUNCTUATION) + "."))
_TRAILING_NUMBER_PERIOD = re.compile(r"\d\.$")


def is_unanswerable(text: str) -> bool:
    """True when the vqaEval-normalized output is exactly "unanswerable" (VizWiz's abstention answer).

    vqaEval normalization only deletes punctuation and periods, replaces them with spaces, drops articles and
    maps number words, so its result can be the one word "unanswerable" only if the lower-cased text holds
    those letters once punctuation is deleted; that cheap test runs first.
    """
    low = text.lower()
    if "w" not in low or "b" not in low or "unanswerable" not in low.translate(_DROP_PUNCT):
        return False
    return fast_vqaeval_process(text) == "unanswerable"


@dataclass(frozen=True)
class FailureNotes:
    """Counts over ``n`` outputs; ``formatting`` maps each of :data:`FORMAT_KINDS` to a count."""

    n: int
    empty: int
    truncated: int
    abstention: int
    unanswerable: int
    formatting: dict[str, int]
    any_formatting: int


def is_truncated(text: str) -> bool:
    """The truncation heuristic of the module docstring."""
    return _truncated(text.strip())


def _truncated(t: str) -> bool:
    """:func:`is_truncated` of a stripped text."""
    if not t:
        return False
    if t.endswith("...") or t.endswith("\u2026"):
        return True
    if t.count("(") != t.count(")") or t.count("[") != t.count("]") or t.count('"') % 2 == 1:
        return True
    return t[-1].isalnum() and len(t.split(maxsplit=LONG_WORDS)) > LONG_WORDS


def formatting_kinds(text: str) -> tuple[str, ...]:
    """The formatting kinds of one output (module docstring), in :data:`FORMAT_KINDS` order."""
    return _formatting(text.strip())


def _count_formatting(text: str, counts: dict[str, int]) -> bool:
    """Add each formatting kind of ``text`` to ``counts``; True when it has any (counted once in ``any_formatting``)."""
    kinds = _formatting(text)
    for k in kinds:
        counts[k] += 1
    return bool(kinds)


def _formatting(t: str) -> tuple[str, ...]:
    """:func:`formatting_kinds` of a stripped text."""
    if not t:
        return ()
    kinds = []
    sentence = len(t.split(maxsplit=SENTENCE_WORDS)) > SENTENCE_WORDS  # more words; splits 5 times at most
    if sentence:
        kinds.append("sentence")
    if strip_wrapper(t) != t:
        kinds.append("wrapper")
    if t[-1] in ".,;:!?" and not _TRAILING_NUMBER_PERIOD.search(t[-3:]) and not sentence:
        kinds.append("trailing-punctuation")
    if ("*" in t or "`" in t or "#" in t or "-" in t) and _MARKDOWN.search(t):  # each branch needs one of them
        kinds.append("markdown")
    if "\n" in t:
        kinds.append("multi-line")
    if len(t) >= 2 and t[0] in "\"'\u201c" and t[-1] in "\"'\u201d":
        kinds.append("quoted")
    return tuple(kinds)


def failure_notes(outputs: Sequence[str]) -> FailureNotes:
    """Count empty, truncated, abstaining and badly formatted outputs.

    Exactly the per-output rules of the module docstring (:func:`is_truncated`, :func:`formatting_kinds`, the
    abstention pattern, :func:`is_unanswerable`), computed in batch passes over all outputs: see
    :func:`_batch_notes`.

    Args:
        outputs: raw model outputs.

    Returns:
        The :class:`FailureNotes`.
    """
    texts = list(outputs)
    stripped = [t.strip() for t in texts]
    kept = [t for t in stripped if t]
    joined = "\x00".join(kept)
    if kept and joined.count("\x00") != len(kept) - 1:
        return _row_notes(texts)  # the batch passes join the outputs with NUL: outputs holding one go one by one
    originals = [text for text, t in zip(texts, stripped, strict=True) if t] if len(kept) < len(texts) else texts
    empty = len(texts) - len(kept)
    truncated, abstain, unanswerable, fmt, any_fmt = _batch_notes(kept, originals, joined)
    return FailureNotes(len(texts), empty, truncated, abstain, unanswerable, fmt, any_fmt)


def failure_notes_in_chunks(outputs: Sequence[str], chunk_rows: int = 1 << 16) -> FailureNotes:
    """:func:`failure_notes` of ``outputs``, computed ``chunk_rows`` outputs at a time and summed.

    Every count is a count of outputs, each decided by its output alone, so the sums over the chunks equal the
    counts over all outputs; the batch passes hold a few copies of the outputs they are given, so chunks bound
    that to one chunk's outputs (a :class:`vqaudit.shortanswer.packed.Packed` sequence is read a chunk at a time).

    Raises:
        ValueError: ``chunk_rows`` below 1.
    """
    if chunk_rows < 1:
        raise ValueError("chunk_rows must be at least 1")
    if len(outputs) <= chunk_rows:
        return failure_notes(outputs)
    total = failure_notes(outputs[:chunk_rows])
    for start in range(chunk_rows, len(outputs), chunk_rows):
        part = failure_notes(outputs[start : start + chunk_rows])
        total = FailureNotes(
            total.n + part.n,
            total.empty + part.empty,
            total.truncated + part.truncated,
            total.abstention + part.abstention,
            total.unanswerable + part.unanswerable,
            {k: v + part.formatting[k] for k, v in total.formatting.items()},  # the keys in failure_notes' order
            total.any_formatting + part.any_formatting,
        )
    return total


def _row_notes(outputs: Sequence[str]) -> FailureNotes:
    """:func:`failure_notes` output by output: the definition the batch passes are tested against."""
    fmt = dict.fromkeys(FORMAT_KINDS, 0)
    any_fmt = 0
    empty = truncated = abstain = unanswerable = 0
    for text in outputs:
        t = text.strip()
        if not t:
            empty += 1
            continue
        truncated += _truncated(t)
        abstain += bool(_ABSTAIN.match(text))
        unanswerable += is_unanswerable(text)
        any_fmt += _count_formatting(t, fmt)
    return FailureNotes(len(outputs), empty, truncated, abstain, unanswerable, fmt, any_fmt)


# --- Batch passes (for speed): identical counts, tested against _row_notes on fixture and hostile outputs. ---

# Bytes of the UTF-8 text that send an output to the per-output rules: any non-ASCII character, whitespace other
# than the space, and the marks of the markdown, wrapper (``\boxed``) and multi-line rules.
_RARE_BYTES = bytes(range(0x80, 0x100)) + b"*`#\\\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"
_BRACKET_BYTES = b'()[]"'
_NOT_MARKS = bytes(c for c in range(256) if c not in _BRACKET_BYTES + b"\x00")
_NOT_RARE = bytes(c for c in range(256) if c not in _RARE_BYTES + b"\x00")
_NOT_SPACES = bytes(c for c in range(256) if c not in b" \x00")
_DROP_PUNCT_BYTES = ("".join(PUNCTUATION) + ".").encode()
# Every text _WRAPPER (vqaudit.scoring.canonical_text, which strip_wrapper applies) matches starts like this: each
# of its alternatives cut short; candidates are confirmed by strip_wrapper itself. Keep it in step with _WRAPPER.
# On a plain output (ASCII, spaces its only whitespace) in ASCII lower case, each pattern below (lower-case, bytes:
# ASCII \s, \b and letters) matches where its IGNORECASE ``str`` original matches on the output.
_WRAPPER_START = re.compile(
    rb"\x00(?:(?:the\s+)?(?:(?:final|correct|short)\s+)?(?:answer|result)"
    rb"|(?:it|this|that)\s+(?:is|says|reads)|(?:it's|its)\s)"
)
_ABSTAIN_AFTER_NUL = re.compile(b"\x00" + _ABSTAIN_START.encode())
_TRAILING_MARKS = re.compile(r"[.,;:!?]")


def _batch_notes(kept: list[str], originals: list[str], joined: str) -> tuple[int, int, int, dict[str, int], int]:
    r"""Truncated, abstention, unanswerable, formatting counts and outputs with any formatting kind.

    ``kept``: the stripped non-empty outputs, none holding NUL; ``originals``: the same outputs unstripped;
    ``joined``: ``kept`` joined with NUL. That string (and its UTF-8 bytes) is read by C-level passes:

    * an output is *plain* when its bytes hold none of :data:`_RARE_BYTES` and no double space: then its words
      are its spaces plus one, markdown can only be a leading ``- ``, quotes only ASCII ones, and the bracket
      rule reads the output's ``()[]"`` marks, kept by one ``bytes.translate`` of the whole text; every other
      output goes through the per-output rules;
    * on the plain outputs, the abstention pattern and :data:`_WRAPPER_START` are matched once per output, after
      each NUL of the ASCII lower-cased bytes (the abstention pattern starts with ``^\s*``, which the strip
      already did); the other outputs are matched one by one;
    * ``unanswerable`` and the closing "answer is" wrapper are looked for in the ASCII lower-cased bytes of all
      outputs (only ASCII letters lower-case to the letters of either, and vqaEval deletes only ASCII marks);
    * the candidates of ``unanswerable`` and of the wrapper are confirmed by the rules themselves.
    """
    data = joined.encode("utf-8", "surrogatepass")
    n = len(kept)
    marks = data.translate(None, _NOT_MARKS).split(b"\x00")
    spaces = list(map(len, data.translate(None, _NOT_SPACES).split(b"\x00")))
    slow = set(compress(range(n), data.translate(None, _NOT_RARE).split(b"\x00")))
    slow.update(_rows_holding(data, b"  "))
    first = "".join([t[0] for t in kept])
    last = "".join([t[-1] for t in kept])
    lowered = data.lower()
    prefixed = b"\x00" + lowered

    abstain = sum(i not in slow for i in _rows_at(prefixed, [m.start() for m in _ABSTAIN_AFTER_NUL.finditer(prefixed)]))
    abstain += sum(bool(_ABSTAIN.match(originals[i])) for i in slow)
    unanswerable = sum(
        is_unanswerable(originals[i])
        for i in _rows_holding(lowered.translate(None, _DROP_PUNCT_BYTES), b"unanswerable")
    )
    starts = _rows_at(prefixed, [m.start() for m in _WRAPPER_START.finditer(prefixed)])
    wrapper = {
        i
        for i in {*starts, *_rows_holding(lowered, b"answer is")}
        if i not in slow and strip_wrapper(kept[i]) != kept[i]
    }

    n_sentence = [c >= SENTENCE_WORDS for c in spaces].count(True) - sum(spaces[i] >= SENTENCE_WORDS for i in slow)
    truncated = {
        i
        for i in compress(range(n), marks)
        if i not in slow
        and ((m := marks[i]).count(b"(") != m.count(b")") or m.count(b"[") != m.count(b"]") or m.count(b'"') % 2 == 1)
    }
    truncated.update(i for i in compress(range(n), map(LONG_WORDS.__le__, spaces)) if last[i].isalnum())
    truncated.update(_rows_holding(data + b"\x00", b"...\x00"))
    truncated -= slow
    trailing: set[int] = set()
    for match in _TRAILING_MARKS.finditer(last):
        i = match.start()
        if spaces[i] < SENTENCE_WORDS and i not in slow and not _TRAILING_NUMBER_PERIOD.search(kept[i][-3:]):
            trailing.add(i)
    markdown = {i for i in _positions(first, "-") if i not in slow and kept[i].startswith("- ")}
    quoted = {
        i
        for quote in "\"'"
        for i in _positions(first, quote)
        if i not in slow and len(kept[i]) >= 2 and last[i] in "\"'"
    }

    fmt = {
        "sentence": n_sentence,
        "wrapper": len(wrapper),
        "trailing-punctuation": len(trailing),
        "markdown": len(markdown),
        "multi-line": 0,
        "quoted": len(quoted),
    }
    # Trailing punctuation excludes sentences already: the outputs with a kind are the sentences and the others.
    any_fmt = n_sentence + len(trailing.union(i for i in wrapper | markdown | quoted if spaces[i] < SENTENCE_WORDS))
    n_truncated = len(truncated)
    for i in slow:  # the per-output rules
        t = kept[i]
        n_truncated += _truncated(t)
        any_fmt += _count_formatting(t, fmt)
    return n_truncated, abstain, unanswerable, fmt, any_fmt


def _rows_at(data: bytes, positions: list[int]) -> list[int]:
    """The row (NUL-separated, from 0; a NUL starts the row after it) of each of the ascending ``positions``."""
    rows: list[int] = []
    row = prev = 0
    for pos in positions:
        row += data.count(b"\x00", prev, pos + 1)
        prev = pos + 1
        rows.append(row - 1)
    return rows


def _rows_holding(data: bytes, part: bytes) -> list[int]:
    """The rows (NUL-separated, from 0) of ``data`` in which ``part`` (holding no NUL) occurs, in order."""
    rows: list[int] = []
    row = prev = 0
    start = data.find(part)
    while start >= 0:
        row += data.count(b"\x00", prev, start)
        prev = start
        if not rows or rows[-1] != row:
            rows.append(row)
        start = data.find(part, start + 1)
    return rows


def _positions(text: str, char: str) -> list[int]:
    """Every index of ``char`` in ``text``."""
    out: list[int] = []
    i = text.find(char)
    while i >= 0:
        out.append(i)
        i = text.find(char, i + 1)
    return out
