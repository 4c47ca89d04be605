"""Playback and presentation mode of the %%sharding view in a real browser.

The document is a real capture on the 8 simulated CPU devices: the demo notebook's sharding
cell (a 1-D `data` mesh and a 2x4 mesh, `batch` split, `weights` replicated, `w` on the 2x4
mesh, the jitted `data_parallel_grad` and `sharded_matmul`) plus one array on device 3, so one
step lights a single device. It is exported with `jaxmagic.to_html` and opened offline in
Chromium.

(a) playback reaches the last step; the labels, read step by step, tell the story JAX itself
gives: the meshes, then each array with the block count, block shape and holders of
`arr.sharding.devices_indices_map(arr.shape)`, then each call with the collectives of its
compiled HLO text in order; an array's step shows exactly the cards up to it and lights
exactly its holders, and a copy of each block flies to each holder's cell in the mesh; the
end equals the drawing before playback (every element's tag, classes and tags). (b) keyboard:
space plays and pauses, arrows step, Home/End. (c) presentation mode at 1280x720: no text too
small, clipped or overlapping, at the end and mid-playback, also for the committed fixtures
(every step of the 8-device one; the 256-device one may pan); screenshots in the artifacts dir. (d) nothing leaves the machine, the console
stays clean. A 5,000-step story's step time is printed, never asserted.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import jaxmagic

from .harness import REPO, GuardedPage, poll
from .stage import PROJECTOR, Playback, legibility, present

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

COLLECTIVE_RE = re.compile(r"\b(all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)(?:-start)?\(")


def _demo() -> tuple[dict, dict, dict]:
    """The demo's sharding cell, plus `bias` on device 3. Returns (document, arrays, HLO texts)."""
    ns: dict = {}
    with jaxmagic.capture(ns, shardings=True) as cap:
        dp = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,))
        grid = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
        batch = jax.device_put(jnp.ones((64, 16)), NamedSharding(dp, P("data")))
        weights = jax.device_put(0.1 * jnp.ones((16, 4)), NamedSharding(dp, P()))
        w = jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(grid, P("x", "y")))
        bias = jax.device_put(jnp.zeros(4), jax.devices()[3])

        @jax.jit
        def data_parallel_grad(weights, batch):
            return jax.grad(lambda w: jnp.mean((batch @ w) ** 2))(weights)

        grads = data_parallel_grad(weights, batch)

        @jax.jit
        def sharded_matmul(x, w):
            return jax.shard_map(
                lambda x, w: jax.lax.psum(x @ w, "data"), mesh=dp, in_specs=(P(None, "data"), P("data")), out_specs=P()
            )(x, w)

        x = jax.device_put(jnp.ones((4, 64)), NamedSharding(dp, P(None, "data")))
        y = sharded_matmul(x, batch)
        ns.update(
            dp=dp,
            grid=grid,
            batch=batch,
            weights=weights,
            w=w,
            bias=bias,
            grads=grads,
            y=y,
            data_parallel_grad=data_parallel_grad,
            sharded_matmul=sharded_matmul,
        )
    doc = jaxmagic.document(cap, "sharding")
    arrays = {"batch": batch, "weights": weights, "w": w, "bias": bias, "grads": grads, "y": y}
    hlo = {
        data_parallel_grad.__qualname__: data_parallel_grad.lower(weights, batch).compile().as_text(),
        sharded_matmul.__qualname__: sharded_matmul.lower(x, batch).compile().as_text(),
    }
    return doc, arrays, hlo


def _blocks_phrase(arr: Any) -> str:
    """What the story must say of an array's blocks, from JAX's own devices_indices_map."""
    by_index: dict[tuple, list[int]] = {}
    for device, index in arr.sharding.devices_indices_map(arr.shape).items():
        key = tuple(s.indices(n)[:2] for s, n in zip(index, arr.shape))
        by_index.setdefault(key, []).append(device.id)
    shapes: dict[str, int] = {}
    for key in by_index:
        text = f"f32[{','.join(str(b - a) for a, b in key)}]"
        shapes[text] = shapes.get(text, 0) + 1
    parts = " and ".join(f"{n} block{'s' if n > 1 else ''} of {s}" for s, n in shapes.items())
    holders = [len(ds) for ds in by_index.values()]
    if len(by_index) == 1:
        [ds] = by_index.values()
        where = f"on device {ds[0]}" if len(ds) == 1 else f"replicated on {len(ds)} devices"
    elif max(holders) == 1:
        where = "one per device"
    else:
        where = f"each on {max(holders)} devices"
    return f"{parts}, {where}"


