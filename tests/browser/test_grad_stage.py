"""Playback and presentation mode of the grad view (%%grad_graph) in headless Chromium, on pages
exported offline (`jaxmagic.to_html`) from real differentiations.

(a) playback: `play_to_end` reaches the last step; stepping one at a time the labels tell the
    document's forward eqns in order, then its backward eqns in the backward program's order,
    each backward step naming the forward eqn JAX's links say it differentiates and, with
    values, its cotangent's norm; the backward pass waits (faded) while the forward plays; an
    intermediate backward step shows exactly the backward eqns played so far, the cotangents
    running into it right to left in the adjoint orange, and the residuals it reads lit up
    (as is the one the forward eqn saving it lights up); the end equals the view before
    playback; a jitted train step plays its program, each label saying forward or backward
    as the document's roles do;
(b) keyboard: space, arrows, Home / End with the widget focused;
(c) presentation mode at 1280x720: no text under 14 px, clipped or overlapping, at the end and
    in the backward pass; screenshots in the artifacts directory;
(d) nothing leaves the machine and the console stays clean.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import pytest

import jaxmagic

from .harness import GuardedPage, open_guarded_page, poll
from .stage import PROJECTOR, Playback, assert_clean, css_colour, legibility, open_view, present, write_page

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def _loss(x: Any) -> Any:
    return jnp.sum(jnp.sin(x) * x)


def _split_page(tmp_path: Path, name: str, values: bool = True) -> tuple[Path, dict]:
    with jaxmagic.capture({}, grads=True, values=values) as cap:
        jax.grad(_loss)(jnp.arange(3.0))
    doc = jaxmagic.document(cap, "grad")
    return write_page(doc, tmp_path, name), doc


def _open(guarded: GuardedPage, path: Path) -> Any:
    root = open_view(guarded, path)
    _drawn(root)
    return root


_DRAWN_JS = """(root) => {
  const c = [...root.querySelectorAll('.jm-grad-pane .jm-canvas')];
  return c.length > 0 && c.every((x) => x.hasAttribute('data-draws')) && !root.querySelector('.jm-status.jm-busy')
    && !!root.querySelector('.jm-pb-slot:not([hidden])');
}"""


def _drawn(root: Any) -> None:
    assert poll(lambda: root.evaluate(_DRAWN_JS), 30)


_SNAPSHOT_JS = """(root) => [...root.querySelectorAll('.jm-svg g[data-node-id], .jm-svg g[data-port-id], .jm-svg .jm-edge,'
  + ' .jm-svg .jm-edge-label, .jm-layer-flows > *, .jm-grad-chip')].map((e) => [e.tagName,
  e.getAttribute('data-node-id') || e.getAttribute('data-port-id') || e.getAttribute('data-residual-id') ||
  (e.getAttribute('data-from') ? e.getAttribute('data-from') + '>' + e.getAttribute('data-to') : e.textContent),
  e.getAttribute('class')].join(' '))"""

_STATE_JS = """(root, graph) => Object.fromEntries([...root.querySelectorAll(`.jm-grad-pane[data-graph="${graph}"] g.jm-eqn[data-node-id]`)]
  .map((e) => [e.getAttribute('data-node-id'),
    e.classList.contains('jm-pb-future') ? 'future' : e.classList.contains('jm-pb-current') ? 'current' : 'done']))"""


def test_split_playback_forward_then_backward(guarded_page: GuardedPage, tmp_path: Path) -> None:
    path, doc = _split_page(tmp_path, "split")
    entry = doc["entries"][0]
    fwd, bwd = entry["forward"]["nodes"], entry["backward"]["nodes"]
    nf, nb = len(fwd), len(bwd)
    root = _open(guarded_page, path)
    pb = Playback(root)
    assert pb.position() == (nf + nb, nf + nb)
    before = root.evaluate(_SNAPSHOT_JS)

    seen = pb.play_to_end()
    if pb.label() != seen[-1]:
        seen.append(pb.label())  # the last step can land between two polls
    assert seen[0].startswith("start · grad of _loss: forward pass"), seen[0]
    assert seen[-1].startswith(f"backward {nb} of {nb} · "), seen
    assert root.evaluate(_SNAPSHOT_JS) == before

    pb.key("Home")
    assert set(root.evaluate(_STATE_JS, "backward").values()) == {"future"}  # waits while the forward plays
    names = {v["id"]: v for v in entry["backward"]["vars"]}
    fwd_by_id = {n["id"]: n for n in fwd}
    for i, node in enumerate(fwd, start=1):
        pb.key("ArrowRight")
        assert pb.label().startswith(f"forward {i} of {nf} · "), pb.label()
        assert f" = {node['prim']}" in pb.label(), (pb.label(), node["prim"])
        saved = [r for r in entry["residuals"] if r["producer"] == node["id"]]
        for r in saved:  # a residual lights up when the eqn that saves it runs
            assert root.locator(f'.jm-grad-chip[data-residual-id="{r["id"]}"].jm-pb-lit').count() == 1
            assert "saves " in pb.label()
    for i, node in enumerate(bwd, start=1):
        pb.key("ArrowRight")
        text = pb.label()
        assert text.startswith(f"backward {i} of {nb} · {node['prim']}"), text
        linked = entry["links"]["backward"].get(node["id"])
        if linked:
            assert f"— transpose of {fwd_by_id[linked]['prim']}" in text, text
        value = entry["backward"]["values"].get(node["outs"][0])
        aval = names[node["outs"][0]]["aval"]
        assert re.search(rf"ct {re.escape(aval)} norm (\S+)", text), text
        if value and value.get("norm") is not None:
            shown = float(re.search(r"ct \S+ norm (\S+)", text).group(1))
            assert shown == pytest.approx(value["norm"], rel=5e-3), (text, value["norm"])
        read = [r for r in entry["residuals"] if node["id"] in r["consumers"]]
        if i < nb and read:
            # (a) an intermediate backward step: exactly what was played, values running in right to left
            for r in read:
                assert root.locator(f'.jm-grad-chip[data-residual-id="{r["id"]}"].jm-pb-lit').count() == 1
            state = root.evaluate(_STATE_JS, "backward")
            assert state == {
                n["id"]: "done" if j < i - 1 else "current" if j == i - 1 else "future" for j, n in enumerate(bwd)
            }
            assert set(root.evaluate(_STATE_JS, "forward").values()) == {"done"}
            pane = '.jm-grad-pane[data-graph="backward"]'
            flows = root.locator(f"{pane} .jm-layer-flows .jm-pb-flow")
            into = root.locator(f'{pane} .jm-edge[data-to="N:{node["id"]}"]').count()
            assert flows.count() == into > 0
            assert flows.first.evaluate("e => getComputedStyle(e).stroke") == css_colour(root, "var(--jm-grad)", pane)
            for d in flows.evaluate_all("els => els.map((e) => e.getAttribute('d'))"):
                xs = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", d)[0::2]]
                assert xs[0] > xs[-1], d  # the backward pass is mirrored: adjoints run right to left
            guarded_page.screenshot("grad-stage-backward", root)
    pb.key("End")
    assert root.evaluate(_SNAPSHOT_JS) == before  # the state matches the static view
    assert_clean(guarded_page)


def test_keyboard_controls(guarded_page: GuardedPage, tmp_path: Path) -> None:
    path, doc = _split_page(tmp_path, "keys", values=False)
    entry = doc["entries"][0]
    n = len(entry["forward"]["nodes"]) + len(entry["backward"]["nodes"])
    root = _open(guarded_page, path)
    pb = Playback(root)
    assert pb.check_keyboard() == n
    pb.key("Home")
    pb.key("ArrowRight")
    assert "ct " not in pb.label()  # no values recorded: no cotangent in the label
    assert_clean(guarded_page)


def test_jitted_step_says_forward_or_backward(guarded_page: GuardedPage, tmp_path: Path) -> None:
    def step(w: Any, x: Any) -> Any:
        g = jax.grad(lambda w: jnp.sum(jnp.tanh(x @ w) ** 2))(w)
        return w - 0.1 * g

    w, x = jnp.ones((4, 3)) * 0.1, jnp.ones((2, 4))
    with jaxmagic.capture({}, grads=True) as cap:
        jax.jit(step)(w, x)
    doc = jaxmagic.document(cap, "grad")
    [entry] = [e for e in doc["entries"] if e["origin"] == "jit"]
    root = _open(guarded_page, write_page(doc, tmp_path, "jit"))
    pb = Playback(root)
    nodes = [n for n in entry["program"]["nodes"] if not n["subgroups"]]
    assert pb.position()[1] == len(nodes)
    pb.key("Home")
    roles = set()
    for i, node in enumerate(nodes, start=1):
        pb.key("ArrowRight")
        role = entry["roles"][node["id"]]
        roles.add(role)
        assert pb.label().startswith(f"{i} of {len(nodes)} · {role} · "), (pb.label(), role)
    assert {"forward", "backward"} <= roles
    assert_clean(guarded_page)


def test_presentation_mode_is_legible_at_1280x720(chromium_browser: Any, tmp_path: Path) -> None:
    path, doc = _split_page(tmp_path, "present")
    nf = len(doc["entries"][0]["forward"]["nodes"])
    guarded = open_guarded_page(chromium_browser, PROJECTOR)
    try:
        root = _open(guarded, path)
        present(root)
        _drawn(root)
        assert root.locator(".jm-grad-aside").evaluate("e => getComputedStyle(e).display") == "none"
        guarded.screenshot("grad-present-end", root)
        report = legibility(root)
        print(f"[present] end: {report}")
        assert report.problems == [], str(report)
        pb = Playback(root)
        pb.key("Home")
        for _ in range(nf + 2):
            pb.key("ArrowRight")
        assert pb.label().startswith("backward 2 of ")
        guarded.screenshot("grad-present-backward", root)
        report = legibility(root)
        print(f"[present] backward step 2: {report}")
        assert report.problems == [], str(report)
        box = root.bounding_box()
        print(f"[present] widget {box['width']:.0f}x{box['height']:.0f} px in a {PROJECTOR[0]}x{PROJECTOR[1]} page")
        assert box["width"] >= PROJECTOR[0] - 40
        assert_clean(guarded)
    finally:
        guarded.context.close()
