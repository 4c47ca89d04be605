"""The %%sharding view in a real browser: a sharding document of a real cell (8 simulated
devices, a 2x4 mesh, arrays sharded, replicated and on one device, a jitted matmul with its
collectives), exported with `jaxmagic.to_html`, opened from file:// in headless Chromium
(offline).

(a) every array draws one cell per block, each in its holder's colour, and the 8 devices
have 8 different colours; (b) clicking a device's mesh cell lights exactly the blocks whose
holders include it (by the document) and dims the rest, Esc clears; (c) a collective lights
the devices of its groups in the mesh; (d) nothing leaves the machine and the console stays
clean. First render and a device selection are timed and printed, never asserted. (e) After
earlier cells left 30 arrays, a 2x4-mesh matmul cell's view, at 1280x720 and 1400 px, normal and
presentation mode, shows its first collective (the key element) within its first 720 px, the 30
earlier arrays as one closed row below the calls (opened by the keyboard), and its legend.
"""

from __future__ import annotations

import time
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import jaxmagic
from jaxmagic.views.static_sharding import sharding_html

from ..test_device_colors import static_mesh_colours
from .harness import GuardedPage, poll

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def _sharding_page(tmp_path: Path) -> tuple[Path, dict]:
    ns: dict = {}
    with jaxmagic.capture(ns, shardings=True) as cap:
        mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
        ns["mesh"] = mesh
        ns["w"] = jax.device_put(jnp.ones((512, 512)), NamedSharding(mesh, P("x", "y")))
        ns["batch"] = jax.device_put(jnp.ones((64, 512)), NamedSharding(mesh, P("y")))
        ns["rep"] = jax.device_put(jnp.ones((256, 128)), NamedSharding(mesh, P()))
        ns["bias"] = jax.device_put(jnp.zeros(512), jax.devices()[2])

        @jax.jit
        def step(w, batch):
            return jnp.tanh(batch @ w).sum(0)

        ns["out"] = step(ns["w"], ns["batch"])
    doc = jaxmagic.document(cap, "sharding")
    out = tmp_path / "sharding.html"
    jaxmagic.to_html(doc, out)
    return out, doc


# Per array card, in document order: the block number of each drawn cell (from its label,
# "name · block 3 of 8"), its computed background and whether it is lit.
_CELLS_JS = """() => [...document.querySelectorAll('.jm-sh-array')].map((card) =>
  [...card.querySelectorAll('.jm-sh-cell')].map((c) => ({
    block: Number(/block (\\d+) of/.exec(c.getAttribute('aria-label'))[1]) - 1,
    bg: getComputedStyle(c).backgroundImage !== 'none' ? getComputedStyle(c).backgroundImage : getComputedStyle(c).backgroundColor,
    lit: c.classList.contains('jm-sh-on'),
    opacity: Number(getComputedStyle(c).opacity),
  })))"""

_MESH_JS = """() => [...document.querySelectorAll('.jm-sh-mesh')][0].querySelectorAll('.jm-sh-cell').length &&
  [...[...document.querySelectorAll('.jm-sh-mesh')][0].querySelectorAll('.jm-sh-cell')].map((c) => ({
    id: Number(c.textContent), bg: getComputedStyle(c).backgroundColor, lit: c.classList.contains('jm-sh-on'),
    tag: c.getAttribute('data-tag') }))"""


def _held(doc: dict, device: int) -> list[list[int]]:
    return [sorted(i for i, b in enumerate(a["blocks"]) if device in b["devices"]) for a in doc["arrays"]]


