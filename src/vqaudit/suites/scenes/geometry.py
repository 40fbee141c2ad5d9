"""Ray intersection with CLEVR's three shapes, vectorised over rays.

Shapes follow CLEVR's ``image_generation/data/shapes`` models scaled by the size (``properties.json``: large 0.7,
small 0.35) and resting on the ground plane z = 0 (``utils.add_object``: the centre is at height ``scale``): a
sphere of radius ``scale``; a cube of half-side ``scale``; a cylinder of radius ``scale`` and half-height ``scale``.
Cubes and cylinders are turned about the vertical axis by ``rotation`` radians (Blender's ``rotation_euler[2]``).
The bevels of CLEVR's "smooth" cube and cylinder are not modelled.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

import numpy as np
from numpy.typing import NDArray

from vqaudit.suites.scenes.scene import SceneObject

F64 = NDArray[np.float64]
B = NDArray[np.bool_]
EPS = 1e-6
CUBE = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float64)
"""The 8 corners of the cube [-1, 1]^3, (8, 3) float64, read-only: ``obj.xyz + bounding_radius(obj) * CUBE`` are
the corners of an axis-aligned cube holding the object."""
CUBE.flags.writeable = False


@cache
def properties() -> dict[str, dict[str, object]]:
    """CLEVR's ``properties.json``: shapes, colour RGB (0-255), materials and size scales."""
    text = (resources.files("vqaudit.suites.scenes") / "data" / "properties.json").read_text(encoding="utf-8")
    data: dict[str, dict[str, object]] = json.loads(text)
    return data


def scale(obj: SceneObject) -> float:
    """The object's scale in world units (``properties.json`` ``sizes``: large 0.7, small 0.35)."""
    value = properties()["sizes"][obj.size]
    assert isinstance(value, float | int)
    return float(value)


def bounding_radius(obj: SceneObject) -> float:
    """Radius of a sphere about the object's centre that contains it."""
    s = scale(obj)
    factor = {"sphere": 1.0, "cube": 3.0**0.5, "cylinder": 2.0**0.5}.get(obj.shape, 3.0**0.5)
    return float(s * factor)


def _local(obj: SceneObject, origins: F64, dirs: F64) -> tuple[F64, F64]:
    c, s = np.cos(obj.rotation), np.sin(obj.rotation)
    rot = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])  # world -> object frame (rotate by -theta)
    return (origins - np.asarray(obj.xyz)) @ rot.T, dirs @ rot.T


def _to_world(obj: SceneObject, normals: F64) -> F64:
    c, s = np.cos(obj.rotation), np.sin(obj.rotation)
    rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    out: F64 = normals @ rot.T
    return out


def _sphere(o: F64, d: F64, r: float, normals: bool) -> tuple[F64, F64 | None]:
    b = np.einsum("ij,ij->i", o, d)
    disc = b * b - (np.einsum("ij,ij->i", o, o) - r * r)
    sq = np.sqrt(np.maximum(disc, 0.0))
    t0, t1 = -b - sq, -b + sq
    t = np.where(t0 > EPS, t0, np.where(t1 > EPS, t1, np.inf))
    t = np.where(disc >= 0.0, t, np.inf)
    if not normals:
        return t, None
    p = o + d * np.where(np.isfinite(t), t, 0.0)[:, None]
    return t, p / r


def _box(o: F64, d: F64, h: float, normals: bool) -> tuple[F64, F64 | None]:
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / np.where(np.abs(d) < 1e-12, 1e-12, d)
        ta, tb = (-h - o) * inv, (h - o) * inv
    tlo, thi = np.minimum(ta, tb), np.maximum(ta, tb)
    tmin, tmax = tlo.max(axis=1), thi.min(axis=1)
    hit = (tmax >= tmin) & (tmax > EPS)
    t = np.where(hit, np.where(tmin > EPS, tmin, tmax), np.inf)
    if not normals:
        return t, None
    axis = tlo.argmax(axis=1)
    n = np.zeros_like(o)
    rows = np.arange(len(o))
    n[rows, axis] = -np.sign(d[rows, axis])
    return t, n


