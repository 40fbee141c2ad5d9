"""Deterministic CPU ray caster for CLEVR scenes: an RGB image and a per-pixel instance-ID buffer.

One primary ray per pixel centre (camera: ``camera.fit_camera``) hits the ground plane z = 0 or an object
(``geometry``). Shading, in linear RGB then encoded to sRGB as Blender's default view transform does:

- lights at the positions of CLEVR's ``base_scene.blend`` lamps (key, fill, back, and a sun), as measured by
  Kubric's CLEVR re-creation (``get_clevr_lights``, Apache-2.0); area lamps fall off with the squared distance;
- soft shadows from the key lamp and the sun: each is sampled at a fixed pattern of 8 points on a disc (no
  randomness), so shadow edges are penumbrae and the output is bit-for-bit repeatable; fill and back lamps cast none.
  The disc centre is tested from every point, the other 7 samples only within ``EDGE_PX`` pixels of a centre-ray
  shadow edge (elsewhere the centre's answer stands for all 8);
- shading is float32 (ray geometry, the instance buffer and the shadow rays stay float64); each object is tested
  only against the primary rays of its screen rectangle;
- materials: ``rubber`` is Lambertian with a faint broad highlight; ``metal`` reflects a fixed environment (the
  ground below the horizon, a grey sky above) tinted by its colour, with sharp highlights. Colours are CLEVR's
  ``properties.json`` RGB used as linear albedo (Blender gives them to the shader as linear values);
- inter-object reflections and global illumination are not modelled; a 3x3 binomial filter softens the edges;
- light powers, ambient term and object gains were calibrated by eye and by the median linear brightness of the
  ground and of the objects in original CLEVR renders (``docs/scenes.md``).

The instance buffer holds, per pixel, the index of the object the primary ray hits first, or -1 (ground).
"""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from vqaudit.suites.scenes.camera import Camera
from vqaudit.suites.scenes.geometry import bounding_radius, candidates, intersect, properties
from vqaudit.suites.scenes.scene import Scene, SceneObject

F64 = NDArray[np.float64]
F32 = NDArray[np.float32]
U8 = NDArray[np.uint8]
I16 = NDArray[np.int16]
B = NDArray[np.bool_]


@dataclass(frozen=True)
class Light:
    """A light: position (world units), linear RGB power, disc radius for soft shadows (0: casts none), falloff."""

    position: tuple[float, float, float]
    power: tuple[float, float, float]
    radius: float
    falloff: bool


def _hex(c: int, power: float) -> tuple[float, float, float]:
    return tuple(power * ((c >> s) & 255) / 255.0 for s in (16, 8, 0))  # type: ignore[return-value]


LIGHTS = (
    Light((6.44671, -2.90517, 4.2584), _hex(0xFFEDD0, 10.5), 0.6, True),  # Lamp_Key
    Light((-4.67112, -4.0136, 3.01122), _hex(0xC2D0FF, 2.0), 0.0, True),  # Lamp_Fill
    Light((-1.1685, 2.64602, 5.81574), _hex(0xFFFFFF, 5.0), 0.0, True),  # Lamp_Back
    Light((11.6608 * 3, -6.62799 * 3, 25.8232 * 3), _hex(0xFFFFFF, 0.30), 1.5, False),  # sun (direction only)
)
AMBIENT = 0.10
GROUND_ALBEDO = 0.42
# The renderer's version, recorded in every scenes manifest: /2 shades in float32 and takes the 8 soft-shadow samples
# only near shadow edges (issue 19), so its images differ from /1's (at most 13 levels on a few pixels per frame).
RENDERER = "vqaudit-scenes-raycast/2"
EDGE_PX = 8  # half-width of the window in which a centre-ray shadow edge makes a point take all 8 samples
DISC = tuple((float(np.cos(a)) * r, float(np.sin(a)) * r) for r, a in
             [(0.0, 0.0)] + [(0.8, 2 * np.pi * k / 7) for k in range(7)])


@dataclass(frozen=True)
class Rendered:
    """A rendered view: ``rgb`` (height, width, 3) uint8 sRGB; ``ids`` (height, width) int16, -1 = background."""

    rgb: U8
    ids: I16

    def visible_pixels(self, index: int) -> int:
        """Number of pixels whose first hit is object ``index``."""
        return int(np.count_nonzero(self.ids == index))


