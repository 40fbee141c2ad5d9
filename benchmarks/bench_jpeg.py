"""What VLMEvalKit's API models do to a chart: every image re-encoded as JPEG before it is sent.

VLMEvalKit's OpenAI-compatible wrappers (``vlmeval/api/gpt.py`` ``OpenAIWrapper``, ``vlmeval/api/lmdeploy.py``
``LMDeployAPI``, the one ``run.py --base-url`` builds) send every image through
``vlmeval/smp/vlm.py`` ``encode_image_to_base64(img, target_size=-1, fmt='JPEG')``: converted to RGB, then
``img.save(buffer, format='JPEG')`` with Pillow's defaults (quality 75, 4:2:0 chroma subsampling) and sent as
``data:image/jpeg;base64,...`` (checked at VLMEvalKit commit e8e78f05). This script does the same to the images
of a chart benchmark (``vqaudit build charts --groups N``) and reports, per view: how many pixels change, by how
much, and whether the OCR chart reader (``baseline:chart-reader``, which reads marks by their pixels) gives
another reply on the JPEG than on the PNG vqaudit exported.

Run from the repository root: ``.venv/bin/python benchmarks/bench_jpeg.py [--groups 10]`` (needs the ``ocr``
extra). No timing target: the figures are counts.
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
from pathlib import Path

import numpy as np
from _timing import timed
from PIL import Image

from vqaudit.backends.baseline import chart_reply, decode_image
from vqaudit.backends.chart_reader import Ocr
from vqaudit.cli.build import build_source
from vqaudit.prompts.answerability import question_from_prompt
from vqaudit.store import load_benchmark
from vqaudit.suites.registry import prompt_for


def vlmevalkit_jpeg(png: bytes) -> bytes:
    """The bytes VLMEvalKit sends for an image file: RGB, Pillow's default JPEG (``encode_image_to_base64``)."""
    img = Image.open(io.BytesIO(png))
    if img.mode in ("RGBA", "P", "LA"):
        img = img.convert("RGB")
    out = io.BytesIO()
    img.save(out, format="JPEG")
    return out.getvalue()


def main() -> int:
    """Build the benchmark, re-encode each image, read both with the chart reader; print the counts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=10)
    groups = parser.parse_args().groups
    with tempfile.TemporaryDirectory() as tmp:
        bench_dir = Path(tmp) / "bench"
        build_source("charts", bench_dir, {"groups": groups, "seed": 0})
        bench = load_benchmark(bench_dir)
        ocr = Ocr()
        changed_pixels: list[float] = []
        max_diff = 0
        mean_diffs: list[float] = []
        replies_changed = 0
        with timed("read every view as PNG and as VLMEvalKit's JPEG", count=len(bench.views), unit="view") as took:
            for view in bench.views:
                png = bench.image_path(view).read_bytes()
                original, jpeg = decode_image(png), decode_image(vlmevalkit_jpeg(png))
                diff = np.abs(original.astype(np.int16) - jpeg.astype(np.int16))
                changed_pixels.append(float(np.mean(diff.max(axis=2) > 0)))
                max_diff = max(max_diff, int(diff.max()))
                mean_diffs.append(float(diff.mean()))
                question = question_from_prompt(prompt_for(view)[1]) or ""
                replies_changed += chart_reply(ocr, original, question) != chart_reply(ocr, jpeg, question)
        print(took.line())
    n = len(changed_pixels)
    print(f"{n} views of {groups} chart groups, seed 0")
    print(
        f"pixels changed by the JPEG round trip: median {100 * float(np.median(changed_pixels)):.1f}% of each "
        f"image (min {100 * min(changed_pixels):.1f}%, max {100 * max(changed_pixels):.1f}%); largest change of "
        f"one channel {max_diff}/255; mean change {float(np.mean(mean_diffs)):.2f}/255"
    )
    print(f"chart-reader replies that differ between the PNG and the JPEG: {replies_changed} of {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
