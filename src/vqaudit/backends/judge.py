"""One cached, text-only call to a judge model: shared by the UPD judge and the short-answer judge audit.

Backends always attach an image, so a judge gets a 1x1 placeholder PNG: it must never see the real image (seed
001, appendix 0.C; seed 002, §3.3: the judge sees text only). Verdicts are cached under the usual cache key
(model, prompt, image hash, parameters) before anyone parses them; a cached error is asked again.
"""

from __future__ import annotations

import asyncio
import base64
import time

from vqaudit.backends.base import Backend, BackendCallError, GenerationParams, Request
from vqaudit.backends.cache import ResponseCache, cache_key
from vqaudit.errors import VqauditError
from vqaudit.schema import Response, View
from vqaudit.store import sha256_bytes

PLACEHOLDER_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg=="
)
"""A 1x1 PNG sent as the judge's image."""


async def ask_judge_cached(
    backend: Backend,
    spec: str,
    cache: ResponseCache,
    view: View,
    prompt_id: str,
    prompt: str,
    params: GenerationParams,
    gate: asyncio.Semaphore,
    *,
    response_id: str | None = None,
) -> Response:
    """Return the cached judge reply for ``prompt``, asking the backend (inside ``gate``) when none is cached.

    Args:
        backend: the judge backend.
        spec: the judge's model spec, as the user gave it (part of the cache key and recorded on the reply).
        cache: where verdicts are stored; a cached reply is reused, a cached error is replaced on success.
        view: the view the verdict is about (passed to the backend; reference policies read it).
        prompt_id: id of the judge prompt template.
        prompt: the full judge prompt text.
        params: generation parameters (temperature 0 for judges).
        gate: bounds concurrent calls.
        response_id: the ``view_id`` recorded on the response (default: ``view.view_id``).

    Returns:
        The Response: ``text`` set, or ``error`` set when the call failed after its retries.

    Raises:
        VqauditError: a fatal backend error (401/403/404): every call would fail the same way.
    """
    key = cache_key(spec, prompt_id, prompt, sha256_bytes(PLACEHOLDER_PNG), params)
    cached = cache.get(key)
    if cached is not None and cached.text is not None:
        return cached
    async with gate:
        started = time.perf_counter()
        reply: str | None = None
        error: str | None = None
        try:
            reply = await backend.complete(Request(view=view, prompt_id=prompt_id, prompt=prompt,
                                                   image=PLACEHOLDER_PNG, image_mime="image/png", params=params))
        except BackendCallError as exc:
            if exc.fatal:
                raise VqauditError(f"judge {spec}: {exc}") from None
            error = str(exc) or type(exc).__name__
        response = Response(view_id=response_id or view.view_id, model=spec, prompt_id=prompt_id,
                            params=params.as_dict(), text=reply, error=error,
                            latency_s=time.perf_counter() - started, cache_key=key)
        cache.put(response, replace_error=True)
        return response
