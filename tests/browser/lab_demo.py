"""The demo notebook in JupyterLab against the oracle: every widget view's functions and eqn
counts (the first view driven: node, text line, search, deferred levels, keyboard playback), every
timeline in colour, every keys view framed, and with the kernel shut down the HLO pane says so.

Run inside the host test's JupyterLab run of the demo (test_hosts.py), so the demo runs once in
Lab. Expected counts come from an independent oracle (plain IPython + JAX, `harness.oracle_payload`,
once a run: the `demo_views` fixture), never from the widget or from jaxmagic's document.
"""

from __future__ import annotations

import re
import time

from .harness import (
    DEMO_NOTEBOOK,
    ExpectedView,
    GuardedPage,
    ViewDriver,
    check_view_counts,
    click_node_and_check,
    poll,
    prim_pattern,
)
from .hosts import CURRENT


def check_demo_in_lab(guarded: GuardedPage, views: list[ExpectedView]) -> dict[str, float]:
    """Every widget view of the demo that the oracle saw, in the open JupyterLab (its kernel still
    running), then timelines and keys; last, the kernel is shut down and the HLO pane says so.
    Returns the seconds each step took."""
    timings: dict[str, float] = {}
    widget_views = [v for v in views if not v.static and v.functions]
    assert len(widget_views) >= 2, f"the demo needs two %%jaxpr cells with jitted calls; oracle saw {views}"
    page = guarded.page
    cells = page.locator(f"{CURRENT} .jp-Notebook .jp-Cell")
    for k, view in enumerate(widget_views):
        label = f"view{k}-cell{view.cell_index}"
        roots = cells.nth(view.cell_index).locator(".jm-root")
        assert poll(lambda: roots.count() > 0, 30), (
            f"{label}: no .jm-root in the output of cell {view.cell_index}; console errors: {guarded.console_errors}"
        )
        roots.first.scroll_into_view_if_needed()
        guarded.screenshot(f"jupyterlab-{label}", roots.first)
        t = time.monotonic()
        _check_view(guarded, ViewDriver(roots.first), view, label, interact=(k == 0), timings=timings)
        timings[label] = round(time.monotonic() - t, 2)
    t = time.monotonic()
    check_timelines_and_keys(guarded, DEMO_NOTEBOOK)
    timings["timelines and keys"] = round(time.monotonic() - t, 2)
    last = cells.nth(widget_views[-1].cell_index).locator(".jm-root").first
    _check_kernel_gone(page, last, f"view{len(widget_views) - 1}")
    guarded.screenshot("jupyterlab-kernel-gone", last)
    widget_errors = [e for e in guarded.console_errors if re.search(r"jaxmagic|anywidget|jm-|widget", e, re.I)]
    assert not widget_errors, f"widget errors in the console: {widget_errors}"
    return timings


def _check_view(
    guarded: GuardedPage, driver: ViewDriver, view: ExpectedView, label: str, interact: bool, timings: dict
) -> None:
    root = driver.root
    check_view_counts(
        driver,
        view,
        label,
        on_expanded=lambda i: guarded.screenshot(f"jupyterlab-{label}-tab{i}-expanded", root),
        timings=timings,
    )
    if not interact:
        return
    driver.select_tab(0)
    fn = view.functions[0]

    # click a node: the details name its primitive, its source line and the code text
    expect = click_node_and_check(driver, fn, label)
    guarded.screenshot(f"jupyterlab-{label}-node-selected", root)
    _check_deferred_levels(guarded, root, label, timings)

    prims = [e["prim"] for e in fn.eqns]
    query = "sin" if "sin" in prims else prims[-1]

    # clicking a jaxpr text line selects that eqn's node
    other = next((p for p in prims if p not in (expect["prim"], query)), None)
    if other is not None:
        line = driver.text_line(rf"=\s*{prim_pattern(other)}")
        line.click(timeout=10_000)
        assert poll(lambda: re.search(prim_pattern(other), driver.details_text()), 10), (
            f"{label}: clicking the {other} text line did not select it: {driver.details_text()!r}"
        )
        assert "jm-line-selected" in (line.get_attribute("class") or ""), f"{label}: clicked line not marked selected"

    # search by primitive name; Enter selects the next match
    search = root.locator(".jm-search").first
    search.fill(query)
    assert poll(lambda: (driver.match_count() or 0) > 0, 10), (
        f"{label}: searching {query!r} found nothing: {root.locator('.jm-match-count').first.inner_text()!r}"
    )
    search.press("Enter")
    assert poll(lambda: re.search(prim_pattern(query), driver.details_text()), 10), (
        f"{label}: Enter on search {query!r} selected no {query} node: {driver.details_text()!r}"
    )
    assert any(re.search(prim_pattern(query), t) for t in driver.selected_lines()), (
        f"{label}: after search, selected text lines {driver.selected_lines()} lack {query}"
    )
    guarded.screenshot(f"jupyterlab-{label}-search", root)
    _check_keyboard_playback(guarded.page, driver, label)


def pane_text(root, name: str) -> str:
    return root.locator(f'.jm-text[data-pane="{name}"]').first.inner_text()


