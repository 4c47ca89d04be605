"""Functions listed without their graph, in real Chromium with real JAX documents.

A widget's view asks its kernel for a listed function's graph; here the kernel's side is the
real one (the document builder's `OnDemand` and `views/requests.answer`, gzip buffer and all),
reached through a Playwright binding instead of a comm, so no JupyterLab is started (cheap). A
static page built without a kernel says each row is listed only.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import jax
import jax.numpy as jnp
import pytest

import jaxmagic
from jaxmagic.model.graph import graph_document
from jaxmagic.model.on_demand import OnDemand
from jaxmagic.views.requests import answer
from jaxmagic.views.static_html import embed_json
from jaxmagic.views.wire import safe_wire

from .harness import REPO, GuardedPage, ViewDriver, poll

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

DISTINCT = 7
DRAWN = 3
ORIGIN = "http://127.0.0.1:9/listed/"  # answered by the page's own route below: nothing listens there


@pytest.fixture(scope="module")
def capture() -> Any:
    """DISTINCT jitted functions with 1..DISTINCT sines each: distinct eqn counts tell their graphs apart."""

    def make(n: int) -> Any:
        def chain(v: Any) -> Any:
            for _ in range(n):
                v = jnp.sin(v)
            return v

        return jax.jit(chain)

    x = jnp.ones(3)
    with jaxmagic.capture() as cap:
        for n in range(1, DISTINCT + 1):
            make(n)(x)
    return cap


_PAGE = """<!doctype html><html><head><meta charset="utf-8"></head><body><div id="view"></div>
<script type="module">
import widget from "./jaxmagic-graph.js";
const doc = JSON.parse(document.getElementById("doc").textContent);
const handlers = new Set();
window.kernelGone = false;
const model = {
  get: (name) => (name === "doc" ? doc : undefined),
  on: (event, fn) => { if (event === "msg:custom") handlers.add(fn); },
  off: (event, fn) => handlers.delete(fn),
  send(content) {
    if (window.kernelGone) throw new Error("Kernel is dead");
    window.jmKernel(JSON.stringify(content)).then((text) => {
      const reply = JSON.parse(text);
      const bytes = Uint8Array.from(atob(reply.buffer || ""), (c) => c.charCodeAt(0));
      for (const fn of handlers) fn(reply.content, reply.buffer == null ? [] : [new DataView(bytes.buffer)]);
    });
  },
};
widget.render({ model, el: document.getElementById("view") });
</script>
<script type="application/json" id="doc">DOC</script></body></html>"""


def _serve_live_view(guarded: GuardedPage, capture: Any) -> tuple[dict, list[dict]]:
    """Open a widget's view of `capture` whose requests the real handlers answer; (document, asked)."""
    on_demand = OnDemand()
    doc = graph_document(capture, max_graphs=DRAWN, on_demand=on_demand)
    wire = safe_wire(doc)[1]
    asked: list[dict] = []

    def kernel(text: str) -> str:
        content = json.loads(text)
        asked.append(content)
        reply, buffers = answer(on_demand.handlers, content)
        return json.dumps({"content": reply, "buffer": base64.b64encode(buffers[0]).decode() if buffers else None})

    bundle = (REPO / "jaxmagic" / "static" / "jaxmagic-graph.js").read_text(encoding="utf-8")
    html = _PAGE.replace("DOC", embed_json(wire))
    page = guarded.page
    page.expose_function("jmKernel", kernel)
    page.route(
        ORIGIN + "**",
        lambda route: route.fulfill(
            status=200,
            content_type="text/javascript" if route.request.url.endswith(".js") else "text/html",
            body=bundle if route.request.url.endswith(".js") else html,
        ),
    )
    page.goto(ORIGIN + "index.html", wait_until="load")
    return doc, asked


def test_a_listed_function_loads_from_the_kernel_into_a_tab(guarded_page: GuardedPage, capture: Any) -> None:
    doc, asked = _serve_live_view(guarded_page, capture)
    listed = doc["listed"]
    assert len(doc["functions"]) == DRAWN and len(listed) == DISTINCT - DRAWN
    page = guarded_page.page
    driver = ViewDriver(page.locator(".jm-root").first)
    assert poll(lambda: driver.tabs.count() == DRAWN, 20)
    toggle = driver.root.locator(".jm-listed-toggle")
    assert toggle.inner_text().startswith(f"{len(listed)} more functions")
    toggle.click()
    rows = driver.root.locator(".jm-listed-row")
    assert rows.count() == len(listed) and not asked, "listing asks the kernel nothing"

    # No kernel: the sentence, and no tab.
    page.evaluate("window.kernelGone = true")
    target = listed[-1]
    row = driver.root.locator(f'.jm-listed-row[data-function-id="{target["id"]}"]')
    row.click()
    assert poll(lambda: "reconnect the kernel to load its graph" in row.inner_text(), 10), row.inner_text()
    assert driver.tabs.count() == DRAWN

    # The kernel back: the next click loads the graph the builder draws, as a tab of its own.
    page.evaluate("window.kernelGone = false")
    row.click()
    assert poll(lambda: driver.tabs.count() == DRAWN + 1, 20), row.inner_text()
    assert [a["what"] for a in asked] == ["function"] and asked[0]["args"] == {"function": target["id"]}
    active = driver.root.locator(".jm-tab-active")
    assert active.get_attribute("data-function-id") == target["id"]
    assert driver.settle_count(target["n_eqns"]) == target["n_eqns"], "the loaded function's own graph"
    assert toggle.inner_text().startswith(f"{len(listed) - 1} more functions")
    assert not guarded_page.page_errors and not guarded_page.console_errors, guarded_page.report()


def test_a_static_page_lists_them_without_a_kernel(guarded_page: GuardedPage, capture: Any, tmp_path: Any) -> None:
    doc = graph_document(capture, max_graphs=DRAWN)
    path = tmp_path / "listed.html"
    jaxmagic.to_html(doc, path)
    page = guarded_page.page
    page.goto(path.as_uri(), wait_until="load")
    driver = ViewDriver(page.locator(".jm-root").first)
    assert poll(lambda: driver.tabs.count() == DRAWN, 20)
    driver.root.locator(".jm-listed-toggle").click()
    rows = driver.root.locator(".jm-listed-row")
    assert rows.count() == DISTINCT - DRAWN
    assert all("not in this page (listed only)" in t for t in rows.all_inner_texts())
    assert rows.first.is_disabled()
    assert not guarded_page.blocked and not guarded_page.page_errors, guarded_page.report()
