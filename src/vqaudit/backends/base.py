"""What every backend shares: the request, the generation parameters, the model options, the Backend protocol.

A model spec string names a backend kind and a target, ``KIND:TARGET``; the kinds are the rows of the one table
in :mod:`vqaudit.backends.registry` (``reference``, ``replay``, ``openai``, ...), which also holds
:func:`~vqaudit.backends.registry.load_backend`. Options that are not part of the spec (timeouts, retries, the
API key's variable, backend-specific ``--model-arg KEY=VALUE`` pairs) travel in :class:`ModelOptions`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from vqaudit.backends.options import ModelArgs, parse_bool
from vqaudit.errors import VqauditError
from vqaudit.schema import GenerationParams, Obligation

__all__ = [
    "GENERATION_KEYS",
    "GENERATION_TABLE",
    "Backend",
    "BackendCallError",
    "Completion",
    "GenerationKey",
    "GenerationParams",
    "ModelOptions",
    "Request",
]

_TOKEN_KEYS = ("max_tokens", "max_completion_tokens", "max_new_tokens")
MAX_GENERATION_TOKENS = 1 << 20
"""The largest token budget accepted (1,048,576: above every context window of today's models)."""
_EFFORT_CHARS = 32
_DIGITS = 16
"""Longest decimal read as a count (a 5,000-digit one would hit Python's integer string conversion limit)."""


def _tokens(text: str) -> int | None:
    """A token budget: a decimal integer from 1 to MAX_GENERATION_TOKENS, else None."""
    text = text.strip()
    ok = text.isascii() and text.isdecimal() and len(text) <= _DIGITS
    return int(text) if ok and 1 <= int(text) <= MAX_GENERATION_TOKENS else None


def _budget(text: str) -> int | None:
    """A thinking budget: a decimal integer from 0 (thinking off) to MAX_GENERATION_TOKENS, else None."""
    text = text.strip()
    ok = text.isascii() and text.isdecimal() and len(text) <= _DIGITS
    return int(text) if ok and int(text) <= MAX_GENERATION_TOKENS else None


def _effort(text: str) -> str | None:
    """An effort level: a word of letters, digits, ``-`` and ``_``, at most 32 characters, else None."""
    text = text.strip()
    ok = 0 < len(text) <= _EFFORT_CHARS and text.isascii() and text.replace("-", "").replace("_", "").isalnum()
    return text if ok else None


@dataclass(frozen=True)
class GenerationKey:
    """One generation key of ``--model-arg``/``--judge-arg``: how its value is read and what it sets.

    Attributes:
        key: the ``KEY`` of ``KEY=VALUE``.
        read: the value as the field holds it, or None when the text is not a valid value.
        expected: what a valid value is, named in the error for a bad one.
        sets: the :class:`GenerationParams` fields it sets: ``{field: None}`` takes the read value, any other
            value is set as is (``max_completion_tokens`` sets ``token_field``).
    """

    key: str
    read: Callable[[str], object]
    expected: str
    sets: tuple[tuple[str, object], ...]


GENERATION_TABLE: tuple[GenerationKey, ...] = (
    GenerationKey(
        "max_tokens",
        _tokens,
        f"an integer from 1 to {MAX_GENERATION_TOKENS}",
        (("max_tokens", None), ("token_field", "max_tokens")),
    ),
    GenerationKey(
        "max_completion_tokens",
        _tokens,
        f"an integer from 1 to {MAX_GENERATION_TOKENS}",
        (("max_tokens", None), ("token_field", "max_completion_tokens")),
    ),
    GenerationKey(
        "max_new_tokens",
        _tokens,
        f"an integer from 1 to {MAX_GENERATION_TOKENS}",
        (("max_tokens", None), ("token_field", "max_tokens")),
    ),
    GenerationKey("reasoning_effort", _effort, "a word such as low, medium or high", (("reasoning_effort", None),)),
    GenerationKey("enable_thinking", parse_bool, "true or false", (("enable_thinking", None),)),
    GenerationKey(
        "thinking_budget", _budget, f"an integer from 0 to {MAX_GENERATION_TOKENS}", (("thinking_budget", None),)
    ),
)
"""Every generation key, one row each: adding a setting is a :class:`GenerationParams` field and one row here
(and the key in the ``generation`` column of the backend kinds that send it)."""

GENERATION_KEYS = tuple(row.key for row in GENERATION_TABLE)
"""The ``--model-arg``/``--judge-arg`` keys that are generation settings (fields of :class:`GenerationParams`, so part
of every request's cache key), not options of a backend module; which kinds take which is the ``generation``
column of the backend table (:data:`vqaudit.backends.registry.BACKENDS`)."""

_BY_KEY = {row.key: row for row in GENERATION_TABLE}


@dataclass(frozen=True)
class Request:
    """One model call, independent of where it came from (a benchmark view, a judge question, a perturbation).

    Attributes:
        request_id: the id the reply is recorded under (a view id, ``VARIANT:qid``, a judge call id); a
            ``replay:`` backend answers by it.
        prompt_id: id of the prompt template (e.g. ``answerability-json-v1``).
        prompt: the full user text.
        image: the image file's bytes, or None for a text-only call (a judge: seed 001 appendix 0.C, seed 002
            §3.3); an HTTP backend then sends the prompt alone, with no image part.
        image_mime: MIME type of ``image`` (e.g. ``image/png``); None exactly when ``image`` is None.
        params: generation parameters.
        obligation: what the view asks of the model, for the reference policies (``reference:gold`` answers its
            first gold answer); None for calls that are not benchmark views. Model backends never read it.

    Raises:
        ValueError: only one of ``image`` and ``image_mime`` is None.
    """

    request_id: str
    prompt_id: str
    prompt: str
    image: bytes | None
    image_mime: str | None
    params: GenerationParams
    obligation: Obligation | None = None

    def __post_init__(self) -> None:
        if (self.image is None) != (self.image_mime is None):
            raise ValueError("Request: image and image_mime must both be set or both be None")


@dataclass(frozen=True)
class Completion:
    """A reply with more than its text: what a reasoning model's server sends apart from the content.

    A backend's ``complete`` returns a plain ``str`` (the content) or a Completion. The runner stores every field
    in the response cache; only ``text`` is ever scored, after the reasoning split
    (:mod:`vqaudit.parsing.reasoning`).

    Attributes:
        text: the content exactly as received; None when the server sent none (``content: null``, e.g. a
            reasoning model cut off by ``max_tokens`` while thinking: scored as "reasoning not finished").
        reasoning: reasoning sent apart from the content (``reasoning_content`` / ``reasoning``, thinking
            blocks, thought parts), or None.
        finish_reason: why generation stopped as the server said (``stop``, ``length``, ...), or None.
        usage: token counts reported by the server: any of ``prompt_tokens``, ``completion_tokens``,
            ``reasoning_tokens`` (non-negative integers), or None.
    """

    text: str | None
    reasoning: str | None = None
    finish_reason: str | None = None
    usage: dict[str, int] | None = None


_MAX_FINISH_REASON_CHARS = 64


def finish_reason_of(value: object) -> str | None:
    """``value`` when it reads as a finish reason, else None.

    A finish reason is 1 to 64 printable ASCII characters (``stop``, ``length``, ``content_filter``,
    ``tool_calls``: OpenAI API reference, the chat completion object); anything else a server or a replay file
    sends (another type, a lone surrogate, a megabyte of text) is not one.
    """
    if (
        isinstance(value, str)
        and 0 < len(value) <= _MAX_FINISH_REASON_CHARS
        and value.isascii()
        and value.isprintable()
    ):
        return value
    return None


@dataclass(frozen=True)
class ModelOptions:
    """Options of a backend that are not part of its spec string (the CLI's generic model options).

    Every backend reads what applies to it and ignores the rest, except ``args``: a backend refuses a
    ``--model-arg`` key it does not know (a typo must not be silently ignored).

    Attributes:
        api_key_env: name of the environment variable holding the API key of an HTTP backend, or None for the
            backend's own variables (the ``key_env`` column of its backend table row); an unset variable sends
            no key.
        concurrency: maximum concurrent calls (at least 1); HTTP backends size their connection pool to it.
        max_retries: retries after the first attempt on retryable errors (429, 5xx, timeouts, bad bodies).
        backoff_base_s: first backoff wait in seconds; it doubles per retry, with jitter.
        backoff_max_s: cap of one backoff wait in seconds.
        timeout_s: timeout of one attempt in seconds.
        attempt_floor_s: shortest adaptive limit of one attempt in seconds: a hung call is cut once replies have
            shown how long they take (:mod:`vqaudit.backends.deadlines`).
        request_deadline_s: wall-clock seconds within which all attempts of one request end.
        args: backend-specific ``KEY=VALUE`` pairs (``--model-arg``), e.g. ``device=cpu`` for ``hf:``.
        args_option: the CLI option ``args`` came from (``--model-arg``, or ``--judge-arg`` for a judge), named in
            the errors about them.
        generation_args: the generation keys (:data:`GENERATION_KEYS`) ``load_backend`` moved out of ``args``
            (:meth:`without_generation`): a module's own ``args`` reader never sees them, but
            :meth:`generation` still reads them (``hf:`` checks its chat template has the thinking switch asked).
    """

    api_key_env: str | None = None
    concurrency: int = 8
    max_retries: int = 5
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    timeout_s: float = 120.0
    attempt_floor_s: float = 2.0
    request_deadline_s: float = 900.0
    args: tuple[tuple[str, str], ...] = ()
    args_option: str = "--model-arg"
    generation_args: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise VqauditError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.max_retries < 0:
            raise VqauditError(f"--max-retries must be at least 0, got {self.max_retries}")
        if not self.timeout_s > 0:
            raise VqauditError(f"--timeout must be positive, got {self.timeout_s}")

    def arg_dict(self) -> dict[str, str]:
        """The ``--model-arg`` pairs as a dict (built by hand with a key twice: its last value).

        The CLI's pairs come from :func:`vqaudit.backends.options.parse_model_args`, which refuses a key given twice.
        """
        return dict(self.args)

    def model_args(self, spec: str, known: tuple[str, ...]) -> ModelArgs:
        """The typed reader of the ``--model-arg`` pairs for the backend of ``spec``, which takes keys ``known``.

        Read each key with its ``take_*`` method, then call ``finish()`` to refuse the keys not read.
        """
        return ModelArgs(spec, self.arg_dict(), known, self.args_option)

    def refuse_unknown_args(self, spec: str, known: tuple[str, ...] = ()) -> None:
        """Refuse every ``--model-arg`` key not in ``known`` (default: every key; the backend takes none).

        Raises:
            VqauditError: naming the spec, the unknown keys and the keys the backend takes (the message of
                :meth:`~vqaudit.backends.options.ModelArgs.finish`).
        """
        ModelArgs(spec, {k: v for k, v in self.args if k not in known}, known, self.args_option).finish()

    def _generation_pairs(self) -> tuple[tuple[str, str], ...]:
        return (*self.generation_args, *((k, v) for k, v in self.args if k in GENERATION_KEYS))

    def generation_keys(self) -> tuple[str, ...]:
        """The generation keys (:data:`GENERATION_KEYS`) given, in the order given."""
        return tuple(k for k, _ in self._generation_pairs())

    def without_generation(self) -> ModelOptions:
        """These options with the generation keys moved from ``args`` to ``generation_args``.

        What a backend module's ``load`` sees: its ``--model-arg`` reader refuses every key it does not know.
        """
        return dataclasses.replace(
            self,
            args=tuple((k, v) for k, v in self.args if k not in GENERATION_KEYS),
            generation_args=self._generation_pairs(),
        )

    def generation(self, base: GenerationParams) -> GenerationParams:
        """``base`` with the generation keys of ``args`` applied: the parameters every call of this model is sent.

        - ``max_tokens=N``: the token budget, sent as ``max_tokens``;
        - ``max_completion_tokens=N``: the same budget, sent as ``max_completion_tokens`` (``token_field``), the
          field OpenAI's reasoning models take instead (OpenAI API reference, Chat Completions, "max_tokens:
          deprecated ... not compatible with o-series models");
        - ``max_new_tokens=N``: the transformers/vLLM spelling of ``max_tokens``;
        - ``reasoning_effort=STR``: sent as ``reasoning_effort`` (OpenAI: ``minimal``, ``low``, ``medium``,
          ``high``; a word of letters, digits, ``-`` and ``_``, at most 32 characters);
        - ``enable_thinking=true|false``: a chat template's thinking switch (vLLM/SGLang
          ``chat_template_kwargs``; the ``enable_thinking`` variable of Qwen3's template);
        - ``thinking_budget=N``: the tokens the model may think (0 to :data:`MAX_GENERATION_TOKENS`; Anthropic
          ``thinking.budget_tokens``, Gemini ``thinkingConfig.thinkingBudget``).

        One row of :data:`GENERATION_TABLE` per key.

        Keys not given keep ``base``'s values, so options without generation keys return ``base`` itself (and a
        call keeps its cache key). ``N`` is a decimal integer from 1 to :data:`MAX_GENERATION_TOKENS`.

        Raises:
            VqauditError: one line naming the option (``--model-arg``/``--judge-arg``), the key and its value: a
                token budget that is not such an integer, two token-budget keys together, an effort that is not
                such a word, a switch that is not true or false, a thinking budget that is not such an integer.
        """
        given = dict(self._generation_pairs())
        if not given:
            return base
        tokens = [k for k in _TOKEN_KEYS if k in given]
        if len(tokens) > 1:
            raise VqauditError(
                f"{self.args_option} {tokens[0]} and {tokens[1]}: two spellings of the one token budget; give one"
            )
        changes: dict[str, object] = {}
        for key, text in given.items():
            row = _BY_KEY[key]
            value = row.read(text)
            if value is None:
                raise self._bad(key, text, row.expected)
            changes.update((name, value if fixed is None else fixed) for name, fixed in row.sets)
        return dataclasses.replace(base, **changes)  # type: ignore[arg-type]

    def _bad(self, key: str, value: str, expected: str) -> VqauditError:
        return VqauditError(f"{self.args_option} {key}={value!r}: expected {expected}")


class BackendCallError(Exception):
    """A call that finally failed (after retries, or at once for a non-retryable error).

    The run records the message as the view's error. ``fatal`` marks errors that would fail every call the
    same way (bad credentials, unknown model or URL): the run stops instead of recording one per view.
    """

    def __init__(self, message: str, *, fatal: bool = False) -> None:
        super().__init__(message)
        self.fatal = fatal


class Backend(Protocol):
    """A model (or reference policy) that replies to a Request with raw text.

    A backend may also have an ``identity`` string, what the response cache keys its replies by instead of
    ``spec``: the spec plus whatever else decides the replies that the spec does not show (a local model
    folder's weights hash, a resolved hub revision).
    """

    @property
    def spec(self) -> str:
        """The model spec string the backend was loaded from (recorded with every response)."""
        ...

    async def complete(self, request: Request) -> str | Completion:
        """Ask one request and return the raw reply text exactly as received (or a :class:`Completion`).

        Raises:
            BackendCallError: the call failed after all retries (or at once, when retrying cannot help).
        """
        ...

    async def aclose(self) -> None:
        """Release connections and other resources; the backend is not used afterwards."""
        ...
