"""Ask a model every question of a prediction set under each benign perturbation (seed 002 §4, §5.3).

Each (question x variant) pair is a generated view (:class:`PerturbedView`, request id ``VARIANT:qid``) asked
through the one cached runner; :mod:`vqaudit.shortanswer.perturb` scores the replies and summarizes the flips.
"""

from __future__ import annotations

import dataclasses
import mimetypes
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vqaudit.backends import Backend, ModelOptions, Request, ResponseCache, load_backend
from vqaudit.backends.registry import BACKENDS
from vqaudit.backends.runner import EARLY_STOP_CALLS, Job, ask_cached, request_key
from vqaudit.errors import VqauditError
from vqaudit.files import sha256_bytes
from vqaudit.prompts.perturbations import PARAMS, VARIANT_IDS, PromptVariant, get_variant
from vqaudit.schema import GenerationParams, Response
from vqaudit.shortanswer.records import AuditRow
from vqaudit.signals import run_async

ImageFor = Callable[[AuditRow], tuple[bytes, str]]
"""Returns ``(image bytes, MIME type)`` of a row's image."""


@dataclass(frozen=True)
class PerturbationReplies:
    """What :func:`ask_perturbations` got back.

    Attributes:
        replies: ``variant id -> qid -> reply text`` (None when the call failed after its retries).
        errors: ``variant id -> qid -> error`` of the calls that failed in this invocation.
        last_error: the error of the last call that failed, or None when none failed.
        reasoning: ``variant id -> qid -> reasoning`` a server sent apart from the reply's content (a reasoning
            model's ``reasoning_content``), only for the replies that had some; never scored.
    """

    replies: dict[str, dict[str, str | None]]
    errors: dict[str, dict[str, str]]
    last_error: str | None
    reasoning: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class PerturbedView:
    """One generated view: a prediction row's question under one perturbation (``request_id`` ``VARIANT:qid``)."""

    row: AuditRow
    variant: PromptVariant
    image: bytes
    mime: str
    params: GenerationParams = PARAMS

    @property
    def request_id(self) -> str:
        """``VARIANT:qid``, the id a ``replay:`` file answers by."""
        return f"{self.variant.variant_id}:{self.row.qid}"

    @property
    def prompt_id(self) -> str:
        """``shortanswer-perturb-VARIANT``."""
        return f"shortanswer-perturb-{self.variant.variant_id}"

    def request(self) -> Request:
        """The model call of this view (image and perturbed prompt, at ``params``: :data:`PARAMS` by default)."""
        return Request(
            request_id=self.request_id,
            prompt_id=self.prompt_id,
            prompt=self.variant.render(self.row.question),
            image=self.image,
            image_mime=self.mime,
            params=self.params,
        )


