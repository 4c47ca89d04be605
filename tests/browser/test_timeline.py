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


# --------------------------------------------------------------------------------------
# colours on first paint: never a black canvas, in any host
# --------------------------------------------------------------------------------------

# Pixels of every timeline canvas under `root`: whether some 40x10 block (device px) is all
# pure black (what a canvas paints when its colours were read before the widget was styled),
# how many pixels have each phase colour of the theme (as the page computes the variables), and
# the commonest opaque colour of the overview strip's top band (its background: bg2 of the theme).
CANVAS_COLOURS_JS = r"""
(root) => [...root.querySelectorAll('canvas.jm-tl-canvas')].map((c) => {
  const W = c.width, H = c.height, d = c.getContext('2d').getImageData(0, 0, W, H).data;
  // summed-area table of pure black opaque pixels
  const S = new Int32Array((W + 1) * (H + 1));
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) {
    const i = 4 * (y * W + x), b = d[i] === 0 && d[i + 1] === 0 && d[i + 2] === 0 && d[i + 3] === 255 ? 1 : 0;
    S[(y + 1) * (W + 1) + x + 1] = b + S[y * (W + 1) + x + 1] + S[(y + 1) * (W + 1) + x] - S[y * (W + 1) + x];
  }
  let blackBlock = null;
  for (let y = 0; y + 10 <= H && !blackBlock; y++) for (let x = 0; x + 40 <= W; x++) {
    const n = S[(y + 10) * (W + 1) + x + 40] - S[y * (W + 1) + x + 40] - S[(y + 10) * (W + 1) + x] + S[y * (W + 1) + x];
    if (n === 400) { blackBlock = [x, y]; break; }
  }
  const rgb = (v) => { const e = document.createElement('div'); e.style.color = v; c.parentElement.appendChild(e);
    const m = getComputedStyle(e).color.match(/\d+(\.\d+)?/g).map(Number); e.remove(); return m.slice(0, 3); };
  const phases = {trace: rgb('var(--jm-tl-trace)'), lower: rgb('var(--jm-tl-lower)'), compile: rgb('var(--jm-tl-compile)')};
  const counts = {};
  for (const [k, [r, g, b]] of Object.entries(phases)) {
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i + 3] === 255 && Math.abs(d[i] - r) < 4 && Math.abs(d[i + 1] - g) < 4 && Math.abs(d[i + 2] - b) < 4) n++;
    counts[k] = n;
  }
  const probe = c.jmProbe, dpr = W / c.getBoundingClientRect().width;
  const ov = probe.overviewPoint(0), box = c.getBoundingClientRect();
  // the strip's top band (above its bars; only misses mark it): its fill is the theme's bg2
  const oy = Math.round((ov.y - box.top - 10.5) * dpr), freq = new Map();
  for (let y = oy; y <= oy + 1; y++) for (let x = 0; x < W; x++) {
    const i = 4 * (y * W + x);
    if (d[i + 3] === 255) { const k = `${d[i]},${d[i + 1]},${d[i + 2]}`; freq.set(k, (freq.get(k) || 0) + 1); }
  }
  const overviewBg = [...freq.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
  return {width: W, height: H, blackBlock, counts, overviewBg, draws: Number(c.parentElement.getAttribute('data-draws') || 0)};
})
"""


def canvas_colours(root) -> list[dict]:
    """CANVAS_COLOURS_JS for each timeline canvas of the view `root` (a Playwright locator)."""
    return root.evaluate(CANVAS_COLOURS_JS)


def assert_coloured(report: list[dict], label: str) -> None:
    """Every canvas drew, has no all-black 40x10 block, and shows the compile colour and trace or lower."""
    assert report, f"{label}: no timeline canvas"
    for r in report:
        assert r["draws"] > 0, f"{label}: the canvas never drew: {r}"
        assert r["blackBlock"] is None, f"{label}: a 40x10 block of pure black at {r['blackBlock']}: {r}"
        assert r["counts"]["compile"] > 20 and r["counts"]["trace"] + r["counts"]["lower"] > 0, (
            f"{label}: phase colours missing: {r}"
        )


