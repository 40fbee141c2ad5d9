r"""The step forms of many texts at once: :func:`forms_many`, identical per text to ``canonical_text._forms``.

The canonical layer compares, per text, the vqaEval forms after string steps 1..4 (and for ANLS the light forms;
rules in :mod:`vqaudit.scoring.canonical`). :func:`vqaudit.scoring.canonical_text._forms` computes them one text
at a time; here every step is one pass over all texts of a call, and a step runs its rule only on the texts it can
change (for speed: the cost left is calls, about 1 us of Python per string per step):

- dash unification is the identity on ASCII; a non-ASCII text takes the per-text way (``_forms``), so no
  Unicode case, space or NFKC rule needs a fast path;
- trailing punctuation (``strip_trailing``) can change only a text whose first character is a quote, backtick,
  asterisk or space, or whose last one is one of those or ``. , ; : ! ?``;
- the answer wrapper (``strip_wrapper``) only one that has outer spaces, begins (in lower case) with a word a
  wrapper begins with, holds "answer is", or begins with a backslash (``\boxed{``);
- the vqaEval normalizations of all step texts run in two batches (:func:`vqaeval_many`), with ``_forms``'s two
  shortcuts (a dropped final period; a text without punctuation has equal vqaEval and light forms).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence

from vqaudit.scoring.canonical_text import (
    _PUNCT_OR_PERIOD,
    _Forms,
    _forms,
    _light_without_final_period,
    separate_digit_commas,
    strip_trailing,
    strip_wrapper,
)
from vqaudit.scoring.vqa_normalize import (
    ARTICLES,
    CONTRACTIONS,
    NUMBER_WORDS,
    PERIOD_STRIP_COUNT,
    PUNCTUATION,
    process_digit_article,
    vqaeval_many,
)

FormsOf = tuple[str, str, _Forms, _Forms | None, str]
"""``(t2, t3, surfaces, light, stripped)`` of one text: ``canonical_text._forms``'s four fields and
``text.strip()`` (the raw equality of the canonical layer)."""

_ASCII_SPACE = frozenset(c for c in map(chr, range(128)) if c.isspace())  # what str.isspace/strip see in ASCII
_LEAD_OR_SPACE = frozenset("\"'`*") | _ASCII_SPACE  # strip_trailing's leading run (_LEAD)
_TAIL_OR_SPACE = frozenset("\"'`*.,;:!?") | _ASCII_SPACE  # strip_trailing's trailing run (_TAIL)
_WRAPPER_STARTS = ("the", "final", "correct", "short", "answer", "result", "it", "this", "that", "\\")
"""Lower-cased beginnings of every text ``strip_wrapper`` can change apart from outer spaces and "answer is":
the first words of ``_WRAPPER``'s alternatives (``it`` covers "it's" and "its") and ``\\boxed{``."""


def canonical_vqaeval_many(texts: Sequence[str], into: dict[str, str], normal: dict[str, str]) -> None:
    """``canonical_text._vqaeval`` of every text of ``texts`` not yet in ``into``, added to ``into``.

    That is vqaEval.py's normalization (:func:`vqaeval_many`, memo ``normal``) of the text with its digit commas
    read by :func:`separate_digit_commas`, or the raw text lower-cased with spaces folded when that leaves
    nothing of a visible text (module docstring of :mod:`vqaudit.scoring.canonical`).
    """
    new = [t for t in texts if t not in into] if into else list(texts)
    if "," in "".join(new):  # digit commas read first
        read = {t: s for t in new if "," in t and (s := separate_digit_commas(t)) != t}
        if read:
            vqaeval_many(read.values(), normal)
            into.update({t: normal[s] for t, s in read.items()})
    vqaeval_many(new, into)  # skips the texts read above
    outs = list(map(into.__getitem__, new))
    if "" in outs:
        for t in [t for t, out in zip(new, outs, strict=True) if not out]:
            if t.strip():
                into[t] = " ".join(t.lower().split())


