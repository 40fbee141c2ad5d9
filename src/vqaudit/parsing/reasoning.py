"""Split a reasoning model's reply into its reasoning and its final answer, before any reader sees it.

Reasoning models (Qwen3-VL Thinking, GLM-4.5V, InternVL3.5, Kimi-VL-Thinking, DeepSeek-R1 distillations, o-series,
Gemini, Claude) think before they answer. Their thinking is never scored: every reader (the answerability
contract, the choice reader, the short-answer audit layers, the perturbations, the judges, harness imports) reads
only the *final* text this module returns.

Formats (:data:`FORMATS`; ``--reasoning-format auto|none|NAME``):

============  =====================================================  ==============================================
name          span                                                   used by (documented chat formats)
============  =====================================================  ==============================================
``think``     ``<think>`` ... ``</think>``                           Qwen3 / Qwen3-VL Thinking, DeepSeek-R1,
                                                                     GLM-4.5V, InternVL3.5 thinking mode
``thinking``  ``<thinking>`` ... ``</thinking>``                     prompted chain of thought, Claude-style tags
``reasoning`` ``<reasoning>`` ... ``</reasoning>``                   prompted chain of thought
``kimi``      ``◁think▷`` ... ``◁/think▷``                           Kimi-VL-Thinking
``thought``   ``<|begin_of_thought|>`` ... ``<|end_of_thought|>``,   Sky-T1 / OpenThoughts / Bespoke
              answer in ``<|begin_of_solution|>`` ...
              ``<|end_of_solution|>``
============  =====================================================  ==============================================

Rules, in order (``auto`` knows every format; a named format only its own; ``none`` splits nothing):

1. The final answer is the text after the **last closing tag**. A reply holding a closing tag but no opening tag
   before it started inside the span, because the chat template opened it (Qwen3 and DeepSeek-R1 templates end
   the prompt with ``<think>``): everything before that closing tag is reasoning. Nested spans
   (``<think>a <think>b</think> c</think>answer``) are read the same way: all the text before the last closing
   tag is reasoning (``a b`` and `` c``, every character counted), the final answer is what follows it.
2. An opening tag after the last closing tag (or with no closing tag at all) is a span **never closed**: the
   token budget ran out while the model was thinking. The reply is not finished, :data:`NOT_FINISHED`, and its
   content is never scored, whatever it holds (a draft answer inside is the model's draft, not its answer).
3. In the final text, an answer box ``<|begin_of_box|>`` ... ``<|end_of_box|>`` (GLM-4.5V) or an
   ``<answer>`` ... ``</answer>`` wrapper (GLM-4.1V-Thinking), or a ``<|begin_of_solution|>`` ...
   ``<|end_of_solution|>`` block (``thought``), when complete, is the answer: its content (the last one) is the
   final text.
4. Reasoning a server sent apart from the content (``reasoning_content``/``reasoning`` of vLLM, SGLang, DeepSeek
   and OpenRouter; Anthropic ``thinking`` blocks; Gemini thought parts) is reasoning; the content is then the
   final text (still split by rules 1-3, for a server whose parser missed a span). Content absent (``null``)
   beside such reasoning is a reply never finished.
5. A span the chat template opens (``NAME-open``, e.g. ``think-open``; ``auto`` detects it for a whole run when
   any reply holds a closing tag before any opening tag, :func:`opened_by_template`): every reply starts inside
   the span, so a reply that closes no span never left its thinking (cut by the token budget) and is not
   finished, even though it shows no tag at all (every format is still known, rules 1-4). Qwen3 and DeepSeek-R1
   behind a server without a reasoning parser reply so; vLLM's own parsers read such a reply as all reasoning.

The raw reply is never changed (callers keep it byte-exact beside the split). Time is linear in the reply's
length: each tag is found with one backwards scan (``str.rfind``) and each pattern with one forward scan;
nothing backtracks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "AUTO",
    "FORMATS",
    "NONE",
    "NOT_FINISHED",
    "ReasoningFormat",
    "ReasoningSplit",
    "check_reasoning_format",
    "effective_format",
    "opened_by_template",
    "split_reasoning",
]

NOT_FINISHED = "reasoning not finished"
"""The ``invalid_reason`` of a reply whose reasoning span never closed (the token budget ran out)."""
AUTO = "auto"
"""Know every format of :data:`FORMATS` (the default)."""
NONE = "none"
"""Split nothing: for models whose answers legitimately contain the tags."""


@dataclass(frozen=True)
class ReasoningFormat:
    """One reasoning span format: its opening and closing tags and, if any, its answer block.

    Attributes:
        name: the ``--reasoning-format`` value.
        open: the opening tag (matched case-insensitively for the ``<word>`` tags, exactly for special tokens).
        close: the closing tag.
        answer: the opening and closing markers of the answer block this format puts its final answer in, or None.
    """

    name: str
    open: str
    close: str
    answer: tuple[str, str] | None = None


FORMATS: tuple[ReasoningFormat, ...] = (
    ReasoningFormat("think", "<think>", "</think>"),
    ReasoningFormat("thinking", "<thinking>", "</thinking>"),
    ReasoningFormat("reasoning", "<reasoning>", "</reasoning>"),
    ReasoningFormat("kimi", "\u25c1think\u25b7", "\u25c1/think\u25b7"),
    ReasoningFormat(
        "thought", "<|begin_of_thought|>", "<|end_of_thought|>", ("<|begin_of_solution|>", "<|end_of_solution|>")
    ),
)
"""Every span format :func:`split_reasoning` knows (module docstring)."""

_BY_NAME = {f.name: f for f in FORMATS}
_BOXES: tuple[tuple[str, str], ...] = (
    ("<|begin_of_box|>", "<|end_of_box|>"),  # GLM-4.5V's answer box
    ("<answer>", "</answer>"),  # GLM-4.1V-Thinking's answer wrapper
)
MAX_SPLIT_CHARS = 64 * 2**20
"""Longest reply split, in characters (64 Mi: above what any HTTP backend reads, 8 MiB a body, and far above
what a token budget of 10^6 tokens produces); a longer reply is returned whole and the readers' own caps
(``too long``) decide. The split stays linear in the length."""


OPEN_SUFFIX = "-open"
"""``NAME-open`` (``think-open``): format NAME whose span the chat template opens, so every reply starts inside
it (rule 5)."""


def check_reasoning_format(name: str) -> str:
    """Return ``name`` if it is ``auto``, ``none``, a format of :data:`FORMATS` or such a format + ``-open``.

    Raises:
        ValueError: naming the valid values.
    """
    bare = name[len(AUTO) + 1 :] if name.startswith(AUTO + ":") else name
    base = bare[: -len(OPEN_SUFFIX)] if bare.endswith(OPEN_SUFFIX) else bare
    if name in (AUTO, NONE) or (base in _BY_NAME and (bare == name or bare.endswith(OPEN_SUFFIX))):
        return name
    valid = ", ".join((AUTO, NONE, *_BY_NAME, *(f + OPEN_SUFFIX for f in _BY_NAME)))
    raise ValueError(f"unknown reasoning format {name!r}; valid: {valid}")


def opened_by_template(texts: Iterable[str | None]) -> str | None:
    """The ``NAME-open`` format when the replies show that the chat template opens the span (rule 5), else None.

    A reply whose first closing tag of format NAME comes before any opening tag of NAME started inside the span:
    the template ended the prompt with the opening tag (Qwen3's and DeepSeek-R1's chat templates end it with
    ``<think>``). One such reply decides for the whole run: the replies of one model and one template. Linear in
    the replies' total length.

    Args:
        texts: the replies' contents (None entries are skipped).

    Returns:
        e.g. ``think-open``, or None when no reply shows it.
    """
    for text in texts:
        if not text or ("<" not in text and "\u25c1" not in text):
            continue
        for f in FORMATS:
            if not _may_hold(text, f.close):
                continue
            close = _CLOSE[f.name].search(text)
            if close is None:
                continue
            opened = _OPEN[f.name].search(text, 0, close.start())
            if opened is None:
                return f.name + OPEN_SUFFIX
    return None


def effective_format(fmt: str, texts: Iterable[str | None]) -> str:
    """The format the replies are split by: ``fmt``, or ``auto:NAME-open`` for ``auto`` on a template-opened run.

    ``auto`` becomes ``auto:NAME-open`` when the replies show a template-opened span (:func:`opened_by_template`):
    rule 5 then applies only to a reply the server says was cut by the budget (``finish_reason: length``); a
    reply that stopped, or whose finish reason is unknown (a prediction file), is read as ``auto`` reads it, so
    one stray closing tag in a run can never turn its other replies into unfinished ones. ``NAME-open`` given
    explicitly applies rule 5 to every reply.

    Raises:
        ValueError: ``fmt`` is unknown.
    """
    check_reasoning_format(fmt)
    if fmt != AUTO:
        return fmt
    opened = opened_by_template(texts)
    return AUTO if opened is None else f"{AUTO}:{opened}"


@dataclass(frozen=True)
class ReasoningSplit:
    """A reply split into reasoning and final text.

    Attributes:
        final: the text every reader reads (the whole reply when it holds no reasoning); None when the reasoning
            never finished (:data:`NOT_FINISHED`).
        reasoning: the reasoning text (tags removed; several spans joined by a newline), or None when the reply
            holds none.
        format: which format matched (a :data:`FORMATS` name, or ``server`` for reasoning the server sent apart),
            or None.
        finished: False when a span never closed, or the server sent reasoning and no content.
    """

    final: str | None
    reasoning: str | None = None
    format: str | None = None
    finished: bool = True

    @property
    def reasoning_chars(self) -> int | None:
        """Characters (code points) of reasoning, or None when the reply holds none."""
        return None if self.reasoning is None else len(self.reasoning)

    @property
    def invalid_reason(self) -> str | None:
        """:data:`NOT_FINISHED` for a reply never finished, else None."""
        return None if self.finished else NOT_FINISHED


def _pattern(tag: str) -> re.Pattern[str]:
    # "<think>" also matches "<Think>" and "<think >"; a special token ("<|...|>", "◁think▷") only as written
    if tag.startswith("<") and not tag.startswith("<|"):
        name = tag.strip("<>")
        return re.compile(
            re.escape("<" + name.rstrip()) + r"\s*>"
            if not name.startswith("/")
            else "</" + re.escape(name[1:]) + r"\s*>",
            re.IGNORECASE,
        )
    return re.compile(re.escape(tag))


_OPEN = {f.name: _pattern(f.open) for f in FORMATS}
_CLOSE = {f.name: _pattern(f.close) for f in FORMATS}
_BOX_PATTERNS = tuple((_pattern(a), _pattern(b)) for a, b in _BOXES)


def _last(pattern: re.Pattern[str], text: str, end: int | None = None) -> re.Match[str] | None:
    """The last match of ``pattern`` in ``text[:end]`` (one forward scan)."""
    found = None
    for found in pattern.finditer(text, 0, len(text) if end is None else end):  # noqa: B007
        pass
    return found


def _inner_answer(text: str, markers: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...]) -> str:
    """The content of the last complete answer block of ``text`` (rule 3), else ``text`` itself."""
    for opening, closing in markers:
        close = _last(closing, text)
        if close is None:
            continue
        start = _last(opening, text, close.start())
        if start is not None:
            return text[start.end() : close.start()].strip()
    return text


def _formats(fmt: str) -> tuple[ReasoningFormat, ...]:
    if fmt == AUTO or fmt.startswith(AUTO + ":"):
        return FORMATS
    if fmt == NONE:
        return ()
    check_reasoning_format(fmt)
    if fmt.endswith(OPEN_SUFFIX):  # a template-opened span: every format is still known (rule 5)
        return FORMATS
    return (_BY_NAME[fmt],)


def split_reasoning(
    text: str | None, fmt: str = AUTO, *, server_reasoning: str | None = None, finish_reason: str | None = None
) -> ReasoningSplit:
    """Split one reply into reasoning and the final text every reader reads (module docstring, rules 1-4).

    Args:
        text: the reply's content exactly as received (None: the server sent no content).
        fmt: ``auto`` (every format), ``none`` (no split), one name of :data:`FORMATS`, or such a name +
            ``-open`` (the template opens the span: a reply without its closing tag never finished thinking).
        server_reasoning: reasoning the server sent apart from the content, or None.
        finish_reason: why generation stopped, as the server said (``length``: cut by the token budget), or None;
            read by rule 5 under ``auto:NAME-open``.

    Returns:
        A :class:`ReasoningSplit`. ``final`` is ``text`` itself (the same object) when the reply holds no
        reasoning, so readers of replies without reasoning see exactly what they saw before. Never raises on
        model output; time linear in ``len(text)``.

    Raises:
        ValueError: ``fmt`` is not a known format (checked by the CLI before any reply is read).
    """
    split = _split(text, fmt, server_reasoning, finish_reason)
    if finish_reason == "length" and split.final is not None and not split.final.strip():
        # rule 3: empty content cut by the budget (OpenAI's reasoning models when their hidden reasoning used every
        # token) never finished either
        return ReasoningSplit(None, split.reasoning, split.format, finished=False)
    return split


def _split(text: str | None, fmt: str, server_reasoning: str | None, finish_reason: str | None) -> ReasoningSplit:
    """Rules 1, 2, 4, 5 and 6 of the module docstring (:func:`split_reasoning` adds the empty cut content)."""
    formats = _formats(fmt)
    if text is None:
        if server_reasoning is not None:
            return ReasoningSplit(None, server_reasoning, "server", finished=False)
        return ReasoningSplit(None)
    if (
        fmt.endswith(OPEN_SUFFIX)
        and (not fmt.startswith(AUTO + ":") or finish_reason == "length")
        and len(text) <= MAX_SPLIT_CHARS
        and not any(_may_hold(text, f.close) and _CLOSE[f.name].search(text) is not None for f in formats)
    ):
        # rule 5: the template opened the span and the reply closed no span (cut by the budget while thinking)
        name = fmt.removeprefix(AUTO + ":")[: -len(OPEN_SUFFIX)]
        return _with_server(ReasoningSplit(None, text, name, finished=False), server_reasoning)
    if not formats or len(text) > MAX_SPLIT_CHARS or ("<" not in text and "\u25c1" not in text):
        return _with_server(ReasoningSplit(text), server_reasoning)  # every tag starts with "<" or "◁"
    # the latest closing tag of any known format decides where the final answer starts (rule 1)
    close_at: re.Match[str] | None = None
    used: ReasoningFormat | None = None
    for f in formats:
        if not _may_hold(text, f.close):
            continue
        found = _last(_CLOSE[f.name], text)
        if found is not None and (close_at is None or found.start() > close_at.start()):
            close_at, used = found, f
    tail_start = close_at.end() if close_at is not None else 0
    # an opening tag after it is a span never closed (rule 2)
    for f in formats:
        if not _may_hold(text, f.open):
            continue
        opened = _OPEN[f.name].search(text, tail_start)
        if opened is not None:
            before = text[: opened.start()]
            reasoning = text[opened.end() :]
            if close_at is not None:
                reasoning = _spans(before, formats) + "\n" + reasoning
            return _with_server(ReasoningSplit(None, reasoning, f.name, finished=False), server_reasoning)
    if close_at is None or used is None:
        final = _inner_answer(text, _BOX_PATTERNS) if _has_box(text) else text
        return _with_server(ReasoningSplit(final), server_reasoning)
    reasoning = _spans(text[: close_at.start()], formats)
    final = text[close_at.end() :]
    markers = _BOX_PATTERNS
    if used.answer is not None:
        markers = ((_pattern(used.answer[0]), _pattern(used.answer[1])), *markers)
    final = _inner_answer(final, markers).strip() if _has_box(final) or used.answer else final.strip()
    return _with_server(ReasoningSplit(final, reasoning, used.name), server_reasoning)


def _may_hold(text: str, tag: str) -> bool:
    """A cheap pre-check: whether ``text`` may hold ``tag`` (its distinctive middle, case-folded for ``<word>``)."""
    core = tag.strip("</>|")
    if tag.startswith("<") and not tag.startswith("<|"):
        return core.lower() in text or core.upper() in text or core.capitalize() in text
    return core in text


def _has_box(text: str) -> bool:
    return "<|begin_of_box|>" in text or "answer>" in text.lower() if "<" in text else False


def _spans(before: str, formats: tuple[ReasoningFormat, ...]) -> str:
    """The reasoning text before the last closing tag, with every format's tags removed."""
    out = before
    for f in formats:
        if _may_hold(out, f.open) or _may_hold(out, f.close):
            out = _CLOSE[f.name].sub("\n", _OPEN[f.name].sub("", out))
    return out.strip()


def _with_server(split: ReasoningSplit, server_reasoning: str | None) -> ReasoningSplit:
    """Rule 4: add the reasoning a server sent apart (it comes first, before any span in the content)."""
    if server_reasoning is None:
        return split
    reasoning = server_reasoning if split.reasoning is None else server_reasoning + "\n" + split.reasoning
    return ReasoningSplit(split.final, reasoning, split.format or "server", split.finished)