def _group_size(line: str) -> int | None:
    """Devices per replica group of one HLO instruction, in any of XLA's three spellings."""
    if m := re.search(r"replica_groups=\{\{([\d,]+)\}", line):  # explicit {{0,1,...},...}
        return len(m.group(1).split(","))
    if m := re.search(r"replica_groups=\[(\d+),(\d+)\]<=", line):  # iota [groups,size]<=[n]
        return int(m.group(2))
    if m := re.search(r"replica_groups=mesh\[([^\]]*)\] \{([^}]*)\}", line):  # mesh['axis_0'=8,...] {'axis_0'}
        sizes = dict(re.findall(r"'(\w+)'=(\d+)", m.group(1)))
        size = 1
        for axis in re.findall(r"'(\w+)'", m.group(2)):
            size *= int(sizes[axis])
        return size
    return None


def _hlo_collectives(text: str) -> list[tuple[str, int | None]]:
    """(kind, devices per group) of each collective of a compiled HLO text, in text order."""
    return [(m.group(1), _group_size(line)) for line in text.splitlines() if (m := COLLECTIVE_RE.search(line))]


# Every element of the view but the stage bar (its counter and line change with the position):
# tag, classes, a collective's group tag, and whether it is hidden.
_SNAPSHOT_JS = """(root) => [...root.querySelectorAll('*')].filter((e) => !e.closest('.jm-stagebar')).map((e) =>
  `${e.tagName}.${e.getAttribute('class') || ''}#${e.getAttribute('data-tag') || ''}${e.hidden ? '!' : ''}`)"""

# One forward step from the page itself, then every block copy in flight paused at its landing
# point: where it lands and the mesh cell of the device it flies to (same call: nothing races).
_FLY_JS = """(root) => {
  root.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight', bubbles: true, cancelable: true}));
  const ghosts = [...root.querySelectorAll('.jm-sh-flights .jm-sh-ghost')];
  const box = (r) => [r.left, r.top, r.width, r.height].map((v) => Math.round(v));
  return ghosts.map((g) => {
    const [a] = g.getAnimations();
    a.pause();
    a.currentTime = a.effect.getComputedTiming().endTime - 0.01;
    return {bg: getComputedStyle(g).backgroundColor, at: box(g.getBoundingClientRect())};
  });
}"""

_MESH_CELLS_JS = """(root) => [...root.querySelectorAll('.jm-sh-mesh')].map((card) => [...card.querySelectorAll('.jm-sh-cell')].map((c) => {
  const r = c.getBoundingClientRect();
  return {id: Number(c.textContent), lit: c.classList.contains('jm-sh-on'), tag: c.getAttribute('data-tag'),
          bg: getComputedStyle(c).backgroundColor, at: [r.left, r.top, r.width, r.height].map((v) => Math.round(v))};
}))"""


def _open(guarded: GuardedPage, path: Path, count: int) -> Any:
    page = guarded.page
    page.goto(path.as_uri(), wait_until="load")
    assert poll(lambda: page.locator(".jm-sh-array").count() == count, 30), guarded.report()
    return page.locator(".jm-root").first


def _steps(root: Any, pb: Playback) -> list[str]:
    """Every step's label, by stepping with the keyboard from the start."""
    pb.key("Home")
    labels = [pb.label()]
    total = pb.position()[1]
    for _ in range(total):
        pb.key("ArrowRight")
        labels.append(pb.label())
    assert pb.position() == (total, total)
    return labels


