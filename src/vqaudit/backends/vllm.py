"""``vllm:MODEL_OR_PATH``: a vision-language model run in this process by a vLLM engine (``vllm.LLM``).

Each request becomes one conversation of one user turn (the image as a ``data:`` URL ``image_url`` part, then
the prompt) given to ``LLM.chat``, which applies the model's chat template; ``SamplingParams`` carry the
request's temperature (0: greedy) and ``max_tokens`` (512 in the run stage). Concurrent ``complete`` calls are
collected into one ``LLM.chat`` call of up to ``batch_size`` conversations (vLLM schedules them with continuous
batching), so ``--concurrency`` should be at least ``batch_size`` for full batches.

``--model-arg`` keys (all optional; the engine options are passed to ``vllm.LLM``):

- ``tensor_parallel_size`` (GPUs, default 1), ``pipeline_parallel_size``, ``dtype`` (``auto``, ``float16``,
  ``bfloat16``, ``float32``), ``quantization`` (e.g. ``awq``, ``fp8``), ``max_model_len``, ``max_num_seqs``,
  ``gpu_memory_utilization`` (0 to 1), ``enforce_eager``, ``seed``, ``revision``, ``trust_remote_code``,
  ``max_images`` (images per prompt the engine reserves memory for, default 1);
- ``batch_size``: conversations per ``LLM.chat`` call (default 64).

Generation keys (taken by ``load_backend`` into every request's parameters, so part of each reply's cache key):
``max_new_tokens=N`` or ``max_tokens=N`` (``SamplingParams.max_tokens``) and ``enable_thinking=true|false``
(passed to the chat template, ``LLM.chat(chat_template_kwargs=...)``).

The cache identity is the spec, the local folder's fingerprint or the hub commit, and ``dtype`` and
``quantization`` when given. Requires the ``[vllm]`` extra and a GPU (vLLM's
vision-language path does not run on CPU).
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from vqaudit.backends.base import BackendCallError, GenerationParams, ModelOptions, Request
from vqaudit.backends.batching import Batcher, isolate_failures
from vqaudit.backends.model_files import (
    ModelSource,
    load_error,
    no_thinking_switch,
    require_extra,
    resolve_source,
    source_identity,
    template_has_thinking_switch,
)
from vqaudit.backends.options import ModelArgs
from vqaudit.errors import VqauditError

ENGINE_INT_ARGS = ("tensor_parallel_size", "pipeline_parallel_size", "max_model_len", "max_num_seqs", "seed")
ENGINE_STR_ARGS = ("quantization", "revision")
KNOWN_ARGS = (
    *ENGINE_INT_ARGS,
    *ENGINE_STR_ARGS,
    "dtype",
    "gpu_memory_utilization",
    "enforce_eager",
    "trust_remote_code",
    "max_images",
    "batch_size",
)
DTYPES = ("auto", "float16", "bfloat16", "float32")
DEFAULT_BATCH_SIZE = 64


@dataclass(frozen=True)
class VLLMOptions:
    """The ``--model-arg`` settings of the vllm backend.

    Attributes:
        engine: keyword arguments for ``vllm.LLM`` besides ``model`` (only the keys given, plus
            ``limit_mm_per_prompt``).
        batch_size: conversations per ``LLM.chat`` call.
    """

    engine: dict[str, Any] = field(default_factory=dict)
    batch_size: int = DEFAULT_BATCH_SIZE

    @classmethod
    def from_args(cls, args: ModelArgs) -> VLLMOptions:
        """Read the options from ``--model-arg`` pairs.

        Raises:
            VqauditError: a bad value or an unknown key (naming it and the known keys).
        """
        engine: dict[str, Any] = {}
        for key in ENGINE_INT_ARGS:
            value = args.take_int(key, None, minimum=0 if key == "seed" else 1)
            if value is not None:
                engine[key] = value
        for key in ENGINE_STR_ARGS:
            text = args.take_str(key)
            if text is not None:
                engine[key] = text
        dtype = args.take_str("dtype", choices=DTYPES)
        if dtype is not None:
            engine["dtype"] = dtype
        utilization = args.take_float("gpu_memory_utilization", None, minimum=0.01, maximum=1.0)
        if utilization is not None:
            engine["gpu_memory_utilization"] = utilization
        engine["enforce_eager"] = args.take_bool("enforce_eager", False)
        engine["trust_remote_code"] = args.take_bool("trust_remote_code", False)
        engine["limit_mm_per_prompt"] = {"image": args.take_int("max_images", 1, maximum=64)}
        options = cls(
            engine=engine,
            batch_size=args.take_int("batch_size", DEFAULT_BATCH_SIZE, maximum=1 << 16) or DEFAULT_BATCH_SIZE,
        )
        args.finish()
        return options


def check(spec: str, target: str, options: ModelOptions) -> None:
    """Refuse what :func:`load` would refuse before reading weights: the options, the extra, the model source.

    Used by ``vqaudit eval`` to check every spec before it builds (``registry.check_backend``), so a model is
    loaded once, by the run.

    Raises:
        VqauditError: as :func:`load`, except failures that only loading the weights can show.
    """
    _checked(spec, target, options)


def _checked(spec: str, target: str, options: ModelOptions) -> tuple[VLLMOptions, ModelSource]:
    """The backend's options and model source, after the checks :func:`check` and :func:`load` share."""
    parsed = VLLMOptions.from_args(options.model_args(spec, KNOWN_ARGS))
    require_extra("vllm", "vllm", ("vllm",))
    return parsed, resolve_source(spec, target)


