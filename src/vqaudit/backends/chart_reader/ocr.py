"""Text on a chart: RapidOCR (PP-OCR detection and recognition ONNX models shipped in the ``rapidocr`` wheel).

The ``[ocr]`` extra installs ``rapidocr`` and ``onnxruntime``; both are imported only when an engine is made.
The models load from the wheel's own ``models/`` folder, so nothing is downloaded (the configuration keeps the
model family whose files the wheel ships). Detection runs at the image's own scale on the margins around the plot
frame only (where a chart's text is; about half the pixels); recognition runs one box at a time on crops of
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

_PAD = 24
INSTALL_HINT = "pip install 'vqaudit[ocr]'"
_PARAMS: dict[str, Any] = {
    "Global.log_level": "error",
    "Global.use_cls": False,
    "Det.limit_type": "max",
    "Det.limit_side_len": 1024,
    "Global.min_side_len": 10,
    "Rec.rec_img_shape": [3, 48, 48],
    "Rec.rec_batch_num": 1,
    "EngineConfig.onnxruntime.intra_op_num_threads": 1,
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

    def detect(
        self,
        px: Pixels,
        regions: list[tuple[int, int, int, int]] | None = None,
    ) -> list[tuple[tuple[float, float], ...]]:
        """Text boxes (quadrilaterals, image coordinates) in an RGB image of shape (H, W, 3).

        Args:
            px: the image.
            regions: ``(x0, y0, x1, y1)`` rectangles to search (default: the whole image); boxes are returned in
                the whole image's coordinates.
        """
        h, w = px.shape[:2]
        out: list[tuple[tuple[float, float], ...]] = []
        for x0, y0, x1, y1 in regions or [(0, 0, w, h)]:
            x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
            if x1 - x0 < 8 or y1 - y0 < 8:
                continue
            # a white border: the detector misses text that touches a narrow crop's edge
            crop = np.pad(px[y0:y1, x0:x1, ::-1], ((_PAD, _PAD), (_PAD, _PAD), (0, 0)), constant_values=255)
            with self._lock:
                result = self._get()(np.ascontiguousarray(crop), use_det=True, use_cls=False, use_rec=False)
            boxes = getattr(result, "boxes", None)
            if boxes is not None:
                for box in boxes:
                    out.append(
                        tuple(
                            (min(max(float(x) + x0 - _PAD, 0.0), w - 1.0), min(max(float(y) + y0 - _PAD, 0.0), h - 1.0))
                            for x, y in box
                        )
                    )
        return out

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
