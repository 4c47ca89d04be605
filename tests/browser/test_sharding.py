"""The %%sharding view in a real browser: a sharding document of a real cell (8 simulated
devices, a 2x4 mesh, arrays sharded, replicated and on one device, a jitted matmul with its
collectives), exported with `jaxmagic.to_html`, opened from file:// in headless Chromium
(offline).

(a) every array draws one cell per block, each in its holder's colour, and the 8 devices
have 8 different colours; (b) clicking a device's mesh cell lights exactly the blocks whose
holders include it (by the document) and dims the rest, Esc clears; (c) a collective lights
the devices of its groups in the mesh; (d) nothing leaves the machine and the console stays
clean. First render and a device selection are timed and printed, never asserted.
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
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=256",
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run([sys.executable, "-c", _DOC_256, str(doc_path)], env=env, capture_output=True, text=True,
                          timeout=240)
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
