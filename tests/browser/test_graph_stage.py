"""Playback and presentation mode of the graph view (%%jaxpr) in headless Chromium, on pages
exported offline (`jaxmagic.to_html`) from real captures.

(a) playback: `play_to_end` reaches the last step; stepping one eqn at a time, the labels tell
    `jax.make_jaxpr(f)(x).eqns` in order (primitive, output aval, source line); an intermediate
    step shows exactly the eqns played so far and the line of the current one in the code strip;
    the end is the drawing as it was before playback; in forward mode (`values`) the values run
    into each eqn along its input edges;
(b) keyboard: with the widget focused, space plays and pauses, arrows step, Home / End jump;
(c) presentation mode at 1280x720: no text under 14 px, clipped or overlapping, at the end and
    mid-playback; screenshots in the artifacts directory;
(d) nothing leaves the machine and the console stays clean.
One step's time on a 5,000-eqn program is printed, never asserted.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from .harness import GuardedPage, open_guarded_page, poll
from .stage import PROJECTOR, Playback, assert_clean, css_colour, legibility, open_view, present, write_page

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def _f(x: Any) -> Any:
    import jax.numpy as jnp

    y = jnp.sin(x) ** 2
    z = jnp.cos(x) * 3.0
    return jnp.tanh(y + z) - x


def _forty(x: Any) -> Any:
    import jax.numpy as jnp

    for i in range(10):  # 4 eqns each; the constants differ, so no two blocks repeat (and fold)
        x = jnp.sin(x) * (0.5 + i) + jnp.cos(x)
    return x


def _chain(x: Any) -> Any:
    import jax.numpy as jnp

    for i in range(2500):
        x = jnp.sin(x) * 0.5 if i % 2 else jnp.cos(x) + 1.0
    return x


def _page(tmp_path: Path, fn: Any, arg: Any, name: str, **options: Any) -> tuple[Path, dict]:
    import jax

    import jaxmagic

    with jaxmagic.capture({}, **options) as cap:
        jax.jit(fn)(arg)
    doc = jaxmagic.document(cap)
    return write_page(doc, tmp_path, name), doc


def _open(guarded: GuardedPage, path: Path) -> Any:
    root = open_view(guarded, path)
    _drawn(root)
    return root


def _drawn(root: Any) -> None:
    assert poll(lambda: root.locator(".jm-canvas[data-draws]").count() > 0, 30)
    assert poll(
        lambda: not root.locator(".jm-status.jm-busy").count() and root.locator(".jm-pb-slot:not([hidden])").count(), 20
    )


_SNAPSHOT_JS = """(root) => [...root.querySelectorAll('.jm-svg g[data-node-id], .jm-svg g[data-port-id], .jm-svg g[data-group-id],'
  + ' .jm-svg .jm-edge, .jm-svg .jm-edge-label, .jm-layer-flows > *')].map((e) => [e.tagName,
  e.getAttribute('data-node-id') || e.getAttribute('data-port-id') || e.getAttribute('data-group-id') ||
  (e.getAttribute('data-from') ? e.getAttribute('data-from') + '>' + e.getAttribute('data-to') : e.textContent),
  e.getAttribute('class')].join(' '))"""

_STATE_JS = """(root) => [...root.querySelectorAll('.jm-svg g.jm-eqn[data-node-id]')].map((e) => [e.getAttribute('data-node-id'),
  e.classList.contains('jm-pb-future') ? 'future' : e.classList.contains('jm-pb-current') ? 'current' : 'done'])"""


def _expected_eqns(fn: Any, arg: Any) -> list[tuple[str, str]]:
    """JAX's own answer: (primitive, first output aval) of each eqn of the traced function."""
    import jax

    return [(e.primitive.name, e.outvars[0].aval.str_short(short_dtypes=True)) for e in jax.make_jaxpr(fn)(arg).eqns]


