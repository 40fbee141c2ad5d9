"""Cached, text-only calls to a judge model: shared by the UPD judge and the short-answer judge audit.

A judge never sees the image (seed 001, appendix 0.C; seed 002, §3.3: the judge sees text only), so a judge
:class:`~vqaudit.backends.base.Request` carries no image and an HTTP backend sends the prompt as plain
text; a text-only server (e.g. a text LLM under vLLM) accepts it. Verdicts are cached before anyone parses them,
under the usual cache key (model, prompt, image hash, parameters) with the fixed marker
:data:`~vqaudit.backends.runner.TEXT_ONLY` in place of the image hash. A cached error is asked again.

Early stop: when the first :data:`EARLY_STOP_CALLS` calls asked (all of them, if fewer are asked) all end in an
error after their retries, the judge is taken to be unreachable and the remaining calls are not made (the rule
``vqaudit run`` applies to models).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from vqaudit.backends.base import Backend, GenerationParams, Request
from vqaudit.backends.cache import ResponseCache
from vqaudit.backends.runner import EARLY_STOP_CALLS, Job, ask_cached, request_key
from vqaudit.errors import VqauditError
from vqaudit.schema import Response

__all__ = ["EARLY_STOP_CALLS", "JudgeCall", "ask_judge_all"]


@dataclass(frozen=True)
class JudgeCall:
    """One question to the judge.

    Attributes:
        request_id: the id recorded on the stored response (a replay judge answers by it).
        prompt_id: id of the judge prompt template.
        prompt: the full judge prompt text (the only thing a judge receives).
    """

    request_id: str
    prompt_id: str
    prompt: str


def _request(call: JudgeCall, params: GenerationParams) -> Request:
    return Request(
        request_id=call.request_id,
        prompt_id=call.prompt_id,
        prompt=call.prompt,
        image=None,
        image_mime=None,
        params=params,
    )


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

    Each reply is stored in ``cache`` as it arrives (batched, ``runner.StoreBatch``); an error row is replaced by a
    later success.
    Calls with the same cache key (same judge, prompt and parameters) are asked once and share one Response,
    unless the judge answers by id (``replay:``).

    Args:
        backend: the judge backend (not closed here).
        spec: the judge's model spec as the user gave it (named in errors).
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
    keys = [request_key(backend, c.prompt_id, c.prompt, None, params, c.request_id) for c in calls]
    jobs = [
        Job(key=k, request_id=c.request_id, build=partial(_request, c, params))
        for c, k in zip(calls, keys, strict=True)
    ]
    n_todo = len({k for k in keys if (cached := cache.get(k)) is None or cached.error is not None})

    def unreachable(n_done: int, response: Response) -> VqauditError:
        if spec.startswith("replay:"):  # a file, not a server: the ids are what is wrong
            return VqauditError(
                f"the judge at {spec} has no reply for its first {n_done} calls (last: {response.error}); "
                f"a replay judge file needs a row for each call, with the view_id of the call "
                f"(e.g. {calls[0].request_id!r})"
            )
        return VqauditError(
            f"the judge at {spec} is unreachable: its first {n_done} calls all failed after their retries "
            f"(last: {response.error}); stopped instead of asking the other {n_todo - n_done}. Verdicts "
            f"received so far are cached in {cache.path}; rerun the same command once the judge answers"
        )

    await ask_cached(
        backend,
        jobs,
        cache,
        concurrency=concurrency,
        reask_errors=True,
        give_up=lambda n: min(EARLY_STOP_CALLS, n),
        unreachable=unreachable,
        fatal_label=f"judge {spec}",
    )
    replies: dict[str, Response] = {}
    for key in keys:
        if key not in replies:
            found = cache.get(key)
            assert found is not None, "ask_cached stores a response for every key it asks"
            replies[key] = found
    return [replies[k] for k in keys]
