"""Every view as a user first sees it, in each host: JupyterLab 4, Notebook 7 and the exported page.

`check_view(page, root, ...)` holds one view to the framing contract (docs/design.md, issue 19):
each drawing pane reports how it framed its drawing (`data-jm-framed`, `data-jm-text-px`,
`data-jm-drawing`) and the page's own geometry must agree; text is legible; no canvas is painted
black or in one colour; the legend is shown; the story's key element is on screen once the
view's top is. The three hosts share this one function; only opening and running a notebook
differs (`HostNotebook`).
"""

from __future__ import annotations

import json
import re
import time
import urllib.parse
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .harness import REPO, poll
from .stage import legibility, present_all

SCREENS = REPO / "build" / "screens"
VIEWPORTS: dict[str, tuple[int, int]] = {"1400x900": (1400, 900), "1280x720": (1280, 720)}
MIN_TEXT_PX = {"normal": 11.0, "present": 14.0}
TOLERANCE_PX = 1.0
DRAWING_AGREES_PX = 8.0  # the drawn SVG content may stick out of the reported drawing box by label ink
# The drawing panes each kind of view must have (contract 2); sharding draws cards, no pane.
PANES_OF_KIND = {
    "graph": {"graph"},
    "grad": {"forward", "backward"},
    "keys": {"keys"},
    "timeline": {"timeline"},
    "sharding": set(),
}

# --------------------------------------------------------------------------------------
# what the page shows: one evaluate per view and mode
# --------------------------------------------------------------------------------------

_MEASURE_JS = r"""
(root) => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return {x: r.left, y: r.top, w: r.width, h: r.height}; };
  const shown = (el) => !!el && (el.checkVisibility ? el.checkVisibility({visibilityProperty: true})
                                                    : el.getClientRects().length > 0)
                        && el.getBoundingClientRect().width > 0 && el.getBoundingClientRect().height > 0;
  const kind = root.querySelector('.jm-grad') ? 'grad' : root.querySelector('.jm-timeline') ? 'timeline'
    : root.querySelector('.jm-sharding') ? 'sharding' : root.querySelector('.jm-keys') ? 'keys'
    : root.querySelector('.jm-canvas') ? 'graph' : 'other';
  // The part of the screen an element can show through: the window cut by every clipping ancestor.
  const visibleRegion = (el) => {
    let r = {l: 0, t: 0, r: window.innerWidth, b: window.innerHeight};
    // body's and html's overflow apply to the window (already the starting region), not to their boxes
    for (let a = el.parentElement; a && a !== document.body && a !== document.documentElement; a = a.parentElement) {
      const cs = getComputedStyle(a);
      if (a.tagName.toLowerCase() !== 'svg' && cs.overflowX === 'visible' && cs.overflowY === 'visible') continue;
      const b = a.getBoundingClientRect();
      r = {l: Math.max(r.l, b.left), t: Math.max(r.t, b.top), r: Math.min(r.r, b.right), b: Math.min(r.b, b.bottom)};
    }
    return {x: r.l, y: r.t, w: Math.max(0, r.r - r.l), h: Math.max(0, r.b - r.t)};
  };
  // The drawn content of an SVG: the union of its visible top-level children's boxes (transforms included).
  const svgContent = (svg) => {
    let l = Infinity, t = Infinity, r = -Infinity, b = -Infinity;
    for (const c of svg.children) {
      if (/^(defs|style|title|desc|marker|clippath)$/i.test(c.tagName) || !shown(c)) continue;
      const q = c.getBoundingClientRect();
      l = Math.min(l, q.left); t = Math.min(t, q.top); r = Math.max(r, q.right); b = Math.max(b, q.bottom);
    }
    return l === Infinity ? null : {x: l, y: t, w: r - l, h: b - t};
  };
  const panes = [...root.querySelectorAll('[data-jm-pane]')].map((p) => {
    const svgs = [...p.querySelectorAll('svg')].filter((s) => shown(s) && !s.closest('button, .jm-pb, [data-jm-legend]')
                                                         && !s.parentElement.closest('svg'));
    let content = null;
    for (const s of svgs) {
      const c = svgContent(s);
      if (!c) continue;
      content = !content ? c : (() => { const l = Math.min(content.x, c.x), t = Math.min(content.y, c.y);
        return {x: l, y: t, w: Math.max(content.x + content.w, c.x + c.w) - l,
                h: Math.max(content.y + content.h, c.y + c.h) - t}; })();
    }
    let minimap = null;  // the minimap of this pane's stage, if the view has one
    for (let a = p; a && a !== root.parentElement; a = a.parentElement) {
      const m = a.querySelector('.jm-minimap');
      if (m) { minimap = {visible: shown(m)}; break; }
    }
    return {name: p.getAttribute('data-jm-pane'), visible: shown(p), box: box(p),
            framed: p.getAttribute('data-jm-framed'), textPx: p.getAttribute('data-jm-text-px'),
            drawing: p.getAttribute('data-jm-drawing'), keyRect: p.getAttribute('data-jm-key-rect'),
            content, minimap, region: visibleRegion(p)};
  });
  const legends = [...root.querySelectorAll('[data-jm-legend]')];
  const keys = [...root.querySelectorAll('[data-jm-key-element]')].map((k) => ({
    box: box(k), visible: shown(k), region: visibleRegion(k), what: k.tagName.toLowerCase() + '.' +
      String(k.getAttribute('class') || '').trim().split(/\s+/).join('.')}));
  const out = root.closest('.jp-OutputArea-output, .out') || root.parentElement;
  return {kind, root: box(root), rootScrollW: root.scrollWidth, rootClientW: root.clientWidth,
          out: box(out), outClientW: out.clientWidth, panes, keys,
          legend: {count: legends.length, visible: legends.some(shown)},
          hasMinimap: !!root.querySelector('.jm-minimap'), text: root.innerText.slice(0, 4000)};
}
"""

