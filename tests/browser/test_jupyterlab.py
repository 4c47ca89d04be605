"""The demo notebook in a real JupyterLab in headless Chromium: run all once, then drive the
views, read the timelines' colours and switch the theme (one run: the demo is the slow part).

Expected eqn counts come from an independent oracle (plain IPython + JAX, see
`harness.oracle_payload`, once a run: the `demo_views` fixture), never from the widget or from jaxmagic's document.
"""

from __future__ import annotations

import re
import time

import pytest

from .harness import (
    DEMO_NOTEBOOK,
    ExpectedView,
    GuardedPage,
    ViewDriver,
    check_view_counts,
    click_node_and_check,
    jupyter_lab,
    poll,
    prim_pattern,
)
from .hosts import count_code_cells, dismiss_dialogs, open_and_run_all
from .stage import present

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

_KERNEL_IDLE_JS = r"""
() => {
  const app = window.jupyterapp;
  if (app) {  // the server runs with --expose-app-in-browser
    const panel = app.shell && app.shell.currentWidget;
    const ctx = panel && panel.sessionContext;
    const kernel = ctx && ctx.session && ctx.session.kernel;
    return !!kernel && kernel.status === 'idle' && kernel.connectionStatus === 'connected'
      && ctx.isReady && !ctx.isRestarting && !ctx.hasNoKernel;
  }
  const el = document.querySelector('.jp-Notebook-ExecutionIndicator');
  const status = document.querySelector('.jp-StatusBar-Widget')?.textContent || '';
  return !!el && el.getAttribute('data-status') === 'idle' && /\|\s*Idle/.test(status);
}
"""

_PROMPTS_JS = """
() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].map(cell => {
  if (!cell.classList.contains('jp-CodeCell')) return null;
  const p = cell.querySelector('.jp-InputArea-prompt');
  return p ? p.textContent.trim() : '';
})
"""


_dismiss_dialogs = dismiss_dialogs


def _run_all(page) -> str:
    """Run → Run All Cells from the menu bar; the app command if the menu is not there."""
    try:
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).first.click(timeout=10_000)
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).first.click(timeout=10_000)
        return "menu"
    except Exception:
        page.keyboard.press("Escape")
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        return "command"


def _wait_for_execution(page, n_code_cells: int, timeout: float) -> list:
    """Until no cell shows [*], every code cell has a number, and the kernel is idle (stably)."""
    state = {"stable": 0, "prompts": None}

    def done() -> bool:
        _dismiss_dialogs(page)
        prompts = page.evaluate(_PROMPTS_JS)
        state["prompts"] = prompts
        code = [p for p in prompts if p is not None]
        finished = (
            len(code) == n_code_cells
            and not any("*" in p for p in code)
            and any(re.fullmatch(r"\[\d+\]:?", p) for p in code)
            and page.evaluate(_KERNEL_IDLE_JS)
        )
        state["stable"] = state["stable"] + 1 if finished else 0
        return state["stable"] >= 3

    if not poll(done, timeout, interval=0.5):
        raise AssertionError(f"notebook did not finish executing within {timeout:.0f}s; prompts: {state['prompts']}")
    return state["prompts"]


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


def _pane_text(root, name: str) -> str:
    return root.locator(f'.jm-text[data-pane="{name}"]').first.inner_text()


def _check_deferred_levels(guarded: GuardedPage, root, label: str, timings: dict) -> None:
    """The StableHLO and HLO texts are not in the widget's state: opening their tab asks the kernel,
    and the answer arrives, linked (the selected node marks its lines: the tab counts them)."""
    tab = root.locator('.jm-pane-tab[data-pane="stablehlo"]').first
    t = time.monotonic()
    tab.click(timeout=10_000)
    assert poll(lambda: re.search(r"stablehlo\.|func\.func", _pane_text(root, "stablehlo")), 60), (
        f"{label}: the StableHLO never arrived: {_pane_text(root, 'stablehlo')[:300]!r}"
    )
    timings[f"{label} levels requested→shown"] = round(time.monotonic() - t, 2)
    assert poll(lambda: re.fullmatch(r"StableHLO · \d+", tab.inner_text().strip()), 10), (
        f"{label}: the selected node marks no StableHLO line: tab reads {tab.inner_text()!r}"
    )
    guarded.screenshot(f"jupyterlab-{label}-stablehlo", root)
    root.locator('.jm-pane-tab[data-pane="hlo"]').first.click(timeout=10_000)
    assert poll(lambda: "HloModule" in _pane_text(root, "hlo"), 30), (
        f"{label}: no HLO text: {_pane_text(root, 'hlo')[:300]!r}"
    )
    root.locator('.jm-pane-tab[data-pane="jaxpr"]').first.click(timeout=10_000)


