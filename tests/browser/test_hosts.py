"""Every view, in every host a user opens it in, framed, legible and in colour the moment it appears.

The demo notebook and a notebook of larger programs (tests/notebooks/larger_programs.ipynb, written
by tools/make_larger_notebook.py) run once in a real JupyterLab 4 and once in a real Notebook 7; the
demo is also exported to a page. Then every view is checked at 1400x900 and 1280x720, in normal
and in presentation mode, by one function (hosts.check_view): drawings inside their panes or
framed on a legible part, text sizes, no black or one-colour canvas, a legend, the story's key
element on screen. Screenshots land in build/screens/<host>/, a table of results beside them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jaxmagic.magics import MAGIC_VIEWS

from .harness import (
    DEMO_NOTEBOOK,
    REPO,
    GuardedPage,
    LabServer,
    jupyter_lab,
    jupyter_notebook7,
    open_guarded_page,
)
from .hosts import (
    CURRENT,
    VIEWPORTS,
    assert_all_pass,
    cell_errors,
    check_all_views,
    count_code_cells,
    open_and_run_all,
    shutdown_kernel,
    wait_for_views,
)
from .lab_demo import check_demo_in_lab

pytestmark = [pytest.mark.browser]

LARGER_NOTEBOOK = REPO / "tests" / "notebooks" / "larger_programs.ipynb"
NOTEBOOKS = {"demo": DEMO_NOTEBOOK, "larger_programs": LARGER_NOTEBOOK}
SERVERS = {"jupyterlab": jupyter_lab, "notebook7": jupyter_notebook7}


def magic_cells(notebook: Path) -> int:
    """Cells that start with one of jaxmagic's cell magics: each leaves at least one view."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    first_lines = ["".join(c["source"]).split("\n", 1)[0] for c in cells if c["cell_type"] == "code"]
    return sum(
        1 for line in first_lines if line.split()[:1] and line.split()[0][2:] in MAGIC_VIEWS and line.startswith("%%")
    )


@dataclass
class Host:
    name: str
    server: LabServer
    guarded: GuardedPage


@pytest.fixture(scope="module", params=list(SERVERS))
def host(request: Any, chromium_browser: Any) -> Iterator[Host]:
    """One server per host for the module, serving both notebooks, and one page that visits them."""
    # the host's own windowing (Lab 4: content-visibility), as a user has it: views drawn off screen
    with SERVERS[request.param](list(NOTEBOOKS.values()), windowing=None) as server:
        guarded = open_guarded_page(chromium_browser, viewport=VIEWPORTS["1400x900"])
        try:
            yield Host(request.param, server, guarded)
        finally:
            print(f"[{request.param}] {guarded.report()}")
            guarded.context.close()


@pytest.mark.timeout(600)
@pytest.mark.parametrize("notebook", list(NOTEBOOKS))
def test_every_view_framed_in_host(host: Host, notebook: str, request: pytest.FixtureRequest) -> None:
    """Every view framed in the host. The demo's run in JupyterLab is also the one where its views
    are checked against the oracle and driven (lab_demo.py), while its kernel still runs."""
    path = NOTEBOOKS[notebook]
    page = host.guarded.page
    t0 = time.monotonic()
    open_and_run_all(page, host.server.page_url(path.name), count_code_cells(path))
    errors = cell_errors(page)
    assert not errors, f"{host.name}/{notebook}: cells raised: {errors}"
    roots = page.locator(f"{CURRENT} .jp-Notebook .jm-root")
    expected = magic_cells(path)
    n = wait_for_views(roots, expected)
    assert n >= expected, f"{host.name}/{notebook}: {n} views for {expected} magic cells"
    t1 = time.monotonic()
    oracle: dict[str, float] = {}
    try:
        results = check_all_views(page, host.name, notebook, roots)
        if (host.name, notebook) == ("jupyterlab", "demo"):
            oracle = _against_the_oracle(host.guarded, request.getfixturevalue("demo_views"))
    finally:
        shutdown_kernel(page)
    print(f"[timings] {host.name}/{notebook}: open + run all {t1 - t0:.1f} s, checks {time.monotonic() - t1:.1f} s")
    print(f"[timings] oracle checks: {oracle}" if oracle else "", end="")
    assert_all_pass(results, host.name, notebook)


def _against_the_oracle(guarded: GuardedPage, views: list) -> dict[str, float]:
    """lab_demo's checks at the page's first viewport and default timeout (the framing checks
    leave it at the last viewport with short timeouts)."""
    w, h = VIEWPORTS["1400x900"]
    guarded.page.set_viewport_size({"width": w, "height": h})
    guarded.page.set_default_timeout(30_000)
    return check_demo_in_lab(guarded, views)