def ask_perturbations(
    rows: Sequence[AuditRow],
    image_for: ImageFor,
    spec: str,
    cache_path: Path,
    *,
    variants: Sequence[str] = VARIANT_IDS,
    backend: Backend | None = None,
    concurrency: int = 8,
    options: ModelOptions | None = None,
) -> PerturbationReplies:
    """Ask a model every question of ``rows`` under each perturbation; keep the errors of the failed calls.

    The (question x variant) pairs are generated views (:class:`PerturbedView`) asked through the one cached
    runner (:func:`vqaudit.backends.runner.ask_cached`). Every image is loaded before the first call. Replies
    already cached are not asked again; every reply is cached the moment it arrives. When the first
    ``min(EARLY_STOP_CALLS, calls to ask)`` calls all fail after their retries, the model is taken to be
    unreachable and the rest are not asked (not for a backend that answers by id, ``replay:``: a file answers
    at once, and the audit then names the ids its replies must carry).

    Args:
        rows: the prediction set's rows (question, gold, qid).
        image_for: returns a row's image bytes and MIME type.
        spec: model spec (any backend).
        cache_path: SQLite cache file.
        variants: perturbation ids to run (default: all nine).
        backend: a ready backend instead of ``load_backend(spec)`` (tests); it is closed at the end.
        concurrency: calls in flight.
        options: generic model options (``--model-arg``, ``--timeout``, ...); ``concurrency`` replaces its own.

    Returns:
        The replies, the errors and the last error (:class:`PerturbationReplies`).

    Raises:
        VqauditError: an unknown variant, a missing image (from ``image_for``), a bad spec, a fatal backend error,
            or the first calls all failed (naming the spec and the last error; replies so far stay cached).
    """
    chosen = [get_variant(v) for v in variants]
    base = options if options is not None else ModelOptions()
    params = base.generation(PARAMS)  # --model-arg max_tokens=N, enable_thinking=..., ...
    views: list[PerturbedView] = []
    for row in rows:
        image, mime = image_for(row)
        views.extend(PerturbedView(row, v, image, mime, params) for v in chosen)
    replies: dict[str, dict[str, str | None]] = {v.variant_id: {} for v in chosen}
    errors: dict[str, dict[str, str]] = {v.variant_id: {} for v in chosen}
    if not views:
        return PerturbationReplies(replies, errors, None)
    model = backend if backend is not None else load_backend(spec, dataclasses.replace(base, concurrency=concurrency))
    cache_path.parent.mkdir(parents=True, exist_ok=True)
    by_id = (row_ := BACKENDS.get(spec.partition(":")[0])) is not None and row_.by_id
    with ResponseCache(cache_path) as cache:
        keys = [
            request_key(model, v.prompt_id, v.request().prompt, sha256_bytes(v.image), params, v.request_id)
            for v in views
        ]
        jobs = [Job(key=k, request_id=v.request_id, build=v.request) for v, k in zip(views, keys, strict=True)]
        n_todo = len({k for k in keys if (c := cache.get(k)) is None or c.error is not None})

        def unreachable(n_done: int, response: Response) -> VqauditError:
            return VqauditError(
                f"model {spec}: its first {n_done} calls all failed after their retries (last: "
                f"{response.error}); stopped instead of asking the other {n_todo - n_done}. Is the server "
                f"up? Replies received so far are cached in {cache.path}; rerun the same command once the "
                "model answers"
            )

        async def go() -> None:
            try:
                await ask_cached(
                    model,
                    jobs,
                    cache,
                    concurrency=concurrency,
                    reask_errors=True,
                    give_up=(lambda n: n + 1) if by_id else (lambda n: min(EARLY_STOP_CALLS, n)),
                    unreachable=unreachable,
                    fatal_label=f"model {spec}",
                )
            finally:
                await model.aclose()

        run_async(go())
        answers = {k: cache.get(k) for k in set(keys)}
    last_error: str | None = None
    reasoning: dict[str, dict[str, str]] = {}
    for view, key in zip(views, keys, strict=True):
        response = answers[key]
        assert response is not None, "ask_cached stores a response for every key it asks"
        replies[view.variant.variant_id][view.row.qid] = response.text
        if response.error is not None:
            errors[view.variant.variant_id][view.row.qid] = response.error  # cached errors were asked again
            last_error = response.error
        elif response.reasoning is not None:
            reasoning.setdefault(view.variant.variant_id, {})[view.row.qid] = response.reasoning
    return PerturbationReplies(replies, errors, last_error, reasoning)


_SUFFIXES = ("", ".jpg", ".jpeg", ".png")


def image_resolver(images: Path) -> Mapping[str, Path]:
    """Index an image folder (recursively) by file name and by stem, for rows naming an image by id or path."""
    index: dict[str, Path] = {}
    for path in sorted(images.rglob("*")):
        if path.is_file():
            index.setdefault(path.name, path)
            index.setdefault(path.stem, path)
    return index


def image_loader(images: Path) -> ImageFor:
    """Return a loader ``row -> (image bytes, MIME type)`` over an image folder (see :func:`image_resolver`).

    Raises (from the loader):
        VqauditError: a row without an image name, or whose image is not in the folder (naming the qid).
    """
    index = image_resolver(images)

    def load(row: AuditRow) -> tuple[bytes, str]:
        if not row.image:
            raise VqauditError(f"question {row.qid!r}, field 'image': the prediction set names no image")
        name = Path(row.image).name
        for candidate in (name + s for s in _SUFFIXES):
            if candidate in index:
                path = index[candidate]
                return path.read_bytes(), mimetypes.guess_type(path.name)[0] or "image/png"
        raise VqauditError(f"question {row.qid!r}, field 'image': {row.image!r} not found under {images}")

    return load
