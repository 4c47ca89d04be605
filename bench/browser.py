"""Front-end timings of the graph view on big real documents, in headless Chromium.

    .venv/bin/python bench/browser.py                      # the /tmp/jm-big set
    .venv/bin/python bench/browser.py some/doc.json ...    # any graph documents
    .venv/bin/python bench/browser.py --build transformer_10k mlp_flat_10k

For each document it writes a static page (`jaxmagic.views.static_html.page`, the
same page `jaxmagic.to_html` writes), opens it from file:// in headless Chromium
(offline: every request that would leave the machine is aborted) and measures, in
the page's own clock (`performance.now()`, 0 = navigation start):

* first render: until the status line says "N of M eqns shown" after the first
  layout and the frame after it was drawn;
* expand: click the toggle of a collapsed box in view, until the new status and frame;
* search: set the search box and fire `input`, until the match count and frame;
* expand all: click "Expand all", until every eqn is shown and the frame after;
* fold in all: then click the header of an open box in view (a toggle in the big
  drawing: only that box and its ancestors are laid out, sent and received again).
* pan/zoom (after Expand all, from Fit): wheel zoom in and out, then drag pans with
  the whole drawing in view (zoomed out as far as it goes), with labels just legible and at their own size, one
  input event per animation frame; p50/p95 of the frame intervals and of the
  renderer's own draw times (PANZOOM_JS).

Missing documents of the default set are built from bench/programs.py (trace only,
no compile: 50k-eqn programs do not compile in 24 GiB). Documents made before
repeat detection get `repeats` from jaxmagic.model.repeats (as the document builder
adds them today) unless --no-repeats, which also strips them from documents that
have them: the view must stay fast without them too. Nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

BIG = Path("/tmp/jm-big")
DEFAULT_BUNDLE = REPO / "jaxmagic" / "static" / "jaxmagic.js"
DEFAULT = ["mlp_1k", "transformer_10k", "mlp_flat_10k", "transformer_50k", "mlp_flat_50k"]
CHROMIUM = os.environ.get("JAXMAGIC_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def builders() -> dict:
    """Name -> (builder, kwargs) of the default documents (see bench/programs.py)."""
    from bench import programs as p

    return {
        "mlp_1k": (p.mlp_grad, {"layers": 70}),
        "transformer_10k": (p.transformer_step, {"layers": 46}),
        "mlp_flat_10k": (p.mlp_grad, {"layers": 700, "named": False}),
        "transformer_50k": (p.transformer_step, {"layers": 232}),
        "mlp_flat_50k": (p.mlp_grad, {"layers": 3500, "named": False}),
    }


def build_document(name: str) -> dict:
    """A one-function graph document of a bench program, traced (never compiled)."""
    from jaxmagic.model.graph import function_graph

    build, kwargs = builders()[name]
    fn, args = build(**kwargs)
    closed = fn.trace(*args).jaxpr
    graph = function_graph("f0", name, closed)
    return {
        "schema": "jaxmagic",
        "version": 1,
        "kind": "graph",
        "title": f"{name}: {graph['n_eqns']} eqns",
        "notes": [],
        "error": None,
        "functions": [graph],
    }


def load_documents(paths: list[str], build: list[str]) -> list[tuple[str, Path]]:
    """(name, json path) for each document, building the missing default ones."""
    out = []
    for name in build:
        path = BIG / f"{name}.json"
        if not path.exists():
            BIG.mkdir(parents=True, exist_ok=True)
            t = time.perf_counter()
            path.write_text(json.dumps(build_document(name)), encoding="utf-8")
            print(f"built {path} in {time.perf_counter() - t:.1f}s", file=sys.stderr)
        out.append((name, path))
    for p in paths:
        out.append((Path(p).stem, Path(p)))
    return out


# Installed before the page runs: records when the first layout has been drawn (status
# "N of M eqns shown", not busy) and the frame after it; and a helper that runs an
# action and waits, in the page, for a condition plus the next frame.
INIT_JS = r"""
(() => {
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const status = () => document.querySelector('.jm-status');
  const drawn = () => {
    const st = status();
    return !!st && !st.classList.contains('jm-busy') && /\d+ of \d+ eqns shown/.test(st.textContent);
  };
  window.__jmFirst = null;
  const obs = new MutationObserver(() => {
    if (window.__jmFirst == null && drawn()) {
      window.__jmFirst = -1;
      frame().then(() => { window.__jmFirst = performance.now(); });
      obs.disconnect();
    }
  });
  obs.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
  /** Run `act()`, then wait until `done()` holds (checked on every DOM change) and a frame. */
  window.__jmTime = (act, done, timeoutMs) => new Promise((resolve) => {
    const t0 = performance.now();
    let finished = false;
    const finish = (ok) => {
      if (finished) return;
      finished = true;
      mo.disconnect();
      frame().then(() => resolve(ok ? performance.now() - t0 : -1));
    };
    const mo = new MutationObserver(() => done() && finish(true));
    mo.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
    setTimeout(() => finish(false), timeoutMs);
    act();
    if (done()) finish(true);
  });
})();
"""

# Opens the first collapsed box (scope, repeat, unit, chunk; else an owner eqn) in
# view, by a click where it is drawn (double click for an eqn): works on SVG and on
# canvas (the .jm-canvas element's jmProbe lists the drawn boxes, see stage.js).
EXPAND_JS = r"""
(timeoutMs) => {
  const host = document.querySelector('.jm-canvas');
  const svg = host.querySelector('.jm-svg').getBoundingClientRect();
  const free = (b) => {
    const x = b.x + Math.min(b.w / 2, 40), y = b.y + Math.min(b.h / 2, 12);
    if (x < svg.left || y < svg.top || x > svg.right || y > svg.bottom) return null;
    const el = document.elementFromPoint(x, y);
    return el && el.closest('.jm-svg') ? [x, y, el] : null;
  };
  const boxes = host.jmProbe.visible().filter((b) => b.canOpen && b.w >= 8 && b.h >= 4);
  const pick = boxes.filter((b) => !/^[NQ]:/.test(b.key)).find(free) || boxes.filter((b) => b.key.startsWith('N:')).find(free);
  if (!pick) return Promise.resolve({ ms: null, what: 'nothing collapsed in view' });
  const [x, y, el] = free(pick);
  const st = document.querySelector('.jm-status');
  const before = host.getAttribute('data-draws');
  const done = () => !st.classList.contains('jm-busy') && host.getAttribute('data-draws') !== before;
  const type = pick.key.startsWith('N:') ? 'dblclick' : 'click';
  return window.__jmTime(() => el.dispatchEvent(new MouseEvent(type, { bubbles: true, clientX: x, clientY: y })), done, timeoutMs)
    .then((ms) => ({ ms, what: pick.key, status: st.textContent }));
}
"""

# Folds an open box in view by a click on its header (after Expand all: canvas), the
# innermost one whose header is on screen.
FOLD_JS = r"""
(timeoutMs) => {
  const host = document.querySelector('.jm-canvas');
  const svg = host.querySelector('.jm-svg').getBoundingClientRect();
  const st = document.querySelector('.jm-status');
  const boxes = host.jmProbe.open().filter((b) => !b.key.startsWith('G:') && !b.key.startsWith('N:') && b.w > 20);
  for (const b of boxes.reverse()) {
    const x = Math.max(b.x, svg.left) + 8, y = b.y + 4;
    if (b.y < svg.top || y > svg.bottom || x > svg.right) continue;
    const el = document.elementFromPoint(x, y);
    if (!el || !el.closest('.jm-svg')) continue;
    const before = host.getAttribute('data-draws');
    const done = () => !st.classList.contains('jm-busy') && host.getAttribute('data-draws') !== before;
    return window.__jmTime(() => el.dispatchEvent(new MouseEvent('click', { bubbles: true, clientX: x, clientY: y })), done, timeoutMs)
      .then((ms) => ({ ms, what: b.key, status: st.textContent }));
  }
  return Promise.resolve({ ms: null, what: 'no open box in view' });
}
"""

SEARCH_JS = r"""
([query, timeoutMs]) => {
  const input = document.querySelector('.jm-search');
  const count = document.querySelector('.jm-match-count');
  input.value = '';
  input.dispatchEvent(new Event('input', { bubbles: true }));
  const done = () => /match/.test(count.textContent);
  return window.__jmTime(() => {
    input.value = query;
    input.dispatchEvent(new Event('input', { bubbles: true }));
  }, done, timeoutMs).then((ms) => ({ ms, text: count.textContent }));
}
"""

EXPAND_ALL_JS = r"""
(timeoutMs) => {
  const btn = [...document.querySelectorAll('.jm-btn')].find((b) => b.textContent.trim() === 'Expand all');
  const st = document.querySelector('.jm-status');
  const done = () => {
    const m = /(\d+) of (\d+) eqns shown/.exec(st.textContent);
    return !st.classList.contains('jm-busy') && m && m[1] === m[2];
  };
  return window.__jmTime(() => btn.click(), done, timeoutMs).then((ms) => {
    const c = document.querySelector('.jm-canvas');
    return { ms, status: st.textContent, renderer: c.getAttribute('data-renderer') };
  });
}
"""

# Pan and zoom the drawing as a reader does, one input event per animation frame, and
# time the frames: wheel zoom in and out at the middle of the pane (from Fit to the
# closest zoom, then out to the farthest), then drag pans at three zooms (the farthest:
# the whole drawing small in the pane; labels just legible; labels at their own size). A frame's time is the interval between
# consecutive animation frames (what the reader sees: the draw plus everything else
# the page did in that frame); `draw` is the renderer's own drawFrame time (canvas).
PANZOOM_JS = r"""
async ({ steps, textPx }) => {
  const svg = document.querySelector('.jm-svg');
  const host = document.querySelector('.jm-canvas');
  const gl = document.querySelector('.jm-gl');
  const rect = svg.getBoundingClientRect();
  const cx = rect.left + rect.width / 2, cy = rect.top + rect.height / 2;
  const raf = () => new Promise((r) => requestAnimationFrame(r));
  const wheel = (dy) => svg.dispatchEvent(new WheelEvent('wheel', { bubbles: true, cancelable: true,
    clientX: cx, clientY: cy, deltaY: dy, deltaMode: 0 }));
  const ptr = (type, x, y) => svg.dispatchEvent(new PointerEvent(type, { bubbles: true, cancelable: true,
    clientX: x, clientY: y, pointerId: 1, button: 0, buttons: type === 'pointerup' ? 0 : 1, isPrimary: true }));
  const q = (xs, p) => {
    if (!xs.length) return null;
    const s = [...xs].sort((a, b) => a - b);
    return Math.round(s[Math.min(s.length - 1, Math.floor(p * s.length))] * 10) / 10;
  };
  /** Run act(i) in n consecutive frames; the frame intervals and draw times meanwhile. */
  const run = async (n, act) => {
    await raf();
    await raf();
    const draws0 = gl && gl.jmFrameMs ? gl.jmFrameMs.length : 0;
    if (gl && gl.jmFrameMs) gl.jmFrameMs.length = 0;
    const ts = [];
    let last = await raf();
    for (let i = 0; i < n; i++) {
      act(i);
      const t = await raf();
      ts.push(t - last);
      last = t;
    }
    ts.push((await raf()) - last); // the frame that draws the last event
    const draws = gl && gl.jmFrameMs ? [...gl.jmFrameMs] : [];
    return { n: ts.length, p50: q(ts, 0.5), p95: q(ts, 0.95), max: q(ts, 1), draws: draws.length,
             draw_p50: q(draws, 0.5), draw_p95: q(draws, 0.95), text_px: +host.getAttribute('data-jm-text-px') };
  };
  const px = () => +host.getAttribute('data-jm-text-px');
  const zoomTo = async (target) => {
    for (let i = 0; i < 200 && Math.abs(Math.log(px() / target)) > 0.15; i++) {
      wheel(px() < target ? -40 : 40);
      await raf();
    }
  };
  const pan = (n) => {
    let x = cx, y = cy;
    return run(n, (i) => {
      if (i === 0) return ptr('pointerdown', x, y);
      if (i === n - 1) return ptr('pointerup', x, y);
      const a = (i / n) * 2 * Math.PI;
      x += Math.round(14 * Math.cos(a)); // whole pixels, as a mouse moves
      y += Math.round(9 * Math.sin(a));
      ptr('pointermove', x, y);
    });
  };
  const out = {};
  out.zoom_in = await run(steps, () => wheel(-100));
  out.zoom_out = await run(steps, () => wheel(100));
  out.pan_far = await pan(steps);
  await zoomTo(textPx[0]);
  out.pan_mid = await pan(steps);
  await zoomTo(textPx[1]);
  out.pan_near = await pan(steps);
  return out;
}
"""


def pan_zoom(page, steps: int = 40) -> dict:
    """Frame times of wheel zooms and drag pans of the drawing as it is (see PANZOOM_JS), from Fit."""
    page.click("button:text-is('Fit')")
    page.wait_for_timeout(200)
    return page.evaluate(PANZOOM_JS, {"steps": steps, "textPx": [5.5, 11.0]})


def zoom_to_collapsed(page) -> None:
    """Fit, then wheel-zoom on the biggest collapsed box (not a port bundle) until it is 60 px wide."""
    page.click("button:text-is('Fit')")
    page.wait_for_timeout(100)
    boxes = [
        b
        for b in page.evaluate("document.querySelector('.jm-canvas').jmProbe.visible()")
        if b["canOpen"] and not b["key"].startswith(("Q:", "N:"))
    ]
    if not boxes:
        return
    key = max(boxes, key=lambda b: b["w"] * b["h"])["key"]
    for _ in range(20):
        b = page.evaluate("(k) => document.querySelector('.jm-canvas').jmProbe.box(k)", key)
        if not b or b["w"] >= 60:
            break
        page.mouse.move(b["x"] + b["w"] / 2, b["y"] + b["h"] / 2)
        page.mouse.wheel(0, -250)
        page.wait_for_timeout(30)


def bring_header_into_view(page) -> None:
    """Drag the view so the header of the innermost open box (not a group) is on screen."""
    svg = page.locator(".jm-svg").bounding_box()
    boxes = [
        b
        for b in page.evaluate("document.querySelector('.jm-canvas').jmProbe.open()")
        if b["key"][0] not in "GN" and b["w"] > 40
    ]
    if not boxes:
        return
    b = boxes[-1]
    dx = max(0.0, svg["x"] + 60 - b["x"]) if b["x"] < svg["x"] else min(0.0, svg["x"] + svg["width"] / 2 - b["x"])
    dy = svg["y"] + 80 - b["y"]
    x0, y0 = svg["x"] + svg["width"] / 2, svg["y"] + svg["height"] / 2
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move(x0 + dx / 2, y0 + dy / 2)
    page.mouse.move(x0 + dx, y0 + dy)
    page.mouse.up()
    page.wait_for_timeout(100)


def phases(page) -> str:
    """The view's "jm:*" performance measures since the last clear, as "scene=12 layout=40 …"."""
    measures = page.evaluate(
        "performance.getEntriesByType('measure').filter(m => m.name.startsWith('jm:'))"
        ".map(m => [m.name, Math.round(m.duration)])"
    )
    return " ".join(f"{k[3:]}={v}" for k, v in measures)


