/**
 * The key tree's drawing surface: one <svg> with pan and zoom (widgets/ui/panzoom.js), the
 * laid-out forest (layout.js) drawn with a bounded number of elements whatever its size:
 *
 * - every edge in view is one subpath of a single <path>;
 * - items are culled to the view (plus a margin) and drawn in detail (a focusable <g>
 *   each: shape, label, badge, toggle) while at most DETAIL_MAX are in view and the zoom
 *   is at least LOD_K; past that, an overview: one <path> of boxes per state, and a
 *   click zooms to the item under the pointer.
 *
 * Detail elements are keyed by item key and kept between frames (focus survives a pan),
 * in preorder so Tab walks the tree. Marks (selection, search hits) are classes.
 *
 * Playback (story.js) draws on the same layout through *step marks*: each item's state at the
 * current step (or null: not reached yet, faded with its edge), the items the step touched
 * and those that flash. No step marks is the ordinary drawing, so the last step restores it
 * exactly. What each frame puts in the layers is items.js's; pointer and keyboard events are
 * scene-events.js's.
 *
 * Framing (where the tree sits, how large) is the view's (frame.js): the scene applies a
 * transform, reports each drawn frame (`onDraw`) so the view can publish the pane's contract
 * attributes, and asks the view to frame again once a blind first frame gets a size (`onSized`).
 * The story's key element (the reused key) carries `data-jm-key-element` (marks.key).
 */
import { s } from "../ui/dom.js";
import { createPanZoom } from "../ui/panzoom.js";
import { METRICS, edgePath } from "./layout.js";
import { drawDetailed, drawOverview } from "./items.js";
import { listenScene } from "./scene-events.js";
import { nextFrame } from "../ui/frame.js";

/** Most items drawn in detail; more in view switch to the overview. */
export const DETAIL_MAX = 180;
/** Below this zoom the tree is drawn as an overview. */
export const LOD_K = 0.4;
/** Size assumed for an unlaid-out svg (jsdom, a hidden output), px. */
const DEFAULT_W = 900, DEFAULT_H = 520;
/** Extra content drawn around the view, px on screen. */
const MARGIN = 120;
const raf = (f) => nextFrame(globalThis, f);

/** Items whose box meets the view (with the margin), in preorder, and the items whose edge (from the parent) does. */
function inView(sc, t, { w, h }) {
  const g = sc.g, m = MARGIN / t.k;
  const x0 = -t.x / t.k - m, x1 = (w - t.x) / t.k + m, y0 = -t.y / t.k - m, y1 = (h - t.y) / t.k + m;
  const meets = (it) => it.y + g.H >= y0 && it.y - g.H <= y1 && it.x + it.w + 2 * g.TOG_DX >= x0 && it.x <= x1;
  const items = sc.lay.items.filter(meets);
  const path = [];
  for (const c of sc.lay.items) {
    const p = c.parent;
    if (!p) continue;
    if (Math.max(p.y, c.y) < y0 || Math.min(p.y, c.y) > y1 || c.x < x0 || p.x > x1) continue;
    path.push(c);
  }
  return { items, edgeItems: path, k: t.k };
}

/** The scene's elements: the svg, its viewport and layers (edges reached, edges ahead, overview, items). */
function sceneElements(ref) {
  const svg = s("svg", { class: "jm-k-svg", role: "tree", "aria-label": "PRNG key tree", "aria-multiselectable": "false" }, null, ref);
  const viewport = s("g", { class: "jm-viewport" }, null, ref);
  const edges = s("path", { class: "jm-k-edges" }, null, ref);
  const edgesAhead = s("path", { class: "jm-k-edges jm-pb-future" }, null, ref); // playback: edges to keys not made yet
  const over = s("g", { class: "jm-k-over" }, null, ref);
  const layer = s("g", { class: "jm-k-nodes" }, null, ref);
  viewport.append(edgesAhead, edges, over, layer);
  svg.appendChild(viewport);
  return { svg, viewport, edges, edgesAhead, over, layer };
}

/**
 * @typedef {object} SceneHandlers
 * @property {(item: any) => {aria: string, badge: (string | null), flags: string[]}} describe
 *   called when an item is first drawn (flags: extra classes)
 * @property {(item: any, how: {toggle: boolean, zoomed?: boolean}) => void} onActivate  a click
 *   (`toggle`: on the toggle, or a stand-in)
 * @property {(item: any) => void} onHover        an item under the pointer or focus, or null
 * @property {(item: any, e: KeyboardEvent) => void} onKey
 * @property {(t: {x: number, y: number, k: number}) => void} [onDraw]  after each frame
 * @property {(() => void) | null} [onSized]      a frame made blind (no size yet) can be framed for real
 * @property {() => number} [legibleK]            the least zoom at which labels stay legible
 *   (revealing an item zooms to it)
 */