def test_playback_tells_the_jaxpr_and_ends_as_drawn(guarded_page: GuardedPage, tmp_path: Path) -> None:
    import jax.numpy as jnp

    x = jnp.arange(3.0)
    path, doc = _page(tmp_path, _f, x, "story")
    want = _expected_eqns(_f, x)
    nodes = doc["functions"][0]["nodes"]
    assert [n["prim"] for n in nodes] == [p for p, _ in want]  # the document is JAX's jaxpr
    root = _open(guarded_page, path)
    pb = Playback(root)
    n = len(want)
    assert pb.position() == (n, n)
    before = root.evaluate(_SNAPSHOT_JS)

    # (a) play to the end, then step: each label is the next eqn of make_jaxpr's answer
    seen = pb.play_to_end()
    if pb.label() != seen[-1]:
        seen.append(pb.label())  # the last step can land between two polls
    assert seen[0].startswith(f"0 of {n} · _f(")
    assert re.match(rf"^{n} of {n} · ", seen[-1]), seen
    numbers = [int(s.split(" of ")[0]) for s in seen]
    assert numbers == sorted(numbers), seen
    assert root.evaluate(_SNAPSHOT_JS) == before
    pb.key("Home")
    assert pb.position() == (0, n)
    for i, ((prim, aval), node) in enumerate(zip(want, nodes), start=1):
        pb.key("ArrowRight")
        text = pb.label()
        assert text.startswith(f"{i} of {n} · "), text
        assert re.search(rf":{re.escape(aval)}(?: \S+)* = {prim}\b", text), (text, prim, aval)
        line = node["src"]["line"]  # 'line N' in a notebook cell, 'file.py:N' in a file (source-text.js)
        assert f"line {line}" in text or f".py:{line}" in text, text
        if i == 3:  # (a) an intermediate step: exactly the eqns played so far
            state = dict(root.evaluate(_STATE_JS))
            assert state == {
                nd["id"]: "done" if j < 2 else "current" if j == 2 else "future" for j, nd in enumerate(nodes)
            }
            current = root.locator(".jm-codestrip .jm-cs-current")
            assert current.count() == 1 and current.inner_text().strip().endswith(nodes[2]["src"]["code"].strip())
            into = root.locator(f'.jm-svg .jm-edge[data-to="N:{nodes[2]["id"]}"]:not(.jm-pb-future)').count()
            assert into == sum(1 for op in nodes[2]["ins"] if "var" in op)
            guarded_page.screenshot("graph-stage-step3", root)
    pb.key("End")
    assert pb.position() == (n, n)
    assert root.evaluate(_SNAPSHOT_JS) == before  # the state matches the static view
    assert root.locator(".jm-codestrip").evaluate("e => getComputedStyle(e).display") == "none"
    assert_clean(guarded_page)


def test_forward_mode_values_flow_into_each_eqn(guarded_page: GuardedPage, tmp_path: Path) -> None:
    import jax.numpy as jnp

    path, doc = _page(tmp_path, _f, jnp.arange(3.0), "values", values=True)
    fn = doc["functions"][0]
    assert fn.get("values"), fn.get("values_note")
    root = _open(guarded_page, path)
    root.locator('.jm-mode[data-mode="forward"]').click()
    assert poll(
        lambda: root.locator(".jm-pb-slot:not([hidden])").count() and not root.locator(".jm-status.jm-busy").count(), 20
    )
    pb = Playback(root)
    pb.key("Home")
    names = {v["id"]: v["name"] for v in fn["vars"]}
    for i, node in enumerate(fn["nodes"], start=1):
        pb.key("ArrowRight")
        if i == len(fn["nodes"]):
            break  # the last step is the drawing as it was
        into = root.locator(f'.jm-svg .jm-edge[data-to="N:{node["id"]}"]').count()
        flows = root.locator(".jm-layer-flows .jm-pb-flow")
        assert flows.count() == into, (i, node["prim"])
        assert into == sum(1 for op in node["ins"] if "var" in op)
        assert f"{names[node['outs'][0]]} = " in pb.label(), pb.label()
        if i == 2:
            assert flows.first.evaluate("e => getComputedStyle(e).stroke") == css_colour(root, "var(--jm-teal)")
            guarded_page.screenshot("graph-stage-forward-flow", root)
    pb.key("ArrowLeft")  # a step back moves nothing
    assert root.locator(".jm-pb-flow").count() == 0
    assert_clean(guarded_page)


def test_keyboard_controls(guarded_page: GuardedPage, tmp_path: Path) -> None:
    import jax.numpy as jnp

    path, doc = _page(tmp_path, _f, jnp.arange(3.0), "keys")
    n = len(doc["functions"][0]["nodes"])
    root = _open(guarded_page, path)
    pb = Playback(root)
    assert pb.check_keyboard() == n
    # keys typed in the search box are the search box's
    root.locator(".jm-search").focus()
    root.locator(".jm-search").press("Home")
    assert pb.position() == (n, n)
    assert_clean(guarded_page)


def test_presentation_mode_is_legible_at_1280x720(chromium_browser: Any, tmp_path: Path) -> None:
    import jax.numpy as jnp

    path, doc = _page(tmp_path, _f, jnp.arange(3.0), "present", values=True)
    guarded = open_guarded_page(chromium_browser, PROJECTOR)
    try:
        root = _open(guarded, path)
        present(root)
        _drawn(root)
        assert root.locator(".jm-side").evaluate("e => getComputedStyle(e).display") == "none"
        assert root.locator(".jm-codestrip").evaluate("e => getComputedStyle(e).display") == "block"
        # the drawing was measured and drawn at the larger text: every label at least 14 px
        sizes = root.evaluate("""r => [...r.querySelectorAll('.jm-svg text')].map((t) => parseFloat(getComputedStyle(t).fontSize)
          * Math.hypot(t.getScreenCTM().a, t.getScreenCTM().b))""")
        assert sizes and min(sizes) >= 14 - 0.01, min(sizes)
        guarded.screenshot("graph-present-end", root)
        report = legibility(root)
        print(f"[present] end: {report}")
        assert report.problems == [], str(report)
        pb = Playback(root)
        pb.key("Home")
        for _ in range(3):
            pb.key("ArrowRight")
        guarded.screenshot("graph-present-step3", root)
        report = legibility(root)
        print(f"[present] step 3: {report}")
        assert report.problems == [], str(report)
        box = root.bounding_box()
        print(f"[present] widget {box['width']:.0f}x{box['height']:.0f} px in a {PROJECTOR[0]}x{PROJECTOR[1]} page")
        assert box["width"] >= PROJECTOR[0] - 40  # the full output width
        assert_clean(guarded)
    finally:
        guarded.context.close()


