"""Built-in baselines that read pixels: ``baseline:chart-reader``, a classic OCR chart reader.

The reader sees exactly what a model sees: the prompt text and the image bytes of the request (never the view,
its gold answers or its state). It recovers the question from the answerability prompt
(:func:`vqaudit.prompts.answerability.question_from_prompt`), reads the chart
(:mod:`vqaudit.backends.chart_reader`) and replies under the answerability JSON contract (seed 000,
appendix A): ``{"answerable": ..., "answer": ..., "reason": ...}``. It needs the ``[ocr]`` extra.

Refused with one line (fatal, the run stops): a request whose prompt is not the answerability prompt (another
source's prompt, a judge, a perturbation) or that carries no image. A question that is not a chart lookup, or an
image that does not decode, fails that view only.
"""

from __future__ import annotations

import asyncio
import io
import json
from dataclasses import dataclass, field

import numpy as np

from vqaudit.backends.base import BackendCallError, ModelOptions, Request
from vqaudit.backends.chart_reader import Ocr, answer_text, parse_lookup, read_chart, read_lookup
from vqaudit.errors import VqauditError
from vqaudit.prompts.answerability import ANSWERABILITY_PROMPT_ID, question_from_prompt

TARGETS = ("chart-reader",)
MAX_PIXELS = 4096 * 4096
"""Images with more pixels are refused (a decompression bomb must not take the machine)."""


def load(spec: str, target: str, options: ModelOptions) -> ChartReaderBackend:
    """Build the baseline named by ``baseline:TARGET``.

    Args:
        spec: the whole model spec (recorded with every response).
        target: the part after ``baseline:``; only ``chart-reader`` exists.
        options: generic model options (none apply; a ``--model-arg`` is refused).

    Raises:
        VqauditError: an unknown target, or the ``[ocr]`` extra is not installed (the message names the pip
            command).
    """
    if target not in TARGETS:
        raise VqauditError(f"model spec {spec!r}: unknown baseline {target!r}; known: {', '.join(TARGETS)}")
    from vqaudit.backends.chart_reader.ocr import INSTALL_HINT

    try:
        import onnxruntime  # noqa: F401
        import rapidocr  # noqa: F401
    except ImportError:
        raise VqauditError(f"model spec {spec!r}: the chart reader needs the OCR extra: {INSTALL_HINT}") from None
    options.refuse_unknown_args(spec, ())
    return ChartReaderBackend(spec=spec)


def decode_image(data: bytes) -> np.ndarray:
    """Decode image bytes to an RGB uint8 array of shape (H, W, 3).

    Raises:
        ValueError: the bytes are not an image Pillow can decode, or it has more than ``MAX_PIXELS`` pixels.
    """
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as img:
            if img.width * img.height > MAX_PIXELS:
                raise ValueError(f"image of {img.width}x{img.height} pixels is too large")
            return np.asarray(img.convert("RGB"))
    except (OSError, Image.DecompressionBombError, SyntaxError) as exc:
        raise ValueError(f"image does not decode: {exc}") from None


def chart_reply(ocr: Ocr, pixels: np.ndarray, question: str) -> str:
    """The reader's reply text (answerability JSON) for one chart image and one question."""
    reading = read_lookup(read_chart(pixels, ocr), parse_lookup(question))
    answer = None if reading.value is None else answer_text(reading.value)
    return json.dumps(
        {"answerable": reading.answerable, "answer": answer, "reason": reading.reason}, ensure_ascii=False
    )


@dataclass
class ChartReaderBackend:
    """The OCR chart reader behind the Backend protocol: one chart at a time, in a worker thread."""

    spec: str
    _ocr: Ocr = field(default_factory=Ocr)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def complete(self, request: Request) -> str:
        """Read the request's chart and answer its question.

        Raises:
            BackendCallError: fatal for a non-answerability prompt or a request without an image; non-fatal for
                a question that is not a chart lookup or an image that does not decode.
        """
        question = question_from_prompt(request.prompt)
        if question is None or request.prompt_id != ANSWERABILITY_PROMPT_ID:
            raise BackendCallError(
                f"{self.spec} reads charts under the answerability prompt only ({ANSWERABILITY_PROMPT_ID}); this "
                f"request uses prompt {request.prompt_id!r}",
                fatal=True,
            )
        if request.image is None:
            raise BackendCallError(f"{self.spec} needs the chart image; this request has none", fatal=True)
        if not parse_lookup(question):
            raise BackendCallError(
                f"{self.spec} reads chart lookup questions only ('What is the value of SERIES "
                f"for CATEGORY?'), not {question[:80]!r}"
            )
        try:
            pixels = decode_image(request.image)
        except ValueError as exc:
            raise BackendCallError(f"{self.spec}: {exc}") from None
        async with self._lock:
            return await asyncio.to_thread(chart_reply, self._ocr, pixels, question)

    async def aclose(self) -> None:
        """Nothing to release (the OCR sessions are freed with the object)."""