# Every visible canvas, read back: a 40x10 CSS-px block of pure opaque black, or drawn pixels of a
# single colour (or none at all), is a canvas that painted before its colours were known.
_CANVAS_JS = r"""
(root) => {
  const found = [];
  for (const cv of root.querySelectorAll('canvas')) {
    const vis = cv.checkVisibility ? cv.checkVisibility({visibilityProperty: true}) : cv.getClientRects().length > 0;
    if (!vis || !cv.width || !cv.height || !cv.clientWidth || !cv.clientHeight) continue;
    const what = 'canvas.' + String(cv.getAttribute('class') || '').trim().split(/\s+/).join('.');
    const ctx = cv.getContext('2d', {willReadFrequently: true});
    if (!ctx) { found.push({what, problem: 'not a 2d canvas: cannot read its pixels'}); continue; }
    const W = cv.width, H = cv.height, px = ctx.getImageData(0, 0, W, H).data;
    const bw = Math.max(1, Math.round(40 * W / cv.clientWidth)), bh = Math.max(1, Math.round(10 * H / cv.clientHeight));
    const sum = new Int32Array((W + 1) * (H + 1));   // integral image of pure-black pixels
    const colours = new Set();
    let drawn = 0;
    for (let y = 0; y < H; y++) {
      let row = 0;
      for (let x = 0; x < W; x++) {
        const i = (y * W + x) * 4, a = px[i + 3];
        const black = a === 255 && px[i] === 0 && px[i + 1] === 0 && px[i + 2] === 0;
        row += black ? 1 : 0;
        sum[(y + 1) * (W + 1) + x + 1] = sum[y * (W + 1) + x + 1] + row;
        if (a > 0) { drawn++; if (colours.size < 3) colours.add((px[i] << 16) | (px[i + 1] << 8) | px[i + 2] | (a << 24)); }
      }
    }
    let block = null;
    for (let y = 0; y + bh <= H && !block; y++) {
      for (let x = 0; x + bw <= W; x++) {
        const s = sum[(y + bh) * (W + 1) + x + bw] - sum[y * (W + 1) + x + bw] - sum[(y + bh) * (W + 1) + x] + sum[y * (W + 1) + x];
        if (s === bw * bh) { block = [Math.round(x * cv.clientWidth / W), Math.round(y * cv.clientHeight / H)]; break; }
      }
    }
    const problem = block ? `a 40x10 px block of pure black at ${block[0]},${block[1]}`
      : drawn === 0 ? 'nothing drawn (blank)' : colours.size === 1 ? `all ${drawn} drawn pixels one colour` : null;
    found.push({what, size: [cv.clientWidth, cv.clientHeight], problem});
  }
  return found;
}
"""

