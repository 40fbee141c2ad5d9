"""The backend table: every model spec kind is one row here, and one module that builds it.

A spec is ``KIND:TARGET``. Each row names the module that builds the backend (imported only when a spec names
the kind, so a heavy dependency is loaded only when used), the optional extra that module needs, the spec forms
shown to a user who typed a bad one, and two properties the stages consult instead of comparing strings:

- ``free_text``: the backend replies in free text, so it can be a judge or the model of ``vqaudit perturb``
  (the reference policies reply in a view's contract and cannot);
- ``by_id``: the backend's reply depends on more than the request's inputs (``replay:`` answers by request id,
  the reference policies by the view's obligation), so requests with identical inputs are never merged into one
  call;
- ``key_env`` and ``endpoints``: the environment variables an HTTP backend reads its API key from, and whether its
  spec may name several servers (``--endpoint`` checks this, not the kind's name);
- ``generation``: the generation keys (:data:`~vqaudit.backends.base.GENERATION_KEYS`: ``max_tokens``,
  ``reasoning_effort``, ``enable_thinking``, ...) the kind takes as ``--model-arg``/``--judge-arg``; they become
  fields of every request's :class:`~vqaudit.schema.GenerationParams` (:meth:`ModelOptions.generation`), and
  :func:`load_backend` refuses the others and strips them all before the module's ``load`` sees the args.

A backend module exposes ``load(spec: str, target: str, options: ModelOptions) -> Backend``, and, when loading is
expensive (weights read into memory, an engine started), ``check(spec, target, options) -> None``, which refuses
what ``load`` would refuse for the spec and its options without loading anything (:func:`check_backend`; ``eval``
checks every spec before it builds). Adding a backend is one module plus one :class:`BackendKind` row in
:data:`BACKENDS` (or :func:`register_backend` from a plugin); an HTTP provider's module is a subclass of
:class:`vqaudit.backends.http_base.HttpBackend` with its hooks (URL path, headers, body, reply readers).
"""

from __future__ import annotations

import contextlib
import importlib
import weakref
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, cast

from vqaudit.backends.base import Backend, ModelOptions
from vqaudit.errors import VqauditError
from vqaudit.schema import GenerationParams


@dataclass(frozen=True)
class BackendKind:
    """One row of the backend table.

    Attributes:
        name: the spec prefix before the first ``:`` (e.g. ``openai``).
        module: dotted module exposing ``load(spec, target, options) -> Backend``.
        forms: the valid spec forms, as shown in errors and ``--help`` (e.g. ``openai:MODEL@URL``).
        extra: the ``pip install 'vqaudit[EXTRA]'`` extra the module needs, or None.
        free_text: replies in free text (may be a judge or a perturbed model).
        by_id: replies depend on the request id or obligation; identical inputs are never merged into one call.
        sources: the benchmark sources the backend can answer (``run`` refuses others before asking), or None
            for any source.
        generation: the generation keys it takes (a subset of
            :data:`~vqaudit.backends.base.GENERATION_KEYS`); () for a backend whose replies no setting changes.
        key_env: the environment variables its API key is read from, the first set one wins (what
            ``--api-key-env`` replaces); () for a backend with no key.
        endpoints: its spec may name several servers of one model (``KIND:MODEL@URL1,URL2``; ``--endpoint URL``
            appends one).
    """

    name: str
    module: str
    forms: tuple[str, ...]
    extra: str | None = None
    free_text: bool = True
    by_id: bool = False
    sources: tuple[str, ...] | None = None
    generation: tuple[str, ...] = ()
    key_env: tuple[str, ...] = ()
    endpoints: bool = False


SERVER_GENERATION = ("max_tokens", "max_completion_tokens", "reasoning_effort", "enable_thinking")
"""What an OpenAI-compatible server takes: both token fields, ``reasoning_effort``, the template switch."""
LOCAL_GENERATION = ("max_tokens", "max_new_tokens", "enable_thinking")
"""What an in-process model (transformers, vLLM) takes: the token budget (either spelling), the template switch."""
BUDGET_GENERATION = ("max_tokens", "thinking_budget")
"""What a provider API with a thinking budget takes (Anthropic Messages, Gemini generateContent)."""

