"""Backend for the Gemini API's generateContent (``gemini:MODEL@URL``), one provider of the HTTP template.

The spec's URL ends with the API version prefix, as ``openai:``'s ends with ``/v1``:
``gemini:gemini-2.5-flash@https://generativelanguage.googleapis.com/v1beta``, and one call is
``POST {URL}/models/{MODEL}:generateContent`` (the model name percent-encoded into the path). Source for
everything below: Gemini API reference, "Generating content" (``models.generateContent``, ``GenerationConfig``,
``ThinkingConfig``, ``UsageMetadata``) and the "Gemini thinking" guide.

- **headers**: ``x-goog-api-key: KEY``, the key from ``GEMINI_API_KEY`` or else ``GOOGLE_API_KEY`` (or
  ``--api-key-env``; none sent when unset);
- **body** (:func:`generate_body`): ``contents: [{"role": "user", "parts": [...]}]`` with the image as an
  ``inline_data {mime_type, data}`` part (base64) before a ``text`` part (text-only requests: the text part
  alone), and ``generationConfig`` with ``temperature`` and ``maxOutputTokens``; with
  ``--model-arg thinking_budget=N``, ``generationConfig.thinkingConfig: {"thinkingBudget": N,
  "includeThoughts": true}`` (0 switches thinking off where the model allows it; thoughts included so they are
  stored as reasoning);
- **reply**: ``candidates[0].content.parts``: the parts with ``thought: true`` are the reasoning, the other
  ``text`` parts joined the content (None when there are none); ``candidates[0].finishReason`` is the finish
  reason, ``MAX_TOKENS`` read as ``length``; ``usageMetadata`` gives ``prompt_tokens`` (``promptTokenCount``),
  ``reasoning_tokens`` (``thoughtsTokenCount``) and ``completion_tokens`` (``candidatesTokenCount`` plus
  ``thoughtsTokenCount``: every generated token, thinking included, as OpenAI's ``completion_tokens`` counts).
  A reply without candidates (a prompt blocked, ``promptFeedback.blockReason``) is malformed: retried, then
  recorded as the view's error naming the reason.
"""

from __future__ import annotations

import base64
import urllib.parse
from typing import Any, ClassVar

from vqaudit.backends.base import ModelOptions, Request
from vqaudit.backends.http_base import HttpBackend
from vqaudit.backends.http_replies import MalformedBody, count, error_message, join_texts
from vqaudit.backends.http_spec import load_http
from vqaudit.textsafe import escape_surrogates

__all__ = ["GeminiBackend", "generate_body", "load"]


def generate_body(request: Request) -> dict[str, Any]:
    """The JSON body of the generateContent call for ``request`` (module docstring; the model is in the path)."""
    parts: list[dict[str, Any]] = []
    if request.image is not None:
        data = base64.b64encode(request.image).decode("ascii")
        parts.append({"inline_data": {"mime_type": request.image_mime, "data": data}})
    parts.append({"text": escape_surrogates(request.prompt)})
    params = request.params
    config: dict[str, Any] = {"temperature": params.temperature, "maxOutputTokens": params.max_tokens}
    if params.thinking_budget is not None:
        config["thinkingConfig"] = {"thinkingBudget": params.thinking_budget, "includeThoughts": True}
    return {"contents": [{"role": "user", "parts": parts}], "generationConfig": config}


def _candidate(data: dict[str, Any]) -> dict[str, Any]:
    """``candidates[0]``.

    Raises:
        MalformedBody: there is none (naming ``promptFeedback.blockReason`` when the prompt was blocked).
    """
    candidates = data.get("candidates")
    if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], dict):
        feedback = data.get("promptFeedback")
        reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
        why = f" (prompt blocked: {reason[:64]})" if isinstance(reason, str) else ""
        raise MalformedBody(f"no candidates[0]{why}")
    return candidates[0]