_STABLE_JS = """(root) => [...root.querySelectorAll('[data-jm-pane]')].map((p) => [
  p.getAttribute('data-jm-framed'), p.getAttribute('data-jm-text-px'), p.getAttribute('data-jm-drawing'),
  p.getAttribute('data-jm-key-rect'), Math.round(p.getBoundingClientRect().width),
  Math.round(p.getBoundingClientRect().height)].join('|')).join(';') + '#' + root.getBoundingClientRect().height"""


# Frames until the view's framing has not changed for 160 ms (framing follows layout by a frame or
# more), in the page: one round trip. False when it was still changing after `timeout` ms.
_SETTLE_JS = f"""
async (root, timeout) => {{
  const frame = () => new Promise((done) => requestAnimationFrame(() => done()));
  const signature = {_STABLE_JS};
  const start = performance.now();
  let last = signature(root), since = start;
  while (performance.now() - since < 160) {{
    if (performance.now() - start > timeout) return false;
    await frame();
    const now = signature(root);
    if (now !== last) {{ last = now; since = performance.now(); }}
  }}
  return true;
}}
"""


def settle(root: Any, timeout: float = 3.0) -> None:
    """Wait until the view's framing stops changing (a view still moving is measured as it is)."""
    root.evaluate(_SETTLE_JS, 1000 * timeout)


def _rect(text: str | None) -> tuple[float, float, float, float] | None:
    try:
        x, y, w, h = (float(v) for v in (text or "").split(","))
    except ValueError:
        return None
    return x, y, w, h


def _inside(inner: tuple[float, float, float, float], w: float, h: float, tol: float = TOLERANCE_PX) -> bool:
    x, y, iw, ih = inner
    return x >= -tol and y >= -tol and x + iw <= w + tol and y + ih <= h + tol


def pane_failures(pane: dict, mode: str, has_minimap: bool) -> list[str]:
    """Contract 2 for one visible pane: its report is there, legible, and true to the page."""
    name, floor = pane["name"], MIN_TEXT_PX[mode]
    out = []
    framed, text_px, drawing = pane["framed"], pane["textPx"], _rect(pane["drawing"])
    if framed not in ("whole", "part"):
        return [f"pane {name}: data-jm-framed is {framed!r}, not whole|part"]
    try:
        px = float(text_px)
    except (TypeError, ValueError):
        px = None
        out.append(f"pane {name}: data-jm-text-px is {text_px!r}")
    if px is not None and px < floor - 0.05:
        out.append(f"pane {name}: text {px} px < {floor:g} ({framed})")
    if drawing is None:
        out.append(f"pane {name}: data-jm-drawing is {pane['drawing']!r}")
    pw, ph = pane["box"]["w"], pane["box"]["h"]
    content = pane["content"]
    real = (
        None
        if content is None
        else (content["x"] - pane["box"]["x"], content["y"] - pane["box"]["y"], content["w"], content["h"])
    )
    if framed == "whole":
        size = f"{pw:.0f}x{ph:.0f}"
        if drawing is not None and not _inside(drawing, pw, ph):
            out.append(f"pane {name}: framed whole but drawing {_fmt(drawing)} is not inside the pane {size}")
        if real is not None and not _inside(real, pw, ph):
            out.append(f"pane {name}: framed whole but the drawn SVG {_fmt(real)} is not inside the pane {size}")
    if drawing is not None and real is not None and not _covers(drawing, real, DRAWING_AGREES_PX):
        # a report smaller than what is drawn would let a cut-off drawing pass as "whole"
        out.append(f"pane {name}: the drawn SVG {_fmt(real)} extends past data-jm-drawing {_fmt(drawing)}")
    if framed == "part" and mode == "normal" and has_minimap and not (pane["minimap"] or {}).get("visible"):
        out.append(f"pane {name}: framed part but no visible minimap")
    return out


def _covers(outer: tuple[float, float, float, float], inner: tuple[float, float, float, float], tol: float) -> bool:
    """`inner` lies inside `outer`, give or take `tol` px on each side."""
    return (
        inner[0] >= outer[0] - tol
        and inner[1] >= outer[1] - tol
        and inner[0] + inner[2] <= outer[0] + outer[2] + tol
        and inner[1] + inner[3] <= outer[1] + outer[3] + tol
    )


def _fmt(r: tuple[float, float, float, float]) -> str:
    return ",".join(f"{v:.0f}" for v in r)


