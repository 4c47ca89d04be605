"""A device's colour is decided once, in Python (jaxmagic/model/device_colors.py), and written into
the sharding document (`devices[i].color`); the widget and the text/html fallback both read it.

- The rule: 8 devices get 8 clearly different colours; on 256 devices every pair of mesh neighbours
  differs; colours follow the primary mesh's order and are stable.
- A real capture's document carries each device's colour, and its static page draws every mesh cell
  and single-holder block in exactly that colour (tests/browser/test_sharding.py checks the widget
  against this same page in Chromium; js/test/sharding-view.test.js against the document).
- The front-end fixtures carry the colours the rule gives their meshes (they are real documents).
"""

from __future__ import annotations

import base64
import json
import math
import re
from pathlib import Path

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import jaxmagic
from jaxmagic.model.device_colors import device_colors, device_hex, device_order
from jaxmagic.views.static_sharding import sharding_html

from . import jax_versions

FIXTURES = Path(__file__).resolve().parents[1] / "js" / "test" / "fixtures"
_IMG = re.compile(r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"')
_MESH_CELL = re.compile(r'<rect [^>]*fill="(#[0-9a-f]{6})"/><text [^>]*>(\d+)</text>')


def _hex_lab(hex_colour: str) -> tuple[float, float, float]:
    """OKLab of `#rrggbb`, to measure how far apart two colours look."""
    decode = lambda x: x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4
    r, g, b = (decode(int(hex_colour[i : i + 2], 16) / 255) for i in (1, 3, 5))
    lms = [
        math.cbrt(0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b),
        math.cbrt(0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b),
        math.cbrt(0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b),
    ]
    rows = (
        (0.2104542553, 0.793617785, -0.0040720468),
        (1.9779984951, -2.428592205, 0.4505937099),
        (0.0259040371, 0.7827717662, -0.808675766),
    )
    return tuple(sum(k * v for k, v in zip(row, lms)) for row in rows)  # type: ignore[return-value]


def _distance(a: str, b: str) -> float:
    return math.dist(_hex_lab(a), _hex_lab(b))


def static_mesh_colours(html: str) -> dict[int, str]:
    """{device id: fill} of every mesh cell the static page draws (its pictures are base64 SVGs)."""
    out: dict[int, str] = {}
    for data in _IMG.findall(html):
        for fill, device in _MESH_CELL.findall(base64.b64decode(data).decode()):
            assert out.setdefault(int(device), fill) == fill, f"device {device} drawn in two colours"
    return out


def test_8_devices_get_8_clearly_different_colours():
    colours = [device_hex(i, 8) for i in range(8)]
    assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in colours)
    assert (
        min(_distance(a, b) for i, a in enumerate(colours) for b in colours[i + 1 :]) > 0.08
    )  # ~0.02 is just noticeable


def test_256_devices_mesh_neighbours_differ_and_order_follows_the_primary_mesh():
    n = 256
    colours = [device_hex(i, n) for i in range(n)]
    for i in range(n):
        if i % 16 < 15:
            assert _distance(colours[i], colours[i + 1]) > 0.05, i
        if i + 16 < n:
            assert _distance(colours[i], colours[i + 16]) > 0.05, i
    assert device_hex(5, 8) == device_hex(5, 8)
    meshes = [{"devices": [3, 2]}, {"devices": [7, 6, 5, 4]}, {"devices": None}]
    assert device_order(meshes, range(8)) == [7, 6, 5, 4, 0, 1, 2, 3]
    assert device_colors(meshes, range(8))[7] == device_hex(0, 8)


def test_the_front_end_fixtures_carry_the_colours_the_rule_gives():
    for name in ("sharding-small", "sharding-256"):
        doc = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
        want = device_colors(doc["meshes"], [d["id"] for d in doc["devices"]])
        assert {d["id"]: d["color"] for d in doc["devices"]} == want, name
    big = json.loads((FIXTURES / "sharding-256.json").read_text(encoding="utf-8"))
    first = big["meshes"][0]["devices"][0]
    assert next(d["color"] for d in big["devices"] if d["id"] == first) == device_hex(0, 256)


def test_the_document_and_its_static_page_give_each_device_one_colour():
    ns: dict = {}
    with jaxmagic.capture(ns, shardings=True) as cap:
        mesh = jax_versions.auto_mesh((2, 4), ("x", "y"))
        ns["w"] = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P("x", "y")))
        ns["one"] = jax.device_put(jnp.ones(4), jax.devices()[5])
    doc = jaxmagic.document(cap, "sharding")
    colour = {d["id"]: d["color"] for d in doc["devices"]}
    assert colour == device_colors(doc["meshes"], list(colour)) and len(set(colour.values())) == 8
    html = sharding_html(doc)
    assert static_mesh_colours(html) == colour
    fills = [
        f for data in _IMG.findall(html) for f in re.findall(r'fill="(#[0-9a-f]{6})"', base64.b64decode(data).decode())
    ]
    assert set(fills) == set(colour.values())  # blocks too: no colour of another rule