def test_blocks_colours_and_device_selection(guarded_page: GuardedPage, tmp_path: Path) -> None:
    out, doc = _sharding_page(tmp_path)
    page = guarded_page.page
    t0 = time.perf_counter()
    page.goto(out.as_uri(), wait_until="load")
    assert poll(lambda: page.locator(".jm-sh-array").count() == len(doc["arrays"]), 30), guarded_page.report()
    print(f"[sharding] first render: {1000 * (time.perf_counter() - t0):.0f} ms (load and draw)")

    # (a) one cell per block; 8 devices, 8 colours; each single-holder block in its device's colour
    cells = page.evaluate(_CELLS_JS)
    assert [len(c) for c in cells] == [len(a["blocks"]) for a in doc["arrays"]]
    for card, a in zip(cells, doc["arrays"]):
        assert sorted(c["block"] for c in card) == list(range(len(a["blocks"])))
    mesh = page.evaluate(_MESH_JS)
    colour = {c["id"]: c["bg"] for c in mesh}
    assert sorted(colour) == doc["meshes"][0]["devices"] == list(range(8))
    assert len(set(colour.values())) == 8, colour
    for card, a in zip(cells, doc["arrays"]):
        for c in card:
            holders = a["blocks"][c["block"]]["devices"]
            if len(holders) == 1:
                assert c["bg"] == colour[holders[0]], (a["name"], c, holders)
            else:
                assert "repeating-linear-gradient" in c["bg"], (a["name"], c)
    # each device in the colour the text/html fallback of this capture gives it (one field decides both)
    rgb = lambda h: f"rgb({int(h[1:3], 16)}, {int(h[3:5], 16)}, {int(h[5:7], 16)})"
    assert {d: rgb(c) for d, c in static_mesh_colours(sharding_html(doc)).items()} == colour

    # (b) a device lights exactly the blocks it holds, the rest dimmed; again a device; Esc clears
    for device in (0, 6):
        t1 = time.perf_counter()
        page.locator(".jm-sh-mesh").first.locator(".jm-sh-cell").nth(doc["meshes"][0]["devices"].index(device)).click()
        assert poll(lambda: page.locator(".jm-sh-bar b").first.text_content().startswith(f"device {device}"), 10)
        print(f"[sharding] select device {device}: {1000 * (time.perf_counter() - t1):.0f} ms (click to bar)")
        cells = page.evaluate(_CELLS_JS)
        assert [sorted(c["block"] for c in card if c["lit"]) for card in cells] == _held(doc, device)
        for card in cells:
            for c in card:
                assert (c["opacity"] == 1) if c["lit"] else (c["opacity"] < 0.5), c
    page.keyboard.press("Escape")
    assert poll(lambda: page.locator(".jm-sh-on").count() == 0, 5)

    # (c) a collective lights its groups' devices in the mesh, tagged with the group
    call = doc["calls"][0]
    assert call["collectives"], call
    k, col = next((k, c) for k, c in enumerate(call["collectives"]) if c["groups"])
    page.locator(".jm-sh-call").first.locator(".jm-sh-coll").nth(k).click()
    mesh = page.evaluate(_MESH_JS)
    want = {d: str(g) for g, members in enumerate(col["groups"]) for d in members}
    assert {c["id"]: c["tag"] for c in mesh if c["lit"]} == want

    # (d) offline, no errors
    assert not guarded_page.blocked and not guarded_page.offsite_seen, guarded_page.report()
    assert not guarded_page.console_errors and not guarded_page.page_errors, guarded_page.report()


_DOC_256 = """
import json, os, sys
import jax, jax.numpy as jnp, jaxmagic
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((16, 16), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
ns = {"mesh": mesh,
      "tiles": jax.device_put(jnp.ones((64, 64)), NamedSharding(mesh, P("data", "model"))),
      "rows": jax.device_put(jnp.ones((32, 8)), NamedSharding(mesh, P("data"))),
      "everywhere": jax.device_put(jnp.ones(4), NamedSharding(mesh, P()))}
with jaxmagic.capture(ns, shardings=True) as cap:
    pass
json.dump(jaxmagic.document(cap, "sharding"), open(sys.argv[1], "w"))
"""