def test_playback_tells_jaxs_story_and_ends_on_the_static_view(guarded_page: GuardedPage, tmp_path: Path) -> None:
    doc, arrays, hlo = _demo()
    out = tmp_path / "sharding.html"
    jaxmagic.to_html(doc, out)
    root = _open(guarded_page, out, len(doc["arrays"]))
    before = root.evaluate(_SNAPSHOT_JS)
    pb = Playback(root)
    assert pb.shown

    # (a) play to the end, then the drawing is the static one again
    played = pb.play_to_end()
    assert played[0].startswith("Start: 2 meshes over 8 devices")
    assert poll(lambda: root.evaluate(_SNAPSHOT_JS) == before, 10), "the end differs from the static view"

    # the story, step by step, against JAX's own answers
    labels = _steps(root, pb)[1:]
    order = ["batch", "weights", "w", "bias", "grads", "y"]  # namespace arrays first, then outputs by call
    calls = {name: _hlo_collectives(text) for name, text in hlo.items()}
    assert all(calls.values()), calls
    # the meshes by the names the cell bound them to
    expected = ["mesh dp · 8 devices along 'data'", "mesh grid · 8 devices as 2 × 4: 'x' (2) × 'y' (4)"]
    assert labels[:2] == expected
    for name, label in zip(order, labels[2 : 2 + len(order)]):
        arr = arrays[name]
        assert label.startswith(f"{name} f32[{','.join(map(str, arr.shape))}] · "), label
        assert _blocks_phrase(arr) in label, (label, _blocks_phrase(arr))
    rest = labels[2 + len(order) :]
    for name, kinds in calls.items():
        head, *cols = rest[: 1 + len(kinds)]
        rest = rest[1 + len(kinds) :]
        assert head.startswith(f"{name}("), head
        for k, c in enumerate(cols):
            # a group of all 8 devices is the whole 'data' axis of the calls' 1-D mesh
            kind, size = kinds[k]
            assert size == 8, (name, kinds)
            assert c.startswith(f"{name} · {kind} {k + 1} of {len(kinds)} over 'data' · "), c
            assert "within 1 group of 8" in c, c
    assert rest == []
    assert list(calls) == ["_demo.<locals>.data_parallel_grad", "_demo.<locals>.sharded_matmul"]
    assert [k for k, _ in calls["_demo.<locals>.data_parallel_grad"]] == ["all-reduce"]

    # an intermediate step: bias's (device 3 only) shows the cards up to it and lights device 3 alone
    pos = 2 + order.index("bias") + 1
    pb.key("Home")
    for _ in range(pos - 1):
        pb.key("ArrowRight")
    flights = root.evaluate(_FLY_JS)
    assert pb.position()[0] == pos and pb.label().startswith("bias f32[4] · device 3")
    cards = root.evaluate("""(root) => [...root.querySelectorAll('.jm-sh-array')].map((c) =>
      [c.querySelector('.jm-sh-name').textContent, c.classList.contains('jm-pb-future'), c.classList.contains('jm-pb-current')])""")
    assert {n for n, fut, _ in cards if not fut} == {"batch", "weights", "w", "bias"}
    assert [n for n, _, cur in cards if cur] == ["bias"]
    meshes = root.evaluate(_MESH_CELLS_JS)
    for cells in meshes:
        assert [c["id"] for c in cells if c["lit"]] == [3]
    # one copy of bias's block flew to device 3's cell in its mesh (bias has no mesh: the first holding it)
    assert len(flights) == 1
    cell3 = next(c for c in meshes[0] if c["id"] == 3)
    assert flights[0]["bg"] == cell3["bg"]
    assert all(abs(a - b) <= 1 for a, b in zip(flights[0]["at"], cell3["at"])), (flights, cell3)
    # weights (replicated): a copy to every one of the 8 holders in its own mesh (m0)
    pb.key("Home")
    for _ in range(2 + order.index("weights")):
        pb.key("ArrowRight")
    flights = root.evaluate(_FLY_JS)
    meshes = root.evaluate(_MESH_CELLS_JS)
    landed = {tuple(f["at"]) for f in flights}
    assert len(flights) == 8 and landed == {tuple(c["at"]) for c in meshes[0]}, (flights, meshes[0])
    guarded_page.screenshot("sharding-stage-step", root)

    # a collective's step lights its groups in the mesh, tagged with the group
    pb.key("End")
    pb.key("Home")
    while not pb.label().startswith("_demo.<locals>.data_parallel_grad · all-reduce"):
        pb.key("ArrowRight")
    col = doc["calls"][0]["collectives"][0]
    meshes = root.evaluate(_MESH_CELLS_JS)
    want = {d: str(g) for g, members in enumerate(col["groups"]) for d in members}
    assert {c["id"]: c["tag"] for c in meshes[0] if c["lit"]} == want
    assert root.locator(".jm-sh-coll.jm-sh-on.jm-pb-current").count() == 1

    # reduced motion: steps without flights
    guarded_page.page.emulate_media(reduced_motion="reduce")
    pb.key("Home")
    for _ in range(2 + order.index("weights")):
        pb.key("ArrowRight")
    assert root.evaluate(_FLY_JS) == []
    guarded_page.page.emulate_media(reduced_motion="no-preference")

    # (d) offline, no errors
    assert not guarded_page.blocked and not guarded_page.offsite_seen, guarded_page.report()
    assert not guarded_page.console_errors and not guarded_page.page_errors, guarded_page.report()


