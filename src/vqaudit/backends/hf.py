"""``hf:MODEL_OR_PATH``: a vision-language model run in this process with Hugging Face transformers.

The model is loaded with ``AutoProcessor`` and ``AutoModelForImageTextToText`` from a local folder or a hub repo.
Each request becomes one user turn of the model's own chat template (one image, then the prompt; the prompt
alone for a text-only request), and replies are generated greedily (temperature 0; ``do_sample`` only for a
positive temperature) with ``max_new_tokens`` = the request's ``max_tokens`` (512 in the run stage). Concurrent
``complete`` calls are batched (:mod:`vqaudit.backends.batching`) with left padding, so batched and unbatched
replies are the same up to floating-point reduction order (identical on the CPU test model).

``--model-arg`` keys (all optional):

- ``device``: ``auto`` (CUDA if available, else MPS, else CPU; the default), ``cpu``, ``cuda``, ``cuda:N``, ``mps``;
- ``dtype``: ``auto`` (the checkpoint's dtype on an accelerator, float32 on CPU; the default), ``float32``,
  ``float16``, ``bfloat16``;
- ``batch_size``: prompts per ``generate`` call, 1 to 1024 (default 8; batches only fill when ``--concurrency``
  is at least as large);
- ``revision``: hub branch, tag or commit (default ``main``); ignored for a local folder;
- ``trust_remote_code``: run the repo's own modeling code (default false; only for repos you trust);
- ``attn_implementation``: ``eager``, ``sdpa`` or ``flash_attention_2`` (default: transformers' choice).

Generation keys (the ``generation`` column of :data:`vqaudit.backends.registry.BACKENDS`, taken by
``load_backend`` into every request's parameters, so part of each reply's cache key): ``max_new_tokens=N`` or
``max_tokens=N`` (the new-token budget) and ``enable_thinking=true|false`` (passed to the chat template).

The cache identity (``identity``) is the spec, the local folder's fingerprint or the hub commit, the resolved
dtype (see :mod:`vqaudit.backends.model_files`); device and batch size are not
part of it. The HTTP options (``timeout_s``, ``max_retries``, ``api_key_env``) do not apply: a generation runs
to its end (or to ``aclose``). Requires the ``[hf]`` extra.
"""

from __future__ import annotations

import io
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
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

KNOWN_ARGS = ("device", "dtype", "batch_size", "revision", "trust_remote_code", "attn_implementation")
DTYPES = ("auto", "float32", "float16", "bfloat16")
ATTENTION = ("eager", "sdpa", "flash_attention_2")
DEFAULT_BATCH_SIZE = 8


