"""The per-kind bundles in headless Chromium (offline): each kind's widget renders from the ESM
text its Python widget carries, loaded the way anywidget loads it (a Blob URL module import);
only the kinds that lay out graphs start a layout worker; and a `jaxmagic.to_html` page mixing
every kind draws every view from the one all-kinds bundle it embeds."""

from __future__ import annotations

from pathlib import Path

import pytest

import jaxmagic
from jaxmagic.views.widget import KIND_WIDGETS, JaxmagicWidget
from tests.kind_documents import documents_of_every_kind

from .harness import GuardedPage, poll

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

# anywidget's loader (anywidget/labextension: a Blob of the `_esm` text, imported), with a
# stand-in model, and a count of the Workers the module starts.
_RENDER_ESM_JS = """async ([esm, doc]) => {
  window.__workers = 0;
  const Real = window.Worker;
  window.Worker = class extends Real { constructor(...a) { super(...a); window.__workers++; } };
  const url = URL.createObjectURL(new Blob([esm], { type: "text/javascript" }));
  const mod = await import(url);
  URL.revokeObjectURL(url);
  const el = document.createElement("div");
  el.id = "widget";
  document.body.appendChild(el);
  const model = { get: (k) => (k === "doc" ? doc : undefined), on() {}, off() {} };
  await mod.default.render({ model, el });
  // the `_esm` is the packed loader (widgets/packed-loader.js); the bundle it carries is the kind's entry
  return [Object.keys(mod).sort(), Object.keys(await mod.load()).sort()];
}"""

# What "drawn" means for each kind's view (the DOM contract in js/README.md).
_DRAWN_JS = {
    "graph": "(r) => r.querySelector('.jm-graph .jm-canvas[data-draws]') && r.querySelectorAll('.jm-eqn').length > 0",
    "timeline": "(r) => /\\b2 calls\\b/.test((r.querySelector('.jm-tl-status') || {}).textContent || '')",
    "grad": """(r) => { const c = [...r.querySelectorAll('.jm-grad-pane .jm-canvas')];
      return c.length >= 2 && c.every((x) => x.hasAttribute('data-draws')); }""",
    "sharding": "(r) => r.querySelector('.jm-sharding') && r.querySelectorAll('.jm-sh-sec').length > 0",
    "keys": "(r) => r.querySelector('.jm-keys') && r.querySelectorAll('.jm-k-svg .jm-k-item').length > 0",
}
_LAYS_OUT = {"graph": True, "timeline": False, "grad": True, "sharding": False, "keys": False}


@pytest.fixture(scope="module")
def docs() -> dict[str, dict]:
    return documents_of_every_kind()


def _drawn(page, selector: str, kind: str) -> bool:
    return page.locator(selector).first.evaluate(_DRAWN_JS[kind])


def test_each_kind_widget_renders_from_its_own_bundle(guarded_page: GuardedPage, docs, tmp_path: Path) -> None:
    assert set(docs) == set(_DRAWN_JS) == set(KIND_WIDGETS)
    blank = tmp_path / "blank.html"
    blank.write_text("<!doctype html><html><head><meta charset='utf-8'></head><body></body></html>")
    page = guarded_page.page
    for kind, doc in docs.items():
        widget = JaxmagicWidget(doc)
        assert isinstance(widget, KIND_WIDGETS[kind])
        page.goto(blank.as_uri(), wait_until="load")
        exports = page.evaluate(_RENDER_ESM_JS, [widget._esm, widget.doc])
        assert exports == [["default", "load"], ["default", "mount", "mountAll"]], kind
        assert poll(lambda: _drawn(page, "#widget", kind), 30), f"{kind} widget did not draw: {guarded_page.report()}"
        assert page.locator("#widget .jm-unsupported").count() == 0, kind
        workers = page.evaluate("() => window.__workers")
        assert (workers > 0) == _LAYS_OUT[kind], f"{kind}: {workers} layout workers started"
        guarded_page.screenshot(f"bundle-widget-{kind}", page.locator("#widget"))
    assert not guarded_page.page_errors and not guarded_page.console_errors, guarded_page.report()
    assert not guarded_page.blocked and not guarded_page.offsite_seen, guarded_page.report()


def test_page_mixing_every_kind_draws_every_view(guarded_page: GuardedPage, docs, tmp_path: Path) -> None:
    path = tmp_path / "mixed.html"
    jaxmagic.to_html(list(docs.values()), path)
    page = guarded_page.page
    page.goto(path.as_uri(), wait_until="load")
    views = page.locator(".jaxmagic-view")
    assert poll(lambda: views.count() == len(docs), 20), guarded_page.report()
    for i, kind in enumerate(docs):  # the page keeps the documents' order
        assert poll(lambda: _drawn(page, f"section:nth-of-type({i + 1}) .jaxmagic-view", kind), 30), (
            f"{kind} view not drawn on the mixed page: {guarded_page.report()}"
        )
    assert page.locator(".jm-unsupported").count() == 0
    guarded_page.screenshot("bundle-mixed-page", full_page=True)
    assert not guarded_page.page_errors and not guarded_page.console_errors, guarded_page.report()
    assert not guarded_page.blocked and not guarded_page.offsite_seen, guarded_page.report()


def test_packed_widget_renders_without_decompression_stream(guarded_page: GuardedPage, docs, tmp_path: Path) -> None:
    """Hosts whose webview lacks DecompressionStream still inflate the packed bundle (fflate, widgets/ui/gunzip.js)."""
    blank = tmp_path / "blank.html"
    blank.write_text("<!doctype html><html><head><meta charset='utf-8'></head><body></body></html>")
    page = guarded_page.page
    page.goto(blank.as_uri(), wait_until="load")
    page.evaluate("() => { delete window.DecompressionStream; }")
    widget = JaxmagicWidget(docs["keys"])
    page.evaluate(_RENDER_ESM_JS, [widget._esm, widget.doc])
    assert poll(lambda: _drawn(page, "#widget", "keys"), 30), f"keys widget did not draw: {guarded_page.report()}"
    assert page.evaluate("() => typeof window.DecompressionStream") == "undefined"
    assert not guarded_page.page_errors, guarded_page.report()