_DETACHED_PAGE = """<!doctype html><html><body style="margin:0"><div id="host" style="width:968px"></div>
<script type="module">
import widget from './jaxmagic.js';
const doc = JSON.parse(document.getElementById('doc').textContent);
const el = document.createElement('div');          // as anywidget may: render into an element not in the page
widget.render({model: {get: () => doc, on() {}, off() {}}, el});
window.rendered = true;
setTimeout(() => { document.getElementById('host').appendChild(el); window.attached = true; }, 300);
</script>
<script type="application/json" id="doc">DOC</script></body></html>"""


def test_timeline_rendered_detached_paints_in_colour(guarded_page: GuardedPage, tmp_path: Path) -> None:
    """A widget rendered into a detached element (anywidget in JupyterLab may) and attached later
    paints its spans, markers and overview in the theme's colours, never the canvas's default black."""
    import functools
    import http.server
    import shutil
    import threading

    from jaxmagic.views.static_html import BUNDLE, embed_json

    _, doc = _storm_page(tmp_path)
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(BUNDLE, site / "jaxmagic.js")
    (site / "detached.html").write_text(_DETACHED_PAGE.replace("DOC", embed_json(doc)), encoding="utf-8")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a, **k: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        page = guarded_page.page
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/detached.html", wait_until="load")
        assert poll(lambda: page.evaluate("() => !!window.rendered"), 20), guarded_page.report()
        page.wait_for_timeout(150)
        # detached: nothing drawn yet (its colours cannot be read there)
        assert page.evaluate("() => !document.querySelector('.jm-tl-plot')"), "the view is not detached"
        assert poll(lambda: page.evaluate("() => !!window.attached"), 10)
        root = page.locator(".jm-root").first
        assert poll(
            lambda: (
                (root.evaluate("r => Number(r.querySelector('.jm-tl-plot').getAttribute('data-draws') || 0)") or 0) > 0
            ),
            10,
        )
        page.wait_for_timeout(100)
        report = canvas_colours(root)
        guarded_page.screenshot("timeline-detached-then-attached", root)
        print(f"[timeline colours] detached then attached: {report}")
        assert_coloured(report, "detached then attached")
        assert not guarded_page.page_errors, guarded_page.page_errors
    finally:
        server.shutdown()


def test_exported_timeline_colours_and_theme_switch(guarded_page: GuardedPage, tmp_path: Path) -> None:
    """The exported page paints in colour, has a legend, publishes the pane contract and the first
    recompile's marker, and redraws in the dark palette when the OS colour scheme turns dark."""
    out, doc = _storm_page(tmp_path)
    page = guarded_page.page
    page.emulate_media(color_scheme="light")
    page.goto(out.as_uri(), wait_until="load")
    root = page.locator(".jm-root").first
    assert poll(lambda: root.locator(".jm-tl-plot[data-draws]").count() == 1, 30), guarded_page.report()
    light = canvas_colours(root)
    assert_coloured(light, "exported, light")
    pane = root.locator('[data-jm-pane="timeline"]')
    assert pane.get_attribute("data-jm-framed") == "whole"
    assert float(pane.get_attribute("data-jm-text-px")) >= 11
    x, y, w, h = (float(v) for v in pane.get_attribute("data-jm-key-rect").split(","))
    box = pane.bounding_box()
    assert 0 < x < box["width"] and 0 < y < box["height"] and w > 0 and h > 0, (x, y, w, h, box)
    legend = root.locator("[data-jm-legend]")
    assert legend.count() == 1
    for words in ("trace", "lower", "compile", "run", "cache miss"):
        assert words in legend.inner_text(), legend.inner_text()
    status = [s.strip() for s in root.locator(".jm-tl-status > *").all_inner_texts()]
    assert status[0].endswith(("ms", "s")) and status[-1].startswith("showing"), status
    guarded_page.screenshot("timeline-exported-light", root)

    draws = light[0]["draws"]
    page.emulate_media(color_scheme="dark")
    assert poll(lambda: canvas_colours(root)[0]["draws"] > draws, 10), "no redraw when the colour scheme turned dark"
    page.wait_for_timeout(400)  # the second, settling redraw
    dark = canvas_colours(root)
    guarded_page.screenshot("timeline-exported-dark", root)
    print(f"[timeline colours] light {light[0]['overviewBg']} -> dark {dark[0]['overviewBg']}")
    assert_coloured(dark, "exported, dark")
    assert dark[0]["overviewBg"] != light[0]["overviewBg"], (light, dark)
    assert not guarded_page.page_errors and not guarded_page.blocked
