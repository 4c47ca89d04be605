"""Every graph and grad drawing of the exported demo opens framed (widgets/graph/framing.js):
at 1280x720 and 1400x900, in normal and presentation mode, each drawing is either whole inside
its pane with legible text and no empty band above or below, or a part at a legible scale with
the minimap showing where. Measured on the drawn SVG or canvas geometry, not only the attributes
the views publish. Also: the 24-layer program opens with its repeated layers folded, as its
caption says, and a residual chip keeps the backward pass legible."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .harness import open_guarded_page, poll
from .stage import present

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

LEGIBLE_PX, PRESENT_PX = 11.0, 14.0
MIN_PANE_PX = 300  # the graph view's shortest pane beside its side panes (widgets/graph/view.js)
MAX_BAND_PX = 40.0
GRAPH_KINDS = ("graph", "grad")

# One pane, measured in the page: the pane's box, the drawn content's box (the SVG viewport
# group, or the canvas renderer's published geometry), the smallest SVG text as drawn (zoom
# included), whether the minimap shows, and the attributes the view published.
PANE_JS = r"""
(pane) => {
  const pr = pane.getBoundingClientRect();
  const svg = pane.querySelector(':scope > svg.jm-svg');
  const attr = (n) => pane.getAttribute(n);
  const canvas = attr('data-renderer') === 'canvas';
  let draw = null, minPx = null;
  if (!canvas && svg) {
    const r = svg.querySelector('g.jm-viewport').getBoundingClientRect();
    draw = [r.left - pr.left, r.top - pr.top, r.width, r.height];
    let m = Infinity;
    for (const t of [...svg.querySelectorAll('text')].slice(0, 600)) {
      const ctm = t.getScreenCTM();
      if (!ctm || !t.textContent.trim()) continue;
      m = Math.min(m, parseFloat(getComputedStyle(t).fontSize) * Math.hypot(ctm.a, ctm.b));
    }
    minPx = m === Infinity ? null : m;
  } else if (attr('data-jm-drawing')) {
    draw = attr('data-jm-drawing').split(',').map(Number);
    minPx = Number(attr('data-jm-text-px'));
  }
  const mm = pane.querySelector('.jm-minimap');
  const mmShown = !!mm && !mm.hidden && mm.getBoundingClientRect().width > 0 && getComputedStyle(mm).display !== 'none';
  const published = (attr('data-jm-drawing') || '').split(',').filter(Boolean).map(Number);
  return {name: attr('data-jm-pane'), framed: attr('data-jm-framed'), textPx: Number(attr('data-jm-text-px')),
          published, renderer: attr('data-renderer'), pane: [pr.width, pr.height], draw, minPx, minimap: mmShown};
}
"""


@dataclass
class Pane:
    view: int
    name: str
    framed: str | None
    text_px: float
    published: list[float]
    renderer: str | None
    pane: list[float]
    draw: list[float] | None
    min_px: float | None
    minimap: bool

    def problems(self, present_mode: bool) -> list[str]:
        """What is wrong with this pane under the framing rule (empty when nothing is)."""
        floor = PRESENT_PX if present_mode else LEGIBLE_PX
        out: list[str] = []
        if self.framed not in ("whole", "part"):
            return [f"data-jm-framed is {self.framed!r}"]
        if self.draw is None or self.min_px is None:
            return ["nothing drawn"]
        x, y, w, h = self.draw
        pw, ph = self.pane
        if self.min_px < floor - 0.05:
            out.append(f"text {self.min_px:.1f} px < {floor} px")
        if self.published and self.renderer == "svg":
            off = max(abs(a - b) for a, b in zip(self.published, self.draw))
            if off > 3:
                out.append(
                    f"data-jm-drawing {self.published} differs from the drawn box {[round(v) for v in self.draw]}"
                )
        if self.framed == "whole":
            if x < -1 or y < -1 or x + w > pw + 1 or y + h > ph + 1:
                out.append(
                    f"whole, but the drawing {[round(v) for v in self.draw]} is outside the pane {pw:.0f}x{ph:.0f}"
                )
            above, below = y, ph - (y + h)
            # a pane at its shortest (room for the details beside it) centres a small drawing
            centred = ph <= MIN_PANE_PX + 1 and abs(above - below) <= 4
            if (above > MAX_BAND_PX + 0.5 or below > MAX_BAND_PX + 0.5) and not centred:
                out.append(f"empty band: {above:.0f} px above, {below:.0f} px below the drawing")
        elif not present_mode and not self.minimap:
            out.append("part, but no minimap shows where")
        return out

    def __str__(self) -> str:
        d = [round(v) for v in self.draw] if self.draw else None
        return (
            f"view {self.view} {self.name}: {self.framed} text {self.min_px and round(self.min_px, 1)} px "
            f"drawing {d} in pane {self.pane[0]:.0f}x{self.pane[1]:.0f}{' minimap' if self.minimap else ''}"
        )


def graph_roots(page: Any) -> list[Any]:
    """The `.jm-root` of every graph and grad view on the page, in page order."""
    kinds = page.evaluate("""() => [...document.querySelectorAll('script[type="application/json"][data-jaxmagic-doc]')]
      .map((s) => JSON.parse(s.textContent).kind)""")
    roots = page.locator(".jm-root")
    return [roots.nth(i) for i, k in enumerate(kinds) if k in GRAPH_KINDS]


def framed(root: Any) -> bool:
    """Every graph pane of the view has been drawn and framed."""
    return root.evaluate("""(r) => { const p = [...r.querySelectorAll('[data-jm-pane]')]
      .filter((e) => e.matches('.jm-canvas'));
      return p.length > 0 && p.every((e) => e.hasAttribute('data-jm-framed') && e.hasAttribute('data-draws')); }""")


def panes_of(root: Any, view: int) -> list[Pane]:
    """Measure every graph pane of one view (scrolled on screen first)."""
    out = []
    for pane in root.locator(".jm-canvas[data-jm-pane]").all():
        pane.scroll_into_view_if_needed()
        d = pane.evaluate(PANE_JS)
        out.append(
            Pane(
                view,
                d["name"],
                d["framed"],
                d["textPx"],
                d["published"],
                d["renderer"],
                d["pane"],
                d["draw"],
                d["minPx"],
                d["minimap"],
            )
        )
    return out


def each_tab(root: Any) -> Iterator[int]:
    """Select each function tab of a graph view in turn (one pass for views without tabs)."""
    tabs = root.locator(".jm-graph > .jm-tabs-slot .jm-tab")
    n = tabs.count()
    for i in range(max(1, n)):
        if n > 1 and tabs.nth(i).get_attribute("aria-selected") != "true":  # the open tab is not redrawn
            before = root.locator(".jm-canvas").first.get_attribute("data-draws")
            tabs.nth(i).click()
            redrawn = poll(lambda: root.locator(".jm-canvas").first.get_attribute("data-draws") != before, 10, 0.03)
            assert redrawn, f"tab {i}: selecting it did not redraw the graph"
        assert poll(lambda: framed(root), 20, interval=0.03), f"tab {i}: the graph was not framed"
        yield i


@pytest.fixture(scope="module")
def demo_page(exported_demo: Any) -> Path:
    """The demo notebook exported to one offline page (the session's export, conftest.py)."""
    return exported_demo.path


@pytest.fixture
def browser(chromium_browser: Any) -> Any:
    """The session's one Chromium (harness.chromium_browser): Playwright's sync API cannot be started twice in one process."""
    return chromium_browser


def measure_page(
    browser: Any, page_path: Path, size: tuple[int, int], present_mode: bool, shots: Path | None = None
) -> list[Pane]:
    """Open the page at `size`, switch every graph and grad view to presentation mode if asked,
    and measure every pane of every tab; `shots`: a screenshot of each view there."""
    guarded = open_guarded_page(browser, viewport=size)
    try:
        page = guarded.page
        page.goto(page_path.as_uri(), wait_until="load")
        roots = graph_roots(page)
        assert len(roots) >= 6, f"the demo has {len(roots)} graph and grad views"
        found: list[Pane] = []
        for v, root in enumerate(roots):
            root.scroll_into_view_if_needed()
            if present_mode:
                present(root, True)
            assert poll(lambda: framed(root), 30, interval=0.03), f"view {v} was not framed"
            for tab in each_tab(root):
                found += panes_of(root, v)
                if shots is not None:
                    root.screenshot(path=str(shots / f"view{v:02d}-tab{tab}{'-present' if present_mode else ''}.png"))
        assert not guarded.page_errors, guarded.page_errors
        return found
    finally:
        guarded.context.close()


@pytest.mark.parametrize("size", [(1280, 720), (1400, 900)], ids=["1280x720", "1400x900"])
@pytest.mark.parametrize("present_mode", [False, True], ids=["normal", "present"])
def test_demo_graphs_open_framed(browser: Any, demo_page: Path, size: tuple[int, int], present_mode: bool) -> None:
    panes = measure_page(browser, demo_page, size, present_mode)
    names = {p.name for p in panes}
    assert {"graph", "forward", "backward"} <= names, names
    bad = [f"{p}: {'; '.join(p.problems(present_mode))}" for p in panes if p.problems(present_mode)]
    report = "\n".join(str(p) for p in panes)
    assert not bad, "panes not framed by the rule:\n" + "\n".join(bad) + "\n-- all panes --\n" + report
    print(report)


def _view_with(page: Any, text: str) -> Any:
    roots = graph_roots(page)
    hit = [r for r in roots if text in r.inner_text()]
    assert hit, f"no graph view says {text!r}"
    return hit[0]


def test_repeated_layers_open_folded(browser: Any, demo_page: Path) -> None:
    """The 24-layer MLP (going further): the caption says the layers are folded into one box,
    and the drawing opens with one ×24 box, none of its 24 copies drawn."""
    guarded = open_guarded_page(browser, viewport=(1280, 720))
    try:
        page = guarded.page
        page.goto(demo_page.as_uri(), wait_until="load")
        root = _view_with(page, "are folded into one box")
        root.scroll_into_view_if_needed()
        assert poll(lambda: framed(root), 30)
        caption = root.locator(".jm-caption").inner_text()
        assert "×24" in caption or "24" in caption, caption
        folded = root.locator(".jm-cbox.jm-collapsed[data-box-kind='R']")
        assert folded.count() >= 1, "no folded repeat box is drawn"
        label = folded.first.text_content() or ""
        assert "×24" in label, label
        units = root.locator(".jm-cbox[data-box-kind='U']")
        assert units.count() == 0, f"{units.count()} repeated units drawn open although the caption says folded"
        eqns = root.locator("g.jm-eqn").count()
        assert eqns < 60, f"{eqns} eqns drawn: the layers were unrolled"
        assert not guarded.page_errors, guarded.page_errors
    finally:
        guarded.context.close()


def test_residual_chip_keeps_backward_legible(browser: Any, demo_page: Path) -> None:
    """Selecting each residual chip of the first grad view brings its nodes into view without
    zooming the backward pass out of legibility."""
    guarded = open_guarded_page(browser, viewport=(1280, 720))
    try:
        page = guarded.page
        page.goto(demo_page.as_uri(), wait_until="load")
        root = page.locator(".jm-root:has(.jm-grad)").first
        root.scroll_into_view_if_needed()
        assert poll(lambda: framed(root), 30)
        chips = root.locator("button.jm-grad-chip")
        assert chips.count() >= 2
        for i in range(chips.count()):
            chips.nth(i).click()
            page.wait_for_timeout(400)
            for p in panes_of(root, 0):
                assert p.min_px is not None and p.min_px >= LEGIBLE_PX - 0.05, f"chip {i}: {p}"
                assert p.text_px >= LEGIBLE_PX - 0.05, f"chip {i}: {p}"
            lit = root.locator(".jm-grad-pane[data-graph='backward'] .jm-mark")
            assert lit.count() >= 1, f"chip {i} lit nothing in the backward pass"
            pane = root.locator(".jm-grad-pane[data-graph='backward'] .jm-canvas").bounding_box()
            boxes = [b for b in (el.bounding_box() for el in lit.all()) if b]
            assert any(
                b["x"] < pane["x"] + pane["width"]
                and b["x"] + b["width"] > pane["x"]
                and b["y"] < pane["y"] + pane["height"]
                and b["y"] + b["height"] > pane["y"]
                for b in boxes
            ), f"chip {i}: none of the lit nodes {boxes} is in the backward pane {pane}"
        assert not guarded.page_errors, guarded.page_errors
    finally:
        guarded.context.close()


def test_legends_and_key_element(browser: Any, demo_page: Path) -> None:
    """Every graph and grad view shows its colour legend; the --values view's NaN node (its finding)
    is the key element."""
    guarded = open_guarded_page(browser, viewport=(1400, 900))
    try:
        page = guarded.page
        page.goto(demo_page.as_uri(), wait_until="load")
        for i, root in enumerate(graph_roots(page)):
            root.scroll_into_view_if_needed()
            legend = root.locator("[data-jm-legend]")
            assert legend.count() >= 1 and legend.first.is_visible(), f"view {i} has no legend"
            assert "output" in legend.first.inner_text() or "backward" in legend.first.inner_text()
        grad = _view_with(page, "sqrt")
        grad.scroll_into_view_if_needed()
        assert poll(lambda: grad.locator("[data-jm-key-element]").count() == 1, 20), "no key element in the grad view"
    finally:
        guarded.context.close()


def test_resized_output_frames_again(browser: Any, demo_page: Path) -> None:
    """A narrower output area (a window made smaller, a sidebar opened) frames each untouched
    graph again: a drawing that was whole at 1400 px stays inside its narrower pane or becomes a
    legible part."""
    guarded = open_guarded_page(browser, viewport=(1400, 900))
    try:
        page = guarded.page
        page.goto(demo_page.as_uri(), wait_until="load")
        root = graph_roots(page)[0]
        root.scroll_into_view_if_needed()
        assert poll(lambda: framed(root), 30)
        before = panes_of(root, 0)[0]
        page.set_viewport_size({"width": 900, "height": 700})
        assert poll(lambda: panes_of(root, 0)[0].pane[0] < before.pane[0] - 100, 10)
        page.wait_for_timeout(300)
        after = panes_of(root, 0)[0]
        assert after.problems(False) == [], f"{before} -> {after}: {after.problems(False)}"
        assert after.published != before.published, "the drawing did not move with its pane"
    finally:
        guarded.context.close()
