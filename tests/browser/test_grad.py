"""The %%grad_graph view in a real browser: grad documents of real differentiations, exported
with `jaxmagic.to_html`, opened from file:// in headless Chromium (offline).

(a) an MLP's forward and backward graphs both draw, the bridge has one chip per residual, and a
chip lights up its producer (forward) and every consumer (backward), by the document's ids;
(b) clicking a backward node lights up the forward node it differentiates;
(c) with gradient values, values mode draws orange cotangent labels and the gradients list
shows summaries; (d) nothing leaves the machine and the console stays clean;
(e) a 12-layer stack (about 1,200 eqns per graph) opens and a residual lights up (first draw
and residual-select times are printed, never asserted).
"""

from __future__ import annotations

import json
from pathlib import Path

import jax
import pytest

import jaxmagic
from tests.grad_programs import small_mlp, stacked_blocks

from .harness import GuardedPage, poll

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

BACKWARD_ORANGE = "rgb(180, 83, 9)"  # --jm-grad-text on a light page (widgets/ui/theme.css)


def _mlp_page(tmp_path: Path, values: bool) -> tuple[Path, dict]:
    loss, params, x = small_mlp()
    with jaxmagic.capture({}, grads=True, values=values) as cap:
        jax.value_and_grad(loss)(params, x)
    doc = jaxmagic.document(cap, "grad")
    out = tmp_path / f"mlp{'-values' if values else ''}.html"
    jaxmagic.to_html(doc, out)
    return out, doc


_DRAWN_JS = """() => {
  const c = [...document.querySelectorAll('.jm-grad-pane .jm-canvas')];
  return c.length > 0 && c.every((x) => x.hasAttribute('data-draws')) && !document.querySelector('.jm-grad .jm-status.jm-busy');
}"""

_MARKED_JS = """([graph, cls]) => [...document.querySelectorAll(`.jm-grad-pane[data-graph="${graph}"] .${cls}`)]
  .map((e) => e.getAttribute('data-node-id') || e.getAttribute('data-port-id')).filter(Boolean)"""


def _open(guarded: GuardedPage, page_path: Path):
    page = guarded.page
    page.goto(page_path.as_uri(), wait_until="load")
    assert poll(lambda: page.evaluate(_DRAWN_JS), 30), guarded.report()
    return page


def _marked(page, graph: str, cls: str) -> list[str]:
    return page.evaluate(_MARKED_JS, [graph, cls])


def _click_leaf(page, graph: str, key: str) -> None:
    """Click element `key` of a graph where it is drawn (scrolled into view first)."""
    pane = page.locator(f'.jm-grad-pane[data-graph="{graph}"]')
    pane.scroll_into_view_if_needed()
    # a pane shows a part of a wide drawing at a legible scale: pan the element into view first
    box = page.evaluate(
        """([graph, key]) => { const p = document.querySelector(`.jm-grad-pane[data-graph="${graph}"] .jm-canvas`).jmProbe;
                           p.centre(key); return p.box(key); }""",
        [graph, key],
    )
    assert box, f"{key} is not drawn in the {graph} graph"
    page.mouse.click(box["x"] + min(box["w"], 40) / 2, box["y"] + min(box["h"], 20) / 2)


def test_split_residuals_and_links(guarded_page: GuardedPage, tmp_path: Path) -> None:
    out, doc = _mlp_page(tmp_path, values=False)
    entry = doc["entries"][0]
    page = _open(guarded_page, out)
    # (a) two graphs, every eqn of these small passes drawn; one chip per residual
    for graph in ("forward", "backward"):
        n = page.locator(f'.jm-grad-pane[data-graph="{graph}"] g.jm-eqn').count()
        assert n == entry[graph]["n_eqns"], (graph, n)
    assert page.locator(".jm-grad-chip").count() == len(entry["residuals"])
    # the eqn-made residual the most backward eqns read (several up to JAX 0.11; one each on 0.12, where
    # tanh's tangent is one eqn and its backward one multiply)
    produced = max(
        (r for r in entry["residuals"] if isinstance(r["producer"], str) and r["consumers"]),
        key=lambda r: len(r["consumers"]),
    )
    page.locator(f'.jm-grad-chip[data-residual-id="{produced["id"]}"]').click()
    assert poll(lambda: _marked(page, "forward", "jm-res") == [produced["producer"]], 10), _marked(
        page, "forward", "jm-res"
    )
    lit = set(_marked(page, "backward", "jm-res"))
    assert set(produced["consumers"]) <= lit, (produced, lit)
    assert lit - set(produced["consumers"]) == {f"P:{v}" for v in produced["backward_vars"]}
    assert page.locator('.jm-grad-pane[data-graph="forward"] .jm-edge.jm-res').count() >= 1
    # an input saved as is lights up its input port
    saved = next(r for r in entry["residuals"] if isinstance(r["producer"], dict))
    page.locator(f'.jm-grad-chip[data-residual-id="{saved["id"]}"]').click()
    root = next(g for g in entry["forward"]["groups"] if g["id"] == entry["forward"]["root"])
    want = f"P:{root['invars'][saved['producer']['input']]}"
    assert poll(lambda: _marked(page, "forward", "jm-res") == [want], 10)
    page.keyboard.press("Escape")
    assert poll(lambda: page.locator(".jm-res").count() == 0, 5)

    # (b) a backward node with a link lights up the forward node it differentiates
    tanh = next(n["id"] for n in entry["forward"]["nodes"] if n["prim"] == "tanh")
    back = next(b for b, f in entry["links"]["backward"].items() if f == tanh)
    _click_leaf(page, "backward", f"N:{back}")
    assert poll(lambda: _marked(page, "forward", "jm-linked") == [tanh], 10), _marked(page, "forward", "jm-linked")
    details = page.locator(".jm-grad-details").text_content()
    assert "Differentiates" in details and "jnp.tanh" in details

    # (d) offline, no errors
    assert not guarded_page.blocked and not guarded_page.offsite_seen, guarded_page.report()
    assert not guarded_page.console_errors and not guarded_page.page_errors, guarded_page.report()


