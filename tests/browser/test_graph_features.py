"""The graph view's panes, modes, overlay, breadcrumbs, shortcuts and exports, in headless
Chromium on pages exported offline (`jaxmagic.to_html`) from real captures.

The documents come from `jaxmagic.document(cap)` of a capture with values and vmap
recording on. Levels and costs (docs/schema.md v2) are added by `_complete()` with the
model's own linker and estimates while `document()` does not include them yet, so the
front end is tested against real StableHLO / HLO text, real eqn-to-line links and XLA's
real figures either way; the fixture prints which fields it had to add.
"""

from __future__ import annotations

import json
import re
import struct
import time
from pathlib import Path
from typing import Any

import pytest

from .harness import GuardedPage, ViewDriver, poll

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

LINE_H = 18  # px per text line (widgets/graph/textpane.js)


# --------------------------------------------------------------------------------------
# documents
# --------------------------------------------------------------------------------------


def _model(w: Any, x: Any) -> Any:
    import jax
    import jax.numpy as jnp

    with jax.named_scope("layer_0"):
        h = jnp.tanh(x @ w[0])
    with jax.named_scope("layer_1"):
        h = jax.nn.relu(h @ w[1])

    def body(c: Any, _: Any) -> Any:
        return c * 0.5 + 1.0, None

    h, _ = jax.lax.scan(body, h, None, length=3)
    return jnp.sum(h)


def _batched(x: Any) -> Any:
    import jax.numpy as jnp

    return jnp.sin(x) * 2.0 + x.sum()


def _nan(x: Any) -> Any:
    import jax.numpy as jnp

    return jnp.sqrt(x - 1.0) * 2.0  # x < 1: NaN


def _complete(doc: dict, fn_args: list[tuple[Any, tuple]], filled: dict[str, list[str]]) -> dict:
    """Add levels and cost where the document lacks them, from the model's own linker
    (jaxmagic/model/levels/) and estimates (cost.py), so the page shows what a newer
    document would; values and batch come from the capture itself (values=True, vmap=True)."""
    for fn, (jitted, args) in zip(doc["functions"], fn_args):
        if "levels" in fn and "cost" in fn and any("cost" in n for n in fn["nodes"]):
            continue
        from jaxmagic.model.cost import estimate_all, program_cost
        from jaxmagic.model.levels import link_levels

        lowered = jitted.lower(*args)
        compiled = lowered.compile()
        closed = jitted.trace(*args).jaxpr
        if "levels" not in fn:
            links = link_levels(closed, lowered, compiled)
            fn["levels"] = {
                "stablehlo": {"text": links.stablehlo_text, "note": links.stablehlo_note},
                "hlo": {"text": links.hlo_text, "note": links.hlo_note},
            }
            assert len(links.shlo) == len(fn["nodes"])
            for node, shlo, hlo, comp in zip(fn["nodes"], links.shlo, links.hlo, links.hlo_comp):
                node.update(shlo=shlo, hlo=hlo, hlo_comp=comp)
            filled[fn["name"]].append("levels")
        if not any("cost" in n for n in fn["nodes"]):
            for node, cost in zip(fn["nodes"], estimate_all(closed)):
                node["cost"] = cost.json()
            filled[fn["name"]].append("node cost")
        if "cost" not in fn:
            fn["cost"] = program_cost(compiled)
            filled[fn["name"]].append("program cost")
    return doc


@pytest.fixture(scope="module")
def feature_doc() -> tuple[dict, dict]:
    import jax
    import jax.numpy as jnp

    import jaxmagic

    w = (jnp.ones((4, 4)) * 0.1, jnp.ones((4, 4)) * 0.2)
    x = jnp.ones((2, 4))
    xs = jnp.arange(24.0).reshape(8, 3)
    z = jnp.arange(4.0)
    with jaxmagic.capture(values=True, vmap=True) as cap:
        f = jax.jit(_model)
        f(w, x)
        g = jax.jit(jax.vmap(_batched))
        g(xs)
        k = jax.jit(_nan)
        k(z)
    doc = jaxmagic.document(cap)
    assert [fn["name"] for fn in doc["functions"]] == ["_model", "_batched", "_nan"], [
        fn["name"] for fn in doc["functions"]
    ]
    filled: dict[str, list[str]] = {fn["name"]: [] for fn in doc["functions"]}
    doc = _complete(doc, [(f, (w, x)), (g, (xs,)), (k, (z,))], filled)
    print(f"[document] version {doc['version']}; filled in by the test: {filled}")
    return doc, filled


