"""Time the CLEVR scene suite: renders per second at 480x320 and `build_scenes` for N groups.

Also writes the docs' side-by-side image of original CLEVR renders next to vqaudit's renders of the same scenes
(the 48 originals live outside the package, in the shared data folder; pass it with --real-images).

Usage: python benchmarks/bench_scenes.py [--renders 20] [--groups 100] [--workers 2] [--seed 0] [--check]
                                         [--no-determined]
                                         [--real-images DIR --side-by-side docs/img/scenes_side_by_side.png]
                                         [--example-from BENCH_DIR --example docs/img/scenes_example_group.png]
"""

from __future__ import annotations

import argparse
import re
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
from PIL import Image

from vqaudit.store import load_benchmark
from vqaudit.suites.scenes.build import build_scenes
from vqaudit.suites.scenes.camera import fit_camera
from vqaudit.suites.scenes.check import check_group
from vqaudit.suites.scenes.render import instance_ids, render
from vqaudit.suites.scenes.scene import load_scenes


def bench_render(n: int) -> None:
    scenes = load_scenes("train")[:n]
    cams = [fit_camera(s) for s in scenes]
    t0 = time.perf_counter()
    for s, c in zip(scenes, cams, strict=True):
        render(s, c)
    full = time.perf_counter() - t0
    t0 = time.perf_counter()
    for s, c in zip(scenes, cams, strict=True):
        instance_ids(s, c)
    ids = time.perf_counter() - t0
    objs = sum(len(s.objects) for s in scenes)
    print(f"render 480x320: {n / full:.2f} scenes/s ({full / n * 1000:.0f} ms/scene, {objs / n:.1f} objects/scene); "
          f"instance buffer only: {n / ids:.1f} scenes/s")


def example_strip(root: Path, group_index: int, out: Path) -> None:
    """Write the four views of one group side by side, each captioned with its state and obligation."""
    from PIL import ImageDraw

    bench = load_benchmark(root)
    group = bench.groups[group_index]
    views = {v.state: v for v in bench.views if v.group_id == group.group_id}
    tiles = []
    for state in ("original", "S", "C", "M"):
        v = views[state]
        img = Image.open(root / v.image).convert("RGB")
        ob = v.obligation
        label = f"{state}: " + (f"answer {ob.gold[0]}" if ob.kind == "answer" else "abstain")
        canvas = Image.new("RGB", (img.width, img.height + 22), "white")
        canvas.paste(img, (0, 22))
        ImageDraw.Draw(canvas).text((6, 5), label, fill="black")
        tiles.append(np.asarray(canvas))
    strip = np.concatenate([x for t in tiles for x in (t, np.full((t.shape[0], 6, 3), 255, np.uint8))][:-1], axis=1)
    Image.fromarray(strip).save(out, optimize=True)
    print(f"example group {group.group_id} ({group.question!r}) written to {out}")


def bench_build(groups: int, workers: int, seed: int, check: bool, allow_determined: bool) -> None:
    out = Path(tempfile.mkdtemp()) / "scenes"
    t0 = time.perf_counter()
    manifest = build_scenes(out, groups, seed, workers=workers, allow_determined=allow_determined)
    took = time.perf_counter() - t0
    print(f"build_scenes: {groups} groups ({4 * groups} views) in {took:.1f} s with {workers} worker(s): "
          f"{groups / took:.2f} groups/s; folder {out}")
    print(f"  rejected candidate groups by reason: {manifest['rejected_candidates']}")
    print(f"  M labels: {manifest['m_status']}")
    bench = load_benchmark(out)
    templates = Counter(str(g.meta["template"]).split("/")[0] for g in bench.groups)
    print(f"  template families: {dict(sorted(templates.items()))}")
    if check:
        t0 = time.perf_counter()
        by: dict[str, list] = {}
        for v in bench.views:
            by.setdefault(v.group_id, []).append(v)
        problems = [p for g in bench.groups for p in check_group(by[g.group_id], g.meta["camera"],
                                                                  g.meta["directions"], out)]
        print(f"  independent check: {len(problems)} problems in {time.perf_counter() - t0:.1f} s")


def side_by_side(real_dir: Path, out: Path, per_row: int, count: int) -> None:
    scenes = load_scenes("train")
    paths = sorted(real_dir.glob("CLEVR_train_*.png"))[:count]
    tiles = []
    for p in paths:
        index = int(re.findall(r"\d+", p.stem)[-1])
        real = np.asarray(Image.open(p).convert("RGB"))
        ours = render(scenes[index], fit_camera(scenes[index])).rgb
        pair = np.concatenate([real, np.full((320, 4, 3), 255, np.uint8), ours], axis=1)
        tiles.append(np.asarray(Image.fromarray(pair).resize((pair.shape[1] // 2, 160), Image.LANCZOS)))
    blank = np.full_like(tiles[0], 255)
    while len(tiles) % per_row:
        tiles.append(blank)
    gap_v = np.full((tiles[0].shape[0], 12, 3), 255, np.uint8)
    rows = [np.concatenate([t for k in range(per_row) for t in (tiles[r + k], gap_v)][:-1], axis=1)
            for r in range(0, len(tiles), per_row)]
    gap_h = np.full((8, rows[0].shape[1], 3), 255, np.uint8)
    grid = np.concatenate([x for row in rows for x in (row, gap_h)][:-1], axis=0)
    out.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(grid).save(out, optimize=True)
    print(f"side by side ({len(paths)} scenes: original CLEVR left, vqaudit right) written to {out}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--renders", type=int, default=20)
    parser.add_argument("--groups", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--check", action="store_true", help="re-check every group independently afterwards")
    parser.add_argument("--no-determined", action="store_true", help="redraw groups whose M view is determined")
    parser.add_argument("--real-images", type=Path, default=None)
    parser.add_argument("--side-by-side", type=Path, default=None)
    parser.add_argument("--count", type=int, default=12)
    parser.add_argument("--per-row", type=int, default=3)
    parser.add_argument("--example-from", type=Path, default=None, help="a built scenes benchmark folder")
    parser.add_argument("--example-group", type=int, default=0)
    parser.add_argument("--example", type=Path, default=None, help="where to write the example group strip")
    args = parser.parse_args()
    if args.example_from is not None and args.example is not None:
        example_strip(args.example_from, args.example_group, args.example)
    if args.real_images is not None and args.side_by_side is not None:
        side_by_side(args.real_images, args.side_by_side, args.per_row, args.count)
    if args.renders > 0:
        bench_render(args.renders)
    if args.groups > 0:
        bench_build(args.groups, args.workers, args.seed, args.check, not args.no_determined)


if __name__ == "__main__":
    main()
