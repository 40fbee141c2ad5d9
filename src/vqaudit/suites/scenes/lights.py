"""The scene's lamps: CLEVR's ``base_scene.blend`` light rig, shared by the shading and the soft shadows.

Positions are those of the blend file's lamps (key, fill, back, and a sun) as measured by Kubric's CLEVR
re-creation (``get_clevr_lights``, Apache-2.0); area lamps fall off with the squared distance, the sun gives only a
direction. Powers are linear RGB, calibrated by eye and by the median linear brightness of the ground and of the
objects in original CLEVR renders (``docs/scenes.md``). Only the key lamp and the sun cast (soft) shadows.
"""

from __future__ import annotations

from dataclasses import dataclass


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