def test_a_256_device_mesh_renders_and_selects(guarded_page: GuardedPage, tmp_path: Path) -> None:
    """256 simulated devices need their own process (the count is fixed when JAX starts)."""
    import json
    import os
    import subprocess
    import sys

    doc_path, out = tmp_path / "doc.json", tmp_path / "sharding256.html"
    env = {
        **os.environ,
        "XLA_FLAGS": "--xla_force_host_platform_device_count=256",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    proc = subprocess.run(
        [sys.executable, "-c", _DOC_256, str(doc_path)], env=env, capture_output=True, text=True, timeout=240
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(doc_path.read_text())
    jaxmagic.to_html(doc, out)
    page = guarded_page.page
    page.goto(out.as_uri(), wait_until="load")
    assert poll(lambda: page.locator(".jm-sh-array").count() == 3, 30), guarded_page.report()
    assert page.locator(".jm-sh-mesh").first.locator(".jm-sh-cell").count() == 256
    cells = page.evaluate(_CELLS_JS)
    assert [len(c) for c in cells] == [len(a["blocks"]) for a in doc["arrays"]] == [256, 16, 1]
    device = doc["meshes"][0]["devices"][37]
    page.locator(".jm-sh-mesh").first.locator(".jm-sh-cell").nth(37).click()
    assert poll(lambda: page.locator(".jm-sh-bar b").first.text_content().startswith(f"device {device}"), 10)
    cells = page.evaluate(_CELLS_JS)
    assert [sorted(c["block"] for c in card if c["lit"]) for card in cells] == _held(doc, device)
    guarded_page.screenshot("sharding-256")


_MATMUL_CELL = """
grid = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
x = jax.device_put(jnp.ones((64, 32)), NamedSharding(grid, P('x', 'y')))
w = jax.device_put(jnp.ones((32, 16)), NamedSharding(grid, P('y', None)))
matmul = jax.jit(lambda a, b: a @ b)
out = matmul(x, w)
"""


def _after_30_arrays(tmp_path: Path) -> tuple[Path, dict]:
    """A 2x4-mesh matmul cell run after earlier cells left 30 arrays bound (as a notebook would)."""
    ns: dict = {"jax": jax, "jnp": jnp, "NamedSharding": NamedSharding, "P": P, "AxisType": AxisType}
    for i in range(30):
        ns[f"old{i}"] = jnp.full((4, 4) if i % 3 else (16,), float(i))
    with jaxmagic.capture(ns, shardings=True) as cap:
        exec(_MATMUL_CELL, ns)
    doc = jaxmagic.document(cap, "sharding")
    out = tmp_path / "matmul.html"
    jaxmagic.to_html(doc, out)
    return out, doc


# Where the story's parts are, relative to the view's top (px), once the view's top is at the top of the
# window: the key element (the first collective), the earlier-arrays row, the legend, the first call.
_FIRST_SCREEN_JS = """(root) => {
  root.scrollIntoView({block: 'start'});
  const top = root.getBoundingClientRect().top;
  const box = (e) => e && (({top: t, bottom: b, left: l, right: r}) => ({top: t - top, bottom: b - top, left: l, right: r}))(e.getBoundingClientRect());
  const key = root.querySelectorAll('[data-jm-key-element]');
  const row = root.querySelector('.jm-sh-earlier-row');
  const toggle = row && row.querySelector('button');
  return {keys: key.length, key: box(key[0]), keyIsFirstCollective: key[0] === root.querySelector('.jm-sh-coll'),
          row: box(row), rowText: toggle && toggle.textContent, expanded: toggle && toggle.getAttribute('aria-expanded'),
          rowCardsHidden: row && row.querySelector('.jm-sh-earlier-cards').hidden,
          rowCards: row ? row.querySelectorAll('.jm-sh-array').length : 0,
          legend: box(root.querySelector('[data-jm-legend]')), call: box(root.querySelector('.jm-sh-call')),
          windowH: window.innerHeight, rootW: root.getBoundingClientRect().width};
}"""


@pytest.mark.parametrize("viewport", [(1280, 720), (1400, 900)], ids=["1280x720", "1400"])
@pytest.mark.parametrize("mode", ["normal", "present"])
def test_the_cells_own_story_comes_first_after_30_earlier_arrays(
    guarded_page: GuardedPage, tmp_path: Path, viewport: tuple[int, int], mode: str
) -> None:
    """After earlier cells left 30 arrays, a 2x4-mesh matmul cell's view shows its first collective (the
    key element) within the view's first 720 px, the earlier arrays as one closed row below the calls,
    and the legend; in both modes, at 1280x720 and 1400 px wide."""
    from .stage import legibility, present

    out, doc = _after_30_arrays(tmp_path)
    earlier = [a for a in doc["arrays"] if a["earlier"]]
    assert len(earlier) == 30 and [m["names"] for m in doc["meshes"]] == [["grid"]]
    assert doc["calls"][0]["collectives"], "XLA inserted no collective: the scenario lost its point"
    page = guarded_page.page
    page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
    page.goto(out.as_uri(), wait_until="load")
    assert poll(lambda: page.locator(".jm-sh-array").count() == len(doc["arrays"]), 30), guarded_page.report()
    root = page.locator(".jm-root").first
    if mode == "present":
        present(root)
    at = root.evaluate(_FIRST_SCREEN_JS)
    assert at["keys"] == 1 and at["keyIsFirstCollective"], at
    # the key element on the view's first screen (720 px: the projector's height), wholly
    assert at["key"]["top"] >= 0 and at["key"]["bottom"] <= 720, at
    assert at["key"]["bottom"] <= at["windowH"] and at["key"]["right"] <= viewport[0], at
    # one closed row of the 30 earlier arrays, below the calls
    assert at["rowText"].startswith("▸ 30 arrays from earlier cells"), at
    assert at["expanded"] == "false" and at["rowCardsHidden"] and at["rowCards"] == 30, at
    assert at["row"]["top"] > at["call"]["bottom"], at
    assert at["legend"] is not None and at["legend"]["bottom"] > at["legend"]["top"], at
    assert page.locator("[data-jm-legend]").first.is_visible()
    guarded_page.screenshot(f"sharding-first-screen-{mode}-{viewport[0]}", page)
    if mode == "present":
        report = legibility(root)
        assert report.problems == [], str(report)
    # the row opens with the keyboard (a button: Enter) and shows the 30 cards, and closes again
    toggle = root.locator(".jm-sh-earlier-toggle")
    toggle.focus()
    page.keyboard.press("Enter")
    assert toggle.get_attribute("aria-expanded") == "true"
    assert root.locator(".jm-sh-earlier-cards .jm-sh-array:visible").count() == 30
    toggle.click()
    assert root.locator(".jm-sh-earlier-cards").first.is_hidden()
    assert not guarded_page.console_errors and not guarded_page.page_errors, guarded_page.report()