BACKENDS: dict[str, BackendKind] = {
    row.name: row
    for row in (
        BackendKind(
            "reference",
            "vqaudit.backends.reference",
            ("reference:always-answer", "reference:always-abstain", "reference:gold"),
            free_text=False,
            by_id=True,
        ),
        BackendKind(
            "openai",
            "vqaudit.backends.openai",
            ("openai:MODEL@URL (e.g. openai:Qwen/Qwen2-VL-7B-Instruct@http://127.0.0.1:8000/v1)",),
            generation=SERVER_GENERATION,
            key_env=("OPENAI_API_KEY",),
            endpoints=True,
        ),
        BackendKind(
            "anthropic",
            "vqaudit.backends.anthropic",
            ("anthropic:MODEL@URL (e.g. anthropic:claude-sonnet-4-5@https://api.anthropic.com/v1)",),
            generation=BUDGET_GENERATION,
            key_env=("ANTHROPIC_API_KEY",),
            endpoints=True,
        ),
        BackendKind(
            "gemini",
            "vqaudit.backends.gemini",
            ("gemini:MODEL@URL (e.g. gemini:gemini-2.5-flash@https://generativelanguage.googleapis.com/v1beta)",),
            generation=BUDGET_GENERATION,
            key_env=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
            endpoints=True,
        ),
        BackendKind(
            "replay",
            "vqaudit.backends.replay",
            ('replay:FILE (a JSONL of {"view_id": ..., "text": ...} rows)',),
            by_id=True,
        ),
        BackendKind(
            "baseline",
            "vqaudit.backends.baseline",
            ("baseline:chart-reader (an OCR chart reader; pip install 'vqaudit[ocr]')",),
            extra="ocr",
            sources=("charts",),
        ),
        BackendKind(
            "hf",
            "vqaudit.backends.hf",
            ("hf:MODEL_OR_PATH (transformers in this process; pip install 'vqaudit[hf]')",),
            extra="hf",
            generation=LOCAL_GENERATION,
        ),
        BackendKind(
            "vllm",
            "vqaudit.backends.vllm",
            ("vllm:MODEL_OR_PATH (vLLM in this process; pip install 'vqaudit[vllm]')",),
            extra="vllm",
            generation=LOCAL_GENERATION,
        ),
    )
}


def register_backend(kind: BackendKind) -> None:
    """Add (or replace) one row of the backend table, e.g. from a plugin or a test.

    Raises:
        VqauditError: the name is empty or contains ``:``.
    """
    if not kind.name or ":" in kind.name:
        raise VqauditError(f"backend kind {kind.name!r}: a name is nonempty and has no ':'")
    BACKENDS[kind.name] = kind


def valid_specs() -> tuple[str, ...]:
    """Every valid spec form of every registered backend, in table order."""
    return tuple(form for row in BACKENDS.values() for form in row.forms)


def bad_spec(spec: str, why: str) -> VqauditError:
    """The error for a malformed spec: ``why``, then every valid form."""
    forms = "\n  ".join(valid_specs())
    return VqauditError(f"model spec {spec!r}: {why}. Valid forms:\n  {forms}")


def backend_kind(spec: str) -> BackendKind:
    """The table row a spec names.

    Raises:
        VqauditError: the spec is not ``KIND:TARGET`` or names no registered kind (the message lists the forms).
    """
    kind, sep, target = spec.partition(":")
    if not sep or not target.strip():
        raise bad_spec(spec, "expected KIND:VALUE")
    row = BACKENDS.get(kind)
    if row is None:
        raise bad_spec(spec, f"unknown backend kind {kind!r}")
    return row


def load_backend(spec: str, options: ModelOptions | None = None) -> Backend:
    """Build the backend a model spec names, importing its module (and its heavy dependency) only now.

    Args:
        spec: ``KIND:TARGET`` (see :data:`BACKENDS` for the kinds).
        options: generic model options and ``--model-arg`` pairs (default: :class:`ModelOptions` defaults). The
            generation keys among the pairs are checked against the kind's ``generation`` column and removed
            before the module's ``load`` sees them (:func:`module_options`); the backend remembers them for
            :func:`loaded_generation`.

    Returns:
        A Backend whose ``spec`` is ``spec``.

    Raises:
        VqauditError: a malformed or unknown spec (the message lists the valid forms), a missing optional extra
            (the message names ``pip install 'vqaudit[EXTRA]'``), a generation key with a bad value or one the
            kind does not take, or the backend's own refusal (a bad target, an unreadable replay file, an unknown
            ``--model-arg``, a thinking switch its chat template lacks).
    """
    module = _module(spec)
    opts = options if options is not None else ModelOptions()
    load = cast(Callable[[str, str, ModelOptions], Backend], module.load)
    backend = load(spec, spec.partition(":")[2], module_options(spec, opts))
    if opts.generation_keys():
        with contextlib.suppress(TypeError):  # not weakly referable: callers pass options.generation(...)
            _LOADED_WITH[backend] = opts
    return backend


_LOADED_WITH: weakref.WeakKeyDictionary[Any, ModelOptions] = weakref.WeakKeyDictionary()
"""The options of each backend :func:`load_backend` built with generation keys (for :func:`loaded_generation`)."""