def _light_many(texts: Sequence[str], into: dict[str, str]) -> None:
    """``canonical_text._light`` (the digit/article step, raw fallback) of every text not yet in ``into``."""
    for t in texts:
        if t not in into:
            out = process_digit_article(t)
            into[t] = out if out or not t.strip() else " ".join(t.lower().split())


def _light_of(text: str, lights: dict[str, str]) -> str:
    """``canonical_text._light`` of ``text`` through the memo ``lights``."""
    _light_many((text,), lights)
    return lights[text]


def _one_final_period(t: str) -> bool:
    r"""Whether ``strip_trailing`` of the ASCII text ``t`` only drops its final period.

    True when ``t`` ends in a letter or digit and ``.``, has no leading character to strip, and the period follows
    no lone letter: ``_TAIL``'s lookbehinds ``(?<!\b[A-Za-z]\.)(?<!\b[A-Za-z])`` pass (the character before the
    period is a digit, or a letter after a word character, so no ``\b`` precedes it).
    """
    return (
        len(t) >= 3
        and t[-1] == "."
        and t[-2].isalnum()
        and t[0] not in _LEAD_OR_SPACE
        and (t[-2].isdigit() or t[-3].isalnum() or t[-3] == "_")
    )


def _wrapper_hint(low: str) -> bool:
    """Whether ``strip_wrapper`` can change a stripped ASCII text whose lower-case form is ``low``."""
    return low.startswith(_WRAPPER_STARTS) or "answer is" in low


def step_texts(texts: Sequence[str]) -> tuple[list[str], list[str]]:
    """The texts after string steps 3 and 4 of ASCII ``texts``, each rule run only where it can act.

    ``t3 = strip_trailing(t)``, ``t4 = strip_trailing(strip_wrapper(t3))``, as in ``canonical_text._forms``.
    """
    t3s = [
        (t[:-1] if _one_final_period(t) else strip_trailing(t))
        if t[:1] in _LEAD_OR_SPACE or t[-1:] in _TAIL_OR_SPACE
        else t
        for t in texts
    ]
    lows = "\n".join(t3s).lower().split("\n")  # ASCII: lower() maps character by character
    if len(lows) != len(t3s):  # a text holds the separator
        lows = [t.lower() for t in t3s]
    t4s = [
        strip_trailing(strip_wrapper(t))
        if (
            t[:1] in _LEAD_OR_SPACE or t[-1:] in _TAIL_OR_SPACE or low.startswith(_WRAPPER_STARTS) or "answer is" in low
        )
        else t
        for t, low in zip(t3s, lows, strict=True)
    ]  # _wrapper_hint inlined
    return t3s, t4s


_WEAK_LETTERS = "".join(sorted(set("".join(NUMBER_WORDS) + "".join(ARTICLES))))  # "aefghinorstuvwxz"
_NOT_STRONG = ("".join(PUNCTUATION) + ".'" + _WEAK_LETTERS + _WEAK_LETTERS.upper() + "\x1c\x1d\x1e\x1f").encode()
_WEAK_LETTER_BYTES = (_WEAK_LETTERS + _WEAK_LETTERS.upper()).encode()
_MARKS = "".join(PUNCTUATION) + "." + "\x1c\x1d\x1e\x1f"
_LONG_PIECE = 1 + max(map(len, (*NUMBER_WORDS, *ARTICLES)))  # 6: no longer token is an article or number word
# The long pieces: maximal runs (a shorter run has no long suffix) of bytes that are no space (bytes' \s: the
# ASCII spaces but \x1c-\x1f, which are marks here) and no mark.
_LONG_PIECES = re.compile(b"[^\\s" + re.escape(_MARKS.encode()) + b"]{%d,}" % _LONG_PIECE)
# Every contraction (the lower-case keys: the text is lower-cased first) keeps every character of its key but
# apostrophes ("somebody'd" -> "somebodyd").
assert all(not Counter(k.replace("'", "")) - Counter(v) for k, v in CONTRACTIONS.items() if k == k.lower())