def _on_screen(box: dict, region: dict) -> bool:
    """At least 90% of the element is inside the region it can show through (or it fills that region)."""
    l, t = max(box["x"], region["x"]), max(box["y"], region["y"])
    r = min(box["x"] + box["w"], region["x"] + region["w"])
    b = min(box["y"] + box["h"], region["y"] + region["h"])
    seen = max(0.0, r - l) * max(0.0, b - t)
    area = box["w"] * box["h"]
    if area <= 0:
        return False
    return seen >= 0.9 * area or seen >= 0.9 * region["w"] * region["h"] > 0


def key_failures(m: dict, needs_key: bool) -> list[str]:
    """Contract 3: the story's key element (or the timeline's key rect) is on screen."""
    found = []
    for k in m["keys"]:
        found.append(("element " + k["what"], k["box"], k["region"], k["visible"]))
    for p in m["panes"]:
        rect = _rect(p["keyRect"])
        if rect is not None:
            box = {"x": p["box"]["x"] + rect[0], "y": p["box"]["y"] + rect[1], "w": rect[2], "h": rect[3]}
            found.append((f"key rect of pane {p['name']}", box, p["region"], p["visible"]))
    if not found:
        return ["no [data-jm-key-element] nor data-jm-key-rect"] if needs_key else []
    what, box, region, visible = found[0]
    if not visible or not _on_screen(box, region):
        below = box["y"] + box["h"] - (region["y"] + region["h"])
        where = f", {below:.0f} px below what shows" if below > 0 else ""
        return [
            f"{what} at {box['x']:.0f},{box['y']:.0f} {box['w']:.0f}x{box['h']:.0f} is not on screen "
            f"(visible region {region['x']:.0f},{region['y']:.0f} {region['w']:.0f}x{region['h']:.0f}{where})"
        ]
    return []


def needs_key_element(kind: str, text: str) -> bool:
    """Views whose story has a key element: every keys and sharding view of the notebooks under test
    (each shows a reused key or a collective), and a timeline that compiled one function twice or more."""
    if kind in ("keys", "sharding"):
        return True
    if kind == "timeline":
        return any(int(n) >= 2 for n in re.findall(r"(\d+)\s+compiles", text))
    return False


@dataclass
class ViewCheck:
    """One view in one host, viewport and mode: what failed, and where its screenshot is."""

    host: str
    notebook: str
    index: int
    kind: str
    viewport: str
    mode: str
    failures: list[str] = field(default_factory=list)
    screenshot: str = ""
    seconds: float = 0.0

    @property
    def label(self) -> str:
        return f"{self.host}/{self.notebook}-{self.index}-{self.kind}-{self.viewport}-{self.mode}"


def measure(root: Any, mode: str) -> tuple[dict, list[str]]:
    """The view's geometry and every failure of the contract in this mode."""
    m = root.evaluate(_MEASURE_JS)
    fails: list[str] = []
    view, out = m["root"], m["out"]
    if view["w"] > m["outClientW"] + TOLERANCE_PX or view["x"] + view["w"] > out["x"] + out["w"] + TOLERANCE_PX:
        fails.append(f"view {view['w']:.0f} px wide in an output area of {m['outClientW']} px")
    if m["rootScrollW"] > m["rootClientW"] + TOLERANCE_PX:
        fails.append(f"view content {m['rootScrollW']} px wide spills out of its {m['rootClientW']} px")
    visible = [p for p in m["panes"] if p["visible"]]
    missing = PANES_OF_KIND.get(m["kind"], set()) - {p["name"] for p in m["panes"]}
    if missing:
        fails.append(f"no [data-jm-pane] for {sorted(missing)}")
    for pane in visible:
        fails += pane_failures(pane, mode, m["hasMinimap"])
    if not m["legend"]["count"]:
        fails.append("no [data-jm-legend]")
    elif not m["legend"]["visible"]:
        fails.append("[data-jm-legend] not visible")
    for c in root.evaluate(_CANVAS_JS):
        if c["problem"]:
            fails.append(f"{c['what']} {c.get('size', '')}: {c['problem']}")
    return m, fails


def scroll_top_into_view(root: Any) -> None:
    """Bring the view's top edge to the top of whatever scrolls it (window or notebook panel)."""
    root.evaluate("r => r.scrollIntoView({block: 'start', inline: 'nearest'})")


