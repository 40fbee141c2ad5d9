"""Deterministic CPU ray caster for CLEVR scenes: an RGB image and a per-pixel instance-ID buffer.

One primary ray per pixel centre (camera: ``camera.fit_camera``) hits the ground plane z = 0 or an object
(``geometry``). Shading, in linear RGB then encoded to sRGB as Blender's default view transform does:

- the four lamps of CLEVR's ``base_scene.blend`` (``lights``); area lamps fall off with the squared distance;
- soft shadows from the key lamp and the sun (``shadows``: 8 fixed samples on a disc, penumbrae, bit-for-bit
  repeatable); fill and back lamps cast none;
- shading is float32 (ray geometry, the instance buffer and the shadow rays stay float64); each object is tested
  only against the primary rays of its screen rectangle;
- materials: ``rubber`` is Lambertian with a faint broad highlight; ``metal`` reflects a fixed environment (the
  ground below the horizon, a grey sky above) tinted by its colour, with sharp highlights. Colours are CLEVR's
  ``properties.json`` RGB used as linear albedo (Blender gives them to the shader as linear values);
- inter-object reflections and global illumination are not modelled; a 3x3 binomial filter softens the edges;
- the ambient term and object gains (like the light powers) were calibrated by eye and by the median linear
  brightness of the ground and of the objects in original CLEVR renders (``docs/scenes.md``).

The instance buffer holds, per pixel, the index of the object the primary ray hits first, or -1 (ground).
"""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from vqaudit.suites.scenes.camera import Camera, Rect
from vqaudit.suites.scenes.geometry import CUBE, bounding_radius, candidates, intersect, properties
from vqaudit.suites.scenes.lights import LIGHTS
from vqaudit.suites.scenes.scene import Scene, SceneObject
from vqaudit.suites.scenes.shadows import visibility

F64 = NDArray[np.float64]
F32 = NDArray[np.float32]
U8 = NDArray[np.uint8]
I16 = NDArray[np.int16]


AMBIENT = 0.10
GROUND_ALBEDO = 0.42
# The renderer's version, recorded in every scenes manifest: /2 shades in float32 and takes the 8 soft-shadow samples
# only near shadow edges (for speed: docs/scenes.md), so its images differ from /1's (at most 13 levels on a few
# pixels per frame).
RENDERER = "vqaudit-scenes-raycast/2"
SHARP_FROM = np.float32(0.7)  # below it the sharp highlight ndoth**300 is exactly 0.0 in float32


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


@functools.lru_cache(maxsize=8)
def _rays(camera: Camera) -> F64:
    """The camera's unit pixel-centre directions, (height * width, 3) float64, read-only (kept per camera)."""
    dirs = np.ascontiguousarray(camera.pixel_rays().reshape(-1, 3))
    dirs.flags.writeable = False
    return dirs


def _screen_rect(obj: SceneObject, camera: Camera) -> Rect | None:
    """Pixels ``(u0, u1, v0, v1)`` (half-open) whose centre rays can meet the object's bounding sphere.

    The sphere lies in its axis-aligned bounding cube, whose image lies in the convex hull of its projected
    corners; the rectangle bounds those corners with a pixel of margin. None when a corner is at or behind the
    camera plane (then every ray is tested).
    """
    return camera.pixel_rect(np.asarray(obj.xyz) + bounding_radius(obj) * CUBE)


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
        cand = np.arange(n_rays) if rect is None else grid[rect[2] : rect[3], rect[0] : rect[1]].ravel()
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


def _environment(refl_z: F32) -> F32:
    """Environment radiance (grey, so one channel) seen along reflected directions with z component ``refl_z``."""
    sky = 0.05 + 0.10 * np.clip(refl_z, 0.0, 1.0) ** 2
    ground = 0.30 - 0.15 * np.clip(-refl_z, 0.0, 1.0)
    out: F32 = np.where(refl_z < 0, ground, sky)
    return out