def most_common_prim(doc: dict) -> str:
    from collections import Counter

    counts = Counter(n["prim"] for fn in doc["functions"] for n in fn["nodes"])
    return counts.most_common(1)[0][0] if counts else "add"


def with_repeats(doc: dict, repeats: bool) -> dict:
    """The document with `repeats` on every function (computed when missing), or none."""
    from jaxmagic.model.repeats import find_repeats

    for fn in doc["functions"]:
        if not repeats:
            fn.pop("repeats", None)
        elif "repeats" not in fn:
            fn["repeats"] = find_repeats(fn)
    return doc


def expand_all_rows(page, doc: dict, row: dict, ms: int, name: str, shots: Path | None, pan_zoom_steps: int) -> None:
    """Every box opened at once: its time, pan and zoom frames, then a search and a fold inside it."""
    page.evaluate("performance.clearMeasures()")
    r = page.evaluate(EXPAND_ALL_JS, ms)
    row["expand all ms"] = round(r["ms"]) if r["ms"] >= 0 else None
    row["renderer"] = r["renderer"]
    row["all phases"] = phases(page)
    if shots:
        page.screenshot(path=str(shots / f"{name}-all.png"))
    if pan_zoom_steps:
        pz = pan_zoom(page, pan_zoom_steps)
        row["pan/zoom"] = pz
        row["zoom p50/p95 ms"] = "/".join(str(max(pz[p][q] for p in ("zoom_in", "zoom_out"))) for q in ("p50", "p95"))
        row["pan p50/p95 ms"] = "/".join(
            str(max(pz[p][q] for p in ("pan_far", "pan_mid", "pan_near"))) for q in ("p50", "p95")
        )
        row["draw p95 ms"] = max(v["draw_p95"] or 0 for v in pz.values())
    # go to the first match of a common primitive (zoomed in), fold the box around it
    page.fill(".jm-search", most_common_prim(doc))
    page.press(".jm-search", "Enter")
    page.wait_for_timeout(500)
    page.wait_for_function("!document.querySelector('.jm-status').classList.contains('jm-busy')", timeout=ms)
    bring_header_into_view(page)
    page.evaluate("performance.clearMeasures()")
    r = page.evaluate(FOLD_JS, ms)
    row["fold phases"] = phases(page)
    row["fold in all ms"] = round(r["ms"]) if r["ms"] is not None and r["ms"] >= 0 else None
    row["folded"] = r.get("what")