def _albedo(color: str) -> F64:
    rgb = properties()["colors"][color]
    assert isinstance(rgb, list)
    return np.array(rgb, dtype=np.float64) / 255.0


_CUBE = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float64)


@functools.lru_cache(maxsize=8)
def _rays(camera: Camera) -> F64:
    """The camera's unit pixel-centre directions, (height * width, 3) float64, read-only (kept per camera)."""
    dirs = np.ascontiguousarray(camera.pixel_rays().reshape(-1, 3))
    dirs.flags.writeable = False
    return dirs


def _screen_rect(obj: SceneObject, camera: Camera) -> tuple[int, int, int, int] | None:
    """Pixels ``(u0, u1, v0, v1)`` (half-open) whose centre rays can meet the object's bounding sphere.

    The sphere lies in its axis-aligned bounding cube, whose image lies in the convex hull of its projected
    corners; the rectangle bounds those corners with a pixel of margin. None when a corner is at or behind the
    camera plane (then every ray is tested).
    """
    uvd = camera.project(np.asarray(obj.xyz) + bounding_radius(obj) * _CUBE)
    if np.any(uvd[:, 2] <= 0.05):
        return None
    u0, u1 = int(np.floor(uvd[:, 0].min())) - 1, int(np.ceil(uvd[:, 0].max())) + 1
    v0, v1 = int(np.floor(uvd[:, 1].min())) - 1, int(np.ceil(uvd[:, 1].max())) + 1
    return max(u0, 0), min(u1, camera.width), max(v0, 0), min(v1, camera.height)


def _primary(scene: Scene, camera: Camera) -> tuple[F64, F64, F64, NDArray[np.int64]]:
    """Primary rays: directions (N, 3), hit distance (N,), unit normals (N, 3), first-hit object index (N,), -1 ground.

    Each object is intersected only with the rays of its screen rectangle (:func:`_screen_rect`), then with those
    passing within its bounding sphere; the rays outside cannot meet it, so the instance buffer is exact.
    """
    dirs = _rays(camera)
    origin = camera.c
    n_rays = len(dirs)
    with np.errstate(divide="ignore"):
        t_best = np.where(dirs[:, 2] < -1e-9, -origin[2] / dirs[:, 2], np.inf)
    normals = np.zeros((n_rays, 3))
    normals[:, 2] = 1.0
    ids = np.full(n_rays, -1, dtype=np.int64)
    grid = np.arange(n_rays).reshape(camera.height, camera.width)
    for k, obj in enumerate(scene.objects):
        rect = _screen_rect(obj, camera)
        cand = np.arange(n_rays) if rect is None else grid[rect[2]:rect[3], rect[0]:rect[1]].ravel()
        if len(cand) == 0:
            continue
        sub = dirs[cand]
        origins = np.broadcast_to(origin, sub.shape)
        keep = np.nonzero(candidates(obj, origins, sub))[0]
        if len(keep) == 0:
            continue
        idx = cand[keep]
        t, n = intersect(obj, origins[keep], sub[keep])
        closer = t < t_best[idx]
        sel = idx[closer]
        t_best[sel], normals[sel], ids[sel] = t[closer], n[closer], k
    return dirs, t_best, normals, ids


def _near(obj: SceneObject, cols: tuple[F64, ...], dist: F64, disc: float) -> B:
    """Points whose segment to some disc sample can pass through the object's bounding sphere.

    ``cols`` holds the points' x, y, z and the unit light directions' x, y, z as six contiguous (N,) arrays.
    """
    c = obj.xyz
    px, py, pz, lx, ly, lz = cols
    w0, w1, w2 = c[0] - px, c[1] - py, c[2] - pz
    proj = w0 * lx + w1 * ly + w2 * lz
    bound = bounding_radius(obj)
    r = bound + disc * np.maximum(proj, 0.0) / dist
    mask: B = (w0 * w0 + w1 * w1 + w2 * w2 - proj * proj <= r * r) & (proj > -bound)
    return mask


