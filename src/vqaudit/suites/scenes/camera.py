"""Per-scene pinhole camera fitted to CLEVR's recorded object projections.

CLEVR renders 480x320 images with Blender's camera (35 mm lens on a 32 mm sensor: a focal length of
``35 / 32 * 480 = 525`` px, principal point at the image centre) whose position is jittered per scene
(``--camera_jitter``, ``image_generation/render_images.py``). Each object records ``pixel_coords = (px, py, depth)``
from ``bpy_extras.object_utils.world_to_camera_view`` (``px = round(x * 480)``, ``py = round(320 - y * 320)``,
``depth`` along the viewing axis; ``image_generation/utils.py``). Back-projecting each object's pixel and depth gives
its camera-frame position; the rigid motion between the world and camera frames is then the least-squares
(Kabsch / orthogonal Procrustes) fit, which needs three non-collinear objects, and every CLEVR scene has at least
three.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from vqaudit.errors import VqauditError
from vqaudit.suites.scenes.scene import Scene

WIDTH, HEIGHT = 480, 320
FOCAL_PX = 35.0 / 32.0 * WIDTH  # Blender lens 35 mm, sensor width 32 mm, sensor fit on the wider side

F64 = NDArray[np.float64]
Rect = tuple[int, int, int, int]
"""A pixel rectangle ``(u0, u1, v0, v1)``: columns ``u0 .. u1 - 1`` and rows ``v0 .. v1 - 1`` (half-open)."""


@dataclass(frozen=True)
class Camera:
    """A pinhole camera: ``x_cam = R (x_world - C)``; the camera looks along its -z axis, +y is up in the image.

    Attributes:
        rotation: 3x3 world-to-camera rotation ``R`` (row-major nested tuples).
        centre: camera centre ``C`` in world units.
        focal: focal length in pixels.
        width: image width in pixels.
        height: image height in pixels.
    """

    rotation: tuple[tuple[float, float, float], ...]
    centre: tuple[float, float, float]
    focal: float = FOCAL_PX
    width: int = WIDTH
    height: int = HEIGHT

    @property
    def r(self) -> F64:
        """The rotation as a (3, 3) float64 array."""
        return np.array(self.rotation, dtype=np.float64)

    @property
    def c(self) -> F64:
        """The centre as a (3,) float64 array."""
        return np.array(self.centre, dtype=np.float64)

    def project(self, points: F64) -> F64:
        """Project world points (N, 3) to continuous pixel coordinates and depth (N, 3): ``(u, v, depth)``.

        ``u`` grows to the right and ``v`` downwards, both in pixels with the image's top-left corner at (0, 0)
        (pixel ``(i, j)`` covers ``[i, i+1) x [j, j+1)``); ``depth`` is the distance along the viewing axis.
        """
        pc = (np.asarray(points, dtype=np.float64) - self.c) @ self.r.T
        depth = -pc[:, 2]
        u = self.width / 2 + self.focal * pc[:, 0] / depth
        v = self.height / 2 - self.focal * pc[:, 1] / depth
        return np.stack([u, v, depth], axis=1)

    def pixel_rect(self, points: F64) -> Rect | None:
        """A pixel rectangle holding every pixel whose centre lies in the convex hull of the images of ``points``.

        ``points`` are world points (N, 3); the rectangle bounds their projections with a pixel of margin on every
        side, clipped to the image (it may be empty). None when a point's depth is 0.05 world units or less (at or
        behind the camera plane, where the projections do not bound the image).
        """
        uvd = self.project(points)
        if np.any(uvd[:, 2] <= 0.05):
            return None
        u0, u1 = int(np.floor(uvd[:, 0].min())) - 1, int(np.ceil(uvd[:, 0].max())) + 1
        v0, v1 = int(np.floor(uvd[:, 1].min())) - 1, int(np.ceil(uvd[:, 1].max())) + 1
        return max(u0, 0), min(u1, self.width), max(v0, 0), min(v1, self.height)

    def pixel_rays(self) -> F64:
        """Unit world-space directions through every pixel centre, shape (height, width, 3)."""
        i = np.arange(self.width, dtype=np.float64) + 0.5
        j = np.arange(self.height, dtype=np.float64) + 0.5
        x = (i[None, :] - self.width / 2) / self.focal
        y = -(j[:, None] - self.height / 2) / self.focal
        d = np.empty((self.height, self.width, 3))
        d[..., 0], d[..., 1], d[..., 2] = x, y, -1.0
        d = d @ self.r  # camera -> world (R is orthonormal)
        # the Euclidean norm with the same operations as np.linalg.norm(axis=-1): ((x*x + y*y) + z*z) ** 0.5
        x2, y2, z2 = d[..., 0] * d[..., 0], d[..., 1] * d[..., 1], d[..., 2] * d[..., 2]
        d /= np.sqrt(x2 + y2 + z2)[..., None]
        return d

    def to_json(self) -> dict[str, object]:
        """JSON form (for view metadata)."""
        return {
            "rotation": [list(row) for row in self.rotation],
            "centre": list(self.centre),
            "focal": self.focal,
            "width": self.width,
            "height": self.height,
        }


def _kabsch(src: F64, dst: F64) -> tuple[F64, F64]:
    """Rotation R and translation t minimising sum |R src_i + t - dst_i|^2 (proper rotation, det R = +1)."""
    sc, dc = src.mean(axis=0), dst.mean(axis=0)
    u, _, vt = np.linalg.svd((src - sc).T @ (dst - dc))
    d = np.diag([1.0, 1.0, float(np.sign(np.linalg.det(vt.T @ u.T)))])
    rot: F64 = vt.T @ d @ u.T
    return rot, dc - rot @ sc


def fit_camera(scene: Scene) -> Camera:
    """Fit the scene's camera from its objects' ``3d_coords`` and recorded ``pixel_coords``.

    Args:
        scene: a real CLEVR scene; every object must carry ``pixel`` (CLEVR's ``pixel_coords``).

    Returns:
        The camera with focal 525 px and the rigid pose that best maps the back-projected objects onto the world.
        On all 1,500 bundled scenes the recorded pixels are reproduced within 0.8 px (``tests``).

    Raises:
        VqauditError: fewer than three objects with pixel coordinates, or a degenerate (collinear) layout.
    """
    objs = [o for o in scene.objects if o.pixel is not None]
    if len(objs) < 3:
        raise VqauditError(f"scene {scene.name}: a camera fit needs 3 objects with pixel_coords, got {len(objs)}")
    world = np.array([o.xyz for o in objs], dtype=np.float64)
    px = np.array([o.pixel for o in objs], dtype=np.float64)
    z = px[:, 2]
    cam = np.stack([(px[:, 0] - WIDTH / 2) * z / FOCAL_PX, -(px[:, 1] - HEIGHT / 2) * z / FOCAL_PX, -z], axis=1)
    if np.linalg.matrix_rank(world - world.mean(axis=0), tol=1e-6) < 2:
        raise VqauditError(f"scene {scene.name}: object centres are collinear; the camera is not determined")
    rot, t = _kabsch(world, cam)
    centre = -rot.T @ t
    return Camera(
        rotation=tuple((float(a), float(b), float(c)) for a, b, c in rot),
        centre=(float(centre[0]), float(centre[1]), float(centre[2])),
    )