def _shade(scene: Scene, camera: Camera, dirs: F64, t: F64, normals: F64, ids: NDArray[np.int64]) -> F32:
    """Linear RGB (3, N) float32 (channel-major) of each primary hit; ray geometry (shadow rays) stays float64.

    The ground (normal exactly (0, 0, 1)) takes n.l = l_z, the same float32 value as the general dot product;
    highlights and reflections are computed only on object pixels (the ground is matte); sky pixels are 0.55.
    """
    hit = np.isfinite(t)
    tt = np.where(hit, t, 0.0)
    origin = camera.c
    f32 = np.float32
    point_cols = tuple(origin[i] + dirs[:, i] * tt for i in range(3))  # the primary hits (float64)
    lift = (
        point_cols[0] + normals[:, 0] * 1e-4,
        point_cols[1] + normals[:, 1] * 1e-4,
        point_cols[2] + normals[:, 2] * 1e-4,
    )
    px, py, pz = (c.astype(f32) for c in point_cols)
    on_obj = np.nonzero(ids >= 0)[0]  # highlights and reflections only matter on objects (the ground is matte)
    obj_ids = ids[on_obj]
    n_o = normals[on_obj].astype(f32)
    d_o = dirs[on_obj].astype(f32)
    nx, ny, nz = n_o[:, 0], n_o[:, 1], n_o[:, 2]
    dx, dy, dz = d_o[:, 0], d_o[:, 1], d_o[:, 2]
    vwx, vwy, vwz = -dx, -dy, -dz
    px_o, py_o, pz_o = px[on_obj], py[on_obj], pz[on_obj]
    n_px = len(t)
    diffuse = np.full((3, n_px), AMBIENT, dtype=f32)
    spec_sharp = np.zeros((3, len(on_obj)), dtype=f32)
    spec_broad = np.zeros((3, len(on_obj)), dtype=f32)
    for light in LIGHTS:
        lx, ly, lz = (f32(c) for c in light.position)
        vx, vy, vz = lx - px, ly - py, lz - pz
        d2 = vx * vx + vy * vy + vz * vz
        inv = 1.0 / np.sqrt(d2)
        ndotl = vz * inv  # the ground's n.l (n = (0, 0, 1)); object pixels are overwritten below
        vx_o, vy_o, vz_o, inv_o = vx[on_obj], vy[on_obj], vz[on_obj], inv[on_obj]
        ndotl[on_obj] = (nx * vx_o + ny * vy_o + nz * vz_o) * inv_o
        np.maximum(ndotl, 0.0, out=ndotl)
        active = hit & (ndotl > 0)
        vis = visibility(scene, camera, lift, active, ids, light) if light.radius > 0 else active.astype(f32)
        weight = ndotl * vis / d2 if light.falloff else ndotl * vis
        power = np.asarray(light.power, dtype=f32)
        diffuse += weight[None, :] * power[:, None]
        hx, hy, hz = vx_o * inv_o + vwx, vy_o * inv_o + vwy, vz_o * inv_o + vwz
        hn = np.sqrt(hx * hx + hy * hy + hz * hz)
        ndoth = np.clip((nx * (hx / hn) + ny * (hy / hn)) + nz * (hz / hn), 0.0, 1.0)
        ndotl_o = ndotl[on_obj]
        w_o = vis[on_obj] * ((1.0 / d2[on_obj]) if light.falloff else 1.0) * (ndotl_o > 0)
        nd2 = ndoth * ndoth
        nd4 = nd2 * nd2
        nd12 = nd4 * nd4 * nd4
        # x**300 underflows to exactly 0 in float32 below 2**-0.5 (x**300 < 2**-150): raise only the others
        sharp = np.zeros_like(ndoth)
        bright = np.nonzero(ndoth >= SHARP_FROM)[0]
        sharp[bright] = ndoth[bright] ** 300 * w_o[bright]
        spec_sharp += sharp[None, :] * power[:, None] * 4.0
        spec_broad += (nd12 * w_o)[None, :] * power[:, None] * 0.06
    del px_o, py_o, pz_o
    dn = (dx * nx + dy * ny) + dz * nz
    refl_z = dz - 2.0 * dn * nz
    cos_v = np.clip(-((nx * dx + ny * dy) + nz * dz), 0.0, 1.0)
    fresnel = 0.65 + 0.35 * (1.0 - cos_v) ** 5
    # gains calibrated on 12 original renders: median linear brightness under each object's mask
    table = np.array([*(_albedo(o.color) for o in scene.objects), (GROUND_ALBEDO,) * 3], dtype=f32).T  # (3, K+1)
    out: F32 = np.empty((3, n_px), dtype=f32)
    np.multiply(diffuse, f32(GROUND_ALBEDO), out=out)
    a_o, diff_o = table[:, obj_ids], diffuse[:, on_obj]
    rubber_o = 0.6 * a_o * diff_o + spec_broad
    env = (fresnel * _environment(refl_z) * 1.6)[None, :]
    shiny_o = 0.75 * (a_o * (0.10 * diff_o + env) + a_o * spec_sharp + 0.3 * spec_sharp + a_o * spec_broad * 12.0)
    metal = np.array([o.material == "metal" for o in scene.objects], dtype=bool)[obj_ids]
    out[:, on_obj] = np.where(metal[None, :], shiny_o, rubber_o)
    out[:, ~hit] = 0.55
    return out


def _srgb(linear: F32) -> F32:
    x = np.clip(linear, 0.0, 1.0)
    out: F32 = np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, np.float32(1 / 2.4)) - 0.055)
    return out


def _soften(img: F32) -> F32:
    """3x3 binomial filter of channel-major ``img`` (3, height, width), edges replicated."""
    p = np.pad(img, ((0, 0), (1, 1), (1, 1)), mode="edge")
    rows = 0.25 * p[:, :-2] + 0.5 * p[:, 1:-1] + 0.25 * p[:, 2:]
    out: F32 = 0.25 * rows[:, :, :-2] + 0.5 * rows[:, :, 1:-1] + 0.25 * rows[:, :, 2:]
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
    linear = _shade(scene, camera, dirs, t, normals, ids).reshape(3, camera.height, camera.width)
    rgb = np.rint(_soften(_srgb(linear)) * np.float32(255.0)).astype(np.uint8).transpose(1, 2, 0)
    rgb = np.ascontiguousarray(rgb)
    return Rendered(rgb=rgb, ids=ids.reshape(camera.height, camera.width).astype(np.int16))


def png_bytes(rgb: U8) -> bytes:
    """Encode an RGB uint8 array as PNG bytes (deterministic: no timestamps or text chunks)."""
    buf = io.BytesIO()
    Image.fromarray(rgb, mode="RGB").save(buf, format="PNG", optimize=False, compress_level=6)
    return buf.getvalue()