def _shadow_rect(obj: SceneObject, samples: list[F64], camera: Camera) -> tuple[int, int, int, int] | None:
    """Pixel rectangle ``(u0, u1, v0, v1)`` containing every visible point the object can shadow from ``samples``.

    The shadow of the object's bounding cube cast from each sample point down to the ground lies in the convex hull
    of the cube's corners and their central projections onto z = 0; the rectangle bounds the image of that hull's
    3-D bounding box. None when that box reaches behind the camera (then every point is a candidate).
    """
    c, r = np.asarray(obj.xyz), bounding_radius(obj)
    corners = c + r * np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float64)
    corners[:, 2] = np.maximum(corners[:, 2], 0.0)
    pts = [corners]
    for sample in samples:
        t = corners[:, 2] / (sample[2] - corners[:, 2])
        pts.append(corners + t[:, None] * (corners - sample))
    allp = np.concatenate(pts)
    lo, hi = allp.min(axis=0) - 0.01, allp.max(axis=0) + 0.01
    lo[2] = min(lo[2], -0.01)
    box = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
    uvd = camera.project(box)
    if np.any(uvd[:, 2] <= 0.05):
        return None
    u0, u1 = int(np.floor(uvd[:, 0].min())), int(np.ceil(uvd[:, 0].max())) + 1
    v0, v1 = int(np.floor(uvd[:, 1].min())), int(np.ceil(uvd[:, 1].max())) + 1
    return max(u0, 0), min(u1, camera.width), max(v0, 0), min(v1, camera.height)


def _dilate(mask: B, r: int) -> B:
    """``mask`` (height, width) grown by ``r`` pixels along both axes (a (2r+1)-square window)."""
    out = mask
    for axis in (0, 1):
        pad = [(0, 0), (0, 0)]
        pad[axis] = (r + 1, r)
        cs = np.cumsum(np.pad(out, pad).astype(np.int32), axis=axis)
        hi = cs.take(np.arange(2 * r + 1, cs.shape[axis]), axis=axis)
        lo = cs.take(np.arange(0, cs.shape[axis] - 2 * r - 1), axis=axis)
        out = (hi - lo) > 0
    return out


def _blocked(sample: F64, points: F64, near: list[tuple[SceneObject, NDArray[np.int64]]], n: int) -> B:
    """Which of ``n`` points see ``sample`` blocked by an object (``near``: candidate point indices per object)."""
    blocked = np.zeros(n, dtype=bool)
    for obj, idx in near:
        if len(idx) == 0:
            continue
        sv = sample - points[idx]
        sd = np.sqrt((sv * sv).sum(axis=1))
        sdir = sv / sd[:, None]
        keep = candidates(obj, points[idx], sdir)
        sub_idx = idx[keep]
        t, _ = intersect(obj, points[sub_idx], sdir[keep])
        blocked[sub_idx[t < sd[keep]]] = True
    return blocked


