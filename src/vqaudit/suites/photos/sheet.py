"""A contact sheet of photo groups: one row per group, one column per state, with the question and labels."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageDraw

from vqaudit.errors import VqauditError
from vqaudit.files import atomic_write_bytes
from vqaudit.store import load_benchmark

COLUMNS = ("original", "control", "M", "matched")
THUMB = 300
CAPTION = 34


def contact_sheet(bench_dir: Path, out: Path, group_ids: Sequence[str] | None = None, *, max_groups: int = 6) -> Path:
    """Write a PNG with a row per group (original, control, M and, when present, matched views).

    Each thumbnail fits a ``THUMB`` x ``THUMB`` pixel cell; the caption above a row gives the group id, the
    question, the gold answer and the residual-cue reasons; each cell says the state and its obligation.

    Args:
        bench_dir: a photo benchmark folder (:func:`vqaudit.suites.photos.build.build_photos`).
        out: PNG path to write.
        group_ids: groups to show, in order (default: the first ``max_groups``).
        max_groups: how many groups when ``group_ids`` is None.

    Returns:
        ``out``.

    Raises:
        VqauditError: an unreadable benchmark or an unknown group id.
    """
    bench = load_benchmark(bench_dir, check_images=False)
    groups = {g.group_id: g for g in bench.groups}
    ids = list(group_ids) if group_ids is not None else [g.group_id for g in bench.groups[:max_groups]]
    unknown = [i for i in ids if i not in groups]
    if unknown:
        raise VqauditError(f"{bench_dir}: unknown group {unknown[0]!r}")
    views = {(v.group_id, v.state): v for v in bench.views}
    cols = [c for c in COLUMNS if any((i, c) in views for i in ids)]
    thumbs: list[dict[str, Image.Image]] = []
    for gid in ids:
        row = {}
        for state in cols:
            view = views.get((gid, state))
            if view is not None:
                with Image.open(bench.image_path(view)) as im:
                    thumb = im.convert("RGB")
                thumb.thumbnail((THUMB, THUMB))
                row[state] = thumb
        thumbs.append(row)
    heights = [CAPTION + max(t.height for t in row.values()) + 12 for row in thumbs]
    sheet = Image.new("RGB", (len(cols) * (THUMB + 8) + 8, sum(heights) + 8), (255, 255, 255))
    draw = ImageDraw.Draw(sheet)
    top = 8
    for gid, row, height in zip(ids, thumbs, heights, strict=True):
        g = groups[gid]
        cues = ", ".join(g.meta.get("residual_cue_reasons", [])) or "none"
        draw.text((8, top), f"{gid}  {g.question}", fill=(0, 0, 0))
        draw.text((8, top + 14), f"answer: {g.meta.get('answer')}   residual cues: {cues}", fill=(90, 90, 90))
        for c, state in enumerate(cols):
            if state not in row:
                continue
            thumb, view = row[state], views[(gid, state)]
            x, y = 8 + c * (THUMB + 8), top + CAPTION
            sheet.paste(thumb, (x, y))
            label = f"{state}: " + ("abstain" if view.obligation.kind == "abstain" else view.obligation.gold[0])
            draw.rectangle((x, y + thumb.height - 14, x + 7 * len(label) + 4, y + thumb.height), fill=(0, 0, 0))
            draw.text((x + 2, y + thumb.height - 13), label, fill=(255, 255, 255))
        top += height
    buf = io.BytesIO()
    sheet.save(buf, format="PNG")
    atomic_write_bytes(out, buf.getvalue())
    return out