def _check_kernel_gone(page, root, label: str) -> None:
    """With the kernel shut down, asking for the HLO says to reconnect the kernel (no error, no hang)."""
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.shutdown()")
    root.locator('.jm-pane-tab[data-pane="hlo"]').first.click(timeout=10_000)
    assert poll(lambda: "reconnect the kernel to load the HLO" in _pane_text(root, "hlo"), 30), (
        f"{label}: with the kernel gone the HLO pane says {_pane_text(root, 'hlo')[:300]!r}"
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


@pytest.mark.timeout(600)
def test_demo_notebook_in_jupyterlab(guarded_page: GuardedPage, tmp_path, demo_views: list) -> None:
    """The demo, run all once in a real JupyterLab: every widget view against the oracle (the first
    one driven: node, text line, search, deferred levels, keyboard playback), every timeline in
    colour and every keys view framed, and with the kernel shut down the HLO pane says so. Then a
    30-shape recompile loop in the same JupyterLab, and its dark theme: the timeline redraws in
    the dark palette."""
    timings: dict[str, float] = {}
    loop_nb = _recompile_loop_notebook(tmp_path)
    t_start = time.monotonic()
    assert DEMO_NOTEBOOK.exists(), f"demo notebook missing: {DEMO_NOTEBOOK}"
    views = demo_views  # the run's one oracle (conftest.py)
    timings["oracle"] = round(time.monotonic() - t_start, 2)
    widget_views = [v for v in views if not v.static and v.functions]
    assert len(widget_views) >= 2, f"the demo needs two %%jaxpr cells with jitted calls; oracle saw {views}"
    n_code_cells = _count_code_cells(DEMO_NOTEBOOK)

    page = guarded_page.page
    with jupyter_lab([DEMO_NOTEBOOK, loop_nb]) as lab:
        timings["server start"] = round(time.monotonic() - t_start - timings["oracle"], 2)
        t = time.monotonic()
        page.goto(lab.lab_url(DEMO_NOTEBOOK.name), wait_until="domcontentloaded", timeout=60_000)
        page.locator(".jp-Notebook .jp-Cell").first.wait_for(state="visible", timeout=60_000)

        def kernel_idle() -> bool:
            _dismiss_dialogs(page)  # e.g. a kernel picker: accept its preselected kernel
            return page.evaluate(_KERNEL_IDLE_JS)

        assert poll(kernel_idle, 90, interval=0.5), f"kernel never became idle\n{lab.log_tail()}"
        timings["lab open + kernel idle"] = round(time.monotonic() - t, 2)

        t = time.monotonic()
        how = _run_all(page)
        try:
            prompts = _wait_for_execution(page, n_code_cells, timeout=150)
        finally:
            guarded_page.screenshot("jupyterlab-notebook")
        timings[f"run all ({how})"] = round(time.monotonic() - t, 2)
        errors = page.locator(
            ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr'],"
            " .jp-RenderedText[data-mime-type='application/vnd.jupyter.error']"
        )
        error_texts = [e[:500] for e in errors.all_inner_texts()]
        unexecuted = [i for i, p in enumerate(prompts) if p is not None and not re.fullmatch(r"\[\d+\]:?", p)]
        assert not unexecuted, f"cells {unexecuted} did not run (prompts {prompts}); errors: {error_texts}"

        cells = page.locator(".jp-Notebook .jp-Cell")
        for k, view in enumerate(widget_views):
            label = f"view{k}-cell{view.cell_index}"
            cell = cells.nth(view.cell_index)
            roots = cell.locator(".jm-root")
            assert poll(lambda: roots.count() > 0, 30), (
                f"{label}: no .jm-root in the output of cell {view.cell_index} (prompts {prompts}); "
                f"errors in outputs: {error_texts}; console errors: {guarded_page.console_errors}"
            )
            roots.first.scroll_into_view_if_needed()
            guarded_page.screenshot(f"jupyterlab-{label}", roots.first)
            t = time.monotonic()
            _check_view(guarded_page, ViewDriver(roots.first), view, label, interact=(k == 0), timings=timings)
            timings[label] = round(time.monotonic() - t, 2)
        guarded_page.screenshot("jupyterlab-notebook-after")
        t = time.monotonic()
        _check_timelines_and_keys(guarded_page, DEMO_NOTEBOOK)
        timings["timelines and keys"] = round(time.monotonic() - t, 2)
        last = cells.nth(widget_views[-1].cell_index).locator(".jm-root").first
        _check_kernel_gone(page, last, f"view{len(widget_views) - 1}")
        guarded_page.screenshot("jupyterlab-kernel-gone", last)

        t = time.monotonic()
        _open_and_run(page, lab, loop_nb)
        _check_timelines_and_keys(guarded_page, loop_nb)
        _check_dark_theme(guarded_page)
        timings["recompile loop and dark theme"] = round(time.monotonic() - t, 2)

    timings["total"] = round(time.monotonic() - t_start, 2)
    print(f"[timings] {timings}")
    print(f"[prompts] {prompts}")
    assert not guarded_page.blocked and not guarded_page.offsite_seen, (
        f"requests left the machine: {guarded_page.blocked + guarded_page.offsite_seen}"
    )
    assert not guarded_page.page_errors, f"uncaught errors in the page: {guarded_page.page_errors}"
    widget_errors = [e for e in guarded_page.console_errors if re.search(r"jaxmagic|anywidget|jm-|widget", e, re.I)]
    assert not widget_errors, f"widget errors in the console: {widget_errors}"


def _count_code_cells(path) -> int:
    import json

    return sum(c["cell_type"] == "code" for c in json.loads(path.read_text(encoding="utf-8"))["cells"])


# --------------------------------------------------------------------------------------
# timelines in colour in JupyterLab, and after a theme switch
# --------------------------------------------------------------------------------------

_RECOMPILE_LOOP_CELLS = [
    "import os\nos.environ.setdefault('XLA_FLAGS', '--xla_force_host_platform_device_count=8')\n"
    "import jax\nimport jax.numpy as jnp\n%load_ext jaxmagic",
    "%%trace\n@jax.jit\ndef scale(x):\n    return jnp.tanh(x) * 2\n\nfor n in range(1, 31):   # 30 shapes: 30 compiles\n    scale(jnp.ones(n))",
]


def _recompile_loop_notebook(tmp_path):
    import json

    cells = [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": src}
        for src in _RECOMPILE_LOOP_CELLS
    ]
    path = tmp_path / "recompile_loop.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    return path


def _open_and_run(page, lab, path) -> None:
    """Open the notebook at `path`, Run All, and wait until every code cell ran and the kernel is
    idle: through the host tests' driver, which waits until Lab shows that notebook (Lab first
    restores its workspace, so a menu's Run All could go to the notebook opened before)."""
    open_and_run_all(page, lab.lab_url(path.name), count_code_cells(path))


def _timeline_roots(page):
    roots = page.locator(".jp-Notebook .jm-root:has(canvas.jm-tl-canvas)")
    assert poll(lambda: roots.count() > 0, 30), "no timeline view in the notebook"
    return [roots.nth(i) for i in range(roots.count())]


def _drawn(root) -> bool:
    return (root.evaluate("r => Number(r.querySelector('.jm-tl-plot').getAttribute('data-draws') || 0)") or 0) > 0


def _check_timelines_and_keys(guarded_page: GuardedPage, nb) -> None:
    """Every timeline of the open notebook: no 40x10 block of pure black, the phase colours drawn,
    a legend, legible text; the recompile loop's first recompile marker is published; the demo's
    keys views are framed with the reused key drawn."""
    from .test_timeline import assert_coloured, canvas_colours

    page = guarded_page.page
    roots = _timeline_roots(page)
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


def _check_dark_theme(guarded_page: GuardedPage) -> None:
    """JupyterLab's dark theme: the first timeline redraws in the dark palette, in presentation mode too."""
    from .test_timeline import assert_coloured, canvas_colours

    page = guarded_page.page
    root = _timeline_roots(page)[0]
    root.scroll_into_view_if_needed()
    before = canvas_colours(root)
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
    assert poll(lambda: page.evaluate("() => document.body.dataset.jpThemeLight") == "false", 30), (
        "the theme did not switch"
    )
    assert poll(lambda: canvas_colours(root)[0]["overviewBg"] != before[0]["overviewBg"], 10), (
        f"the timeline kept its light colours after the switch to the dark theme: {before}"
    )
    page.wait_for_timeout(500)
    after = canvas_colours(root)
    guarded_page.screenshot("jupyterlab-recompile-loop-dark", root)
    print(f"[lab colours] theme switch: {before[0]['overviewBg']} -> {after[0]['overviewBg']}")
    assert_coloured(after, "after the switch to the dark theme")
    present(root, True)
    dark = poll(lambda: sum(int(v) for v in canvas_colours(root)[0]["overviewBg"].split(",")) < 3 * 96, 10)
    presenting = canvas_colours(root)
    assert dark, f"presentation mode under JupyterLab's dark theme drew a light canvas: {presenting}"
    assert_coloured(presenting, "dark theme, presentation mode")
    guarded_page.screenshot("jupyterlab-recompile-loop-dark-present", root)


# --------------------------------------------------------------------------------------
# a big function's jaxpr text, printed in the kernel when its pane shows
# --------------------------------------------------------------------------------------

_BIG_TEXT_CELLS = [
    "import os\nos.environ.setdefault('XLA_FLAGS', '--xla_force_host_platform_device_count=8')\n"
    "import jax\nimport jax.numpy as jnp\n%load_ext jaxmagic",
    "%%jaxpr\n@jax.jit\ndef long_chain(x):\n    for _ in range(60):\n        x = jnp.sin(x) * 1.5 + jnp.cos(x)\n"
    "    return jnp.cumsum(x)\n\n@jax.jit\ndef second_chain(x):\n    for _ in range(60):\n"
    "        x = jnp.tanh(x) - 0.5 * x\n    return jnp.argmax(x)\n\ny, z = long_chain(jnp.ones(8)), second_chain(jnp.ones(8))",
]


def _note(root) -> str:
    note = root.locator(".jm-pane-note-top").first
    return "" if note.get_attribute("hidden") is not None else note.inner_text()


def test_a_big_functions_jaxpr_text_arrives_linked_and_a_dead_kernel_is_said(guarded_page: GuardedPage, tmp_path):
    """Past 150 eqns a widget's document carries the first eqns of the jaxpr text; the view asks
    the kernel for the rest as soon as the jaxpr pane shows, and the answer is linked to the graph
    (the last eqn, found by search, marks its line). With the kernel shut down, the second
    function's pane keeps its first eqns and says to reconnect the kernel."""
    import json

    cells = [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": src}
        for src in _BIG_TEXT_CELLS
    ]
    path = tmp_path / "big_text.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    page = guarded_page.page
    with jupyter_lab([path]) as lab:
        _open_and_run(page, lab, path)
        roots = page.locator(".jp-Notebook .jm-root")
        assert poll(lambda: roots.count() > 0, 30), "no view in the notebook"
        root = roots.first
        root.scroll_into_view_if_needed()
        driver = ViewDriver(root)
        assert poll(lambda: "sin" in _pane_text(root, "jaxpr") and not _note(root), 30), (
            f"the whole jaxpr text never arrived: note {_note(root)!r}"
        )
        search = root.locator(".jm-search").first
        search.fill("cumsum")
        search.press("Enter")
        assert poll(lambda: any("cumsum" in t for t in driver.selected_lines()), 10), (
            f"the last eqn marks no line of the whole text: {driver.selected_lines()}"
        )
        guarded_page.screenshot("jupyterlab-big-text", root)
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.shutdown()")
        driver.select_tab(1)
        assert poll(lambda: "reconnect the kernel to load the whole jaxpr text" in _note(root), 30), (
            f"with the kernel gone the second function's pane says {_note(root)!r}"
        )
        assert "tanh" in _pane_text(root, "jaxpr"), "the first eqns left the pane"
        guarded_page.screenshot("jupyterlab-big-text-kernel-gone", root)
    assert not guarded_page.page_errors, guarded_page.page_errors