def load(spec: str, target: str, options: ModelOptions) -> VLLMBackend:
    """Load ``vllm:TARGET``: check the options, import vllm, start the engine.

    Args:
        spec: the full model spec (``vllm:TARGET``).
        target: a local model folder or a hub repo id.
        options: run options; only ``args`` is read (``--model-arg``, see the module docstring).

    Returns:
        A ready VLLMBackend.

    Raises:
        VqauditError: a bad ``--model-arg``; the ``[vllm]`` extra missing (one line naming
            ``pip install 'vqaudit[vllm]'``); a missing or non-model folder; an engine that fails to start
            (unsupported architecture, no GPU, out of memory).
    """
    vllm_options, source = _checked(spec, target, options)
    backend = VLLMBackend(spec, source, vllm_options)
    thinking = options.generation(GenerationParams()).enable_thinking
    if thinking is not None and not backend.has_thinking_switch:
        raise VqauditError(no_thinking_switch(spec, thinking))
    return backend


def ray_resources(spec: str, options: ModelOptions) -> dict[str, float]:
    """The Ray resources of one vLLM replica (``run --executor ray``): GPUs and one CPU.

    The GPUs are ``tensor_parallel_size`` times ``pipeline_parallel_size`` (both default 1).

    Raises:
        VqauditError: a bad ``--model-arg``.
    """
    engine = VLLMOptions.from_args(options.model_args(spec, KNOWN_ARGS)).engine
    gpus = int(engine.get("tensor_parallel_size", 1)) * int(engine.get("pipeline_parallel_size", 1))
    return {"num_cpus": 1.0, "num_gpus": float(gpus)}


def conversation(request: Request) -> list[dict[str, Any]]:
    """Return the OpenAI-style conversation ``LLM.chat`` gets for one request.

    Returns:
        ``[{"role": "user", "content": [image_url part (if any), text part]}]``; the image is a base64
        ``data:`` URL of the request's bytes and MIME type.
    """
    content: list[dict[str, Any]] = []
    if request.image is not None:
        data = base64.b64encode(request.image).decode("ascii")
        content.append({"type": "image_url", "image_url": {"url": f"data:{request.image_mime};base64,{data}"}})
    content.append({"type": "text", "text": request.prompt})
    return [{"role": "user", "content": content}]


