"""The %%trace timeline in a real browser: a recompile storm, exported with `jaxmagic.to_html`,
opened from file:// in headless Chromium (offline)."""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

import jaxmagic

from .harness import GuardedPage, poll

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def _storm_page(tmp_path: Path) -> tuple[Path, dict]:
    with jaxmagic.capture({}) as cap:
        step = jax.jit(lambda x: (x * 2).sum())
        for n in range(1, 10):
            step(jnp.ones(n))
        for _ in range(200):
            step(jnp.ones(9))
    doc = jaxmagic.document(cap, "timeline")
    out = tmp_path / "storm.html"
    jaxmagic.to_html(doc, out)
    return out, doc


def test_recompile_storm_timeline_renders_and_explains(guarded_page: GuardedPage, tmp_path: Path) -> None:
    out, doc = _storm_page(tmp_path)
    page = guarded_page.page
    page.goto(out.as_uri(), wait_until="load")
    status = page.locator(".jm-tl-status")
    assert poll(lambda: status.count() == 1 and "209 calls" in status.inner_text(), 30), guarded_page.report()
    # The canvas is painted (not blank): some pixels differ from the top-left background.
    painted = page.evaluate("""() => {
      const c = document.querySelector('.jm-tl-canvas'); const x = c.getContext('2d');
      const d = x.getImageData(0, 0, c.width, c.height).data; let n = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i] !== d[0] || d[i + 1] !== d[1] || d[i + 2] !== d[2]) n++;
      return n; }""")
    assert painted > 500
    # The storm is the first finding; clicking it selects its first miss and explains it.
    finding = page.locator(".jm-tl-finding").first
    assert "compiled 9 times" in finding.inner_text()
    finding.click()
    details = page.locator(".jm-tl-details")
    assert poll(lambda: "the first call" in details.inner_text() or "changed shape" in details.inner_text(), 10)
    page.keyboard.press("n")  # next miss: a shape change, with its fix
    assert poll(lambda: "changed shape" in details.inner_text(), 10), details.inner_text()
    assert "pad" in details.inner_text().lower() or "bucket" in details.inner_text().lower()
    # The summary table sorts by a column on click.
    table = page.locator(".jm-tl-table")
    assert "<lambda>" in table.inner_text()
    # Hovering over the lane shows a tooltip with the call's signature.
    box = page.locator(".jm-tl-canvas").bounding_box()
    tip = page.locator(".jm-tl-tip")
    for fx in [i / 40 for i in range(2, 40)]:
        page.mouse.move(box["x"] + box["width"] * fx, box["y"] + 40)
        if tip.is_visible():
            break
    assert tip.is_visible() and "f32[" in tip.inner_text()
    assert not guarded_page.page_errors and not guarded_page.blocked