def _check_deferred_levels(guarded: GuardedPage, root, label: str, timings: dict) -> None:
    """The StableHLO and HLO texts are not in the widget's state: opening their tab asks the kernel,
    and the answer arrives, linked (the selected node marks its lines: the tab counts them)."""
    tab = root.locator('.jm-pane-tab[data-pane="stablehlo"]').first
    t = time.monotonic()
    tab.click(timeout=10_000)
    assert poll(lambda: re.search(r"stablehlo\.|func\.func", pane_text(root, "stablehlo")), 60), (
        f"{label}: the StableHLO never arrived: {pane_text(root, 'stablehlo')[:300]!r}"
    )
    timings[f"{label} levels requested→shown"] = round(time.monotonic() - t, 2)
    assert poll(lambda: re.fullmatch(r"StableHLO · \d+", tab.inner_text().strip()), 10), (
        f"{label}: the selected node marks no StableHLO line: tab reads {tab.inner_text()!r}"
    )
    guarded.screenshot(f"jupyterlab-{label}-stablehlo", root)
    root.locator('.jm-pane-tab[data-pane="hlo"]').first.click(timeout=10_000)
    assert poll(lambda: "HloModule" in pane_text(root, "hlo"), 30), (
        f"{label}: no HLO text: {pane_text(root, 'hlo')[:300]!r}"
    )
    root.locator('.jm-pane-tab[data-pane="jaxpr"]').first.click(timeout=10_000)


def _check_kernel_gone(page, root, label: str) -> None:
    """With the kernel shut down, asking for the HLO says to reconnect the kernel (no error, no hang)."""
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.shutdown()")
    root.locator('.jm-pane-tab[data-pane="hlo"]').first.click(timeout=10_000)
    assert poll(lambda: "reconnect the kernel to load the HLO" in pane_text(root, "hlo"), 30), (
        f"{label}: with the kernel gone the HLO pane says {pane_text(root, 'hlo')[:300]!r}"
    )


_ACTIVE_CELL_JS = """() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')]
  .findIndex((c) => c.classList.contains('jp-mod-active'))"""


def _check_keyboard_playback(page, driver: ViewDriver, label: str) -> None:
    """Space and the arrows drive the view's playback once it has focus, inside JupyterLab, whose
    command mode has keys of its own: the notebook's active cell and its cells stay as they were."""
    from .stage import Playback

    playback = Playback(driver.root)
    assert playback.shown, f"{label}: no playback controls in JupyterLab"
    driver.root.locator(".jm-title").first.click()  # a speaker clicks the view, then uses the keys
    active, n_cells = page.evaluate(_ACTIVE_CELL_JS), page.locator(".jp-Notebook .jp-Cell").count()
    focused = page.evaluate("() => !!document.activeElement && !!document.activeElement.closest('.jm-root')")
    assert focused, f"{label}: clicking the view did not give it focus (JupyterLab kept it)"
    _, total = playback.position()
    page.keyboard.press("Home")
    assert poll(lambda: playback.position() == (0, total), 5), f"{label}: Home gave {playback.position()}"
    for key in ("ArrowRight", "ArrowRight", "ArrowLeft"):
        page.keyboard.press(key)
    assert poll(lambda: playback.position() == (1, total), 5), f"{label}: arrows gave {playback.position()}"
    page.keyboard.press("Space")
    assert poll(lambda: playback.position()[0] > 1, 10), f"{label}: space did not play: {playback.position()}"
    page.keyboard.press("End")
    assert poll(lambda: playback.position() == (total, total), 5), f"{label}: End gave {playback.position()}"
    assert page.evaluate(_ACTIVE_CELL_JS) == active and page.locator(".jp-Notebook .jp-Cell").count() == n_cells, (
        f"{label}: the notebook took the keys too (active cell or cell count changed)"
    )


def timeline_roots(page):
    roots = page.locator(".jp-Notebook .jm-root:has(canvas.jm-tl-canvas)")
    assert poll(lambda: roots.count() > 0, 30), "no timeline view in the notebook"
    return [roots.nth(i) for i in range(roots.count())]


def _drawn(root) -> bool:
    return (root.evaluate("r => Number(r.querySelector('.jm-tl-plot').getAttribute('data-draws') || 0)") or 0) > 0


def check_timelines_and_keys(guarded_page: GuardedPage, nb) -> None:
    """Every timeline of the open notebook: no 40x10 block of pure black, the phase colours drawn,
    a legend, legible text; the recompile loop's first recompile marker is published; the demo's
    keys views are framed with the reused key drawn."""
    from .test_timeline import assert_coloured, canvas_colours

    page = guarded_page.page
    roots = timeline_roots(page)
    if nb is DEMO_NOTEBOOK:
        assert len(roots) >= 3, f"the demo has three %%trace cells; {len(roots)} timelines drawn"
    for i, root in enumerate(roots):
        root.scroll_into_view_if_needed()
        assert poll(lambda: _drawn(root), 20), f"{nb.name} timeline {i} never drew"
        label = f"{nb.stem}-timeline{i}"
        colours = canvas_colours(root)
        guarded_page.screenshot(f"jupyterlab-{label}", root)
        print(f"[lab colours] {label}: {colours}")
        assert_coloured(colours, label)
        pane = root.locator('[data-jm-pane="timeline"]')
        assert root.locator("[data-jm-legend]").count() == 1, f"{label}: no legend"
        assert float(pane.get_attribute("data-jm-text-px")) >= 11, label
    if nb is not DEMO_NOTEBOOK:
        key_rect = roots[0].locator('[data-jm-pane="timeline"]').get_attribute("data-jm-key-rect")
        assert key_rect, "the recompile loop's first recompile marker has no key rect"
        return
    for i, kroot in enumerate(page.locator(".jp-Notebook .jm-root:has(.jm-keys)").all()):
        kroot.scroll_into_view_if_needed()
        pane = kroot.locator('[data-jm-pane="keys"]')
        assert poll(lambda: pane.get_attribute("data-jm-text-px") is not None, 10)
        assert float(pane.get_attribute("data-jm-text-px")) >= 11, f"keys {i}: text too small"
        assert kroot.locator("[data-jm-key-element]").count() == 1, f"keys {i}: the reused key is not drawn"
        guarded_page.screenshot(f"jupyterlab-demo-keys{i}", kroot)