def _visibility(scene: Scene, camera: Camera, points: F64, active: B, owner: NDArray[np.int64], light: Light) -> F32:
    """Fraction (0..1) of the light's disc samples visible from each pixel's point (soft shadows), float32.

    ``points`` (height * width, 3) are the lifted primary hits, ``active`` the pixels that face the light and
    ``owner`` the object each lies on (-1: ground); convex objects never shadow themselves; inactive pixels get 0.
    Adaptive: the disc centre is tested from every active point; all 8 samples only from points within
    ``EDGE_PX`` pixels (both axes) of both a point whose centre ray is blocked and one whose is not (the
    penumbrae); elsewhere the centre's answer (0 or 1) stands for all samples.
    """
    pos = np.asarray(light.position)
    axis = pos / np.linalg.norm(pos)
    u = np.cross(axis, [0.0, 0.0, 1.0])
    u /= np.linalg.norm(u)
    w = np.cross(axis, u)
    samples = [pos + light.radius * (a * u + b * w) for a, b in DISC]
    n = camera.width * camera.height
    grid = np.arange(n).reshape(camera.height, camera.width)
    near = []
    for k, obj in enumerate(scene.objects):
        rect = _shadow_rect(obj, samples, camera)
        cand = np.arange(n) if rect is None else grid[rect[2]:rect[3], rect[0]:rect[1]].ravel()
        cand = cand[active[cand] & (owner[cand] != k)]
        if len(cand) == 0:
            continue
        # the centre ray passes within (bound + disc radius, scaled by distance) of the object
        pts = points[cand]
        vec = pos - pts
        dist = np.sqrt((vec * vec).sum(axis=1))
        ldir = vec / dist[:, None]
        cols = tuple(np.ascontiguousarray(a) for a in (*pts.T, *ldir.T))
        idx = cand[_near(obj, cols, dist, light.radius)]
        if len(idx):
            near.append((obj, idx))
    out: F32 = active.astype(np.float32)
    if not near:
        return out
    centre = _blocked(samples[0], points, near, n)  # DISC[0] is the disc centre
    # only points of some ``near`` set can take more samples: look for edges in their bounding box (plus margin)
    every = np.concatenate([idx for _, idx in near])
    rows, columns = every // camera.width, every % camera.width
    r0, r1 = max(int(rows.min()) - EDGE_PX, 0), min(int(rows.max()) + EDGE_PX + 1, camera.height)
    c0, c1 = max(int(columns.min()) - EDGE_PX, 0), min(int(columns.max()) + EDGE_PX + 1, camera.width)
    shape = (camera.height, camera.width)
    dark = (centre | ~active).reshape(shape)[r0:r1, c0:c1]  # faces turned away from the light are dark too
    lit = (active & ~centre).reshape(shape)[r0:r1, c0:c1]
    fine_img = np.zeros(shape, dtype=bool)
    fine_img[r0:r1, c0:c1] = _dilate(dark, EDGE_PX) & _dilate(lit, EDGE_PX)
    fine = fine_img.ravel() & active
    near_fine = [(obj, idx[fine[idx]]) for obj, idx in near]
    count = centre.astype(np.float32)
    for sample in samples[1:]:
        count += _blocked(sample, points, near_fine, n)
    out[centre] = 0.0
    out[fine] = 1.0 - count[fine] / np.float32(len(DISC))
    return out


def _environment(refl: F32) -> F32:
    z = refl[:, 2:3]
    sky = 0.05 + 0.10 * np.clip(z, 0.0, 1.0) ** 2
    ground = 0.30 - 0.15 * np.clip(-z, 0.0, 1.0)
    out: F32 = np.repeat(np.where(z < 0, ground, sky), 3, axis=1)
    return out