def test_values_mode_draws_cotangents(guarded_page: GuardedPage, tmp_path: Path) -> None:
    out, doc = _mlp_page(tmp_path, values=True)
    entry = doc["entries"][0]
    assert doc["values"] and entry["backward"]["values"]
    page = _open(guarded_page, out)
    labels = '.jm-grad-pane[data-graph="backward"] .jm-edge-label'

    def texts_of(sel: str) -> list[str]:  # SVG text has no innerText
        return page.eval_on_selector_all(sel, "els => els.map((e) => e.textContent)")

    avals = texts_of(labels)
    assert avals
    toggle = page.locator(".jm-grad-values")
    assert toggle.is_enabled()
    toggle.click()
    assert poll(lambda: texts_of(labels) != avals and page.evaluate(_DRAWN_JS), 10)
    texts = texts_of(labels)
    assert any("…" in t or "μ" in t or t.startswith("[") for t in texts), texts
    fills = set(page.eval_on_selector_all(labels, "els => els.map((e) => getComputedStyle(e).fill)"))
    assert fills == {BACKWARD_ORANGE}, fills
    forward = set(
        page.eval_on_selector_all(
            '.jm-grad-pane[data-graph="forward"] .jm-edge-label', "els => els.map((e) => getComputedStyle(e).fill)"
        )
    )
    assert BACKWARD_ORANGE not in forward
    stats = page.locator(".jm-grad-leaf-stats").all_inner_texts()
    assert len(stats) == len(entry["grads_of"]) and all("norm" in s for s in stats), stats
    assert entry["cotangent"] in page.locator(".jm-grad-seed").inner_text()
    assert not guarded_page.blocked and not guarded_page.offsite_seen, guarded_page.report()
    assert not guarded_page.console_errors and not guarded_page.page_errors, guarded_page.report()


def test_twelve_layer_stack_opens_and_selects(guarded_page: GuardedPage, tmp_path: Path) -> None:
    loss, args = stacked_blocks(12)
    with jaxmagic.capture({}, grads=True) as cap:
        jax.grad(loss)(*args)
    doc = jaxmagic.document(cap, "grad")
    entry = doc["entries"][0]
    assert entry["forward"]["n_eqns"] > 1000 and entry["backward"]["n_eqns"] > 1000
    out = tmp_path / "stack12.html"
    jaxmagic.to_html(doc, out)
    page = _open(guarded_page, out)
    first = page.evaluate("performance.now()")
    assert page.locator(".jm-grad-chip").count() == len(entry["residuals"])
    made = max((r for r in entry["residuals"] if isinstance(r["producer"], str)), key=lambda r: r["bytes"])
    t0 = page.evaluate("performance.now()")
    page.locator(f'.jm-grad-chip[data-residual-id="{made["id"]}"]').click()
    assert poll(
        lambda: (
            _marked(page, "forward", "jm-res") == [made["producer"]]
            and set(made["consumers"]) <= set(_marked(page, "backward", "jm-res"))
            and page.evaluate(_DRAWN_JS)
        ),
        30,
    )
    print(
        f"[grad stack12] first draw {first:.0f} ms after navigation; residual select {page.evaluate('performance.now()') - t0:.0f} ms "
        f"(incl. polling); {json.dumps([page.locator(f'.jm-grad-pane[data-graph={g}] .jm-status').inner_text() for g in ('forward', 'backward')])}"
    )
    assert not guarded_page.console_errors and not guarded_page.page_errors, guarded_page.report()
