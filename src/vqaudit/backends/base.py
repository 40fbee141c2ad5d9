"""What every backend shares: the request, the generation parameters, the Backend protocol, ``load_backend``.

Model spec strings name a backend:

- ``reference:always-answer``: always answerable, with a fixed guess (``"0"``);
- ``reference:always-abstain``: always unanswerable;
- ``reference:gold``: answers each view's first gold answer and abstains on negative views. It checks the
  scoring path; it is not a model, and its replies say so;
- ``openai:MODEL@URL``: any OpenAI-compatible chat-completions server (vLLM, SGLang, Ollama, hosted APIs),
  e.g. ``openai:Qwen/Qwen2-VL-7B-Instruct@http://127.0.0.1:8000/v1``. The API key is read from an environment
  variable (``OPENAI_API_KEY`` unless ``api_key_env`` names another); when it is unset no Authorization header
  is sent. The key is never written to a file, a log or an error message;
- ``replay:FILE``: replies saved in a JSONL file of ``{"view_id": ..., "text": ...}`` rows (e.g. exported from
  another run); a view missing from the file, or whose ``text`` is null, fails for that view.

Planned, not implemented yet: ``hf:MODEL`` (local transformers) and ``vllm:MODEL`` (in-process vLLM) as optional
extras. Naming them raises a VqauditError that says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from vqaudit.errors import VqauditError
from vqaudit.schema import View

VALID_SPECS = (
    "reference:always-answer",
    "reference:always-abstain",
    "reference:gold",
    "openai:MODEL@URL (e.g. openai:Qwen/Qwen2-VL-7B-Instruct@http://127.0.0.1:8000/v1)",
    'replay:FILE (a JSONL of {"view_id": ..., "text": ...} rows)',
    "baseline:chart-reader (an OCR chart reader; pip install 'vqaudit[ocr]')",  # issue 20
)

_OPENAI_SPEC = re.compile(r"^(?P<model>.+)@(?P<url>https?://\S+)$")


@dataclass(frozen=True)
class GenerationParams:
    """Generation parameters sent with every call.

    Attributes:
        temperature: sampling temperature (0 = greedy).
        max_tokens: maximum number of new tokens in the reply.
    """

    temperature: float = 0.0
    max_tokens: int = 512

    def as_dict(self) -> dict[str, Any]:
        """Return the parameters as a plain JSON-able dict (stored in responses and part of the cache key)."""
        return {"temperature": self.temperature, "max_tokens": self.max_tokens}


@dataclass(frozen=True)
class Request:
    """One model call: a view, its prompt and (unless it is text-only) its image bytes.

    Attributes:
        view: the view asked about (reference and replay backends read it; they never read the image).
        prompt_id: id of the prompt template (e.g. ``answerability-json-v1``).
        prompt: the full user text.
        image: the image file's bytes, or None for a text-only call (a judge: seed 001 appendix 0.C, seed 002
            §3.3); the ``openai`` backend then sends the prompt alone, with no image part.
        image_mime: MIME type of ``image`` (e.g. ``image/png``); None exactly when ``image`` is None.
        params: generation parameters.

    Raises:
        ValueError: only one of ``image`` and ``image_mime`` is None.
    """

    view: View
    prompt_id: str
    prompt: str
    image: bytes | None
    image_mime: str | None
    params: GenerationParams

    def __post_init__(self) -> None:
        if (self.image is None) != (self.image_mime is None):
            raise ValueError("Request: image and image_mime must both be set or both be None")


class BackendCallError(Exception):
    """A call that finally failed (after retries, or at once for a non-retryable error).

    The run records the message as the view's error. ``fatal`` marks errors that would fail every call the
    same way (bad credentials, unknown model or URL): the run stops instead of recording one per view.
    """

    def __init__(self, message: str, *, fatal: bool = False) -> None:
        super().__init__(message)
        self.fatal = fatal


class Backend(Protocol):
    """A model (or reference policy) that replies to a Request with raw text."""

    @property
    def spec(self) -> str:
        """The model spec string the backend was loaded from (recorded with every response)."""
        ...

    async def complete(self, request: Request) -> str:
        """Ask one request and return the raw reply text exactly as received.

        Raises:
            BackendCallError: the call failed after all retries (or at once, when retrying cannot help).
        """
        ...

    async def aclose(self) -> None:
        """Release connections and other resources; the backend is not used afterwards."""
        ...


def require_free_text_model(spec: str, role: str) -> None:
    """Refuse a reference policy where a model that answers in free text is needed.

    The reference policies (``reference:*``) answer the benchmark views' own reply contracts (the answerability
    JSON, a UPD letter); as a judge, or as the model re-asked under prompt perturbations, their replies would be
    scored as if they were answers, and every number would be meaningless.

    Args:
        spec: the model spec given for the role.
        role: what the model is for, as the user knows it (e.g. ``"--judge"``, ``"--model"``).

    Raises:
        VqauditError: ``spec`` names a reference policy.
    """
    if spec.partition(":")[0] == "reference":
        raise VqauditError(f"{role} {spec!r}: a reference policy replies in a benchmark view's contract, not in "
                           "free text, so it cannot play this role; use openai:MODEL@URL or replay:FILE")


def _bad_spec(spec: str, why: str) -> VqauditError:
    forms = "\n  ".join(VALID_SPECS)
    return VqauditError(f"model spec {spec!r}: {why}. Valid forms:\n  {forms}")


def load_backend(
    spec: str,
    *,
    api_key_env: str = "OPENAI_API_KEY",
    concurrency: int = 8,
    max_retries: int = 5,
    backoff_base_s: float = 1.0,
    backoff_max_s: float = 60.0,
    timeout_s: float = 120.0,
) -> Backend:
    """Build the backend a model spec string names.

    Options that do not apply to the named backend are ignored (the reference policies take none).

    Args:
        spec: model spec string (see the module docstring for the forms).
        api_key_env: ``openai``: name of the environment variable holding the API key (unset: no key sent).
        concurrency: ``openai``: maximum concurrent requests; the connection pool is sized to it.
        max_retries: ``openai``: retries after the first attempt on 429, 5xx, timeouts, connection errors and
            malformed bodies.
        backoff_base_s: ``openai``: first backoff wait in seconds; it doubles per retry, with jitter.
        backoff_max_s: ``openai``: cap of one backoff wait in seconds.
        timeout_s: ``openai``: connect/read/write timeout of one attempt in seconds.

    Returns:
        A Backend whose ``spec`` is ``spec``.

    Raises:
        VqauditError: an unknown or malformed spec (the message lists the valid forms), a planned but not yet
            implemented backend (``hf:``, ``vllm:``), or an unreadable replay file.
    """
    kind, sep, rest = spec.partition(":")
    if not sep or not rest.strip():
        raise _bad_spec(spec, "expected KIND:VALUE")
    if kind == "reference":
        from vqaudit.backends.reference import POLICIES, ReferenceBackend

        if rest not in POLICIES:
            raise _bad_spec(spec, f"unknown reference policy {rest!r}")
        return ReferenceBackend(spec=spec, policy=rest)
    if kind == "replay":
        from vqaudit.backends.reference import ReplayBackend

        return ReplayBackend.from_file(spec, Path(rest))
    if kind == "openai":
        match = _OPENAI_SPEC.match(rest)
        if match is None:
            raise _bad_spec(spec, "expected openai:MODEL@URL with an http:// or https:// URL")
        if concurrency < 1:
            raise VqauditError(f"concurrency must be at least 1, got {concurrency}")
        from vqaudit.backends.openai import OpenAIBackend

        return OpenAIBackend(
            spec=spec,
            model=match["model"],
            base_url=match["url"],
            api_key_env=api_key_env,
            concurrency=concurrency,
            max_retries=max_retries,
            backoff_base_s=backoff_base_s,
            backoff_max_s=backoff_max_s,
            timeout_s=timeout_s,
        )
    if kind == "baseline":  # issue 20: temporary wiring until the backend table lands
        from vqaudit.backends.baseline import load

        return load(spec, rest, {})
    if kind in ("hf", "vllm"):
        raise VqauditError(
            f"model spec {spec!r}: the {kind!r} backend is a planned optional extra and is not implemented yet; "
            "serve the model with an OpenAI-compatible server (e.g. `vllm serve`) and use openai:MODEL@URL"
        )
    raise _bad_spec(spec, f"unknown backend kind {kind!r}")