def module_options(spec: str, options: ModelOptions) -> ModelOptions:
    """``options`` as the backend module of ``spec`` sees them: generation keys checked, then removed.

    Raises:
        VqauditError: a malformed or unknown spec; a generation key whose value is bad
            (:meth:`ModelOptions.generation`), or that the kind does not take (one line naming it and the keys
            the kind takes).
    """
    row = backend_kind(spec)
    given = options.generation_keys()
    if not given:
        return options
    options.generation(GenerationParams())  # the values, checked before any module is loaded
    refused = [k for k in given if k not in row.generation]
    if refused:
        takes = ", ".join(row.generation) or "none (no setting changes its replies)"
        raise VqauditError(
            f"model spec {spec!r}: {options.args_option} {', '.join(refused)}: the {row.name!r} "
            f"backend takes no such generation setting; it takes {takes}"
        )
    return options.without_generation()


def loaded_generation(backend: Backend, base: GenerationParams) -> GenerationParams:
    """``base`` with the generation keys ``backend`` was loaded with applied (:meth:`ModelOptions.generation`).

    For a caller that gets a ready backend rather than its options (a judge): the settings given with
    ``--judge-arg`` at :func:`load_backend` reach its calls. A backend built otherwise (a test's, a Ray
    replica set) gets ``base``.
    """
    try:
        options = _LOADED_WITH.get(backend)
    except TypeError:
        return base
    return options.generation(base) if options is not None else base


def check_request_ids(spec: str, ids: Collection[str], what: str) -> None:
    """Let the backend of ``spec`` refuse requests it holds for ids outside ``ids`` (before anything is asked).

    A backend module with a ``check_request_ids(spec, target, ids, what)`` function (``replay:``: a saved reply
    for a view the benchmark lacks was meant for another benchmark) is asked; any other backend answers any id.

    Args:
        spec: ``KIND:TARGET``.
        ids: every request id the stage may ask (a run: every view id of the benchmark, whatever the shard).
        what: what the ids belong to, as the user knows it (e.g. the benchmark folder), named in the refusal.

    Raises:
        VqauditError: a malformed or unknown spec, or the module's refusal (one line naming the file, the row
            and the unknown id).
    """
    check = getattr(_module(spec), "check_request_ids", None)
    if check is not None:
        cast(Callable[[str, str, Collection[str], str], None], check)(spec, spec.partition(":")[2], ids, what)


def check_backend(spec: str, options: ModelOptions | None = None) -> None:
    """Refuse a spec (and its options) that :func:`load_backend` would refuse, without loading heavy models.

    A backend module with a ``check`` function (``hf:``, ``vllm:``) is asked to check the spec, its
    ``--model-arg`` pairs, its extra and its model folder or hub id without reading weights or starting an
    engine; any other backend is loaded (cheap: no connection is opened before the first call) and closed.

    Args:
        spec: ``KIND:TARGET``.
        options: as for :func:`load_backend`.

    Raises:
        VqauditError: as :func:`load_backend` (a weights file that cannot be read is found only at load time).
    """
    module = _module(spec)
    target = spec.partition(":")[2]
    opts = module_options(spec, options if options is not None else ModelOptions())
    check = getattr(module, "check", None)
    if check is not None:
        cast(Callable[[str, str, ModelOptions], None], check)(spec, target, opts)
        return
    backend = cast(Callable[[str, str, ModelOptions], Backend], module.load)(spec, target, opts)
    import asyncio

    asyncio.run(backend.aclose())


def _module(spec: str) -> Any:
    """The backend module of ``spec``'s kind, imported now (a missing extra: one line naming it)."""
    row = backend_kind(spec)
    try:
        return importlib.import_module(row.module)
    except ModuleNotFoundError as exc:
        if row.extra is None or (exc.name or "").startswith("vqaudit"):
            raise
        raise VqauditError(
            f"model spec {spec!r}: the {row.name!r} backend needs the [{row.extra}] extra "
            f"(missing module {exc.name!r}): pip install 'vqaudit[{row.extra}]'"
        ) from None


def require_free_text_model(spec: str, role: str) -> None:
    """Refuse a backend that cannot reply in free text where such a model is needed (a judge, ``perturb``).

    The reference policies (``reference:*``) answer the benchmark views' own reply contracts (the answerability
    JSON, a UPD letter); as a judge, or as the model re-asked under prompt perturbations, their replies would be
    scored as if they were answers, and every number would be meaningless.

    Args:
        spec: the model spec given for the role.
        role: what the model is for, as the user knows it (e.g. ``"--judge"``, ``"--model"``).

    Raises:
        VqauditError: ``spec`` names a backend whose ``free_text`` is False.
    """
    row = BACKENDS.get(spec.partition(":")[0])  # unknown kinds fail where the backend is loaded
    if row is not None and not row.free_text:
        forms = ", ".join(r.forms[0].split(" ")[0] for r in BACKENDS.values() if r.free_text and r.sources is None)
        raise VqauditError(
            f"{role} {spec!r}: a reference policy replies in a benchmark view's contract, not in "
            f"free text, so it cannot play this role; use a free-text backend ({forms})"
        )
