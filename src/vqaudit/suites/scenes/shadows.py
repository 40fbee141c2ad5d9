"""Soft shadows of the scene's objects: the fraction of a lamp's disc visible from each pixel's point.

A lamp that casts shadows (``Light.radius`` > 0: the key lamp and the sun) is sampled at a fixed pattern of 8
points on a disc facing the origin (``DISC``: the centre and 7 points on a ring; no randomness), so shadow edges are
penumbrae and the output is bit-for-bit repeatable. The disc centre is tested from every point, the other 7 samples
only within ``EDGE_PX`` pixels of a centre-ray shadow edge (elsewhere the centre's answer stands for all 8).
Convex objects never shadow themselves; each object is tested only from the points of its shadow rectangle
(:func:`_shadow_rect`) whose segments to the disc can pass through its bounding sphere (:func:`_near`). The shadow
rays are float64 and meet the objects with ``geometry.hit_distance`` (bit-identical to ``intersect``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from vqaudit.suites.scenes.camera import Camera, Rect
from vqaudit.suites.scenes.geometry import CUBE, bounding_radius, candidates, hit_distance
from vqaudit.suites.scenes.lights import Light
from vqaudit.suites.scenes.scene import Scene, SceneObject

F64 = NDArray[np.float64]
F32 = NDArray[np.float32]
B = NDArray[np.bool_]

EDGE_PX = 8  # half-width of the window in which a centre-ray shadow edge makes a point take all 8 samples
DISC = tuple(
    (float(np.cos(a)) * r, float(np.sin(a)) * r) for r, a in [(0.0, 0.0)] + [(0.8, 2 * np.pi * k / 7) for k in range(7)]
)


def _near(obj: SceneObject, cols: tuple[F64, ...], dist: F64, disc: float) -> B:
    """Points whose segment to some disc sample can pass through the object's bounding sphere.

    ``cols`` holds the points' x, y, z and the unit light directions' x, y, z as six arrays of one shape (2-D
    views of a rectangle are fine); ``dist`` the distances to the disc centre; the mask has the same shape.
    """
    c = obj.xyz
    px, py, pz, lx, ly, lz = cols
    w0, w1, w2 = c[0] - px, c[1] - py, c[2] - pz
    proj = w0 * lx + w1 * ly + w2 * lz
    bound = bounding_radius(obj)
    r = bound + disc * np.maximum(proj, 0.0) / dist
    mask: B = (w0 * w0 + w1 * w1 + w2 * w2 - proj * proj <= r * r) & (proj > -bound)
    return mask


def _shadow_rect(obj: SceneObject, samples: list[F64], camera: Camera) -> Rect | None:
    """Pixel rectangle ``(u0, u1, v0, v1)`` (half-open) containing every visible point the object can shadow.

    The shadow of the object's bounding cube cast from each sample point down to the ground lies in the convex hull
    of the cube's corners and their central projections onto z = 0, grown by 0.01 world units on every axis; the
    image of a convex hull is the convex hull of its projected vertices, so the rectangle bounds those (plus a
    pixel). None when a vertex is at or behind the camera plane or a corner is not below every sample (then every
    point is a candidate).
    """
    c, r = np.asarray(obj.xyz), bounding_radius(obj)
    corners = c + r * CUBE
    corners[:, 2] = np.maximum(corners[:, 2], 0.0)
    top = float(corners[:, 2].max())
    pts = [corners]
    for sample in samples:
        if sample[2] <= top + 1e-6:
            return None
        t = corners[:, 2] / (sample[2] - corners[:, 2])
        pts.append(corners + t[:, None] * (corners - sample))
    hull = (np.concatenate(pts)[:, None, :] + 0.01 * CUBE[None, :, :]).reshape(-1, 3)
    return camera.pixel_rect(hull)


def _grow(mask: B, r: int, axis: int) -> B:
    """``mask`` grown by ``r`` cells along ``axis``: ``out[i]`` = any of ``mask[i - r .. i + r]`` (zeros outside).

    Doubling windows (OR of shifted copies): about log2(2r + 1) boolean passes.
    """
    m = np.moveaxis(mask, axis, 0)
    pad = np.zeros((r,) + m.shape[1:], dtype=bool)
    acc = np.concatenate([pad, m, pad])  # acc[i] = OR of a window of ``width`` cells starting at i
    need, width = 2 * r + 1, 1
    while 2 * width <= need:
        acc = acc[:-width] | acc[width:]
        width *= 2
    if width < need:
        acc = acc[: len(acc) - (need - width)] | acc[need - width :]
    out: B = np.moveaxis(acc, 0, axis)
    return out


def _dilate(mask: B, r: int) -> B:
    """``mask`` (height, width) grown by ``r`` pixels along both axes (a (2r+1)-square window)."""
    return _grow(_grow(mask, r, 0), r, 1)


def _union(rects: list[Rect | None], camera: Camera) -> Rect:
    """The smallest rectangle holding every rectangle (the whole image if one is None)."""
    if any(r is None for r in rects) or not rects:
        return 0, camera.width, 0, camera.height
    some = [r for r in rects if r is not None]
    return min(r[0] for r in some), max(r[1] for r in some), min(r[2] for r in some), max(r[3] for r in some)


def visibility(
    scene: Scene, camera: Camera, lift: tuple[F64, F64, F64], active: B, owner: NDArray[np.int64], light: Light
) -> F32:
    """Fraction (0..1) of the light's disc samples visible from each pixel's point (soft shadows), float32 (N,).

    ``lift`` holds the x, y, z (each (height * width,) float64) of the lifted primary hits, ``active`` the pixels
    that face the light and ``owner`` the object each lies on (-1: ground); convex objects never shadow themselves;
    inactive pixels get 0. Adaptive: the disc centre is tested from every active point; all 8 samples only from
    points within ``EDGE_PX`` pixels (both axes) of both a point whose centre ray is blocked and one whose is not
    (the penumbrae); elsewhere the centre's answer (0 or 1) stands for all samples.

    Per light, the distances and unit directions to the disc centre are computed once on the union of the
    objects' shadow rectangles (2-D views, no gathers); each object then tests the view of its own rectangle.
    """
    pos = np.asarray(light.position)
    axis = pos / np.linalg.norm(pos)
    u = np.cross(axis, [0.0, 0.0, 1.0])
    u /= np.linalg.norm(u)
    w = np.cross(axis, u)
    samples = [pos + light.radius * (a * u + b * w) for a, b in DISC]
    height, width = camera.height, camera.width
    n = width * height
    out: F32 = active.astype(np.float32)
    rects = [_shadow_rect(obj, samples, camera) for obj in scene.objects]
    bu0, bu1, bv0, bv1 = _union(rects, camera)
    if bu0 >= bu1 or bv0 >= bv1:
        return out
    view = (slice(bv0, bv1), slice(bu0, bu1))
    px, py, pz = (c.reshape(height, width)[view] for c in lift)
    vx, vy, vz = pos[0] - px, pos[1] - py, pos[2] - pz
    dist = np.sqrt(vx * vx + vy * vy + vz * vz)
    lx, ly, lz = vx / dist, vy / dist, vz / dist
    act2, own2 = active.reshape(height, width)[view], owner.reshape(height, width)[view]
    # per object: flat pixel indices, points (n, 3), unit directions to the disc centre (n, 3), distances (n,)
    near: list[tuple[SceneObject, NDArray[np.int64], F64, F64, F64]] = []
    for k, (obj, rect) in enumerate(zip(scene.objects, rects, strict=True)):
        sub = (
            (slice(0, bv1 - bv0), slice(0, bu1 - bu0))
            if rect is None
            else (slice(rect[2] - bv0, rect[3] - bv0), slice(rect[0] - bu0, rect[1] - bu0))
        )
        if sub[0].stop <= sub[0].start or sub[1].stop <= sub[1].start:
            continue
        cols = tuple(a[sub] for a in (px, py, pz, lx, ly, lz))
        mask = _near(obj, cols, dist[sub], light.radius) & act2[sub] & (own2[sub] != k)
        rows, columns = np.nonzero(mask)
        if len(rows) == 0:
            continue
        idx = (rows + (sub[0].start + bv0)) * width + (columns + (sub[1].start + bu0))
        pts = np.stack([cols[0][mask], cols[1][mask], cols[2][mask]], axis=1)
        dirs = np.stack([cols[3][mask], cols[4][mask], cols[5][mask]], axis=1)
        near.append((obj, idx, pts, dirs, dist[sub][mask]))
    if not near:
        return out
    centre = np.zeros(n, dtype=bool)  # DISC[0] is the disc centre: its rays are the directions computed above
    for obj, idx, pts, dirs, sd in near:
        keep = np.nonzero(candidates(obj, pts, dirs))[0]
        t = hit_distance(obj, pts[keep], dirs[keep])
        centre[idx[keep[t < sd[keep]]]] = True
    # only points of some ``near`` set can take more samples: look for edges in their bounding box (plus margin)
    every = np.concatenate([entry[1] for entry in near])
    rows, columns = every // width, every % width
    r0, r1 = max(int(rows.min()) - EDGE_PX, 0), min(int(rows.max()) + EDGE_PX + 1, height)
    c0, c1 = max(int(columns.min()) - EDGE_PX, 0), min(int(columns.max()) + EDGE_PX + 1, width)
    shape = (height, width)
    dark = (centre | ~active).reshape(shape)[r0:r1, c0:c1]  # faces turned away from the light are dark too
    lit = (active & ~centre).reshape(shape)[r0:r1, c0:c1]
    fine_img = np.zeros(shape, dtype=bool)
    fine_img[r0:r1, c0:c1] = _dilate(dark, EDGE_PX) & _dilate(lit, EDGE_PX)
    fine = fine_img.ravel() & active
    others = np.zeros((len(DISC) - 1, n), dtype=bool)  # per other sample: blocked by some object
    rest = np.array(samples[1:])  # (7, 3)
    for obj, idx, pts, _, _ in near:
        pick = fine[idx]
        if not pick.any():
            continue
        f_idx, f_pts = idx[pick], pts[pick]
        # the 7 other samples' rays from these points in one batch: (7 * m, 3), sample-major
        sv = rest[:, None, :] - f_pts[None, :, :]
        sdist = np.sqrt((sv * sv).sum(axis=2))
        sdir = (sv / sdist[:, :, None]).reshape(-1, 3)
        origins = np.broadcast_to(f_pts[None, :, :], sv.shape).reshape(-1, 3)
        flat_dist = sdist.ravel()
        keep = np.nonzero(candidates(obj, origins, sdir))[0]
        t = hit_distance(obj, origins[keep], sdir[keep])
        hits = keep[t < flat_dist[keep]]
        others[hits // len(f_idx), f_idx[hits % len(f_idx)]] = True
    fine_at = np.nonzero(fine)[0]
    count = centre[fine_at].astype(np.float32) + others[:, fine_at].sum(axis=0, dtype=np.int32).astype(np.float32)
    out[centre] = 0.0
    out[fine_at] = 1.0 - count / np.float32(len(DISC))
    return out
