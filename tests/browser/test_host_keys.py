"""A view in a page whose host listens for keys on document and window, as VS Code's notebook
webview and Jupyter's command mode do: text typed into the graph's and the key view's search
boxes lands in the box and nothing reaches those listeners; keys a view handles stop at the
view; other keys still reach the host. And a page with neither Worker nor
DecompressionStream (some webviews) still shows a packed document.

Cheap: static pages from fixture documents (no kernel, no JAX run), one Chromium page each."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from jaxmagic.views.static_html import embed_json, page, page_scripts

from .harness import REPO, GuardedPage, poll

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

FIXTURES = REPO / "tests" / "fixtures"
JS_FIXTURES = REPO / "js" / "test" / "fixtures"

# Bubble-phase listeners on document and window, the way notebook hosts bind their keys.
_HOST_EARS = """
window.__heard = [];
for (const target of [document, window]) {
  for (const type of ["keydown", "keypress", "keyup"]) {
    target.addEventListener(type, (e) => window.__heard.push(
      `${target === window ? "window" : "document"} ${e.type} ${JSON.stringify(e.key)}`));
  }
}
"""


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _open(guarded: GuardedPage, html: str, tmp_path: Path, init: str = "") -> None:
    out = tmp_path / "page.html"
    out.write_text(html, encoding="utf-8")
    if init:
        guarded.page.add_init_script(init)
    guarded.page.goto(out.as_uri(), wait_until="load")


def _heard(guarded: GuardedPage) -> list[str]:
    return guarded.page.evaluate("window.__heard.splice(0)")


def test_typing_in_search_boxes_never_reaches_the_host(guarded_page: GuardedPage, tmp_path: Path) -> None:
    t0 = time.monotonic()
    docs = [_load(FIXTURES / "graph_control_flow.json"), _load(JS_FIXTURES / "keys-small.json")]
    _open(guarded_page, page(docs), tmp_path, init=_HOST_EARS)
    pg = guarded_page.page
    roots = pg.locator(".jm-root")
    assert poll(lambda: roots.count() == 2 and pg.locator(".jm-root .jm-search").count() == 2, 30), (
        f"two views with search boxes expected; {guarded_page.report()}"
    )
    assert poll(lambda: pg.locator(".jm-root .jm-canvas[data-layout]").count() >= 1, 30), "the graph never laid out"
    _heard(guarded_page)

    for k, label in enumerate(["graph", "keys"]):
        box = roots.nth(k).locator(".jm-search").first
        box.click()
        box.press_sequentially("dd ab xz")  # command-mode keys: delete, insert above/below, cut, undo
        for key in ["Delete", "Backspace", "Backspace", "ArrowUp", "Enter"]:  # Delete at the end: no-op
            box.press(key)
        assert box.input_value() == "dd ab ", f"{label}: the box lost typed text: {box.input_value()!r}"
        assert _heard(guarded_page) == [], f"{label}: keys typed in the search box reached the host"

    graph = roots.nth(0)
    graph.focus()
    for key in ["Escape", "f"]:  # handled by the graph view: clear selection, fit
        graph.press(key)
    assert _heard(guarded_page) == [], "keys the graph view handles reached the host"
    graph.press("m")  # not the view's: the notebook keeps its shortcut
    assert len([h for h in _heard(guarded_page) if '"m"' in h]) == 6, (  # keydown, keypress, keyup x2
        "an unhandled key must still reach the host"
    )
    assert not guarded_page.page_errors, guarded_page.page_errors
    print(f"[host keys] {time.monotonic() - t0:.1f} s")


def test_packed_document_without_worker_or_decompression_stream(guarded_page: GuardedPage, tmp_path: Path) -> None:
    t0 = time.monotonic()
    wire = _load(FIXTURES / "wire_sin_cos_packed.json")
    assert wire["functions"][0]["packed"] == "gzip+base64"
    html = (
        "<!doctype html><html><head><meta charset='utf-8'></head><body>"
        f"<script type='application/json' data-jaxmagic-doc>{embed_json(wire)}</script>"
        f"{page_scripts()}</body></html>"
    )
    _open(guarded_page, html, tmp_path, init="delete window.DecompressionStream; delete window.Worker;")
    pg = guarded_page.page
    assert pg.evaluate("typeof DecompressionStream + ' ' + typeof Worker") == "undefined undefined"
    assert poll(lambda: pg.locator(".jm-root g.jm-eqn").count() > 0, 30), (
        f"the packed document never drew: {pg.locator('.jm-root').inner_text()[:300]!r}; {guarded_page.report()}"
    )
    waited = time.monotonic() - t0
    assert not guarded_page.page_errors, guarded_page.page_errors
    assert waited < 10, f"drawing took {waited:.1f} s"
    print(f"[no worker, no DecompressionStream] drawn after {waited:.2f} s")
