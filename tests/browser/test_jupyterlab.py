"""Two small notebooks in one real JupyterLab in headless Chromium: a big function's jaxpr text
asked from the kernel when its pane shows (and a dead kernel said), and a 30-shape recompile loop
whose timeline is in colour and redraws in JupyterLab's dark theme (last: the theme stays).

The demo notebook in JupyterLab, checked against the oracle, runs inside the host tests'
JupyterLab run of it (test_hosts.py, lab_demo.py), so the demo runs once in Lab.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness import GuardedPage, LabServer, ViewDriver, jupyter_lab, poll
from .hosts import count_code_cells, open_and_run_all
from .lab_demo import check_timelines_and_keys, pane_text, timeline_roots
from .stage import present

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def _notebook(folder: Path, name: str, sources: list[str]) -> Path:
    cells = [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": s} for s in sources
    ]
    path = folder / f"{name}.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    return path


_RECOMPILE_LOOP_CELLS = [
    "import os\nos.environ.setdefault('XLA_FLAGS', '--xla_force_host_platform_device_count=8')\n"
    "import jax\nimport jax.numpy as jnp\n%load_ext jaxmagic",
    "%%trace\n@jax.jit\ndef scale(x):\n    return jnp.tanh(x) * 2\n\nfor n in range(1, 31):   # 30 shapes: 30 compiles\n    scale(jnp.ones(n))",
]


def _open_and_run(page, lab, path) -> None:
    """Open the notebook at `path`, Run All, and wait until every code cell ran and the kernel is
    idle: through the host tests' driver, which waits until Lab shows that notebook (Lab first
    restores its workspace, so a menu's Run All could go to the notebook opened before)."""
    open_and_run_all(page, lab.lab_url(path.name), count_code_cells(path))


def _check_dark_theme(guarded_page: GuardedPage) -> None:
    """JupyterLab's dark theme: the first timeline redraws in the dark palette, in presentation mode too."""
    from .test_timeline import assert_coloured, canvas_colours

    page = guarded_page.page
    root = timeline_roots(page)[0]
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


@pytest.fixture(scope="module")
def small_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LabServer, dict[str, Path]]]:
    """One JupyterLab for this module's two small notebooks (a server start is ~10 s)."""
    folder = tmp_path_factory.mktemp("small-lab")
    notebooks = {
        "big_text": _notebook(folder, "big_text", _BIG_TEXT_CELLS),
        "recompile_loop": _notebook(folder, "recompile_loop", _RECOMPILE_LOOP_CELLS),
    }
    with jupyter_lab(list(notebooks.values())) as lab:
        yield lab, notebooks


def test_a_big_functions_jaxpr_text_arrives_linked_and_a_dead_kernel_is_said(guarded_page: GuardedPage, small_lab):
    """Past 150 eqns a widget's document carries the first eqns of the jaxpr text; the view asks
    the kernel for the rest as soon as the jaxpr pane shows, and the answer is linked to the graph
    (the last eqn, found by search, marks its line). With the kernel shut down, the second
    function's pane keeps its first eqns and says to reconnect the kernel."""
    lab, notebooks = small_lab
    page = guarded_page.page
    _open_and_run(page, lab, notebooks["big_text"])
    roots = page.locator(".jp-Notebook .jm-root")
    assert poll(lambda: roots.count() > 0, 30), "no view in the notebook"
    root = roots.first
    root.scroll_into_view_if_needed()
    driver = ViewDriver(root)
    assert poll(lambda: "sin" in pane_text(root, "jaxpr") and not _note(root), 30), (
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
    assert "tanh" in pane_text(root, "jaxpr"), "the first eqns left the pane"
    guarded_page.screenshot("jupyterlab-big-text-kernel-gone", root)
    assert not guarded_page.page_errors, guarded_page.page_errors


def test_a_recompile_loops_timeline_is_in_colour_and_follows_the_dark_theme(guarded_page: GuardedPage, small_lab):
    """A 30-shape recompile loop in JupyterLab: its timeline in colour with its first recompile
    marked; after JupyterLab's switch to its dark theme, it redraws in the dark palette (this test
    runs last in the module: the theme stays switched in that server)."""
    lab, notebooks = small_lab
    _open_and_run(guarded_page.page, lab, notebooks["recompile_loop"])
    check_timelines_and_keys(guarded_page, notebooks["recompile_loop"])
    _check_dark_theme(guarded_page)
    assert not guarded_page.page_errors, guarded_page.page_errors