def check_view(page: Any, root: Any, check: ViewCheck) -> ViewCheck:
    """The whole contract for one view in the current viewport and `check.mode`; screenshot saved."""
    scroll_top_into_view(root)
    settle(root)
    m, fails = measure(root, check.mode)
    check.kind = m["kind"]
    fails += key_failures(m, needs_key_element(m["kind"], m["text"]))
    if check.mode == "present":
        leg = legibility(root)
        if leg.problems:
            fails.append(f"legibility: {leg}".replace("\n", ";"))
    check.failures = fails
    path = SCREENS / check.host / f"{check.notebook}-{check.index:02d}-{check.kind}-{check.viewport}-{check.mode}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path))
    check.screenshot = str(path.relative_to(REPO))
    return check


# Viewport and mode of each round of checks: every view switches presentation mode twice a run,
# once on (in the first viewport) and once off (in the second), and a resize reaches each mode.
_ROUNDS = [(vp, mode) for vp, modes in zip(VIEWPORTS, (("normal", "present"), ("present", "normal"))) for mode in modes]


def check_all_views(page: Any, host: str, notebook: str, roots: Any) -> list[ViewCheck]:
    """Every `.jm-root` at every viewport, in normal and present mode (normal again at the end)."""
    results: list[ViewCheck] = []
    n = roots.count()
    page.set_default_timeout(5_000)  # a missing control fails its row in seconds, not in 30 s
    mode_now, viewport_now = "normal", None
    for vp_name, mode in _ROUNDS:
        if vp_name != viewport_now:
            w, h = VIEWPORTS[vp_name]
            page.set_viewport_size({"width": w, "height": h})
            page.wait_for_timeout(400)
            viewport_now = vp_name
        switch_failed = _switch_every_view(roots, n, mode) if mode != mode_now else {}
        mode_now = mode
        for i in range(n):
            check = ViewCheck(host, notebook, i, "?", vp_name, mode)
            t0 = time.monotonic()
            try:
                check_view(page, roots.nth(i), check)
            except Exception as exc:  # one view's breakage is a row of the table, not the end of it
                check.failures.append(f"check raised {type(exc).__name__}: {str(exc)[:300]}")
            if i in switch_failed:
                check.failures.insert(0, f"presentation mode did not switch: {switch_failed[i]}")
            check.seconds = round(time.monotonic() - t0, 2)
            results.append(check)
    return results


def _switch_every_view(roots: Any, n: int, mode: str) -> dict[int, str]:
    """Turn presentation mode on or off in every view; view index -> what went wrong."""
    try:
        return present_all(roots, mode == "present")
    except Exception as exc:  # the page itself failed: every view's row says so
        return dict.fromkeys(range(n), str(exc)[:200])


def report(results: list[ViewCheck], host: str, notebook: str) -> str:
    """A per-view table (one line per view and viewport/mode) saved beside the screenshots."""
    SCREENS.mkdir(parents=True, exist_ok=True)
    (SCREENS / f"results-{host}-{notebook}.json").write_text(json.dumps([asdict(r) for r in results], indent=1))
    lines = []
    for r in results:
        verdict = "pass" if not r.failures else " | ".join(r.failures)
        lines.append(f"{r.label}: {verdict}")
    lines.append(f"[{host}/{notebook}] {len(results)} checks in {sum(r.seconds for r in results):.1f} s")
    return "\n".join(lines)


def assert_all_pass(results: list[ViewCheck], host: str, notebook: str) -> None:
    table = report(results, host, notebook)
    print(table)
    failed = [r for r in results if r.failures]
    assert results, f"{host}/{notebook}: no views were checked"
    assert not failed, f"{len(failed)} of {len(results)} view checks fail in {host}/{notebook}:\n{table}"


# --------------------------------------------------------------------------------------
# hosts: open a notebook in JupyterLab or Notebook 7, run all, wait until the kernel is idle
# --------------------------------------------------------------------------------------

_IDLE_JS = r"""
() => {
  const app = window.jupyterapp;  // both servers run with expose_app_in_browser
  const panel = app && app.shell && app.shell.currentWidget;
  const ctx = panel && panel.sessionContext;
  const kernel = ctx && ctx.session && ctx.session.kernel;
  return !!kernel && kernel.status === 'idle' && kernel.connectionStatus === 'connected'
    && ctx.isReady && !ctx.isRestarting && !ctx.hasNoKernel;
}
"""

