"""Pages that render with no kernel and no network: the exported demo notebook, and
`jaxmagic.to_html` pages built here, opened from file:// in headless Chromium."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from jaxmagic.magics import MAGIC_VIEWS

from .harness import (
    DEMO_NOTEBOOK,
    ExpectedView,
    GuardedPage,
    ViewDriver,
    check_view_counts,
    click_node_and_check,
    expected_function,
    poll,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def _assert_offline_and_clean(guarded: GuardedPage) -> None:
    assert not guarded.blocked and not guarded.offsite_seen, (
        f"the page tried to leave the machine: {guarded.blocked + guarded.offsite_seen}"
    )
    assert not guarded.page_errors, f"uncaught errors in the page: {guarded.page_errors}"
    assert not guarded.console_errors, f"console errors: {guarded.console_errors}"


def test_exported_demo_renders_offline(guarded_page: GuardedPage, exported_demo: Any, demo_views: list) -> None:
    timings: dict[str, float] = {}
    t0 = time.monotonic()
    assert DEMO_NOTEBOOK.exists(), f"demo notebook missing: {DEMO_NOTEBOOK}"
    views = [v for v in demo_views if not v.static]  # the run's one oracle (conftest.py)
    timings["oracle"] = round(time.monotonic() - t0, 2)
    widget_views = [v for v in views if v.functions]
    assert len(widget_views) >= 2, f"the demo needs two %%jaxpr cells with jitted calls; oracle saw {views}"

    out = exported_demo.path  # the session's one export (conftest.py), which asserted the command's success
    timings["export --execute"] = exported_demo.seconds

    page = guarded_page.page
    t = time.monotonic()
    page.goto(out.as_uri(), wait_until="load")
    roots = page.locator(".jm-root")
    others = other_magic_cells(DEMO_NOTEBOOK)  # %%trace, %%grad_graph: views the %%jaxpr oracle does not count
    order = sorted([(v.cell_index, "jaxpr", v) for v in views] + [(i, kind, None) for i, kind in others])
    assert poll(lambda: roots.count() >= len(order), 30), (
        f"{roots.count()} .jm-root on the page, expected one per magic output ({len(order)}); {guarded_page.report()}"
    )
    assert roots.count() == len(order), f"{roots.count()} .jm-root, expected {len(order)}"
    kinds = page.evaluate(_DOC_KINDS_JS)
    assert set(kinds) >= set(MAGIC_VIEWS.values()), (
        f"the demo shows the kinds {sorted(set(kinds))}; a tour needs every one of {sorted(MAGIC_VIEWS.values())}"
    )
    check_every_view_drew(roots, kinds)
    timings["page load"] = round(time.monotonic() - t, 2)
    guarded_page.screenshot("exported-demo-page", full_page=True)

    for k, (cell_index, kind, view) in enumerate(order):
        label = f"view{k}-cell{cell_index}"
        driver = ViewDriver(roots.nth(k))
        driver.root.scroll_into_view_if_needed()
        if kind != "jaxpr":  # drawn by its own view: checked by check_every_view_drew above
            continue
        if not view.functions:
            continue
        t = time.monotonic()
        check_view_counts(
            driver,
            view,
            label,
            timings=timings,
            on_expanded=lambda i: guarded_page.screenshot(f"exported-{label}-tab{i}", driver.root),
        )
        driver.select_tab(0)
        click_node_and_check(driver, view.functions[0], label)
        guarded_page.screenshot(f"exported-{label}-selected", driver.root)
        timings[label] = round(time.monotonic() - t, 2)

    guarded_page.screenshot("exported-demo-page-after", full_page=True)
    timings["total"] = round(time.monotonic() - t0, 2)
    print(f"[timings] {timings}")
    _assert_offline_and_clean(guarded_page)


# What each document kind has drawn once it rendered: a view showing only a message box has none of it.
DRAWN_MARKS = {
    "graph": ".jm-canvas g.jm-node[data-node-id]",
    "timeline": ".jm-timeline canvas",
    "grad": ".jm-grad g.jm-node[data-node-id]",
    "sharding": ".jm-sharding .jm-sh-card",
    "keys": ".jm-keys .jm-k-svg .jm-k-item",
}
# A view that could not show its document: unknown kind or version, a drawing that threw, nothing recorded,
# an error raised by the cell (no demo cell raises), or a document still being inflated.
FAILED_VIEW = ".jm-unsupported, .jm-empty, .jm-error, .jm-loading"
FAILED_TEXT = re.compile(r"could not (draw|read) this document|cannot show (kind|\w+ documents of version)")
_DOC_KINDS_JS = """() => [...document.querySelectorAll('script[type="application/json"][data-jaxmagic-doc]')]
  .map((s) => JSON.parse(s.textContent).kind)"""


def check_every_view_drew(roots, kinds: list[str]) -> None:
    """Every view on the page (the k-th `.jm-root` mounts the k-th embedded document) drew
    what its kind draws, and none shows a failure box or failure text instead."""
    assert len(kinds) == roots.count(), f"{len(kinds)} embedded documents, {roots.count()} .jm-root"
    for k, kind in enumerate(kinds):
        root = roots.nth(k)
        root.scroll_into_view_if_needed()
        drawn = DRAWN_MARKS.get(kind)
        assert drawn is not None, f"view {k}: no check for document kind {kind!r}; add it to DRAWN_MARKS"
        assert poll(lambda: root.locator(drawn).count() > 0, 30), (
            f"view {k} ({kind}) drew no {drawn!r}; it reads {root.inner_text()[:400]!r}"
        )
        failed = root.locator(FAILED_VIEW)
        assert failed.count() == 0, (
            f"view {k} ({kind}) shows {failed.first.evaluate('e => e.className')}: {failed.first.inner_text()[:300]!r}"
        )
        text = root.inner_text()
        assert not FAILED_TEXT.search(text), f"view {k} ({kind}) reports a failure: {text[:400]!r}"


def other_magic_cells(notebook: Path) -> list[tuple[int, str]]:
    """(cell index, magic) of the interactive cells of the magics other than %%jaxpr, in notebook order."""
    cells = json.loads(notebook.read_text())["cells"]
    out = []
    for i, cell in enumerate(cells):
        source = "".join(cell["source"]) if cell["cell_type"] == "code" else ""
        first = source.split("\n", 1)[0]
        for magic in (m for m in MAGIC_VIEWS if m != "jaxpr"):
            if first.split()[:1] == [f"%%{magic}"] and "--static" not in first:
                out.append((i, magic))
    return out


def test_to_html_page_renders(guarded_page: GuardedPage, tmp_path: Path) -> None:
    import jax
    import jax.numpy as jnp

    import jaxmagic

    x = jnp.arange(3.0)
    # jitted inside the block: capture() wraps module globals, not this function's locals
    with jaxmagic.capture() as cap:
        f = jax.jit(lambda x: jnp.sin(x) ** 2 + jnp.cos(x) ** 2)
        f(x)
    expected = expected_function(f, x)
    assert expected.n_eqns == 5

    path = tmp_path / "page.html"
    jaxmagic.to_html(cap, path)
    page = guarded_page.page
    page.goto(path.as_uri(), wait_until="load")
    driver = ViewDriver(page.locator(".jm-root").first)
    view = ExpectedView(cell_index=0, static=False, error=None, functions=[expected])
    check_view_counts(driver, view, "to_html")
    click_node_and_check(driver, expected, "to_html")
    guarded_page.screenshot("to-html-page", full_page=True)
    _assert_offline_and_clean(guarded_page)


HOSTILE_NAME = '<img src=x onerror="window.__pwned=1">'


def test_hostile_function_name_is_text(guarded_page: GuardedPage, tmp_path: Path) -> None:
    import jax
    import jax.numpy as jnp

    import jaxmagic

    def fn(x):
        return jnp.tanh(x) * 2

    fn.__name__ = HOSTILE_NAME
    fn.__qualname__ = HOSTILE_NAME
    with jaxmagic.capture() as cap:
        jax.jit(fn)(jnp.ones(4))

    path = tmp_path / "hostile.html"
    jaxmagic.to_html(cap, path)
    page = guarded_page.page
    page.goto(path.as_uri(), wait_until="load")
    root = page.locator(".jm-root").first
    root.wait_for(state="visible", timeout=30_000)
    driver = ViewDriver(root)
    assert poll(lambda: driver.visible_eqn_count() > 0, 20), "the hostile page drew no graph"
    assert poll(lambda: HOSTILE_NAME in root.inner_text(), 10), (
        f"the function name is not shown as text: {root.inner_text()[:400]!r}"
    )
    driver.click_button("Expand all")
    driver.visible_nodes().first.click(timeout=10_000)  # the details name the function too
    assert poll(lambda: driver.details_text().strip(), 10), "clicking a node left .jm-details empty"
    page.wait_for_timeout(500)  # time for any injected onerror to fire
    assert page.evaluate("() => typeof window.__pwned") == "undefined", "the function name ran as HTML"
    injected = page.evaluate("() => [...document.querySelectorAll('img')].map(i => i.outerHTML)")
    assert not injected, f"the function name became markup: {injected}"
    assert re.search(r"\btanh\b", root.inner_text()), "the graph of the hostile function is missing"
    guarded_page.screenshot("to-html-hostile-name", full_page=True)
    _assert_offline_and_clean(guarded_page)


def test_guard_catches_offsite_requests(guarded_page: GuardedPage, tmp_path: Path) -> None:
    """The request guard itself: so "zero offsite requests" above is not vacuous."""
    path = tmp_path / "leaky.html"
    path.write_text(
        "<!doctype html><img src='http://example.com/pixel.png'>"
        "<script>fetch('https://203.0.113.7/beacon').catch(() => {});"
        "try { new WebSocket('wss://example.org/socket'); } catch (e) {}</script>",
        encoding="utf-8",
    )
    page = guarded_page.page
    page.goto(path.as_uri(), wait_until="load")
    assert poll(lambda: len(guarded_page.blocked) >= 3, 10), guarded_page.report()
    hosts = sorted({re.sub(r"^\w+://([^/]+).*$", r"\1", u) for u in guarded_page.blocked})
    assert hosts == ["203.0.113.7", "example.com", "example.org"], guarded_page.report()
    assert all(u in guarded_page.offsite_seen for u in guarded_page.blocked if not u.startswith("ws")), (
        guarded_page.report()
    )