def _open(guarded: GuardedPage, doc: dict, tmp_path: Path, name: str = "features.html") -> ViewDriver:
    import jaxmagic

    path = tmp_path / name
    jaxmagic.to_html(doc, path)
    guarded.page.goto(path.as_uri(), wait_until="load")
    root = guarded.page.locator(".jm-root").first
    root.wait_for(state="visible", timeout=30_000)
    driver = ViewDriver(root)
    assert poll(lambda: driver.visible_eqn_count() > 0, 20), f"no graph drawn: {guarded.report()}"
    assert poll(lambda: not root.locator(".jm-status.jm-busy").count(), 20)
    return driver


def _clean(guarded: GuardedPage) -> None:
    assert not guarded.blocked and not guarded.offsite_seen, guarded.report()
    assert not guarded.page_errors, guarded.page_errors
    assert not guarded.console_errors, guarded.console_errors


def _main_fits(driver: ViewDriver) -> bool:
    """Long text lines scroll inside their pane; they never widen the side panel."""
    return driver.root.locator(".jm-main").evaluate("m => m.scrollWidth <= m.clientWidth + 1 && m.scrollLeft === 0")


def _node(root: Any, node_id: str) -> Any:
    """The drawn eqn `node_id`, panned into the middle of the graph first (a pane shows a part
    of a wide drawing at a legible scale, as a reader drags it)."""
    root.evaluate("(r, id) => r.querySelector('.jm-canvas').jmProbe.centre('N:' + id)", node_id)
    return root.locator(f'g.jm-eqn[data-node-id="{node_id}"]').first


def _selected(driver: ViewDriver) -> str | None:
    sel = driver.root.locator("g.jm-eqn.jm-selected")
    return sel.first.get_attribute("data-node-id") if sel.count() else None


def _marked(driver: ViewDriver, pane: str) -> list[int]:
    return [
        int(x)
        for x in driver.root.locator(f'.jm-text[data-pane="{pane}"] .jm-line-selected').evaluate_all(
            "els => els.map(e => e.getAttribute('data-line'))"
        )
    ]


def _line_in_view(driver: ViewDriver, pane: str, line: int) -> bool:
    """Line `line` of `pane` is in the DOM and inside the pane's visible area."""
    return driver.root.evaluate(
        """(root, [pane, line]) => {
             const p = root.querySelector(`.jm-text[data-pane="${pane}"]`);
             const el = p && p.querySelector(`.jm-line[data-line="${line}"]`);
             if (!el) return false;
             const a = p.getBoundingClientRect(), b = el.getBoundingClientRect();
             return b.top >= a.top - 1 && b.bottom <= a.bottom + 1;
           }""",
        [pane, line],
    )


def _click_line(driver: ViewDriver, pane: str, line: int) -> None:
    """Scroll `pane` to `line` (it may not be in the DOM yet: the pane is virtualised), click it."""
    driver.root.evaluate(
        """(root, [pane, line, lh]) => {
             const p = root.querySelector(`.jm-text[data-pane="${pane}"]`);
             p.scrollTop = Math.max(0, line * lh - p.clientHeight / 2);
             p.dispatchEvent(new Event('scroll'));
           }""",
        [pane, line, LINE_H],
    )
    driver.root.locator(f'.jm-text[data-pane="{pane}"] .jm-line[data-line="{line}"]').click()


def _owner_of(fn: dict, field: str, line: int) -> str | None:
    return next((n["id"] for n in fn["nodes"] if line in (n.get(field) or [])), None)


def _tab(driver: ViewDriver, pane: str) -> Any:
    return driver.root.locator(f'.jm-pane-tab[data-pane="{pane}"]')


# --------------------------------------------------------------------------------------
# tests
# --------------------------------------------------------------------------------------


