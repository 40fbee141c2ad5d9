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
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from _timing import judge, ratio, timed
from PIL import Image

from vqaudit.store import load_benchmark
from vqaudit.suites.scenes.build import build_scenes
from vqaudit.suites.scenes.camera import fit_camera
from vqaudit.suites.scenes.check import check_group
from vqaudit.suites.scenes.geometry import intersect
from vqaudit.suites.scenes.render import instance_ids, render
from vqaudit.suites.scenes.scene import load_scenes

TARGET_FPS = 10.0  # target: at least 8 frames/s at 480x320 on one core, judged on CPU time; 10 for a margin


def _brute_cast(scene: Any, camera: Any) -> np.ndarray:
    """Baseline: a plain numpy ray cast (every object against every pixel ray, nearest hit; no shading)."""
    dirs = camera.pixel_rays().reshape(-1, 3)
    origins = np.broadcast_to(camera.c, dirs.shape)
    best = np.full(len(dirs), np.inf)
    ids = np.full(len(dirs), -1)
    for k, obj in enumerate(scene.objects):
        t, _ = intersect(obj, origins, dirs)
        closer = t < best
        best[closer], ids[closer] = t[closer], k
    return ids


def bench_render(n: int) -> bool:
    """Frames per CPU second of ``render`` on the first ``n`` train scenes; True when the target is met.

    Every scene has its own camera, so each frame also computes its camera's pixel rays (a build renders many
    views per camera and keeps them). Baseline in the same run: a plain numpy ray cast of the first 5 scenes.
    """
    scenes = load_scenes("train")[:n]
    cams = [fit_camera(s) for s in scenes]
    render(scenes[0], cams[0])  # warm-up (imports, per-camera ray cache of another camera)
    objs = sum(len(s.objects) for s in scenes) / n
    with timed("render 480x320 (RGB + instance buffer)", n, "frame", descendants=False) as full:
        for s, c in zip(scenes, cams, strict=True):
            render(s, c)
    print(full.line(f"{n / full.cpu:.2f} frames per CPU second, {objs:.1f} objects/scene"))
    with timed("instance buffer only", n, "frame", descendants=False) as ids:
        for s, c in zip(scenes, cams, strict=True):
            instance_ids(s, c)
    print(ids.line())
    few = min(n, 5)
    with timed(
        "baseline: plain numpy ray cast (every object x every ray, no shading)", few, "frame", descendants=False
    ) as brute:
        for s, c in zip(scenes[:few], cams[:few], strict=True):
            _brute_cast(s, c)
    print(brute.line())
    print(ratio(full, brute))
    return judge("frames per CPU second (one core)", n / full.cpu, TARGET_FPS, higher=True)


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
    with timed(f"build_scenes with {workers} worker(s)", groups, "group") as took:
        manifest = build_scenes(out, groups, seed, workers=workers, allow_determined=allow_determined)
    print(took.line(f"{groups / took.cpu:.2f} groups per CPU second; {4 * groups} views; folder {out}"))
    print(f"  views_sha256 {manifest.get('views_sha256')}")
    print(f"  rejected candidate groups by reason: {manifest['rejected_candidates']}")
    print(f"  M labels: {manifest['m_status']}")
    bench = load_benchmark(out)
    templates = Counter(str(g.meta["template"]).split("/")[0] for g in bench.groups)
    print(f"  template families: {dict(sorted(templates.items()))}")
    if check:
        with timed("independent check (check_group)", groups, "group", descendants=False) as checking:
            by: dict[str, list] = {}
            for v in bench.views:
                by.setdefault(v.group_id, []).append(v)
            problems = [
                p
                for g in bench.groups
                for p in check_group(by[g.group_id], g.meta["camera"], g.meta["directions"], out)
            ]
        print(checking.line(f"{len(problems)} problems"))


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
    rows = [
        np.concatenate([t for k in range(per_row) for t in (tiles[r + k], gap_v)][:-1], axis=1)
        for r in range(0, len(tiles), per_row)
    ]
    gap_h = np.full((8, rows[0].shape[1], 3), 255, np.uint8)
    grid = np.concatenate([x for row in rows for x in (row, gap_h)][:-1], axis=0)
    out.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(grid).save(out, optimize=True)
    print(f"side by side ({len(paths)} scenes: original CLEVR left, vqaudit right) written to {out}")


def main() -> int:
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
    ok = True
    if args.renders > 0:
        ok = bench_render(args.renders)
    if args.groups > 0:
        bench_build(args.groups, args.workers, args.seed, args.check, not args.no_determined)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
