"""Backend for Anthropic's Messages API (``anthropic:MODEL@URL``), one provider of the HTTP template.

The spec's URL ends with the API version prefix, as ``openai:``'s ends with ``/v1``:
``anthropic:claude-sonnet-4-5@https://api.anthropic.com/v1``, and one call is ``POST {URL}/messages`` (the
public reference's ``POST https://api.anthropic.com/v1/messages``). Source for everything below: Anthropic API
reference, "Messages" (create a message) and the "Extended thinking" guide.

- **headers**: ``x-api-key: KEY`` (the key from ``ANTHROPIC_API_KEY`` or ``--api-key-env``; none sent when unset)
  and ``anthropic-version: 2023-06-01`` (:data:`ANTHROPIC_VERSION`, required on every request);
- **body** (:func:`messages_body`): ``model``, ``max_tokens`` (required by the API: the request's budget,
  thinking included), one user message whose content is a base64 image block
  ``{"type": "image", "source": {"type": "base64", "media_type": MIME, "data": BASE64}}`` and a ``text`` block
  (text-only requests: the prompt string), and ``temperature``; with ``--model-arg thinking_budget=N``,
  ``thinking: {"type": "enabled", "budget_tokens": N}`` and no ``temperature`` (extended thinking is not
  compatible with a temperature change) — ``N`` is at least 1,024 and below ``max_tokens`` (the API refuses
  others: refused at load, and by the first call for a request whose own budget is smaller), 0 sends
  ``{"type": "disabled"}``;
- **reply**: the ``text`` blocks of ``content`` joined are the content (None when there are none), the
  ``thinking`` blocks' ``thinking`` joined are the reasoning (``redacted_thinking`` blocks are encrypted and
  skipped), ``stop_reason`` is the finish reason with ``max_tokens`` read as ``length``, and ``usage`` gives
  ``prompt_tokens`` (``input_tokens`` plus the cache's ``cache_creation_input_tokens`` and
  ``cache_read_input_tokens`` when reported) and ``completion_tokens`` (``output_tokens``, thinking included).
"""

from __future__ import annotations

import base64
from typing import Any, ClassVar

from vqaudit.backends.base import BackendCallError, ModelOptions, Request
from vqaudit.backends.http_base import HttpBackend
from vqaudit.backends.http_replies import MalformedBody, count, error_message, join_texts
from vqaudit.backends.http_spec import load_http
from vqaudit.errors import VqauditError
from vqaudit.schema import GenerationParams
from vqaudit.textsafe import escape_surrogates

__all__ = ["ANTHROPIC_VERSION", "MIN_THINKING_BUDGET", "AnthropicBackend", "load", "messages_body"]

ANTHROPIC_VERSION = "2023-06-01"
"""The ``anthropic-version`` header every request carries (Anthropic API reference, "Versions")."""
MIN_THINKING_BUDGET = 1024
"""The smallest ``thinking.budget_tokens`` the API accepts (Anthropic, "Extended thinking")."""


def messages_body(model: str, request: Request) -> dict[str, Any]:
    """The JSON body of the Messages call of ``model`` for ``request`` (module docstring).

    Raises:
        BackendCallError: ``fatal``: a thinking budget not below ``max_tokens`` (the API answers HTTP 400 to every
            such call: ``budget_tokens`` must be less than ``max_tokens``).
    """
    prompt = escape_surrogates(request.prompt)
    content: str | list[dict[str, Any]] = prompt
    if request.image is not None:
        data = base64.b64encode(request.image).decode("ascii")
        content = [
            {"type": "image", "source": {"type": "base64", "media_type": request.image_mime, "data": data}},
            {"type": "text", "text": prompt},
        ]
    params = request.params
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": params.max_tokens,
        "messages": [{"role": "user", "content": content}],
    }
    budget = params.thinking_budget
    if budget is None:
        body["temperature"] = params.temperature
    elif budget == 0:
        body["thinking"] = {"type": "disabled"}
        body["temperature"] = params.temperature
    else:
        if budget >= params.max_tokens:
            raise BackendCallError(
                f"thinking_budget={budget} must be below the token budget max_tokens="
                f"{params.max_tokens} (the thinking is part of it); give --model-arg "
                "max_tokens=N with N above the thinking budget",
                fatal=True,
            )
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    return body