class VLLMBackend:
    """A vLLM engine in this process behind the Backend protocol."""

    def __init__(self, spec: str, source: ModelSource, options: VLLMOptions) -> None:
        """Start the engine (loads the weights onto the GPUs).

        Raises:
            VqauditError: the engine fails to start (see :func:`load`).
        """
        from vllm import LLM, SamplingParams

        self._spec = spec
        self.options = options
        self._sampling_params = SamplingParams
        try:
            self.llm = LLM(model=source.load_from, **options.engine)
        except Exception as exc:  # vLLM raises ValueError, RuntimeError, OOM, pydantic errors, ...
            raise load_error(spec, source, exc) from None
        self.has_thinking_switch = _thinking_switch(self.llm, source, options)
        extras: dict[str, str] = {k: str(options.engine[k]) for k in ("dtype", "quantization") if k in options.engine}
        try:
            self.identity = source_identity(spec, source, options.engine.get("revision"), extras)
        except OSError as exc:
            raise load_error(spec, source, exc) from None
        self._batcher: Batcher[Request] = Batcher(
            lambda batch: isolate_failures(self._chat, batch),
            batch_size=options.batch_size,
            group_key=_group_key,
            name="vqaudit-vllm",
        )

    @property
    def spec(self) -> str:
        """The model spec string (``vllm:TARGET``)."""
        return self._spec

    @property
    def batch_sizes(self) -> list[int]:
        """Size of every ``LLM.chat`` batch so far, in order (for benchmarks and tests)."""
        return self._batcher.batch_sizes

    async def complete(self, request: Request) -> str:
        """Generate the reply to one request (batched with other concurrent calls).

        Raises:
            BackendCallError: vLLM failed for this request (e.g. an image it cannot decode).
        """
        return await self._batcher.submit(request)

    async def aclose(self) -> None:
        """Stop batching (a running ``LLM.chat`` call finishes; the engine is freed with the process)."""
        await self._batcher.aclose()

    def _chat(self, batch: Sequence[Request]) -> list[str | BackendCallError]:
        params = batch[0].params  # one group key: the same temperature, max_tokens, enable_thinking
        sampling = self._sampling_params(temperature=params.temperature, max_tokens=params.max_tokens)
        if self._batcher.closing.is_set():
            raise BackendCallError("the backend was closed", fatal=True)
        extra: dict[str, Any] = {}
        if params.enable_thinking is not None:
            if not self.has_thinking_switch:
                raise BackendCallError(no_thinking_switch(self.spec, params.enable_thinking), fatal=True)
            extra["chat_template_kwargs"] = {"enable_thinking": params.enable_thinking}
        outputs = self.llm.chat([conversation(r) for r in batch], sampling, use_tqdm=False, **extra)
        if len(outputs) != len(batch):
            raise BackendCallError(f"vLLM returned {len(outputs)} outputs for {len(batch)} prompts")
        return [str(out.outputs[0].text) for out in outputs]


def _group_key(request: Request) -> Hashable:
    return (request.params.temperature, request.params.max_tokens, request.params.enable_thinking)


def _thinking_switch(llm: Any, source: ModelSource, options: VLLMOptions) -> bool:
    """Whether the chat template ``LLM.chat`` applies mentions ``enable_thinking`` (False when none can be read).

    vLLM takes a vision-language model's template from its processor (``chat_template.json``/``.jinja``) before
    its tokenizer's, so both are read.
    """
    templates: list[object] = []
    with contextlib.suppress(Exception):  # an engine without a tokenizer (skip_tokenizer_init): no template there
        templates.append(getattr(llm.get_tokenizer(), "chat_template", None))
    try:
        import transformers

        tf: Any = transformers  # not typed for mypy --strict
        kwargs = {k: options.engine[k] for k in ("revision", "trust_remote_code") if k in options.engine}
        templates.append(getattr(tf.AutoProcessor.from_pretrained(source.load_from, **kwargs), "chat_template", None))
    except Exception:  # a text-only model has no processor; its tokenizer's template is the one
        pass
    return template_has_thinking_switch(*templates)