def test_linked_panes_both_ways(guarded_page: GuardedPage, feature_doc: tuple, tmp_path: Path) -> None:
    doc, _ = feature_doc
    fn = doc["functions"][0]
    driver = _open(guarded_page, doc, tmp_path)
    root = driver.root
    assert [t.get_attribute("data-pane") for t in root.locator(".jm-pane-tab").all()] == ["jaxpr", "stablehlo", "hlo"]
    driver.click_button("Expand all")
    driver.settle_count(fn["n_eqns"])

    # graph -> panes: an eqn with lines at every level (a leaf, so only its own lines are marked)
    node = next(n for n in fn["nodes"] if n.get("shlo") and n.get("hlo") and not n["subgroups"])
    _node(root, node["id"]).click()
    assert poll(lambda: _selected(driver) == node["id"], 10)
    assert _marked(driver, "jaxpr")[0] == node["line"]
    assert _line_in_view(driver, "jaxpr", node["line"])
    assert _tab(driver, "stablehlo").inner_text() == f"StableHLO · {len(set(node['shlo']))}"
    assert _tab(driver, "hlo").inner_text() == f"HLO · {len(set(node['hlo']))}"
    guarded_page.screenshot("features-panes-jaxpr", root)
    for pane, field in (("stablehlo", "shlo"), ("hlo", "hlo")):
        _tab(driver, pane).click()
        assert "jm-active" in _tab(driver, pane).get_attribute("class")
        assert poll(lambda: _marked(driver, pane) == sorted(set(node[field])), 5), (
            pane,
            _marked(driver, pane),
            node[field],
        )
        assert _line_in_view(driver, pane, min(node[field])), f"{pane}: first marked line not scrolled into view"
        guarded_page.screenshot(f"features-panes-{pane}", root)

    # panes -> graph: a line of another eqn, in each pane, selects that eqn
    for pane, field in (("hlo", "hlo"), ("stablehlo", "shlo"), ("jaxpr", "line")):
        _tab(driver, pane).click()
        if field == "line":
            other = next(n for n in reversed(fn["nodes"]) if n["id"] != node["id"] and isinstance(n["line"], int))
            line = other["line"]
        else:
            other = next(
                n
                for n in reversed(fn["nodes"])
                if n["id"] != node["id"] and n.get(field) and _owner_of(fn, field, n[field][0]) == n["id"]
            )
            line = other[field][0]
        _click_line(driver, pane, line)
        assert poll(lambda: _selected(driver) == other["id"], 10), (
            f"{pane}: clicking line {line} selected {_selected(driver)}, expected {other['id']}"
        )
        assert other["prim"] in driver.details_text()
    assert _main_fits(driver)
    _clean(guarded_page)


def test_a_300k_line_pane_is_virtualised(guarded_page: GuardedPage, feature_doc: tuple, tmp_path: Path) -> None:
    """A 300k-line StableHLO text: the pane puts only the lines in view in the DOM, and selecting a
    node marks and scrolls to its lines 250,000 and 250,001. The times are printed, not tested
    (a loaded machine's milliseconds say nothing about the view): bench/browser.py measures them."""
    doc, _ = feature_doc
    doc = json.loads(json.dumps(doc))
    fn = doc["functions"][0]
    n_lines = 300_000
    big = "\n".join(
        f'    %{i} = stablehlo.add %{i - 1}, %c : tensor<8x128xf32> loc("model.py":{i % 97}:4)' for i in range(n_lines)
    )
    fn["levels"]["stablehlo"] = {"text": big, "note": None}
    target = next(n for n in fn["nodes"] if not n["subgroups"] and n["group"] == fn["root"])
    for n in fn["nodes"]:
        n["shlo"] = []
    target["shlo"] = [250_000, 250_001]
    driver = _open(guarded_page, doc, tmp_path, "big-pane.html")
    root = driver.root
    timing = root.evaluate(
        """(root) => {
             const t0 = performance.now();
             root.querySelector('.jm-pane-tab[data-pane="stablehlo"]').click();
             const open = performance.now() - t0;
             const lines = root.querySelectorAll('.jm-text[data-pane="stablehlo"] .jm-line').length;
             return {open, lines};
           }"""
    )
    target_el = root.locator(f'g.jm-eqn[data-node-id="{target["id"]}"]').first
    target_el.scroll_into_view_if_needed()
    t = root.evaluate(
        """(root, id) => {
             const el = root.querySelector(`g.jm-eqn[data-node-id="${id}"] .jm-box`);
             const t0 = performance.now();
             el.dispatchEvent(new MouseEvent('click', {bubbles: true}));
             return performance.now() - t0;
           }""",
        target["id"],
    )
    print(
        f"[timing] 300k-line pane: open {timing['open']:.1f} ms ({timing['lines']} lines in the DOM), "
        f"select+highlight+scroll {t:.1f} ms"
    )
    assert timing["lines"] < 400
    assert _marked(driver, "stablehlo") == [250_000, 250_001]
    assert _line_in_view(driver, "stablehlo", 250_000)
    guarded_page.screenshot("features-pane-300k-lines", root)
    _clean(guarded_page)