def _blocks(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The reply's ``content`` blocks.

    Raises:
        MalformedBody: ``content`` is not a list of objects.
    """
    blocks = data.get("content")
    if not isinstance(blocks, list) or not all(isinstance(b, dict) for b in blocks):
        raise MalformedBody("no content list of blocks")
    return blocks


def _joined(blocks: list[dict[str, Any]], kind: str, field: str) -> str | None:
    """The ``field`` strings of the blocks of type ``kind`` joined, or None when there are none.

    Raises:
        MalformedBody: such a block whose ``field`` is not a string.
    """
    texts = []
    for block in blocks:
        if block.get("type") == kind:
            value = block.get(field)
            if not isinstance(value, str):
                raise MalformedBody(f"a {kind} block whose {field} is {type(value).__name__}, not text")
            texts.append(value)
    return join_texts(texts) if texts else None


class AnthropicBackend(HttpBackend):
    """Calls one or more Anthropic Messages API endpoints of one model (the HTTP template's hooks)."""

    kind: ClassVar[str] = "anthropic"

    def path(self) -> str:
        """``/messages`` after the base URL (which ends with ``/v1``)."""
        return "/messages"

    def headers(self, api_key: str | None) -> dict[str, str]:
        """``x-api-key`` (when a key is set) and ``anthropic-version``."""
        fixed = {"anthropic-version": ANTHROPIC_VERSION}
        return fixed if api_key is None else {"x-api-key": api_key, **fixed}

    def body(self, request: Request) -> dict[str, Any]:
        """:func:`messages_body` of the model."""
        return messages_body(self.model, request)

    def read_error(self, body: bytes) -> str:
        """``TYPE: MESSAGE`` of the API's error object, else the raw body.

        Anthropic API reference, "Errors": ``{"type": "error", "error": {"type": ..., "message": ...}}``.
        """
        return error_message(body, "type") or super().read_error(body)

    def read_content(self, data: dict[str, Any]) -> str | None:
        """The ``text`` blocks' text joined; None when the reply has none (cut while thinking)."""
        return _joined(_blocks(data), "text", "text")

    def read_reasoning(self, data: dict[str, Any]) -> str | None:
        """The ``thinking`` blocks' ``thinking`` joined, or None (none, or only empty ones)."""
        return _joined(_blocks(data), "thinking", "thinking") or None

    def read_finish_reason(self, data: dict[str, Any]) -> object:
        """``stop_reason``, with ``max_tokens`` (the budget ran out) read as ``length``."""
        reason = data.get("stop_reason")
        return "length" if reason == "max_tokens" else reason

    def read_usage(self, data: dict[str, Any]) -> dict[str, int] | None:
        """``prompt_tokens`` and ``completion_tokens`` of ``usage``; None when neither is valid.

        ``prompt_tokens`` = ``input_tokens`` (+ ``cache_creation_input_tokens`` and ``cache_read_input_tokens``
        when valid), ``completion_tokens`` = ``output_tokens`` (thinking included).
        """
        usage = data.get("usage")
        if not isinstance(usage, dict):
            return None
        prompt = count(usage.get("input_tokens"))
        if prompt is not None:
            for field in ("cache_creation_input_tokens", "cache_read_input_tokens"):
                prompt += count(usage.get(field)) or 0
            prompt = count(prompt)
        counts = {"prompt_tokens": prompt, "completion_tokens": count(usage.get("output_tokens"))}
        kept = {k: v for k, v in counts.items() if v is not None}
        return kept or None


def load(spec: str, target: str, options: ModelOptions) -> AnthropicBackend:
    """Build ``anthropic:MODEL@URL`` (or ``MODEL@URL1,URL2,...``; the backend table's loader).

    Raises:
        VqauditError: as :func:`vqaudit.backends.http_spec.load_http`, or a ``thinking_budget`` from 1 to 1,023
            (below the API's minimum of 1,024) or not below ``max_tokens`` (the stage's default when not given).
    """
    params = options.generation(GenerationParams())
    budget = params.thinking_budget
    if budget is not None and 0 < budget < MIN_THINKING_BUDGET:
        raise VqauditError(
            f"model spec {spec!r}: {options.args_option} thinking_budget={budget}: expected 0 (no "
            f"thinking) or at least {MIN_THINKING_BUDGET} (the Messages API's minimum)"
        )
    if budget and budget >= params.max_tokens:  # every stage's default budget (at most 512) is below 1,024
        raise VqauditError(
            f"model spec {spec!r}: {options.args_option} thinking_budget={budget} must be below the "
            f"token budget (max_tokens={params.max_tokens}; the thinking is part of it): give "
            f"{options.args_option} max_tokens=N with N above {budget}"
        )
    return load_http(AnthropicBackend, spec, target, options)
