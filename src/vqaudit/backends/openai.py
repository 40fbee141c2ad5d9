"""Backend for any OpenAI-compatible chat-completions server (vLLM, SGLang, Ollama, hosted APIs), one or several.

One provider of the HTTP template (:class:`vqaudit.backends.http_base.HttpBackend`: retries, several endpoints,
deadlines, key masking). One call is ``POST {URL}/chat/completions`` (the spec's URL ends with the API prefix,
e.g. ``http://127.0.0.1:8000/v1``) with ``Authorization: Bearer KEY`` (the key from ``OPENAI_API_KEY`` or
``--api-key-env``; none sent when unset, as a local server wants) and one user message holding the image (a
base64 data URL) and the prompt text, at the request's generation parameters (temperature, the token budget as
``max_tokens`` or ``max_completion_tokens``, ``reasoning_effort``, ``chat_template_kwargs.enable_thinking``:
:func:`chat_body`). A text-only request (``image`` None, e.g. a judge) is one user message whose content is the
plain prompt string, with no image part: text-only servers (a text LLM under vLLM) answer HTTP 400 to an
``image_url`` part. The reply is read by :meth:`OpenAIBackend.read_content` and its siblings: the content exactly
as sent, the reasoning a reasoning parser sent apart (``reasoning_content`` / ``reasoning``), the finish reason
and the token usage. Source: OpenAI API reference, Chat Completions (create; the chat completion object).
"""

from __future__ import annotations

import base64
from typing import Any, ClassVar

from vqaudit.backends.base import ModelOptions, Request
from vqaudit.backends.http_base import HttpBackend
from vqaudit.backends.http_replies import MalformedBody, count, join_texts
from vqaudit.backends.http_spec import load_http
from vqaudit.textsafe import escape_surrogates

__all__ = ["OpenAIBackend", "chat_body", "load"]


def chat_body(model: str, request: Request) -> dict[str, Any]:
    """Return the JSON body of the chat-completions call of ``model`` for ``request``.

    With an image: one user message whose content is an ``image_url`` part (base64 data URL) and a ``text``
    part. Text-only (``request.image`` None): one user message whose content is the prompt string.

    The generation parameters: ``temperature``; the token budget under ``params.token_field`` (``max_tokens``,
    or ``max_completion_tokens``, which OpenAI's reasoning models take instead: OpenAI API reference, Chat
    Completions, ``max_completion_tokens``); ``reasoning_effort`` when set (same reference); ``enable_thinking``
    when set as ``chat_template_kwargs: {"enable_thinking": ...}``, the extra parameter vLLM's and SGLang's
    OpenAI-compatible servers pass to the model's chat template (vLLM docs, "OpenAI-Compatible Server", extra
    parameters; Qwen3's template reads ``enable_thinking``). Without these settings the body is what it always
    was: ``model``, ``messages``, ``temperature``, ``max_tokens``.
    """
    prompt = escape_surrogates(request.prompt)  # a judge prompt quoting a reply: show a lone surrogate escaped
    content: str | list[dict[str, Any]] = prompt
    if request.image is not None:
        data_url = f"data:{request.image_mime};base64," + base64.b64encode(request.image).decode("ascii")
        content = [
            {"type": "image_url", "image_url": {"url": data_url}},
            {"type": "text", "text": prompt},
        ]
    params = request.params
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "user", "content": content}],
        "temperature": params.temperature,
        params.token_field: params.max_tokens,
    }
    if params.reasoning_effort is not None:
        body["reasoning_effort"] = params.reasoning_effort
    if params.enable_thinking is not None:
        body["chat_template_kwargs"] = {"enable_thinking": params.enable_thinking}
    return body


def _choice(data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``choices[0]`` and its ``message``.

    Raises:
        MalformedBody: either is missing or not an object.
    """
    try:
        choice = data["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise MalformedBody("no choices[0].message.content") from None
    if not isinstance(message, dict) or not isinstance(choice, dict):
        raise MalformedBody("choices[0].message is not an object")
    return choice, message


class OpenAIBackend(HttpBackend):
    """Calls one or more OpenAI-compatible ``/chat/completions`` endpoints of one model (the HTTP template's hooks)."""

    kind: ClassVar[str] = "openai"

    def path(self) -> str:
        """``/chat/completions`` after the base URL (which ends with the API prefix, e.g. ``/v1``)."""
        return "/chat/completions"

    def headers(self, api_key: str | None) -> dict[str, str]:
        """``Authorization: Bearer KEY`` (no header without a key: a local server wants none)."""
        return {} if api_key is None else {"Authorization": f"Bearer {api_key}"}

    def body(self, request: Request) -> dict[str, Any]:
        """The JSON body of the call for ``request``: :func:`chat_body` of the model."""
        return chat_body(self.model, request)

    def read_content(self, data: dict[str, Any]) -> str | None:
        """``choices[0].message.content`` exactly as sent; None when null or absent.

        A string, or a nonempty list of ``text`` parts joined.

        Raises:
            MalformedBody: no ``choices[0].message`` object, or a content that is neither text nor null.
        """
        content = _choice(data)[1].get("content")
        if content is None or isinstance(content, str):
            return content
        if (
            isinstance(content, list)
            and content
            and all(isinstance(p, dict) and p.get("type") == "text" for p in content)
        ):
            texts = [p.get("text") for p in content]
            if all(isinstance(t, str) for t in texts):
                return join_texts([t for t in texts if isinstance(t, str)])  # parts may split a pair
        raise MalformedBody(f"choices[0].message.content is {type(content).__name__}, not text")

    def read_reasoning(self, data: dict[str, Any]) -> str | None:
        """``reasoning_content`` or else ``reasoning`` of ``choices[0].message``: the first nonempty string, or None.

        ``reasoning_content``: vLLM and SGLang reasoning parsers, DeepSeek's API; ``reasoning``: newer vLLM,
        OpenRouter.
        """
        message = _choice(data)[1]
        for field in ("reasoning_content", "reasoning"):
            value = message.get(field)
            if isinstance(value, str) and value:
                return value
        return None

    def read_finish_reason(self, data: dict[str, Any]) -> object:
        """``choices[0].finish_reason`` as sent (``length`` already names a stop at the token budget)."""
        return _choice(data)[0].get("finish_reason")

    def read_usage(self, data: dict[str, Any]) -> dict[str, int] | None:
        """``usage.prompt_tokens``, ``usage.completion_tokens`` (thinking included) and ``reasoning_tokens``.

        ``reasoning_tokens`` from ``usage.completion_tokens_details.reasoning_tokens`` (OpenAI) or else
        ``usage.reasoning_tokens``.
        """
        usage = data.get("usage")
        if not isinstance(usage, dict):
            return None
        details = usage.get("completion_tokens_details")
        reasoning = count(details.get("reasoning_tokens")) if isinstance(details, dict) else None
        counts = {
            "prompt_tokens": count(usage.get("prompt_tokens")),
            "completion_tokens": count(usage.get("completion_tokens")),
            "reasoning_tokens": reasoning if reasoning is not None else count(usage.get("reasoning_tokens")),
        }
        kept = {k: v for k, v in counts.items() if v is not None}
        return kept or None


def load(spec: str, target: str, options: ModelOptions) -> OpenAIBackend:
    """Build ``openai:MODEL@URL`` or ``openai:MODEL@URL1,URL2,...`` (the backend table's loader).

    Raises:
        VqauditError: as :func:`vqaudit.backends.http_spec.load_http`.
    """
    return load_http(OpenAIBackend, spec, target, options)