def form_length_bounds(t4s: Sequence[str]) -> list[int]:
    r"""A lower bound of the length of every form ``_forms`` gives an ASCII text, from its step-4 text ``t4``.

    ``C + max(S - 1, 0)``. A *strong* character is one that is neither a space, nor a vqaEval punctuation mark
    (:data:`PUNCTUATION`), nor a period or an apostrophe, nor a letter of an article or a number word
    (``aefghinorstuvwxz``, either case); a *piece* is a maximal run of characters that are neither spaces nor
    marks nor periods, *long* from 6 characters on. ``C`` counts the strong characters of ``t4`` and the
    article/number-word letters of its long pieces; ``S`` the whitespace-separated words of ``t4`` holding a
    strong character. Proof: the step texts are substrings of the text, so each holds these characters in as
    many distinct words; ``separate_digit_commas`` deletes commas or adds spaces after them, the punctuation
    step deletes marks and periods or replaces marks by spaces: no piece is cut and no two words are joined, so
    a long piece stays inside a token of 6 or more characters. The digit/article step drops only articles
    and maps only number words (none of them holds a strong character or has 6 characters) and contractions
    (which keep every character of the key but apostrophes, checked at import): so every counted character
    survives (lower-cased), in at least ``S`` words joined by single spaces. The light form skips the
    punctuation step (its words are the text's), and a form holding a counted character never takes the raw
    fallback. ````-````, spaces for ``str.split`` but not for ``bytes.split``, are dropped or read as
    marks (fewer words, shorter pieces: a smaller bound).
    """
    out = []
    for t in t4s:
        b = t.encode()
        words = b.translate(None, _NOT_STRONG).split()
        pieces = b"".join(_LONG_PIECES.findall(b))
        out.append(
            sum(map(len, words))
            + (len(words) - 1 if words else 0)
            + len(pieces)
            - len(pieces.translate(None, _WEAK_LETTER_BYTES))
        )
    return out


def strong_bounds(t4s: Sequence[str]) -> list[int]:
    """:func:`form_length_bounds` without the long pieces' letters (a smaller bound, faster to compute)."""
    out = []
    for t in t4s:
        words = t.encode().translate(None, _NOT_STRONG).split()
        out.append(sum(map(len, words)) + len(words) - 1 if words else 0)
    return out