def test_details_modes_and_overlay(guarded_page: GuardedPage, feature_doc: tuple, tmp_path: Path) -> None:
    doc, _ = feature_doc
    fn = doc["functions"][0]
    driver = _open(guarded_page, doc, tmp_path)
    root = driver.root
    # nothing selected: the function summary with XLA's figures
    details = driver.details_text()
    assert "from XLA's cost analysis".upper() in details.upper() and "FLOP" in details, details
    assert re.search(r"\d+(\.\d+)? [kMG]?B", details), details
    guarded_page.screenshot("features-details-function", root)

    mode = lambda m: root.locator(f'.jm-mode[data-mode="{m}"]')
    assert "jm-active" in mode("trace").get_attribute("class")
    assert mode("vmap").is_disabled() and "vmap" in mode("vmap").get_attribute("title")
    assert not mode("forward").is_disabled()
    trace_labels = root.locator(".jm-edge-label").all_text_contents()
    mode("forward").click()
    assert "jm-active" in mode("forward").get_attribute("class")
    assert root.locator(".jm-mode-note").get_attribute("title") == fn["values_note"]
    assert fn["values_note"] in driver.details_text()
    # real values of the first call: tiny arrays show their printed value, others [min … max] μ mean
    labels = lambda: root.locator(".jm-edge-label").all_text_contents()
    assert poll(lambda: labels() != trace_labels and any(t.startswith("[") for t in labels()), 10), (
        f"forward mode: edge labels {labels()} (trace: {trace_labels})"
    )
    node = next(
        n
        for n in fn["nodes"]
        if n["outs"]
        and fn["values"].get(n["outs"][0])
        and not n["subgroups"]
        and root.locator(f'g.jm-eqn[data-node-id="{n["id"]}"]').count()
    )
    _node(root, node["id"]).click()
    assert poll(lambda: "values (recorded)" in driver.details_text().lower(), 10), driver.details_text()
    guarded_page.screenshot("features-mode-forward", root)
    mode("trace").click()
    assert poll(lambda: root.locator(".jm-edge-label").all_text_contents() == trace_labels, 10)

    # overlay: FLOPs colours eqn boxes and shows the legend
    fills = lambda: root.locator("g.jm-eqn .jm-box").evaluate_all("els => els.map(e => getComputedStyle(e).fill)")
    before = fills()
    root.locator("select.jm-overlay").select_option("flops")
    legend = root.locator(".jm-legend")
    assert poll(lambda: legend.count() and legend.is_visible(), 10)
    assert "estimate" in legend.inner_text() and "FLOP" in legend.inner_text(), legend.inner_text()
    assert poll(lambda: len(set(fills())) > 2 and fills() != before, 10), fills()
    guarded_page.screenshot("features-overlay-flops", root)
    root.locator("select.jm-overlay").select_option("bytes")
    assert poll(lambda: " B" in legend.inner_text(), 10), legend.inner_text()
    root.locator("select.jm-overlay").select_option("none")
    assert poll(lambda: not root.locator(".jm-legend").count(), 10)
    assert poll(lambda: fills() == before, 10)

    # vmap: the second function was recorded under jax.vmap
    driver.select_tab(1)
    assert poll(lambda: not mode("vmap").is_disabled(), 10)
    mode("vmap").click()
    assert poll(lambda: any("‹8›" in t for t in root.locator(".jm-edge-label, .jm-details").all_text_contents()), 10)
    g = doc["functions"][1]
    node = next(n for n in g["nodes"] if n["outs"] and g["batch"].get(n["outs"][0]) == 0)
    _node(root, node["id"]).click()
    assert poll(lambda: "‹8›" in driver.details_text() and "batch size 8" in driver.details_text().lower(), 10), (
        driver.details_text()
    )
    guarded_page.screenshot("features-mode-vmap", root)

    # forward on a function whose value has a NaN: marked on the edge label and in red in the details
    driver.select_tab(2)
    assert poll(lambda: "jm-active" in (mode("trace").get_attribute("class") or ""), 10)  # vmap: not here
    assert mode("vmap").is_disabled()
    mode("forward").click()
    assert poll(lambda: any("⚠ NaN 1" in t for t in root.locator(".jm-edge-label").all_text_contents()), 10), (
        root.locator(".jm-edge-label").all_text_contents()
    )
    h = doc["functions"][2]
    sqrt = next(n for n in h["nodes"] if n["prim"] == "sqrt")
    _node(root, sqrt["id"]).click()
    bad = root.locator(".jm-details .jm-bad")
    assert poll(lambda: bad.count() and bad.first.inner_text().strip() == "NaN 1", 10), driver.details_text()
    assert bad.first.evaluate("e => getComputedStyle(e).color") != root.locator(".jm-details").evaluate(
        "e => getComputedStyle(e).color"
    )
    guarded_page.screenshot("features-mode-forward-nan", root)
    _clean(guarded_page)


