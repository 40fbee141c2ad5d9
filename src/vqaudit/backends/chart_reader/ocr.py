"""Text on a chart: RapidOCR (PP-OCR detection and recognition ONNX models shipped in the ``rapidocr`` wheel).

The ``[ocr]`` extra installs ``rapidocr`` and ``onnxruntime``; both are imported only when an engine is made.
The models load from the wheel's own ``models/`` folder, so nothing is downloaded (the configuration keeps the
model family whose files the wheel ships). Detection runs on the image scaled to at most 320 px a side (chart
text stays detectable at half size, at a quarter of the cost); recognition runs one box at a time on crops of
the full-size image (batching pads every crop to the widest one). The direction classifier is off: chart text is
upright or rotated by less than 90 degrees, which recognition on the rectified box crop handles.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from vqaudit.backends.chart_reader.layout import Pixels
from vqaudit.errors import VqauditError

INSTALL_HINT = "pip install 'vqaudit[ocr]'"
_PARAMS: dict[str, Any] = {
    "Global.log_level": "error",
    "Global.use_cls": False,
    "Det.limit_type": "max",
    "Det.limit_side_len": 320,
    "Global.min_side_len": 10,
    "Rec.rec_img_shape": [3, 48, 48],
    "Rec.rec_batch_num": 1,
}


@dataclass(frozen=True)
class TextBox:
    """One recognized text: its quadrilateral (4 corners, x/y pixels, clockwise from the text's top-left).

    Attributes:
        quad: ``((x, y), ...)`` four corners in image pixels.
        text: the recognized string (may be empty).
        score: recognition confidence in [0, 1].
    """

    quad: tuple[tuple[float, float], ...]
    text: str
    score: float

    @property
    def x0(self) -> float:
        """Leftmost x."""
        return min(p[0] for p in self.quad)

    @property
    def x1(self) -> float:
        """Rightmost x."""
        return max(p[0] for p in self.quad)

    @property
    def y0(self) -> float:
        """Topmost y."""
        return min(p[1] for p in self.quad)

    @property
    def y1(self) -> float:
        """Bottom y."""
        return max(p[1] for p in self.quad)

    @property
    def cx(self) -> float:
        """Centre x."""
        return sum(p[0] for p in self.quad) / 4

    @property
    def cy(self) -> float:
        """Centre y."""
        return sum(p[1] for p in self.quad) / 4

    @property
    def slanted(self) -> bool:
        """True when the text's baseline is rotated by more than 10 degrees (rotated tick labels)."""
        (ax, ay), (bx, by) = self.quad[0], self.quad[1]
        return abs(by - ay) > 0.18 * max(abs(bx - ax), 1.0)


class Ocr:
    """A lazily created RapidOCR engine; thread-safe (one call at a time).

    Raises:
        VqauditError: on first use when the ``[ocr]`` extra is not installed (names the pip command).
    """

    def __init__(self) -> None:
        self._engine: Any = None
        self._lock = threading.Lock()

    def _get(self) -> Any:
        if self._engine is None:
            try:
                import onnxruntime  # noqa: F401  (rapidocr needs it at inference time; fail early with the hint)
                from rapidocr import RapidOCR
            except ImportError:
                raise VqauditError(f"the chart reader needs the OCR extra: {INSTALL_HINT}") from None
            logging.getLogger("RapidOCR").setLevel(logging.ERROR)
            self._engine = RapidOCR(params=dict(_PARAMS))
        return self._engine

    def detect(self, px: Pixels) -> list[tuple[tuple[float, float], ...]]:
        """Text boxes (quadrilaterals) found in an RGB image of shape (H, W, 3)."""
        with self._lock:
            engine = self._get()
            out = engine(np.ascontiguousarray(px[:, :, ::-1]), use_det=True, use_cls=False, use_rec=False)
        boxes = getattr(out, "boxes", None)
        if boxes is None:
            return []
        return [tuple((float(x), float(y)) for x, y in box) for box in boxes]

    def recognize(self, px: Pixels, quads: list[tuple[tuple[float, float], ...]]) -> list[TextBox]:
        """Recognize the text inside each quadrilateral (rectified crop, one batch)."""
        if not quads:
            return []
        with self._lock:
            engine = self._get()
            bgr = np.ascontiguousarray(px[:, :, ::-1])
            crops = engine.crop_text_regions(bgr, np.asarray(quads, dtype=np.float32))
            rec = engine.recognize_txt(crops)
        texts = list(rec.txts or ())
        scores = list(rec.scores or ())
        return [TextBox(q, str(t).strip(), float(s)) for q, t, s in zip(quads, texts, scores, strict=False)]
