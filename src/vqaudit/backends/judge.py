"""Cached, text-only calls to a judge model: shared by the UPD judge and the short-answer judge audit.

A judge never sees the image (seed 001, appendix 0.C; seed 002, §3.3: the judge sees text only), so a judge
:class:`~vqaudit.backends.base.Request` carries no image and the ``openai`` backend sends the prompt as plain text;
a text-only server (e.g. a text LLM under vLLM) accepts it. Verdicts are cached before anyone parses them, under
the usual cache key (model, prompt, image hash, parameters) with the fixed marker :data:`TEXT_ONLY` in place of
the image hash. Caches written before judges went text-only keyed their verdicts with the hash of a 1x1
placeholder PNG; those rows are simply not found, and the judge is asked again. A cached error is asked again.

Early stop: when the first :data:`EARLY_STOP_CALLS` calls asked (all of them, if fewer are asked) all end in an
error after their retries, the judge is taken to be unreachable and the remaining calls are not made (the rule
``vqaudit run`` applies to models).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vqaudit.backends.base import Backend, GenerationParams, Request
from vqaudit.backends.cache import ResponseCache, cache_key
from vqaudit.backends.calls import ask_all, call_once
from vqaudit.errors import VqauditError
from vqaudit.schema import Response, View

TEXT_ONLY = "text-only"
"""Stands where the image SHA-256 goes in a judge's cache key (a judge call has no image)."""

EARLY_STOP_CALLS = 8
"""Stop when this many judge calls (or all calls asked, if fewer) have all failed."""


@dataclass(frozen=True)
class JudgeCall:
    """One question to the judge.

    Attributes:
        view: the view the verdict is about (passed to the backend: reference and replay backends read it).
        prompt_id: id of the judge prompt template.
        prompt: the full judge prompt text (the only thing an ``openai`` judge receives).
        response_id: the ``view_id`` recorded on the stored response.
    """

    view: View
    prompt_id: str
    prompt: str
    response_id: str


def judge_key(spec: str, prompt_id: str, prompt: str, params: GenerationParams) -> str:
    """The cache key of a judge call: :func:`~vqaudit.backends.cache.cache_key` with :data:`TEXT_ONLY`."""
    return cache_key(spec, prompt_id, prompt, TEXT_ONLY, params)


async def _ask_one(backend: Backend, spec: str, call: JudgeCall, key: str, params: GenerationParams) -> Response:
    request = Request(view=call.view, prompt_id=call.prompt_id, prompt=call.prompt, image=None, image_mime=None,
                      params=params)
    return await call_once(backend, request, model=spec, response_id=call.response_id, key=key,
                           fatal_label=f"judge {spec}")


async def ask_judge_all(
    backend: Backend,
    spec: str,
    cache: ResponseCache,
    calls: Sequence[JudgeCall],
    params: GenerationParams,
    *,
    concurrency: int = 8,
) -> list[Response]:
    """Return the judge's reply to every call: from the cache, else asked (at most ``concurrency`` at once).

    Each reply is stored in ``cache`` the moment it arrives (an error row is replaced by a later success).
    Calls with the same cache key (same spec, prompt and parameters) are asked once and share one Response.

    Args:
        backend: the judge backend (not closed here).
        spec: the judge's model spec as the user gave it (part of the cache key and recorded on the replies).
        cache: where verdicts are stored.
        calls: the questions, in any order.
        params: generation parameters (temperature 0 for judges).
        concurrency: maximum calls in flight (at least 1).

    Returns:
        One Response per call, in the order of ``calls``: ``text`` set, or ``error`` set when the call failed
        after its retries.

    Raises:
        VqauditError: a fatal backend error (401/403/404: every call would fail the same way), or the first
            ``min(EARLY_STOP_CALLS, calls to ask)`` calls all failed (the judge is unreachable). Replies received
            before either stay cached, and calls in flight are cancelled.
    """
    keys = [judge_key(spec, c.prompt_id, c.prompt, params) for c in calls]
    replies: dict[str, Response] = {}
    todo: dict[str, JudgeCall] = {}
    for call, key in zip(calls, keys, strict=True):
        if key in replies or key in todo:
            continue
        cached = cache.get(key)
        if cached is not None and cached.text is not None:
            replies[key] = cached
        else:
            todo[key] = call
    def store(item: tuple[str, JudgeCall], response: Response) -> None:
        cache.put(response, replace_error=True)
        replies[item[0]] = response

    def unreachable(n_done: int, response: Response) -> VqauditError:
        if spec.startswith("replay:"):  # a file, not a server: the ids are what is wrong
            return VqauditError(
                f"the judge at {spec} has no reply for its first {n_done} calls (last: {response.error}); "
                f"a replay judge file needs a row for each call, with the view_id of the call "
                f"(e.g. {next(iter(todo.values())).response_id!r})")
        return VqauditError(
            f"the judge at {spec} is unreachable: its first {n_done} calls all failed after their retries "
            f"(last: {response.error}); stopped instead of asking the other {len(todo) - n_done}. Verdicts "
            f"received so far are cached in {cache.path}; rerun the same command once the judge answers"
        )

    await ask_all(list(todo.items()), lambda item: _ask_one(backend, spec, item[1], item[0], params), store,
                  concurrency=concurrency, give_up=min(EARLY_STOP_CALLS, len(todo)), unreachable=unreachable)
    return [replies[k] for k in keys]