def _shade(scene: Scene, camera: Camera, dirs: F64, t: F64, normals: F64, ids: NDArray[np.int64]) -> F32:
    """Linear RGB (N, 3) float32 of each primary hit; ray geometry (shadow rays) stays in float64."""
    hit = np.isfinite(t)
    points = camera.c + dirs * np.where(hit, t, 0.0)[:, None]
    lift = points + normals * 1e-4
    f32 = np.float32
    px, py, pz = (np.ascontiguousarray(c, dtype=f32) for c in points.T)
    nx, ny, nz = (np.ascontiguousarray(c, dtype=f32) for c in normals.T)
    # per-object tables, the ground last (ids -1 index it)
    albedo = np.array([*(_albedo(o.color) for o in scene.objects), (GROUND_ALBEDO,) * 3], dtype=f32)[ids]
    metal = np.array([*(o.material == "metal" for o in scene.objects), False], dtype=bool)[ids]
    diffuse = np.full((len(t), 3), AMBIENT, dtype=f32)
    on_obj = np.nonzero(ids >= 0)[0]  # highlights and reflections only matter on objects (the ground is matte)
    n_o, d_o = normals[on_obj].astype(f32), dirs[on_obj].astype(f32)
    view_o = -d_o
    spec_sharp = np.zeros((len(on_obj), 3), dtype=f32)
    spec_broad = np.zeros((len(on_obj), 3), dtype=f32)
    for light in LIGHTS:
        lx, ly, lz = (f32(c) for c in light.position)
        vx, vy, vz = lx - px, ly - py, lz - pz
        d2 = vx * vx + vy * vy + vz * vz
        inv = 1.0 / np.sqrt(d2)
        ndotl = np.maximum((nx * vx + ny * vy + nz * vz) * inv, 0.0)
        active = hit & (ndotl > 0)
        vis = _visibility(scene, camera, lift, active, ids, light) if light.radius > 0 else active.astype(f32)
        weight = ndotl * vis / d2 if light.falloff else ndotl * vis
        power = np.asarray(light.power, dtype=f32)
        diffuse += weight[:, None] * power
        ldir_o = np.stack([vx[on_obj], vy[on_obj], vz[on_obj]], axis=1) * inv[on_obj][:, None]
        half = ldir_o + view_o
        half /= np.sqrt(np.einsum("ij,ij->i", half, half))[:, None]
        ndoth = np.clip(np.einsum("ij,ij->i", n_o, half), 0.0, 1.0)
        w_o = vis[on_obj] * ((1.0 / d2[on_obj]) if light.falloff else 1.0) * (ndotl[on_obj] > 0)
        nd2 = ndoth * ndoth
        nd4 = nd2 * nd2
        nd12 = nd4 * nd4 * nd4
        spec_sharp += ((ndoth**300) * w_o)[:, None] * power * 4.0
        spec_broad += (nd12 * w_o)[:, None] * power * 0.06
    refl = d_o - 2.0 * np.einsum("ij,ij->i", d_o, n_o)[:, None] * n_o
    cos_v = np.clip(-np.einsum("ij,ij->i", n_o, d_o), 0.0, 1.0)
    fresnel = (0.65 + 0.35 * (1.0 - cos_v) ** 5)[:, None]
    # gains calibrated on 12 original renders: median linear brightness under each object's mask
    a_o, diff_o = albedo[on_obj], diffuse[on_obj]
    out: F32 = albedo * diffuse
    rubber_o = 0.6 * a_o * diff_o + spec_broad
    shiny_o = 0.75 * (a_o * (0.10 * diff_o + fresnel * _environment(refl) * 1.6) + a_o * spec_sharp
                      + 0.3 * spec_sharp + a_o * spec_broad * 12.0)
    out[on_obj] = np.where(metal[on_obj][:, None], shiny_o, rubber_o)
    out[~hit] = 0.55
    return out


def _srgb(linear: F32) -> F32:
    x = np.clip(linear, 0.0, 1.0)
    out: F32 = np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, np.float32(1 / 2.4)) - 0.055)
    return out


def _soften(img: F32) -> F32:
    p = np.pad(img, ((1, 1), (1, 1), (0, 0)), mode="edge")
    rows = 0.25 * p[:-2] + 0.5 * p[1:-1] + 0.25 * p[2:]
    out: F32 = 0.25 * rows[:, :-2] + 0.5 * rows[:, 1:-1] + 0.25 * rows[:, 2:]
    return out


def instance_ids(scene: Scene, camera: Camera) -> I16:
    """Only the instance-ID buffer (height, width) int16, -1 = background; much cheaper than ``render``."""
    _, _, _, ids = _primary(scene, camera)
    return ids.reshape(camera.height, camera.width).astype(np.int16)


def render(scene: Scene, camera: Camera) -> Rendered:
    """Render ``scene`` through ``camera``.

    Returns:
        ``Rendered`` with ``rgb`` (camera.height, camera.width, 3) uint8 in sRGB and ``ids`` (height, width) int16
        object indices (-1 = ground). Deterministic: the same scene and camera give identical arrays.
    """
    dirs, t, normals, ids = _primary(scene, camera)
    linear = _shade(scene, camera, dirs, t, normals, ids).reshape(camera.height, camera.width, 3)
    rgb = np.rint(_soften(_srgb(linear)) * np.float32(255.0)).astype(np.uint8)
    return Rendered(rgb=rgb, ids=ids.reshape(camera.height, camera.width).astype(np.int16))


def png_bytes(rgb: U8) -> bytes:
    """Encode an RGB uint8 array as PNG bytes (deterministic: no timestamps or text chunks)."""
    buf = io.BytesIO()
    Image.fromarray(rgb, mode="RGB").save(buf, format="PNG", optimize=False, compress_level=6)
    return buf.getvalue()