@dataclass(frozen=True)
class HFOptions:
    """The ``--model-arg`` settings of the hf backend (see the module docstring for each key)."""

    device: str = "auto"
    dtype: str = "auto"
    batch_size: int = DEFAULT_BATCH_SIZE
    revision: str | None = None
    trust_remote_code: bool = False
    attn_implementation: str | None = None

    @classmethod
    def from_args(cls, spec: str, args: ModelArgs) -> HFOptions:
        """Read the options from ``--model-arg`` pairs.

        Raises:
            VqauditError: a bad value or an unknown key (naming it and the known keys).
        """
        device = args.take_str("device", "auto") or "auto"
        if device not in ("auto", "cpu", "cuda", "mps") and not (device.startswith("cuda:") and device[5:].isdecimal()):
            raise VqauditError(
                f"model spec {spec!r}: --model-arg device={device!r}: expected auto, cpu, cuda, cuda:N or mps"
            )
        options = cls(
            device=device,
            dtype=args.take_str("dtype", "auto", choices=DTYPES) or "auto",
            batch_size=args.take_int("batch_size", DEFAULT_BATCH_SIZE, maximum=1024) or DEFAULT_BATCH_SIZE,
            revision=args.take_str("revision"),
            trust_remote_code=args.take_bool("trust_remote_code", False),
            attn_implementation=args.take_str("attn_implementation", choices=ATTENTION),
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


def _checked(spec: str, target: str, options: ModelOptions) -> tuple[HFOptions, ModelSource]:
    """The backend's options and model source, after the checks :func:`check` and :func:`load` share."""
    parsed = HFOptions.from_args(spec, options.model_args(spec, KNOWN_ARGS))
    require_extra("hf", "hf", ("torch", "transformers", "PIL"))
    return parsed, resolve_source(spec, target)


def load(spec: str, target: str, options: ModelOptions) -> HFBackend:
    """Load ``hf:TARGET``: check the options, import the extra, load processor and model.

    Args:
        spec: the full model spec (``hf:TARGET``).
        target: a local model folder or a hub repo id.
        options: run options; only ``args`` is read (``--model-arg``, see the module docstring).

    Returns:
        A ready HFBackend.

    Raises:
        VqauditError: a bad ``--model-arg``; the ``[hf]`` extra missing (one line naming
            ``pip install 'vqaudit[hf]'``); a missing or non-model folder; a model transformers cannot load as
            an image-text-to-text model (wrong architecture, missing files, out of memory, no chat template).
    """
    hf_options, source = _checked(spec, target, options)
    backend = HFBackend(spec, source, hf_options)
    thinking = options.generation(GenerationParams()).enable_thinking
    if thinking is not None and not backend.has_thinking_switch:
        raise VqauditError(no_thinking_switch(spec, thinking))
    return backend


def _pick_device(torch: Any, wanted: str) -> str:
    if wanted != "auto":
        return wanted
    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    return "cpu"


def _stop_when(flag: Any) -> Any:
    """A transformers StoppingCriteria that ends generation once ``flag`` (a threading.Event) is set."""
    import torch
    from transformers import StoppingCriteria

    class _Closing(StoppingCriteria):
        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            return torch.full((input_ids.shape[0],), flag.is_set(), dtype=torch.bool, device=input_ids.device)

    return _Closing()


class HFBackend:
    """A transformers image-text-to-text model behind the Backend protocol, with batched generation."""

    def __init__(self, spec: str, source: ModelSource, options: HFOptions) -> None:
        """Load the processor and model (this takes as long as reading the weights).

        Raises:
            VqauditError: the model cannot be loaded (see :func:`load`).
        """
        import torch
        import transformers

        tf: Any = transformers  # transformers is not typed for mypy --strict
        tf.utils.logging.disable_progress_bar()  # the run stage has its own progress bar
        self._spec = spec
        self.options = options
        self._torch = torch
        self.device = _pick_device(torch, options.device)
        if self.device.startswith("cuda") and not torch.cuda.is_available():
            raise VqauditError(
                f"model spec {spec!r}: --model-arg device={options.device} but torch sees no CUDA "
                "device (this torch build may be CPU-only)"
            )
        common: dict[str, Any] = {"trust_remote_code": options.trust_remote_code}
        if source.repo_id is not None and options.revision is not None:
            common["revision"] = options.revision
        dtype: Any = options.dtype
        if dtype == "auto" and self.device == "cpu":
            dtype = "float32"
        model_kwargs: dict[str, Any] = {"dtype": dtype if dtype == "auto" else getattr(torch, dtype)}
        if options.attn_implementation is not None:
            model_kwargs["attn_implementation"] = options.attn_implementation
        try:
            self.processor: Any = tf.AutoProcessor.from_pretrained(source.load_from, **common)
            self.model: Any = tf.AutoModelForImageTextToText.from_pretrained(source.load_from, **common, **model_kwargs)
            self.model.to(self.device)
            self.model.eval()
        except VqauditError:
            raise
        except Exception as exc:  # transformers raises OSError, ValueError, KeyError, RuntimeError, OOM, ...
            raise load_error(spec, source, exc) from None
        self.tokenizer: Any = getattr(self.processor, "tokenizer", None)
        if self.tokenizer is None or not callable(getattr(self.processor, "apply_chat_template", None)):
            raise VqauditError(
                f"model spec {spec!r}: the processor of {source.load_from} has no tokenizer; "
                "it is not a vision-language chat model"
            )
        if not getattr(self.processor, "chat_template", None):
            raise VqauditError(
                f"model spec {spec!r}: {source.load_from} has no chat template (processor "
                "chat_template / chat_template.jinja); vqaudit asks chat models in their own format"
            )
        self.has_thinking_switch = template_has_thinking_switch(
            self.processor.chat_template, getattr(self.tokenizer, "chat_template", None)
        )
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        extras = {"dtype": str(self.model.dtype).removeprefix("torch.")}
        try:
            self.identity = source_identity(spec, source, options.revision, extras)
        except OSError as exc:
            raise load_error(spec, source, exc) from None
        self._batcher: Batcher[Request] = Batcher(
            lambda batch: isolate_failures(self._generate, batch),
            batch_size=options.batch_size,
            group_key=_group_key,
            name="vqaudit-hf",
        )
        self._stop = _stop_when(self._batcher.closing)

    @property
    def spec(self) -> str:
        """The model spec string (``hf:TARGET``)."""
        return self._spec

    @property
    def batch_sizes(self) -> list[int]:
        """Size of every batch generated so far, in order (for benchmarks and tests)."""
        return self._batcher.batch_sizes

    async def complete(self, request: Request) -> str:
        """Generate the reply to one request (batched with other concurrent calls).

        Raises:
            BackendCallError: the image cannot be decoded, or generation failed for this request.
        """
        return await self._batcher.submit(request)

    async def aclose(self) -> None:
        """Stop batching; a batch being generated stops at its next token."""
        await self._batcher.aclose()

    def render(self, request: Request) -> str:
        """Return the chat-template text of one request (the image as the template's image placeholder).

        ``request.params.enable_thinking``, when set, is passed to the template as ``enable_thinking``.

        Raises:
            BackendCallError: (fatal) ``enable_thinking`` set for a template without that switch.
        """
        content: list[dict[str, str]] = [{"type": "image"}] if request.image is not None else []
        content.append({"type": "text", "text": request.prompt})
        switch: dict[str, bool] = {}
        if request.params.enable_thinking is not None:
            if not self.has_thinking_switch:
                raise BackendCallError(no_thinking_switch(self.spec, request.params.enable_thinking), fatal=True)
            switch["enable_thinking"] = request.params.enable_thinking
        text = self.processor.apply_chat_template(
            [{"role": "user", "content": content}], add_generation_prompt=True, tokenize=False, **switch
        )
        return str(text)

    def _generate(self, batch: Sequence[Request]) -> list[str | BackendCallError]:
        """Generate replies for one batch sharing a group key (runs on the batcher's thread)."""
        from PIL import Image

        torch = self._torch
        results: list[str | BackendCallError | None] = [None] * len(batch)
        texts: list[str] = []
        images: list[Any] = []
        index: list[int] = []
        for i, request in enumerate(batch):
            if request.image is not None:
                try:
                    with Image.open(io.BytesIO(request.image)) as raw:
                        images.append(raw.convert("RGB"))
                except (OSError, ValueError, Image.DecompressionBombError) as exc:
                    results[i] = BackendCallError(f"the image cannot be decoded: {type(exc).__name__}: {exc}")
                    continue
            texts.append(self.render(request))
            index.append(i)
        if texts:
            params = batch[0].params
            inputs = self.processor(text=texts, images=images or None, padding=True, return_tensors="pt")
            inputs = inputs.to(self.device)
            if "pixel_values" in inputs:
                inputs["pixel_values"] = inputs["pixel_values"].to(self.model.dtype)
            sampling: dict[str, Any] = (
                {"do_sample": True, "temperature": params.temperature}
                if params.temperature > 0
                else {"do_sample": False}
            )
            with torch.inference_mode():
                out = self.model.generate(
                    **inputs,
                    max_new_tokens=params.max_tokens,
                    num_beams=1,
                    pad_token_id=self.tokenizer.pad_token_id,
                    stopping_criteria=[self._stop],
                    **sampling,
                )
            if self._batcher.closing.is_set():
                raise BackendCallError("the backend was closed during generation", fatal=True)
            replies = self.tokenizer.batch_decode(out[:, inputs["input_ids"].shape[1] :], skip_special_tokens=True)
            for i, reply in zip(index, replies, strict=True):
                results[i] = str(reply)
        return [r if r is not None else BackendCallError("no reply") for r in results]


def _group_key(request: Request) -> Hashable:
    params = request.params
    return (request.image is None, params.temperature, params.max_tokens, params.enable_thinking)