@pytest.mark.timeout(420)
def test_every_view_framed_in_exported_page(chromium_browser: Any, exported_demo: Any) -> None:
    guarded = open_guarded_page(chromium_browser, viewport=VIEWPORTS["1400x900"])
    try:
        page = guarded.page
        page.goto(exported_demo.path.as_uri(), wait_until="load")
        raised = page.locator(".cell .err").all_inner_texts()
        assert not raised, f"exported demo: cells raised: {[t[-600:] for t in raised]}"
        roots = page.locator(".jm-root")
        expected = magic_cells(DEMO_NOTEBOOK)
        n = wait_for_views(roots, expected)
        assert n >= expected, f"exported demo: {n} views for {expected} magic cells"
        results = check_all_views(page, "exported", "demo", roots)
    finally:
        print(f"[exported] {guarded.report()}")
        guarded.context.close()
    assert_all_pass(results, "exported", "demo")


# Three hand-made views: the checks must find every fault planted in the first two and none in the third.
_PLANTED = """<!doctype html><meta charset=utf-8><style>body{margin:0;font:13px sans-serif} .out{width:700px}
.jm-root{position:relative;width:680px} .pane{position:relative;width:400px;height:200px;overflow:hidden}</style>
<div class=out><div class="jm-root" id=bad1><div class=jm-canvas>
  <div class=pane data-jm-pane=graph data-jm-framed=whole data-jm-text-px=9 data-jm-drawing="0,0,900,100">
    <svg width=1000 height=200><g><rect x=0 y=0 width=900 height=100 fill=#48c></rect></g></svg></div>
  <canvas id=black width=200 height=40></canvas>
  <div data-jm-key-element style="position:absolute;top:3000px;width:20px;height:20px">k</div></div></div></div>
<div class=out><div class="jm-root" id=bad2 style="width:900px"><div class=jm-canvas>
  <div class=pane data-jm-pane=graph data-jm-framed=part data-jm-text-px=12 data-jm-drawing="-50,0,600,150">
    <svg width=1000 height=200><g transform="translate(-50,0)"><rect width=900 height=150 fill=#48c></rect></g></svg>
    <canvas class=jm-minimap hidden width=50 height=30></canvas></div>
  <canvas id=flat width=100 height=40></canvas><div data-jm-legend style="display:none">legend</div></div></div></div>
<div class=out><div class="jm-root" id=good><div class=jm-canvas>
  <div class=pane data-jm-pane=graph data-jm-framed=whole data-jm-text-px=12 data-jm-drawing="10,10,300,100">
    <svg width=400 height=200><g transform="translate(10,10)"><rect width=300 height=100 fill=#48c></rect></g></svg></div>
  <canvas id=fine width=100 height=40></canvas>
  <div data-jm-legend><span style="background:#48c">&nbsp;</span> op</div>
  <div data-jm-key-element style="width:20px;height:20px">k</div></div></div></div>
<script>
const paint = (id, colours) => { const c = document.getElementById(id).getContext('2d');
  colours.forEach((col, i) => { c.fillStyle = col; c.fillRect(i * 50, 0, 50, 40); }); };
paint('black', ['#000', '#000', '#48c']); paint('flat', ['#48c', '#48c']); paint('fine', ['#48c', '#c84']);
</script>"""


def test_host_checks_catch_planted_faults(guarded_page: GuardedPage, tmp_path: Path) -> None:
    """The checks can fail: each planted fault is reported, and a view that keeps the contract passes."""
    from .hosts import key_failures, measure

    path = tmp_path / "planted.html"
    path.write_text(_PLANTED, encoding="utf-8")
    page = guarded_page.page
    page.goto(path.as_uri(), wait_until="load")

    def faults(sel: str, mode: str = "normal") -> str:
        m, fails = measure(page.locator(sel), mode)
        return " | ".join(fails + key_failures(m, needs_key=True))

    bad1 = faults("#bad1")
    for expected in (
        "text 9.0 px < 11",
        "drawing 0,0,900,100 is not inside the pane 400x200",
        "drawn SVG 0,0,900,100 is not inside",
        "block of pure black",
        "no [data-jm-legend]",
        "is not on screen",
    ):
        assert expected in bad1, f"missed {expected!r} in: {bad1}"
    bad2 = faults("#bad2")
    for expected in (
        "framed part but no visible minimap",
        "one colour",
        "[data-jm-legend] not visible",
        "900 px wide in an output area of 700 px",
        "no [data-jm-key-element]",
        "drawn SVG -50,0,900,150 extends past data-jm-drawing -50,0,600,150",
    ):
        assert expected in bad2, f"missed {expected!r} in: {bad2}"
    assert "text 12.0 px < 14" in faults("#good", "present")
    assert faults("#good") == "", faults("#good")