def _cylinder(o: F64, d: F64, r: float, normals: bool) -> tuple[F64, F64 | None]:
    h = r
    a = d[:, 0] ** 2 + d[:, 1] ** 2
    b = o[:, 0] * d[:, 0] + o[:, 1] * d[:, 1]
    c = o[:, 0] ** 2 + o[:, 1] ** 2 - r * r
    disc = b * b - a * c
    with np.errstate(divide="ignore", invalid="ignore"):
        sq = np.sqrt(np.maximum(disc, 0.0))
        ts = np.where((disc >= 0) & (a > 1e-12), (-b - sq) / a, np.inf)
        zs = o[:, 2] + ts * d[:, 2]
        ts = np.where((ts > EPS) & (np.abs(zs) <= h), ts, np.inf)
        tc = np.where(d[:, 2] < 0, (h - o[:, 2]) / d[:, 2], (-h - o[:, 2]) / d[:, 2])
    tc = np.where(np.abs(d[:, 2]) > 1e-12, tc, np.inf)
    pc = o + d * np.where(np.isfinite(tc), tc, 0.0)[:, None]
    tc = np.where((tc > EPS) & (pc[:, 0] ** 2 + pc[:, 1] ** 2 <= r * r), tc, np.inf)
    side = ts <= tc
    t = np.where(side, ts, tc)
    if not normals:
        return t, None
    p = o + d * np.where(np.isfinite(t), t, 0.0)[:, None]
    n = np.where(
        side[:, None],
        np.stack([p[:, 0] / r, p[:, 1] / r, np.zeros_like(t)], axis=1),
        np.stack([np.zeros_like(t), np.zeros_like(t), np.where(d[:, 2] < 0, 1.0, -1.0)], axis=1),
    )
    return t, n


def _nearest(obj: SceneObject, origins: F64, dirs: F64, normals: bool) -> tuple[F64, F64 | None]:
    o, d = _local(obj, origins, dirs)
    s = scale(obj)
    if obj.shape == "sphere":
        return _sphere(o, d, s, normals)
    if obj.shape == "cylinder":
        return _cylinder(o, d, s, normals)
    return _box(o, d, s, normals)


def intersect(obj: SceneObject, origins: F64, dirs: F64) -> tuple[F64, F64]:
    """Nearest hit of each ray with ``obj``.

    Args:
        obj: the object.
        origins: ray origins, shape (N, 3), world units.
        dirs: unit ray directions, shape (N, 3).

    Returns:
        ``(t, normals)``: hit distance (N,), ``inf`` where the ray misses; outward unit normals (N, 3) in world
        coordinates (undefined where ``t`` is ``inf``).
    """
    t, n = _nearest(obj, origins, dirs, True)
    assert n is not None
    return t, _to_world(obj, n)


def hit_distance(obj: SceneObject, origins: F64, dirs: F64) -> F64:
    """Nearest hit distance of each ray with ``obj``, (N,) world units, ``inf`` where it misses.

    The same arithmetic as :func:`intersect` (bit-identical ``t``) without the normals: for shadow rays.
    """
    return _nearest(obj, origins, dirs, False)[0]


def candidates(obj: SceneObject, origins: F64, dirs: F64, margin: float = 0.0) -> B:
    """Rays passing within ``margin`` of the object's bounding sphere, ahead of their origin (conservative filter)."""
    c = obj.xyz
    w0, w1, w2 = c[0] - origins[:, 0], c[1] - origins[:, 1], c[2] - origins[:, 2]
    proj = w0 * dirs[:, 0] + w1 * dirs[:, 1] + w2 * dirs[:, 2]
    r = bounding_radius(obj) + margin
    dist2 = w0 * w0 + w1 * w1 + w2 * w2 - proj * proj
    mask: B = (dist2 <= r * r) & (proj > -r)
    return mask