def test_presentation_keeps_forty_eqns_legible(chromium_browser: Any, tmp_path: Path) -> None:
    """40 visible eqns at 1280x720: every label at least 14 px and none overlapping; a graph
    wider than the view pans (texts at its border are cut, as a scrolled page cuts them), and
    playback follows the eqn being played."""
    import jax.numpy as jnp

    path, doc = _page(tmp_path, _forty, jnp.arange(3.0), "forty")
    assert doc["functions"][0]["n_eqns"] == 40
    guarded = open_guarded_page(chromium_browser, PROJECTOR)
    try:
        root = _open(guarded, path)
        present(root)
        _drawn(root)
        pb = Playback(root)
        assert pb.position() == (40, 40)
        pb.key("Home")
        for step in range(1, 41):
            pb.key("ArrowRight")
            if step in (1, 20, 39):
                report = legibility(root)
                print(f"[present] forty eqns, step {step}: {report}")
                assert report.small == [] and report.overlaps == [], str(report)
                # the eqn just played is in view
                current = root.locator(".jm-svg g.jm-pb-current").bounding_box()
                canvas = root.locator(".jm-canvas").bounding_box()
                assert (
                    current
                    and canvas["x"] <= current["x"]
                    and current["x"] + current["width"] <= canvas["x"] + canvas["width"]
                )
        guarded.screenshot("graph-present-forty", root)
        assert_clean(guarded)
    finally:
        guarded.context.close()


_STEP_MS_JS = """async ([root, n]) => {
  const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
  const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
  let t0 = performance.now();
  root.querySelector('.jm-pb-first').click();  // the first step away from the end builds the tables
  const first = performance.now() - t0;
  await frame();
  const fwd = root.querySelector('.jm-pb-fwd');
  const script = [], total = [];
  for (let i = 0; i < n; i++) {
    t0 = performance.now();
    fwd.click();
    script.push(performance.now() - t0);
    await frame();
    await frame();
    total.push(performance.now() - t0);
  }
  // for comparison: a frame of the same drawing when only the view moves (a pan by the wheel)
  const svg = root.querySelector('.jm-svg'), pans = [];
  for (let i = 0; i < n; i++) {
    t0 = performance.now();
    svg.dispatchEvent(new WheelEvent('wheel', {deltaY: i % 2 ? 1 : -1, clientX: 300, clientY: 300, bubbles: true, cancelable: true}));
    await frame();
    await frame();
    pans.push(performance.now() - t0);
  }
  return [first, median(script), median(total), median(pans)];
}"""


def test_step_time_on_a_5000_eqn_program(guarded_page: GuardedPage, tmp_path: Path) -> None:
    """Playback on a big drawing: no layout per step (printed, never asserted)."""
    import jax.numpy as jnp

    path, doc = _page(tmp_path, _chain, jnp.ones(3), "chain5k")
    n_eqns = doc["functions"][0]["n_eqns"]
    assert n_eqns >= 5000
    root = _open(guarded_page, path)
    pb = Playback(root)
    for how in ("default", "expanded"):  # default: the repeated layers folded into one box
        if how == "expanded":
            root.locator(".jm-btn", has_text="Expand all").click()
            assert poll(lambda: root.locator('.jm-canvas[data-renderer="canvas"]').count() == 1, 60)
            _drawn(root)
        steps = pb.position()[1]
        draws = root.locator(".jm-canvas").get_attribute("data-draws")
        n = min(12, steps)
        first, script, total, pan = root.evaluate(f"(root) => ({_STEP_MS_JS})([root, {n}])")
        renderer = root.locator(".jm-canvas").get_attribute("data-renderer")
        print(
            f"[playback] {n_eqns} eqns, {how} ({renderer}, {steps} steps): to the start {first:.1f} ms;"
            f" one step {script:.2f} ms of script, {total:.1f} ms with the next two frames (median of {n});"
            f" a zoom by the wheel {pan:.1f} ms with two frames"
        )
        assert pb.position() == (n, steps)
        assert root.locator(".jm-canvas").get_attribute("data-draws") == draws  # no layout, no redraw of the scene
        if renderer == "canvas":
            guarded_page.screenshot(
                "graph-stage-canvas", root
            )  # faded by redraw: later eqns pale, the current outlined
        pb.key("End")
    assert_clean(guarded_page)