/** @param {Document | Element} ref  @param {SceneHandlers} handlers */
export function createScene(ref, { describe, onActivate, onHover, onKey, onDraw = (t) => {}, onSized = null, legibleK = () => 1 }) {
  const els = sceneElements(ref);
  const { svg, edges, edgesAhead } = els;
  const lay = { items: [], box: { x: 0, y: 0, w: 0, h: 0 }, g: METRICS.normal };
  /** @type {import("./items.js").SceneState} */
  const sc = {
    ref, over: els.over, layer: els.layer, lay, g: lay.g, byKey: new Map(), drawn: new Map(),
    marks: { selected: null, hits: new Set(), inside: new Set(), key: null }, step: null, overview: false, describe,
  };
  let pending = false;
  const pz = createPanZoom(svg, els.viewport, { minScale: 0.01, maxScale: 3, onChange: () => schedule() });
  const size = () => ({ w: svg.clientWidth || DEFAULT_W, h: svg.clientHeight || DEFAULT_H });

  function schedule() {
    if (pending) return;
    pending = true;
    raf(() => {
      pending = false;
      draw();
    });
  }

  /** Draw what is in view now. `all`: every item in detail (the SVG export). */
  function draw({ all = false } = {}) {
    const v = all ? { items: sc.lay.items, edgeItems: sc.lay.items.filter((c) => c.parent), k: 1 } : inView(sc, pz.transform, size());
    sc.overview = !all && (v.k < LOD_K || v.items.length > DETAIL_MAX);
    const path = (list) => list.map((c) => edgePath(c.parent, c, sc.overview, sc.g)).join("");
    const step = sc.step;
    const reached = step && !all ? (c) => step.state(c) != null : null;
    edges.setAttribute("d", path(reached ? v.edgeItems.filter(reached) : v.edgeItems));
    edgesAhead.setAttribute("d", reached ? path(v.edgeItems.filter((c) => !reached(c))) : "");
    if (sc.overview) drawOverview(sc, v.items);
    else drawDetailed(sc, v.items);
    svg.classList.toggle("jm-k-overview", sc.overview);
    if (!all) onDraw(pz.transform);
  }

  /** Bring item into the middle of the view at zoom at least `minK` (and at most 1.5). */
  function centerOn(it, minK = 0) {
    const { w, h } = size(), t = pz.transform;
    const k = Math.min(Math.max(t.k, minK), Math.max(1.5, minK));
    pz.set(w / 2 - (it.x + it.w / 2) * k, h / 2 - it.y * k, k);
  }

  /** Whether the item's box is inside the view. */
  function visible(it) {
    const { w, h } = size(), t = pz.transform;
    const x = t.x + it.x * t.k, y = t.y + it.y * t.k;
    return x >= 0 && x + it.w * t.k <= w && y - (sc.g.H / 2) * t.k >= 0 && y + (sc.g.H / 2) * t.k <= h;
  }

  const events = listenScene(svg, sc, pz, { onActivate, onHover, onKey, onSized, schedule, centerOn });
  return sceneApi({ svg, sc, pz, size, draw, visible, centerOn, legibleK, events });
}

/** The scene's controller, over its state (`sc`), pan/zoom (`pz`) and drawing functions. */
function sceneApi({ svg, sc, pz, size, draw, visible, centerOn, legibleK, events }) {
  return {
    svg,
    /** Replace the forest, keeping the transform (the view frames it when it asks for that). */
    setLayout(next) {
      sc.lay = next;
      sc.g = sc.lay.g || METRICS.normal;
      sc.byKey.clear();
      for (const it of sc.lay.items) sc.byKey.set(it.key, it);
      for (const e of sc.drawn.values()) e.item = null; // re-describe: a rebuilt tree has new item objects
      draw();
    },
    /** The laid-out forest drawn ({items, box, g}). */
    get layout() {
      return sc.lay;
    },
    /** The pane's size as drawn (a default while it has none). */
    size,
    /** Whether the svg has a size (a hidden or detached widget has none). */
    get sized() {
      return !!svg.clientWidth;
    },
    /** Apply a framing (frame.js): the transform, remembered so a resize can frame again. */
    frameTo(x, y, k) {
      pz.set(x, y, k);
      events.framed({ ...pz.transform });
      draw();
    },
    setMarks(next) {
      sc.marks = { selected: null, hits: new Set(), inside: new Set(), key: null, ...next };
      draw();
    },
    /** Show a playback step (story.js `stepMarks(p)`), or the ordinary drawing (null). */
    setStepMarks(next) {
      sc.step = next || null;
      draw();
    },
    /** Whether the item's box is wholly in view. */
    visible,
    draw,
    get overview() {
      return sc.overview;
    },
    get transform() {
      return pz.transform;
    },
    /** Pan to item when it is not in view (zooming in to a legible scale), draw, and return its element. */
    show(it, { focus = false } = {}) {
      if (!visible(it) || sc.overview || pz.transform.k < legibleK() - 1e-6) centerOn(it, legibleK());
      draw();
      const e = sc.drawn.get(it.key);
      if (e && focus) /** @type {HTMLElement} */ (e.g).focus({ preventScroll: true });
      return e ? e.g : null;
    },
    centerOn,
    /** Set the pan and zoom, and draw. */
    setTransform(x, y, k) {
      pz.set(x, y, k);
      draw();
    },
    /** Screen box of an item, relative to the svg. */
    screenBox(it) {
      const t = pz.transform, g = sc.g;
      return { x: t.x + it.x * t.k, y: t.y + (it.y - g.H / 2) * t.k, w: it.w * t.k, h: g.H * t.k };
    },
    elementOf: (key) => (sc.drawn.get(key) || {}).g || null,
    itemOf: (key) => sc.byKey.get(key) || null,
    dispose() {
      pz.dispose();
      events.dispose();
    },
  };
}
