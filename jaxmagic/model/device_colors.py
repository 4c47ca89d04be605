"""The colour of each device, decided once: the sharding document carries it (`devices[i].color`),
and the widget (widgets/sharding/model.js) and the text/html fallback (views/static_sharding.py)
both read it, so a device is one colour wherever it is drawn.

The choice: devices are put in the row-major order of the *primary* mesh (the concrete mesh with
most devices; devices outside it follow by id), and device i of n gets hue 30° + 360°·i/n in
OKLCH, a perceptual space, so every hue is equally light and no device stands out by accident. Up
to 12 devices that is the whole difference: 8 devices are 45° apart at one lightness and chroma.
Beyond 12, hue steps alone get too close, so lightness cycles through three levels with the index:
two devices next to each other in the mesh (i and i+1 along the last axis, i and i+cols along the
one before) differ in lightness and hue whenever cols is not a multiple of 3, and by hue
(360°·cols/n) when it is. 256 devices cannot all be told apart by colour; neighbours can, and the
id is always in the cell and the hover text. Colours are mid-light, so dark text reads on every
one, on light and dark pages alike (one palette serves both themes).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

# OKLab -> LMS (cubed) -> linear sRGB, Björn Ottosson's matrices.
_LAB_TO_LMS = (
    (1.0, 0.3963377774, 0.2158037573),
    (1.0, -0.1055613458, -0.0638541728),
    (1.0, -0.0894841775, -1.291485548),
)
_LMS_TO_RGB = (
    (4.0767416621, -3.3077115913, 0.2309699292),
    (-1.2684380046, 2.6097574011, -0.3413193965),
    (-0.0041960863, -0.7034186147, 1.707614701),
)


def _lab_to_linear(lightness: float, a: float, b: float) -> list[float]:
    lms = [(r[0] * lightness + r[1] * a + r[2] * b) ** 3 for r in _LAB_TO_LMS]
    return [r[0] * lms[0] + r[1] * lms[1] + r[2] * lms[2] for r in _LMS_TO_RGB]


def _encode(x: float) -> float:
    """Linear light to the sRGB curve."""
    return 12.92 * x if x <= 0.0031308 else 1.055 * x ** (1 / 2.4) - 0.055


def oklch_hex(lightness: float, chroma: float, hue: float) -> str:
    """`#rrggbb` of OKLCH (lightness 0-1, chroma, hue in degrees); chroma is lowered in steps of
    0.005 until the colour fits sRGB."""
    rad = hue * math.pi / 180
    c = chroma
    rgb = _lab_to_linear(lightness, c * math.cos(rad), c * math.sin(rad))
    while not all(-1e-4 <= x <= 1 + 1e-4 for x in rgb) and c - 0.005 >= 0:
        c -= 0.005
        rgb = _lab_to_linear(lightness, c * math.cos(rad), c * math.sin(rad))
    return "#" + "".join(f"{math.floor(min(1.0, max(0.0, _encode(x))) * 255 + 0.5):02x}" for x in rgb)


def device_hex(i: int, n: int) -> str:
    """Colour of device i of n in colour order (see the module docstring)."""
    lightness = 0.72 if n <= 12 else (0.66, 0.84, 0.75)[i % 3]
    return oklch_hex(lightness, 0.14 if n <= 12 else 0.13, 30 + 360 * i / max(1, n))


def device_order(meshes: Iterable[dict], device_ids: Iterable[int]) -> list[int]:
    """Device ids in colour order: the primary mesh's devices row-major, then every other device by id."""
    concrete = [m for m in meshes if isinstance(m.get("devices"), list)]
    primary = max(concrete, key=lambda m: len(m["devices"]), default=None)  # the first of the largest
    order = list(dict.fromkeys(primary["devices"] if primary else []))
    seen = set(order)
    order += sorted(d for d in set(device_ids) if d not in seen)
    return order


def device_colors(meshes: Iterable[dict], device_ids: Iterable[int]) -> dict[int, str]:
    """{device id: `#rrggbb`} for the devices of a sharding document and its meshes."""
    order = device_order(list(meshes), device_ids)
    return {d: device_hex(i, len(order)) for i, d in enumerate(order)}
