"""Chart images as files: the PNG writer, the decoder and the pixel hash.

The **pixel hash** is the SHA-256 of the array's shape and bytes, so two PNG files with different bytes but the
same decoded pixels hash equally (certificates and witnesses compare pixels, never file bytes).
"""

from __future__ import annotations

import hashlib
import io
import struct
import zlib

import numpy as np
from PIL import Image

PNG_LEVEL = 1
""":func:`png_bytes`'s zlib level, chosen by measurement (``benchmarks/bench_build.py --png-levels``)."""


def pixel_sha256(pixels: np.ndarray) -> str:
    """SHA-256 of decoded pixels (shape and RGB bytes), independent of the PNG encoding."""
    digest = hashlib.sha256(repr(pixels.shape).encode())
    digest.update(np.ascontiguousarray(pixels, dtype=np.uint8).tobytes())
    return digest.hexdigest()


def png_bytes(pixels: np.ndarray, level: int = PNG_LEVEL) -> bytes:
    """Encode RGB pixels as a PNG with no metadata: byte-identical for identical pixels and zlib version.

    The file is the PNG standard's minimum (signature, ``IHDR`` 8-bit truecolour, one ``IDAT``, ``IEND``; ISO/IEC
    15948 §5, §11.2) with filter type 0 on every row and the stream compressed by zlib at ``level``. Pillow's
    encoder tries all five filters per row, which took 6.7 ms per chart at its level 6 (22 KiB); unfiltered at
    level 1 takes under 2 ms and is about as small (24 KiB), because a chart is mostly runs of flat colour
    (``benchmarks/bench_build.py --png-levels`` measures every level). The bytes depend on the zlib version, which
    the manifest records.

    Args:
        pixels: RGB ``uint8`` array of shape (height, width, 3), height and width >= 1.
        level: zlib compression level, 0 (stored) to 9.

    Raises:
        ValueError: pixels of another shape or dtype, or a level outside 0..9.
    """
    if pixels.dtype != np.uint8 or pixels.ndim != 3 or pixels.shape[2] != 3 or 0 in pixels.shape:
        raise ValueError(f"png_bytes needs RGB uint8 pixels of shape (h, w, 3), got {pixels.dtype} {pixels.shape}")
    if not 0 <= level <= 9:
        raise ValueError(f"zlib level {level} outside 0..9")
    height, width, _ = pixels.shape
    rows = np.zeros((height, 1 + 3 * width), dtype=np.uint8)  # a leading 0 per row: filter type None
    rows[:, 1:] = pixels.reshape(height, 3 * width)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB, deflate, filter method 0, no interlace
    return b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            _chunk(b"IHDR", header),
            _chunk(b"IDAT", zlib.compress(rows.tobytes(), level)),
            _chunk(b"IEND", b""),
        ]
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    """One PNG chunk: length, type, data, CRC-32 of type and data (ISO/IEC 15948 §5.3)."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def decode_png(data: bytes) -> np.ndarray:
    """Decode PNG bytes to an RGB uint8 array."""
    with Image.open(io.BytesIO(data)) as img:
        return np.asarray(img.convert("RGB"))