def measure(
    browser,
    name: str,
    path: Path,
    timeout_s: float,
    expand_all: bool,
    shots: Path | None,
    repeats: bool = True,
    pan_zoom_steps: int = 40,
    bundle: Path | None = None,
) -> dict:
    from jaxmagic.views import static_html
    from jaxmagic.views.static_html import page as static_page

    static_html.BUNDLE = bundle or DEFAULT_BUNDLE

    text = path.read_text(encoding="utf-8")
    doc = with_repeats(json.loads(text), repeats)
    n_eqns = sum(fn["n_eqns"] for fn in doc["functions"])
    from jaxmagic.views.wire import encode_document

    wire = len(json.dumps(encode_document(doc), separators=(",", ":")))
    row = {
        "doc": name + (f" [{bundle}]" if bundle else ""),
        "eqns": n_eqns,
        "MB": round(len(text) / 1e6, 1),
        "B/eqn": len(text) // max(1, n_eqns),
        "page MB": round(wire / 1e6, 2),
    }
    with tempfile.TemporaryDirectory(prefix="jm-bench-") as tmp:
        html = Path(tmp) / f"{name}.html"
        html.write_text(static_page([doc], title=name), encoding="utf-8")
        context = browser.new_context(viewport={"width": 1400, "height": 1000}, service_workers="block")
        context.route(
            "**/*",
            lambda r: (
                r.continue_() if r.request.url.startswith(("file:", "data:", "blob:")) else r.abort("blockedbyclient")
            ),
        )
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.add_init_script(INIT_JS)
        ms = int(timeout_s * 1000)
        try:
            page.goto(html.as_uri(), wait_until="load", timeout=ms)
            page.wait_for_function("window.__jmFirst > 0", timeout=ms)
            row["first render ms"] = round(page.evaluate("window.__jmFirst"))
            row["shown"] = page.inner_text(".jm-status")
            measures = page.evaluate(
                "performance.getEntriesByType('measure').filter(m => m.name.startsWith('jm:'))"
                ".map(m => [m.name, Math.round(m.duration)])"
            )
            row["phases"] = " ".join(f"{k[3:]}={v}" for k, v in measures)
            page.evaluate("performance.clearMeasures()")
            if shots:
                page.screenshot(path=str(shots / f"{name}-first.png"))
            page.evaluate("performance.clearMeasures()")
            r = page.evaluate(EXPAND_JS, ms)
            if r["ms"] is None:  # nothing to open in the first view: zoom in on a box that can
                zoom_to_collapsed(page)
                page.evaluate("performance.clearMeasures()")
                r = page.evaluate(EXPAND_JS, ms)
            row["expand phases"] = phases(page)
            row["expand ms"] = round(r["ms"]) if r["ms"] is not None and r["ms"] >= 0 else None
            row["expanded"] = r.get("what")
            r = page.evaluate(SEARCH_JS, [most_common_prim(doc), ms])
            row["search ms"] = round(r["ms"]) if r["ms"] >= 0 else None
            row["matches"] = r["text"]
            if expand_all:
                expand_all_rows(page, doc, row, ms, name, shots, pan_zoom_steps)
        except Exception as exc:  # a timeout on one document should not lose the others
            row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
        if errors:
            row["page errors"] = errors[:3]
        context.close()
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("docs", nargs="*", help="graph document JSON files (default: the /tmp/jm-big set)")
    ap.add_argument("--build", nargs="*", default=None, help=f"default documents to use/build: {DEFAULT}")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per step before giving up")
    ap.add_argument("--no-expand-all", action="store_true", help="skip the Expand all step")
    ap.add_argument("--shots", type=Path, default=None, help="directory for screenshots")
    ap.add_argument("--json", action="store_true", help="print rows as JSON too")
    ap.add_argument(
        "--bundle",
        type=Path,
        action="append",
        default=None,
        help="front-end bundle (jaxmagic.js) to measure instead of the installed one; "
        "repeat to compare bundles, measured in turn on each document",
    )
    ap.add_argument("--rounds", type=int, default=1, help="measure each document this many times (in turn)")
    ap.add_argument(
        "--pan-zoom-steps", type=int, default=40, help="frames per pan/zoom gesture on the expanded drawing (0: skip)"
    )
    ap.add_argument("--no-repeats", action="store_true", help="measure the documents without `repeats`")
    args = ap.parse_args()
    build = args.build if args.build is not None else ([] if args.docs else DEFAULT)
    docs = load_documents(args.docs, build)
    if args.shots:
        args.shots.mkdir(parents=True, exist_ok=True)

    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            for name, path in docs:
                for _ in range(args.rounds):
                    for bundle in args.bundle or [None]:
                        row = measure(
                            browser,
                            name,
                            path,
                            args.timeout,
                            not args.no_expand_all,
                            args.shots,
                            repeats=not args.no_repeats,
                            pan_zoom_steps=args.pan_zoom_steps,
                            bundle=bundle,
                        )
                        rows.append(row)
                        print(json.dumps(row), file=sys.stderr)
        finally:
            browser.close()
    cols = [
        "doc",
        "eqns",
        "MB",
        "B/eqn",
        "page MB",
        "first render ms",
        "expand ms",
        "search ms",
        "expand all ms",
        "fold in all ms",
        "renderer",
        "zoom p50/p95 ms",
        "pan p50/p95 ms",
        "draw p95 ms",
    ]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join("—" if r.get(c) is None else str(r.get(c)) for c in cols) + " |")
    for r in rows:
        extra = {
            k: r[k]
            for k in (
                "shown",
                "expanded",
                "folded",
                "matches",
                "phases",
                "expand phases",
                "all phases",
                "fold phases",
                "pan/zoom",
                "error",
                "page errors",
            )
            if k in r
        }
        print(f"{r['doc']}: {extra}")
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