def _parts(data: dict[str, Any]) -> list[dict[str, Any]]:
    """``candidates[0].content.parts`` ([] when the candidate has no content, e.g. cut before any part).

    Raises:
        MalformedBody: no candidate, or parts that are not a list of objects.
    """
    content = _candidate(data).get("content")
    parts = content.get("parts", []) if isinstance(content, dict) else []
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        raise MalformedBody("candidates[0].content.parts is not a list of parts")
    return parts


def _texts(parts: list[dict[str, Any]], thought: bool) -> str | None:
    """The ``text`` of the parts whose ``thought`` is ``thought`` (absent: False) joined, or None when none.

    Raises:
        MalformedBody: such a part whose ``text`` is present and not a string.
    """
    texts = []
    for part in parts:
        if (part.get("thought") is True) != thought or "text" not in part:
            continue
        text = part["text"]
        if not isinstance(text, str):
            raise MalformedBody(f"a part whose text is {type(text).__name__}, not text")
        texts.append(text)
    return join_texts(texts) if texts else None


class GeminiBackend(HttpBackend):
    """Calls one or more Gemini API ``generateContent`` endpoints of one model (the HTTP template's hooks)."""

    kind: ClassVar[str] = "gemini"

    def path(self) -> str:
        """``/models/{MODEL}:generateContent`` after the base URL (which ends with ``/v1beta`` or ``/v1``)."""
        return f"/models/{urllib.parse.quote(self.model, safe='')}:generateContent"

    def headers(self, api_key: str | None) -> dict[str, str]:
        """``x-goog-api-key`` when a key is set."""
        return {} if api_key is None else {"x-goog-api-key": api_key}

    def body(self, request: Request) -> dict[str, Any]:
        """:func:`generate_body` of the request."""
        return generate_body(request)

    def read_error(self, body: bytes) -> str:
        """``STATUS: MESSAGE`` of the API's error object, else the raw body.

        Google APIs' error model: ``{"error": {"code": ..., "message": ..., "status": ...}}``.
        """
        return error_message(body, "status") or super().read_error(body)

    def read_content(self, data: dict[str, Any]) -> str | None:
        """The text of the parts that are not thoughts, joined; None when there are none."""
        return _texts(_parts(data), thought=False)

    def read_reasoning(self, data: dict[str, Any]) -> str | None:
        """The text of the ``thought: true`` parts joined, or None (none, or only empty ones)."""
        return _texts(_parts(data), thought=True) or None

    def read_finish_reason(self, data: dict[str, Any]) -> object:
        """``candidates[0].finishReason``, with ``MAX_TOKENS`` (the budget ran out) read as ``length``."""
        reason = _candidate(data).get("finishReason")
        return "length" if reason == "MAX_TOKENS" else reason

    def read_usage(self, data: dict[str, Any]) -> dict[str, int] | None:
        """The token counts of ``usageMetadata``; None when none is valid.

        ``prompt_tokens`` = ``promptTokenCount``, ``completion_tokens`` = ``candidatesTokenCount`` +
        ``thoughtsTokenCount`` (thinking included), ``reasoning_tokens`` = ``thoughtsTokenCount``.
        """
        usage = data.get("usageMetadata")
        if not isinstance(usage, dict):
            return None
        answer, thoughts = count(usage.get("candidatesTokenCount")), count(usage.get("thoughtsTokenCount"))
        completion = None if answer is None else count(answer + (thoughts or 0))
        counts = {
            "prompt_tokens": count(usage.get("promptTokenCount")),
            "completion_tokens": completion,
            "reasoning_tokens": thoughts,
        }
        kept = {k: v for k, v in counts.items() if v is not None}
        return kept or None


def load(spec: str, target: str, options: ModelOptions) -> GeminiBackend:
    """Build ``gemini:MODEL@URL`` (or ``MODEL@URL1,URL2,...``; the backend table's loader).

    Raises:
        VqauditError: as :func:`vqaudit.backends.http_spec.load_http`.
    """
    return load_http(GeminiBackend, spec, target, options)