# The notebook under test is marked: Lab reopens the notebooks of its workspace in hidden tabs beside it.
CURRENT = "[data-jm-host-current]"
_MARK_CURRENT_JS = r"""
() => {
  for (const el of document.querySelectorAll('[data-jm-host-current]')) el.removeAttribute('data-jm-host-current');
  const panel = window.jupyterapp.shell.currentWidget;
  if (!panel || !panel.context) return null;
  panel.node.setAttribute('data-jm-host-current', '');
  return panel.context.path;
}
"""

_PROMPTS_JS = r"""
() => [...document.querySelectorAll('[data-jm-host-current] .jp-Notebook .jp-Cell.jp-CodeCell')].map((cell) => {
  const p = cell.querySelector('.jp-InputArea-prompt');
  return p ? p.textContent.trim() : '';
})
"""


def dismiss_dialogs(page: Any) -> None:
    """Accept any dialog (a kernel picker, a trust question) with its default button."""
    for _ in range(3):
        dialog = page.locator(".jp-Dialog")
        if not dialog.count():
            return
        accept = dialog.locator("button.jp-mod-accept")
        (accept.first if accept.count() else dialog.locator("button").last).click()
        page.wait_for_timeout(300)


def open_and_run_all(page: Any, url: str, n_code_cells: int, timeout: float = 240.0) -> list[str]:
    """Open a notebook page, wait for an idle kernel, run every cell with the app's own command
    (`notebook:run-all-cells`, the same in Lab and Notebook 7) and wait until every code cell has
    an execution count and the kernel is idle again."""
    page.goto(url, wait_until="domcontentloaded", timeout=60_000)
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(state="visible", timeout=60_000)

    def idle() -> bool:
        dismiss_dialogs(page)
        return page.evaluate(_IDLE_JS)

    wanted = urllib.parse.unquote(url.split("?")[0].rsplit("/", 1)[-1])
    shown = poll(lambda: page.evaluate(_MARK_CURRENT_JS) == wanted, 30)  # Lab restores its workspace first
    assert shown, f"the page shows {page.evaluate(_MARK_CURRENT_JS)!r}, not {wanted}"
    assert poll(idle, 90, interval=0.5), "the kernel never became idle"
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    state: dict[str, Any] = {"stable": 0, "prompts": None}

    def finished() -> bool:
        dismiss_dialogs(page)
        prompts = state["prompts"] = page.evaluate(_PROMPTS_JS)
        done = (
            len(prompts) == n_code_cells
            and all(re.fullmatch(r"\[\d+\]:?", p) for p in prompts)
            and page.evaluate(_IDLE_JS)
        )
        state["stable"] = state["stable"] + 1 if done else 0
        return state["stable"] >= 3

    assert poll(finished, timeout, interval=0.5), (
        f"run all did not finish in {timeout:.0f}s: prompts {state['prompts']}"
    )
    return state["prompts"]


def cell_errors(page: Any) -> list[str]:
    """Tracebacks shown in the outputs of the notebook under test (a cell that raised)."""
    errors = page.locator(
        f"{CURRENT} .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error'],"
        f" {CURRENT} .jp-RenderedText[data-mime-type='application/vnd.jupyter.error']"
    )
    stderr = page.locator(f"{CURRENT} .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    # an exception in a post-run hook (where the magics draw their views) is printed, not raised
    printed = [t for t in stderr.all_inner_texts() if "Traceback" in t or "Error in callback" in t]
    return [t[:600] for t in errors.all_inner_texts() + printed]


def shutdown_kernel(page: Any) -> None:
    """End the notebook's kernel (its views stay drawn) so the next notebook does not share memory with it."""
    page.evaluate("""async () => { const p = window.jupyterapp.shell.currentWidget;
      if (p && p.sessionContext) await p.sessionContext.shutdown(); }""")


def count_code_cells(path: Path) -> int:
    return sum(c["cell_type"] == "code" for c in json.loads(path.read_text(encoding="utf-8"))["cells"])


def wait_for_views(roots: Any, expected: int, timeout: float = 60.0) -> int:
    """Until `expected` views are on the page and none is still loading its document."""
    t0 = time.monotonic()
    poll(lambda: roots.count() >= expected, timeout)
    page = roots.page
    poll(lambda: page.locator(".jm-root .jm-loading").count() == 0, max(1.0, timeout - (time.monotonic() - t0)))
    return roots.count()
