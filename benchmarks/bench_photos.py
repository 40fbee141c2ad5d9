"""Time the photo suite: `build_photos` per group for each mask kind, and write the docs' contact sheets.

By default it builds from the bundled public-domain photos; pass a COCO instances file and its image folder (for
example the tiny-coco subset in tests/fixtures/photos/coco) to time real COCO photos too.

Usage: python benchmarks/bench_photos.py [--groups 24] [--workers 1] [--seed 0] [--matched]
           [--coco-annotations FILE --coco-images DIR]
           [--sheet docs/img/photos_contact_sheet.png] [--coco-sheet docs/img/photos_contact_sheet_coco.png]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from _timing import timed

from vqaudit.store import load_benchmark
from vqaudit.suites.photos.build import build_photos
from vqaudit.suites.photos.masks import MASK_KINDS
from vqaudit.suites.photos.sheet import contact_sheet


def bench(label: str, groups: int, workers: int, seed: int, mask: str, matched: bool, **inputs: Any) -> Path:
    out = Path(tempfile.mkdtemp()) / f"photos-{label}-{mask}"
    with timed(f"{label:8s} mask={mask:8s} workers={workers}", groups, "group") as took:
        manifest = build_photos(out, groups, seed, workers=workers, mask=mask, matched=matched, **inputs)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) / 1e6
    print(took.line(f"{manifest['n_views']} views; {size:.1f} MB; folder {out}"))
    print(
        f"         candidates {manifest['candidates']}, rejected {manifest['rejected_candidates']}, "
        f"strata {manifest['strata']}"
    )
    return out


def diverse(root: Path, n: int) -> list[str]:
    """Up to ``n`` group ids, taking the photos in turn (first unused group of each photo, then the next, ...)."""
    by_photo: dict[str, list[str]] = {}
    for g in load_benchmark(root, check_images=False).groups:
        by_photo.setdefault(str(g.meta["image_id"]), []).append(g.group_id)
    picked: list[str] = []
    while len(picked) < n and any(by_photo.values()):
        for ids in by_photo.values():
            if ids and len(picked) < n:
                picked.append(ids.pop(0))
    return sorted(picked)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, default=24)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--matched", action="store_true", help="add the appearance-matched control view")
    parser.add_argument("--coco-annotations", type=Path, default=None)
    parser.add_argument("--coco-images", type=Path, default=None)
    parser.add_argument("--sheet", type=Path, default=None, help="contact sheet of the bundled build (fill)")
    parser.add_argument("--coco-sheet", type=Path, default=None, help="contact sheet of the COCO build (inpaint)")
    parser.add_argument("--sheet-groups", type=int, default=6)
    args = parser.parse_args()
    built: dict[tuple[str, str], Path] = {}
    for mask in MASK_KINDS:
        built["bundled", mask] = bench("bundled", args.groups, args.workers, args.seed, mask, args.matched)
        if args.coco_annotations is not None and args.coco_images is not None:
            built["coco", mask] = bench(
                "coco",
                args.groups,
                args.workers,
                args.seed,
                mask,
                args.matched,
                annotations=args.coco_annotations,
                images_dir=args.coco_images,
            )
    if args.sheet is not None:
        root = built["bundled", "fill"]
        contact_sheet(root, args.sheet, diverse(root, args.sheet_groups))
        print(f"contact sheet written to {args.sheet}")
    if args.coco_sheet is not None and ("coco", "inpaint") in built:
        root = built["coco", "inpaint"]
        contact_sheet(root, args.coco_sheet, diverse(root, args.sheet_groups))
        print(f"COCO contact sheet written to {args.coco_sheet}")


if __name__ == "__main__":
    main()
