"""The %%prng view in a real browser: the key tree of a real cell, exported with
`jaxmagic.to_html`, opened from file:// in headless Chromium (offline).

(a) the tree renders, every drawn key's state class is the document's state, and a reused
key is filled red; (b) clicking the reused key opens its details, which name both source
lines of the reuse; (c) the findings list leads with the bug and selects its key; (d) nothing
leaves the machine and the console stays clean. First render is timed and printed, never asserted.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import jax
import pytest

import jaxmagic

from .harness import GuardedPage, poll

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]
jr = jax.random


def _keys_page(tmp_path: Path) -> tuple[Path, dict]:
    with jaxmagic.capture({}) as cap:
        key = jr.key(0)
        for _ in range(30):
            key, sub = jr.split(key)
            jr.normal(sub, (3,))
        legacy = jr.PRNGKey(42)
        jr.uniform(legacy)
        jr.normal(legacy)  # the reuse
    doc = jaxmagic.document(cap, "keys")
    out = tmp_path / "keys.html"
    jaxmagic.to_html(doc, out)
    return out, doc


_ITEMS_JS = """() => [...document.querySelectorAll(".jm-k-svg .jm-k-item.jm-k-t-node")].map((g) => ({
  label: g.querySelector('.jm-k-label').textContent,
  state: [...g.classList].find((c) => c.startsWith('jm-k-s-')).slice(7),
  fill: getComputedStyle(g.querySelector('.jm-k-shape')).fill }))"""


def _rgb(text: str) -> tuple[int, ...]:
    """`rgb(242, 184, 181)` or Chromium's `color(srgb 0.95 0.72 0.71)` as 0-255 channels."""
    numbers = [float(v) for v in re.findall(r"[\d.]+", text)[:3]]
    return tuple(int(v * 255) if "color(" in text else int(v) for v in numbers)


def test_tree_renders_and_a_reused_key_is_red_with_both_lines(guarded_page: GuardedPage, tmp_path: Path) -> None:
    out, doc = _keys_page(tmp_path)
    [reused] = [n for n in doc["nodes"] if n["state"] == "reused"]
    lines = sorted({u["source"]["line"] for u in reused["uses"]})
    assert len(lines) == 2
    page = guarded_page.page
    t0 = time.perf_counter()
    page.goto(out.as_uri(), wait_until="load")
    assert poll(lambda: page.locator(".jm-k-svg .jm-k-item").count() > 0, 30), guarded_page.report()
    print(f"[keys] first render: {1000 * (time.perf_counter() - t0):.0f} ms (load and draw)")

    # (a) states as the document says; the reused key red, unused teal, consumed orange
    items = page.evaluate(_ITEMS_JS)
    by_label = {n["label"]: n for n in doc["nodes"]}
    for item in items:
        if item["label"] in by_label and sum(n["label"] == item["label"] for n in doc["nodes"]) == 1:
            assert item["state"] == by_label[item["label"]]["state"], item
    [red] = [i for i in items if i["label"] == reused["label"]]
    r, g, b = _rgb(red["fill"])
    assert r - max(g, b) > 40, red  # a red tint (the outline is the theme's strong red)
    teal = [i for i in items if i["state"] == "unused" and i["label"] != "split 2"]
    for item in teal[:3]:
        r, g, b = _rgb(item["fill"])
        assert g > r and b > r, item
    assert page.locator(".jm-k-run, .jm-k-t-run").count() >= 1  # the split loop folded into a run

    # (b) details of the reused key name both lines
    page.locator(".jm-k-svg .jm-k-item.jm-k-s-reused").first.click()
    details = page.locator(".jm-k-details")
    assert poll(
        lambda: all(f":{line}" in details.inner_text() or f"line {line}" in details.inner_text() for line in lines), 10
    ), details.inner_text()

    # (c) the findings list leads with the bug; clicking it selects the key
    page.keyboard.press("Escape")
    first = page.locator(".jm-k-finding").first
    assert "bug" in first.inner_text() and reused["label"] in first.inner_text()
    first.click()
    assert poll(lambda: page.locator(".jm-k-svg .jm-k-item.jm-k-sel.jm-k-s-reused").count() == 1, 10)
    page.screenshot(path=str(tmp_path / "keys.png"))


# The smallest label of the tree as Chromium draws it (font size times the zoom of the svg).
_SMALLEST_LABEL_JS = """(root) => Math.min(...[...root.querySelectorAll('.jm-k-svg .jm-k-label, .jm-k-svg .jm-k-badge')].map((t) => {
  const m = t.getScreenCTM(); return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b); }))"""


def test_a_thousand_key_tree_opens_legible(guarded_page: GuardedPage, tmp_path: Path) -> None:
    """1,000 keys from 200 roots: the default framing is the part on the first root at a legible
    scale (labels >= 11 px on screen), never the whole tree shrunk to unreadable 7 px labels."""
    with jaxmagic.capture({}) as cap:
        for r in range(200):
            for k in jr.split(jr.key(r), 3):
                jr.normal(k, (2,))
    doc = jaxmagic.document(cap, "keys")
    assert len(doc["nodes"]) >= 1000, len(doc["nodes"])
    out = tmp_path / "keys-1000.html"
    jaxmagic.to_html(doc, out)
    page = guarded_page.page
    page.goto(out.as_uri(), wait_until="load")
    root = page.locator(".jm-root").first
    pane = root.locator('[data-jm-pane="keys"]')
    assert poll(lambda: pane.get_attribute("data-jm-text-px") is not None, 30), guarded_page.report()
    smallest = root.evaluate(_SMALLEST_LABEL_JS)
    guarded_page.screenshot("keys-1000-default-fit", root)
    print(
        f"[keys framing] 1000 keys: {pane.get_attribute('data-jm-framed')}, text {pane.get_attribute('data-jm-text-px')} px, "
        f"smallest label drawn {smallest:.1f} px, drawing {pane.get_attribute('data-jm-drawing')}"
    )
    assert pane.get_attribute("data-jm-framed") == "part"
    assert float(pane.get_attribute("data-jm-text-px")) >= 11
    assert smallest >= 11 - 0.05, smallest
    x, y, w, h = (float(v) for v in pane.get_attribute("data-jm-drawing").split(","))
    assert 0 <= y <= 40 and h > 1000, f"the part shown is not the top of the tree (its first root): {x, y, w, h}"
    assert root.locator('.jm-k-svg [data-key="n0"]').count() == 1, "the first root is not drawn"
    assert root.locator("[data-jm-legend]").count() == 1
    assert not guarded_page.page_errors and not guarded_page.blocked
