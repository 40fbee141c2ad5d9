"""CLEVR scene graphs: objects, directions, relationships, and the bundled real scenes.

A scene is the record CLEVR's ``render_images.py`` writes per image (CLEVR v1.0 ``CLEVR_<split>_scenes.json``):
objects with ``shape``, ``color``, ``size``, ``material``, ``3d_coords`` (world units, the object's centre, z = its
scale), ``rotation`` and ``pixel_coords`` ``(x, y, depth)``; the camera's ground-plane ``directions``; and
``relationships`` derived from them. The bundled scenes are the real CLEVR v1.0 ``train`` scenes 0-999 and ``val``
scenes 0-499 (CC BY 4.0, see ``data/SOURCES.md``).
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Any

from vqaudit.errors import VqauditError

ATTRIBUTES = ("size", "color", "material", "shape")
RELATIONS = ("left", "right", "behind", "front")
RELATION_EPS = 0.2  # compute_all_relationships(eps=0.2), image_generation/render_images.py
SCENE_FILES = {"train": "CLEVR_train_scenes_1000.json.gz", "val": "CLEVR_val_scenes_500.json.gz"}


@dataclass(frozen=True)
class SceneObject:
    """One CLEVR object.

    Attributes:
        shape: ``cube`` / ``sphere`` / ``cylinder``.
        color: one of the eight CLEVR colours.
        size: ``small`` (scale 0.35) or ``large`` (scale 0.7).
        material: ``rubber`` (matte) or ``metal`` (shiny).
        xyz: world coordinates of the object's centre (z equals its scale: it rests on the ground plane z = 0).
        rotation: CLEVR's recorded ``rotation``; Blender applied it to ``rotation_euler[2]``, i.e. as radians.
        pixel: recorded ``pixel_coords`` ``(x px, y px, depth)`` or None for objects vqaudit added.
    """

    shape: str
    color: str
    size: str
    material: str
    xyz: tuple[float, float, float]
    rotation: float
    pixel: tuple[float, float, float] | None = None

    def attr(self, name: str) -> str:
        """The value of attribute ``name`` (one of ATTRIBUTES)."""
        return str(getattr(self, name))

    def to_json(self) -> dict[str, Any]:
        """The object as a CLEVR-style JSON record."""
        out: dict[str, Any] = {
            "shape": self.shape,
            "color": self.color,
            "size": self.size,
            "material": self.material,
            "3d_coords": list(self.xyz),
            "rotation": self.rotation,
        }
        if self.pixel is not None:
            out["pixel_coords"] = list(self.pixel)
        return out


@dataclass(frozen=True)
class Scene:
    """A CLEVR scene: its objects and the camera's ground-plane directions (unit 3-vectors by name)."""

    name: str
    objects: tuple[SceneObject, ...]
    directions: tuple[tuple[str, tuple[float, float, float]], ...]

    def direction(self, name: str) -> tuple[float, float, float]:
        """The unit vector of direction ``name`` (``left``, ``right``, ``behind``, ``front``, ``above``, ...)."""
        for key, vec in self.directions:
            if key == name:
                return vec
        raise VqauditError(f"scene {self.name}: no direction {name!r}")

    def with_object(self, index: int, obj: SceneObject) -> Scene:
        """A copy with object ``index`` replaced."""
        objs = list(self.objects)
        objs[index] = obj
        return replace(self, objects=tuple(objs))

    def with_added(self, obj: SceneObject) -> Scene:
        """A copy with ``obj`` appended (it gets the next index)."""
        return replace(self, objects=(*self.objects, obj))

    def to_json(self) -> dict[str, Any]:
        """The scene as JSON (objects and directions; relationships are derived)."""
        return {
            "name": self.name,
            "objects": [o.to_json() for o in self.objects],
            "directions": {k: list(v) for k, v in self.directions},
        }


def relationships(scene: Scene) -> dict[str, tuple[tuple[int, ...], ...]]:
    """Spatial relationships of a scene, as CLEVR computes them.

    ``out[rel][i]`` lists (ascending) the objects ``j`` with ``(xyz_j - xyz_i) . direction(rel) > 0.2``, i.e. the
    objects that are ``rel`` of object ``i`` (CLEVR ``compute_all_relationships``, render_images.py).
    """
    out: dict[str, tuple[tuple[int, ...], ...]] = {}
    for rel in RELATIONS:
        d = scene.direction(rel)
        rows = []
        for a in scene.objects:
            row = [
                j
                for j, b in enumerate(scene.objects)
                if b is not a and sum((b.xyz[k] - a.xyz[k]) * d[k] for k in range(3)) > RELATION_EPS
            ]
            rows.append(tuple(row))
        out[rel] = tuple(rows)
    return out


def _vec3(value: Any, where: str) -> tuple[float, float, float]:
    if not isinstance(value, list | tuple) or len(value) != 3:
        raise VqauditError(f"{where}: expected 3 numbers, got {value!r}")
    return (float(value[0]), float(value[1]), float(value[2]))


def scene_from_json(record: dict[str, Any], where: str = "scene") -> Scene:
    """Parse one CLEVR scene record (``render_images.py`` layout).

    Raises:
        VqauditError: naming ``where`` and the field when a field is missing or malformed.
    """
    try:
        objects = tuple(
            SceneObject(
                shape=str(o["shape"]),
                color=str(o["color"]),
                size=str(o["size"]),
                material=str(o["material"]),
                xyz=_vec3(o["3d_coords"], f"{where}.objects[{i}].3d_coords"),
                rotation=float(o["rotation"]),
                pixel=_vec3(o["pixel_coords"], f"{where}.objects[{i}].pixel_coords") if "pixel_coords" in o else None,
            )
            for i, o in enumerate(record["objects"])
        )
        directions = tuple(
            (str(k), _vec3(v, f"{where}.directions.{k}")) for k, v in sorted(record["directions"].items())
        )
        name = str(record.get("image_filename", record.get("name", where))).removesuffix(".png")
    except KeyError as exc:
        raise VqauditError(f"{where}: missing field {exc.args[0]!r}") from None
    return Scene(name=name, objects=objects, directions=directions)


@cache
def _load_split(split: str) -> tuple[Scene, ...]:
    if split not in SCENE_FILES:
        raise VqauditError(f"unknown CLEVR split {split!r}; expected one of {sorted(SCENE_FILES)}")
    path = resources.files("vqaudit.suites.scenes") / "data" / SCENE_FILES[split]
    data = json.loads(gzip.decompress(path.read_bytes()))
    return tuple(scene_from_json(s, f"{SCENE_FILES[split]}: scenes[{i}]") for i, s in enumerate(data["scenes"]))


def load_scenes(split: str) -> tuple[Scene, ...]:
    """The bundled real CLEVR v1.0 scenes of ``split`` (``train``: 1,000 scenes; ``val``: 500), in file order."""
    return _load_split(split)