def test_breadcrumbs_search_and_keys(guarded_page: GuardedPage, feature_doc: tuple, tmp_path: Path) -> None:
    doc, _ = feature_doc
    fn = doc["functions"][0]
    driver = _open(guarded_page, doc, tmp_path)
    root = driver.root
    page = guarded_page.page

    # breadcrumbs: an eqn in the scan body
    body_group = next(
        g for g in fn["groups"] if g["node"] and next(n for n in fn["nodes"] if n["id"] == g["node"])["prim"] == "scan"
    )
    inner = next(n for n in fn["nodes"] if n["group"] == body_group["id"] and not n["subgroups"])
    search = root.locator(".jm-search")
    search.fill(inner["prim"])
    search.press("Enter")
    while _selected(driver) != inner["id"]:
        root.locator(".jm-search-next").click()
        assert poll(lambda: _selected(driver), 10)
        assert re.match(r"\d+ of \d+ match", root.locator(".jm-match-count").inner_text())
    crumbs = root.locator(".jm-breadcrumbs .jm-crumb")
    labels = crumbs.all_inner_texts()
    assert labels[0] == fn["name"][:27] or labels[0].startswith(fn["name"][:20]), labels
    assert "scan" in labels and labels[-1] == inner["prim"], labels
    guarded_page.screenshot("features-breadcrumbs", root)
    crumbs.filter(has_text=re.compile(r"^scan$")).click()
    owner = body_group["node"]
    assert poll(lambda: _selected(driver) == owner, 10), _selected(driver)
    # a scope crumb selects the scope box
    scoped = next(n for n in fn["nodes"] if n["scope"] and n["group"] == fn["root"])
    driver.click_button("Expand all")
    driver.settle_count(fn["n_eqns"])
    # Expand all keeps the camera (on the scan, after its crumb): the node may lie outside it, so
    # the click is dispatched on the node itself (what a click on it after panning there gives)
    _node(root, scoped["id"]).dispatch_event("click")
    assert poll(lambda: _selected(driver) == scoped["id"], 10)
    crumbs.filter(has_text=re.compile(rf"^{re.escape(scoped['scope'][-1])}$")).click()
    sel = root.locator("g.jm-scope.jm-selected")
    assert poll(lambda: sel.count() == 1, 10)
    assert sel.get_attribute("data-scope-path") == "/".join(scoped["scope"])
    assert scoped["scope"][-1] in driver.details_text()
    # prev / next and the count
    search.fill(inner["prim"])
    n_matches = driver.match_count()
    root.locator(".jm-search-prev").click()
    assert poll(lambda: root.locator(".jm-match-count").inner_text().startswith(f"{n_matches} of"), 10)

    # keyboard: a click anywhere in the widget gives it the keys (the root is focusable)
    root.locator(".jm-details").click()
    assert page.evaluate("() => document.activeElement.classList.contains('jm-root')")
    page.keyboard.press("?")
    assert root.locator(".jm-help").is_visible()
    guarded_page.screenshot("features-help", root)
    page.keyboard.press("?")
    assert not root.locator(".jm-help").is_visible()
    page.keyboard.press("c")
    # collapsed: only root eqns outside any scope are drawn (scopes and the scan are boxes)
    collapsed = len([n for n in fn["nodes"] if n["group"] == fn["root"] and not n["scope"]])
    assert driver.settle_count(collapsed) == collapsed
    page.keyboard.press("Escape")  # nothing selected: e expands everything
    page.keyboard.press("e")
    assert driver.settle_count(fn["n_eqns"]) == fn["n_eqns"]
    page.keyboard.press("c")
    assert driver.settle_count(collapsed) == collapsed
    page.keyboard.press("/")
    assert page.evaluate("() => document.activeElement.classList.contains('jm-search')")
    page.keyboard.type("cc")  # typed into the search box: no shortcut fires
    assert driver.visible_eqn_count() == collapsed
    assert search.input_value().endswith("cc")
    search.fill(inner["prim"])
    root.locator(".jm-svg").click(position={"x": 5, "y": 5})  # empty canvas (inside the margin): clears the selection
    page.keyboard.press("n")
    assert poll(lambda: _selected(driver) is not None, 10)
    page.keyboard.press("Escape")
    assert poll(lambda: _selected(driver) is None, 10)
    page.keyboard.press("f")
    assert _main_fits(driver)
    guarded_page.screenshot("features-keys", root)
    _clean(guarded_page)


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
    return struct.unpack(">II", data[16:24])