def test_keyboard_controls_the_story(guarded_page: GuardedPage, tmp_path: Path) -> None:
    doc, _, _ = _demo()
    out = tmp_path / "sharding.html"
    jaxmagic.to_html(doc, out)
    root = _open(guarded_page, out, len(doc["arrays"]))
    pb = Playback(root)
    n = pb.position()[1]
    own = [a for a in doc["arrays"] if not a["earlier"]]  # what an earlier cell placed is not the story
    assert n == len(doc["meshes"]) + len(own) + sum(1 + len(c["collectives"]) for c in doc["calls"])
    assert pb.check_keyboard() == n
    pb.key("Home")
    pb.key("ArrowRight")
    assert pb.label().startswith("mesh dp")
    pb.key("End")
    # a grid's own arrow keys move between its cells and leave the story alone
    cell = root.locator(".jm-sh-mesh .jm-sh-cell").first
    cell.focus()
    cell.press("ArrowRight")
    assert pb.position() == (n, n)
    assert not guarded_page.console_errors and not guarded_page.page_errors, guarded_page.report()


def test_presentation_mode_is_legible_at_1280x720(guarded_page: GuardedPage, tmp_path: Path) -> None:
    doc, _, _ = _demo()
    out = tmp_path / "sharding.html"
    jaxmagic.to_html(doc, out)
    page = guarded_page.page
    page.set_viewport_size({"width": PROJECTOR[0], "height": PROJECTOR[1]})
    root = _open(guarded_page, out, len(doc["arrays"]))
    present(root)
    assert poll(lambda: root.locator(".jm-sh-array").count() == len(doc["arrays"]), 10)
    report = legibility(root)
    assert report.texts > 50 and report.problems == [], str(report)
    # the 8-device story reads: every mesh cell and block shows its device id (or ×N) in the cell
    ids = root.evaluate("(r) => [...r.querySelectorAll('.jm-sh-cell')].map((c) => c.textContent)")
    assert ids and all(ids), ids
    guarded_page.screenshot("sharding-present", root)
    pb = Playback(root)
    n = pb.position()[1]
    pb.key("Home")
    for p in range(1, n + 1):
        pb.key("ArrowRight")
        if p in (1, 3, 6, n // 2, n - 1):
            report = legibility(root)
            assert report.problems == [], f"step {p} ({pb.label()}): {report}"
        if p == 6:
            root.evaluate("(r) => r.getAnimations({subtree: true}).forEach((a) => { a.pause(); a.currentTime = 350; })")
            guarded_page.screenshot("sharding-present-flight", root)
            root.evaluate("(r) => r.getAnimations({subtree: true}).forEach((a) => a.finish())")
    assert pb.position() == (n, n)
    assert not guarded_page.console_errors and not guarded_page.page_errors, guarded_page.report()


@pytest.mark.parametrize("name", ["sharding-small", "sharding-256"])
def test_fixtures_in_presentation_mode(guarded_page: GuardedPage, tmp_path: Path, name: str) -> None:
    """The committed captures (js/test/fixtures): 13 arrays, 5 calls and every kind of collective on
    8 devices, legible at every step; 256 devices, which may pan, legible with every id in its cell."""
    doc = json.loads((REPO / f"js/test/fixtures/{name}.json").read_text())
    out = tmp_path / f"{name}.html"
    jaxmagic.to_html(doc, out)
    guarded_page.page.set_viewport_size({"width": PROJECTOR[0], "height": PROJECTOR[1]})
    root = _open(guarded_page, out, len(doc["arrays"]))
    present(root)
    assert poll(lambda: root.locator(".jm-sh-array").count() == len(doc["arrays"]), 10)
    report = legibility(root)
    assert report.problems == [], str(report)
    # the first mesh at presentation size: every device id in its cell (16x16 for 256 devices)
    ids = root.evaluate(
        "(r) => [...r.querySelector('.jm-sh-mesh').querySelectorAll('.jm-sh-cell')].map((c) => c.textContent)"
    )
    assert ids == [str(d) for d in doc["meshes"][0]["devices"]]
    pb = Playback(root)
    n = pb.position()[1]
    pb.key("Home")
    for p in range(1, n + 1 if name == "sharding-small" else 3):
        pb.key("ArrowRight")
        report = legibility(root)
        assert report.problems == [], f"step {p} ({pb.label()}): {report}"
    guarded_page.screenshot(f"{name}-present", root)
    assert not guarded_page.console_errors and not guarded_page.page_errors, guarded_page.report()


def _big_doc(arrays: int, calls: int, per: int) -> dict:
    """A synthetic sharding document of arrays + calls * (1 + per) steps (for timing only)."""
    devices = list(range(8))
    mesh = {
        "id": "m0",
        "axis_names": ["data"],
        "shape": [8],
        "axis_types": ["Auto"],
        "devices": devices,
        "abstract": False,
    }
    sharding = {
        "kind": "named",
        "text": "",
        "mesh": "m0",
        "spec": [],
        "memory_kind": "device",
        "devices": devices,
        "fully_replicated": True,
    }
    col = {
        "kind": "all-reduce",
        "name": "all-reduce",
        "computation": "main",
        "result": "f32[16]",
        "result_bytes": 64,
        "operands": ["f32[16]"],
        "operand_bytes": 64,
        "groups": [devices],
        "groups_text": "[1,8]<=[8]",
        "pairs": [],
        "dimensions": [],
        "op_name": "jit(f)/reduce_sum",
    }
    return {
        "schema": "jaxmagic",
        "version": 1,
        "kind": "sharding",
        "title": "timing",
        "notes": [],
        "error": None,
        "devices": [{"id": d, "platform": "cpu", "kind": "cpu"} for d in devices],
        "meshes": [mesh],
        "arrays": [
            {
                "id": f"a{i}",
                "name": f"x{i}",
                "origin": "namespace",
                "call": None,
                "shape": [64, 16],
                "dtype": "f32",
                "bytes": 4096,
                "sharding": sharding,
                "blocks": [{"index": [[0, 64], [0, 16]], "devices": devices, "replicas": [0] * 8}],
                "bytes_per_device": {str(d): 4096 for d in devices},
                "replication": 8,
                "addressable": True,
            }
            for i in range(arrays)
        ],
        "calls": [
            {
                "id": f"c{i}",
                "call": i,
                "name": f"f{i}",
                "signature": "f32[64,16]",
                "calls": 1,
                "source": None,
                "call_site": None,
                "inputs": [
                    {
                        "path": "x",
                        "aval": "f32[64,16]",
                        "kind": "NamedSharding",
                        "text": "",
                        "mesh": "m0",
                        "spec": [],
                        "given": None,
                        "mismatch": False,
                    }
                ],
                "outputs": [
                    {"path": "out", "aval": "f32[16]", "kind": "NamedSharding", "text": "", "mesh": "m0", "spec": []}
                ],
                "lowered": {"args": [], "results": []},
                "collectives": [col] * per,
                "shard_maps": [],
                "intermediates": [],
            }
            for i in range(calls)
        ],
        "findings": [],
    }


def test_a_5000_step_story_steps_smoothly(guarded_page: GuardedPage, tmp_path: Path) -> None:
    doc = _big_doc(3000, 400, 4)
    out = tmp_path / "big.html"
    jaxmagic.to_html(doc, out)
    root = _open(guarded_page, out, 3000)
    pb = Playback(root)
    n = pb.position()[1]
    assert n == 1 + 3000 + 400 * 5
    timing = root.evaluate("""(root) => {
      const slider = root.querySelector('.jm-pb-slider');
      slider.value = '1500'; slider.dispatchEvent(new Event('input'));
      const key = (k) => root.dispatchEvent(new KeyboardEvent('keydown', {key: k, bubbles: true, cancelable: true}));
      const times = [];
      for (let i = 0; i < 40; i++) { const t = performance.now(); key('ArrowRight'); times.push(performance.now() - t); }
      const t = performance.now(); key('Home'); const home = performance.now() - t;
      const t2 = performance.now(); key('End'); const end = performance.now() - t2;
      times.sort((a, b) => a - b);
      return {median: times[20], max: times[39], home, end};
    }""")
    assert pb.position() == (n, n)
    print(
        f"[sharding] {n}-step story in Chromium: one step median {timing['median']:.2f} ms, max {timing['max']:.2f} ms "
        f"(script time, flights included); Home {timing['home']:.1f} ms, End {timing['end']:.1f} ms"
    )
    assert not guarded_page.console_errors and not guarded_page.page_errors, guarded_page.report()
