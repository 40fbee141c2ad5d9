"""The chart PNG writer and the witness pixel count (the PNG encoding chosen by measurement).

``png_bytes`` writes the PNG standard's minimum by hand (ISO/IEC 15948: signature §5.2, chunk layout and CRC
§5.3, IHDR §11.2.2, filter type 0 §9, one zlib stream §10); these tests parse the file against those sections
and decode it with Pillow, the reader every consumer of a benchmark uses.
"""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from matplotlib.transforms import Bbox
from PIL import Image

from vqaudit.suites.charts.png import decode_png, png_bytes
from vqaudit.suites.charts.render import _apart, render
from vqaudit.suites.charts.tables import load_table
from vqaudit.suites.charts.witness import differing_pixels
from vqaudit.suites.charts.world import sample_world


def _chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"  # §5.2
    out, i = [], 8
    while i < len(data):
        (length,) = struct.unpack(">I", data[i : i + 4])
        kind, body = data[i + 4 : i + 8], data[i + 8 : i + 8 + length]
        (crc,) = struct.unpack(">I", data[i + 8 + length : i + 12 + length])
        assert crc == zlib.crc32(kind + body), kind  # §5.3: CRC over type and data
        out.append((kind, body))
        i += 12 + length
    return out


def _chart() -> np.ndarray:
    world = sample_world(load_table("nile"), "vbar", 1, 5, np.random.default_rng(3))
    assert world is not None
    return render(world)


def test_the_file_is_a_minimal_unfiltered_truecolour_png_holding_exactly_the_pixels() -> None:
    pixels = _chart()
    chunks = _chunks(png_bytes(pixels))
    assert [k for k, _ in chunks] == [b"IHDR", b"IDAT", b"IEND"] and chunks[2][1] == b""
    # §11.2.2: width 640, height 480, bit depth 8, colour type 2 (RGB), deflate, filter method 0, no interlace
    assert struct.unpack(">IIBBBBB", chunks[0][1]) == (640, 480, 8, 2, 0, 0, 0)
    rows = np.frombuffer(zlib.decompress(chunks[1][1]), dtype=np.uint8).reshape(480, 1 + 640 * 3)
    assert not rows[:, 0].any()  # filter type 0 (None) on every row
    assert np.array_equal(rows[:, 1:].reshape(480, 640, 3), pixels)


def test_pillow_decodes_the_exact_pixels_of_a_chart_and_of_noise() -> None:
    noise = np.random.default_rng(0).integers(0, 256, size=(3, 5, 3), dtype=np.uint8)  # odd shape, no runs
    for pixels in (_chart(), noise):
        data = png_bytes(pixels)
        with Image.open(io.BytesIO(data)) as img:
            assert img.mode == "RGB" and img.size == (pixels.shape[1], pixels.shape[0])
        assert np.array_equal(decode_png(data), pixels)


def test_same_pixels_give_the_same_bytes_and_the_level_changes_only_the_bytes() -> None:
    pixels = _chart()
    assert png_bytes(pixels) == png_bytes(pixels.copy())
    stored, best = png_bytes(pixels, level=0), png_bytes(pixels, level=9)
    assert len(stored) > 640 * 480 * 3 > 20 * len(best)  # level 0 stores the rows, 9 compresses the flat colour
    assert np.array_equal(decode_png(stored), pixels) and np.array_equal(decode_png(best), pixels)


@pytest.mark.parametrize(
    ("pixels", "level"),
    [
        (np.zeros((4, 4, 3), dtype=np.float64), 1),  # not uint8
        (np.zeros((4, 4, 4), dtype=np.uint8), 1),  # RGBA
        (np.zeros((0, 4, 3), dtype=np.uint8), 1),  # empty
        (np.zeros((4, 4, 3), dtype=np.uint8), 10),  # no such zlib level
    ],
)
def test_bad_pixels_or_level_are_refused(pixels: np.ndarray, level: int) -> None:
    with pytest.raises(ValueError):
        png_bytes(pixels, level)


def test_differing_pixels_counts_pixels_not_channels() -> None:
    a = np.zeros((2, 3, 3), dtype=np.uint8)
    b = a.copy()
    b[0, 1, 2] = 1  # one channel of one pixel
    b[1, 2] = (9, 9, 9)  # all channels of another
    assert differing_pixels(a, b) == 2 and differing_pixels(a, a) == 0


def test_title_and_legend_are_drawn_before_the_data_only_when_apart_from_the_axes_box() -> None:
    axes = Bbox.from_extents(70, 115, 614, 403)
    assert _apart(Bbox.from_extents(200, 420, 440, 440), axes, 3.0)  # a legend 17 px above the axes
    assert not _apart(Bbox.from_extents(200, 405, 440, 440), axes, 3.0)  # 2 px above: within the margin
    assert not _apart(Bbox.from_extents(200, 380, 440, 410), axes, 3.0)  # overlapping