def test_exports(guarded_page: GuardedPage, feature_doc: tuple, tmp_path: Path) -> None:
    doc, _ = feature_doc
    driver = _open(guarded_page, doc, tmp_path)
    page = guarded_page.page
    out: dict[str, Path] = {}
    for label in ("SVG", "PNG", "JSON"):
        t = time.monotonic()
        with page.expect_download(timeout=20_000) as info:
            driver.click_button(label)
        dl = info.value
        path = tmp_path / dl.suggested_filename
        dl.save_as(path)
        out[label] = path
        print(f"[export] {label}: {dl.suggested_filename}, {path.stat().st_size} bytes, {time.monotonic() - t:.2f}s")
    svg = out["SVG"].read_text(encoding="utf-8")
    assert svg.startswith("<svg") and "jm-eqn" in svg
    w, h = _png_size(out["PNG"].read_bytes())
    vb = re.search(r'viewBox="0 0 (\d+) (\d+)"', svg)
    assert vb and w >= int(vb.group(1)) - 1 and h >= int(vb.group(2)) - 1, (w, h, vb and vb.groups())
    assert out["PNG"].suffix == ".png" and out["SVG"].suffix == ".svg"
    exported = json.loads(out["JSON"].read_text(encoding="utf-8"))
    assert [f["name"] for f in exported["functions"]] == [f["name"] for f in doc["functions"]]
    # look at the PNG: copy it next to the screenshots
    from .harness import artifacts_dir

    (artifacts_dir() / "features-export.png").write_bytes(out["PNG"].read_bytes())
    _clean(guarded_page)


def _chain(x: Any) -> Any:
    import jax.numpy as jnp

    for i in range(700):
        x = jnp.sin(x) + i if i % 2 else jnp.cos(x) * 0.5
    return x


def test_png_from_the_canvas_renderer(guarded_page: GuardedPage, tmp_path: Path) -> None:
    """A scene too big for SVG is drawn on a canvas; PNG then exports the view as drawn."""
    import jax
    import jax.numpy as jnp

    import jaxmagic

    with jaxmagic.capture() as cap:
        f = jax.jit(_chain)
        f(jnp.ones(3))
    doc = jaxmagic.document(cap)
    driver = _open(guarded_page, doc, tmp_path, "chain.html")
    root, page = driver.root, guarded_page.page
    driver.click_button("Expand all")
    canvas = root.locator('.jm-canvas[data-renderer="canvas"]')
    assert poll(lambda: canvas.count() == 1, 20), "a 1,400-eqn scene should be drawn on the canvas renderer"
    size = root.locator("canvas.jm-gl").evaluate("c => [c.width, c.height]")
    t = time.monotonic()
    with page.expect_download(timeout=20_000) as info:
        driver.click_button("PNG")
    path = tmp_path / info.value.suggested_filename
    info.value.save_as(path)
    print(f"[export] PNG from the canvas renderer: {path.stat().st_size} bytes, {time.monotonic() - t:.2f}s")
    assert list(_png_size(path.read_bytes())) == size
    from .harness import artifacts_dir

    (artifacts_dir() / "features-export-canvas.png").write_bytes(path.read_bytes())
    _clean(guarded_page)