def forms_many(
    texts: Sequence[str],
    light: bool,
    vqaeval: Callable[[str], str],
    into: dict[str, str] | None = None,
    out: dict[str, FormsOf] | None = None,
    steps: dict[str, tuple[str, str]] | None = None,
) -> dict[str, FormsOf]:
    """``canonical_text._forms`` of every distinct text of ``texts``, computed by batch passes (module docstring).

    Args:
        texts: the texts (repeats are read once).
        light: whether to compute the light forms (ANLS); else the fourth field is None.
        vqaeval: vqaEval.py's normalization (``fast_vqaeval_process`` or a memo of it) for the texts that take
            the per-text way (non-ASCII).
        into: a memo ``text -> canonical_text._vqaeval(text)`` to use and extend (a new one when None).
        out: forms to extend (a new dict when None); its texts are not computed again.
        steps: ``text -> (t3, t4)`` of ASCII texts already known (:func:`step_texts`).

    Returns:
        ``out``: ``text -> (t2, t3, surfaces, light, stripped)``, the first four equal to ``_forms(text,
        _vqaeval, _light if light else None)``, then ``text.strip()``.
    """
    canon: dict[str, str] = {} if into is None else into
    normal: dict[str, str] = {}
    lights: dict[str, str] = {}
    out = {} if out is None else out
    distinct = [t for t in dict.fromkeys(texts) if t not in out] if out else list(dict.fromkeys(texts))
    plain = distinct if "".join(distinct).isascii() else [t for t in distinct if t.isascii()]
    if len(plain) < len(distinct):
        _other_forms([t for t in distinct if not t.isascii()], light, vqaeval, canon, lights, out)
    if steps:
        known = [steps.get(t) for t in plain]
        todo = [t for t, k in zip(plain, known, strict=True) if k is None]
        more = iter(zip(*step_texts(todo), strict=True))
        pairs = [k if k is not None else next(more) for k in known]
        t3s, t4s = [p[0] for p in pairs], [p[1] for p in pairs]
    else:
        t3s, t4s = step_texts(plain)
    canonical_vqaeval_many(plain, canon, normal)
    # Most texts no step changes: all their forms are one vqaEval form (and one light form).
    unchanged = [t3 == t and t4 == t for t, t3, t4 in zip(plain, t3s, t4s, strict=True)]
    simple = [t for t, u in zip(plain, unchanged, strict=True) if u]
    if not light:
        # an unchanged text has no outer space (strip_trailing would drop it): it is its own stripped text
        out.update(
            {t: (t, t, (s, s, s, s), None, t) for t, s in zip(simple, map(canon.__getitem__, simple), strict=True)}
        )
    else:
        marked = [t for t in simple if _PUNCT_OR_PERIOD.search(t) is not None]
        _light_many(marked, lights)
        for t, f in zip(simple, [(s, s, s, s) for s in map(canon.__getitem__, simple)], strict=True):
            out[t] = (t, t, f, f, t)
        for t in marked:
            x = lights[t]
            out[t] = (t, t, out[t][2], (x, x, x, x), t)
    if len(simple) == len(plain):
        return out
    changed = [i for i, u in enumerate(unchanged) if not u]
    plain, t3s, t4s = ([xs[i] for i in changed] for xs in (plain, t3s, t4s))
    # Step 3's text needs its own normalization unless it equals the text, or only drops a final period that
    # vqaEval drops anyway (canonical_text._forms, first shortcut).
    finals = [
        t3 and len(t) == len(t3) + 1 and t[-1] == "." and t.startswith(t3) and not t3[-1].isspace()
        for t, t3 in zip(plain, t3s, strict=True)
    ]
    s1s = [canon[t] for t in plain]
    own3 = [
        not (t3 == t or (final and s1 and s1[-1] != "." and t.count(".") <= PERIOD_STRIP_COUNT))
        for t, t3, final, s1 in zip(plain, t3s, finals, s1s, strict=True)
    ]
    canonical_vqaeval_many(
        [t3 for t3, own in zip(t3s, own3, strict=True) if own]
        + [t4 for t3, t4 in zip(t3s, t4s, strict=True) if t4 != t3],
        canon,
        normal,
    )
    for t, t3, t4, s1, own, final in zip(plain, t3s, t4s, s1s, own3, finals, strict=True):
        s3 = canon[t3] if own else s1
        s4 = s3 if t4 == t3 else canon[t4]
        surfaces = (s1, s1, s3, s4)
        if not light:
            out[t] = (t, t3, surfaces, None, t.strip())
            continue
        l1 = s1 if _PUNCT_OR_PERIOD.search(t) is None else _light_of(t, lights)
        if t3 == t:
            l3 = l1
        elif _PUNCT_OR_PERIOD.search(t3) is None:
            l3 = s3
        else:
            l3 = (_light_without_final_period(l1, t3) if final else None) or _light_of(t3, lights)
        l4 = l3 if t4 == t3 else s4 if _PUNCT_OR_PERIOD.search(t4) is None else _light_of(t4, lights)
        out[t] = (t, t3, surfaces, (l1, l1, l3, l4), t.strip())
    return out


def _other_forms(
    texts: Sequence[str],
    light: bool,
    vqaeval: Callable[[str], str],
    canon: dict[str, str],
    lights: dict[str, str],
    out: dict[str, FormsOf],
) -> None:
    """``_forms`` of each text, one at a time, with memos local to the call (``canon``, ``lights``)."""

    def vq(text: str) -> str:
        got = canon.get(text)
        if got is None:
            got = vqaeval(separate_digit_commas(text) if "," in text else text)
            if not got and text.strip():
                got = " ".join(text.lower().split())
            canon[text] = got
        return got

    def light_of(text: str) -> str:
        return _light_of(text, lights)

    for t in texts:
        out[t] = (*_forms(t, vq, light_of if light else None), t.strip())
