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
 * Playback (story.js) draws on the same layout through a *stage*: each item's state at the
 * current step (or null: not reached yet, faded with its edge), the items the step touched
 * and those that flash. No stage is the ordinary drawing, so the last step restores it exactly.
 *
 * Framing (where the tree sits, how large) is the view's (frame.js): the scene applies a
 * transform, reports each drawn frame (`onDraw`) so the view can publish the pane's contract
 * attributes, and asks the view to frame again once a blind first frame gets a size (`onSized`).
 * The story's key element (the reused key) carries `data-jm-key-element` (marks.key).
 */
import { s, clear } from "../ui/dom.js";
import { createPanZoom } from "../ui/panzoom.js";
import { STATES } from "./model.js";
import { METRICS, edgePath, shownLabel } from "./layout.js";

/** Most items drawn in detail; more in view switch to the overview. */
export const DETAIL_MAX = 180;
/** Below this zoom the tree is drawn as an overview. */
export const LOD_K = 0.4;
/** Size assumed for an unlaid-out svg (jsdom, a hidden output), px. */
const DEFAULT_W = 900, DEFAULT_H = 520;
/** Extra content drawn around the view, px on screen. */
const MARGIN = 120;
const raf = (f) => (globalThis.requestAnimationFrame ? globalThis.requestAnimationFrame(f) : setTimeout(f, 16));

/**
 * `describe(item)` -> `{aria, badge, flags}` (flags: extra classes), called when an item is
 * first drawn. Events: `onActivate(item, {toggle})` for a click (`toggle`: on the toggle,
 * or a stand-in), `onHover(item | null)`, `onKey(item, event)`, `onDraw(transform)` after each
 * frame, `onSized()` when a frame made blind (no size yet) can be framed for real.
 * `legibleK`: the least zoom at which labels stay legible (revealing an item zooms to it).
 */
export function createScene(ref, { describe, onActivate, onHover, onKey, onDraw = () => {}, onSized = null, legibleK = () => 1 }) {
  const svg = s("svg", { class: "jm-k-svg", role: "tree", "aria-label": "PRNG key tree", "aria-multiselectable": "false" }, null, ref);
  const viewport = s("g", { class: "jm-viewport" }, null, ref);
  const edges = s("path", { class: "jm-k-edges" }, null, ref);
  const edgesAhead = s("path", { class: "jm-k-edges jm-pb-future" }, null, ref); // playback: edges to keys not made yet
  const over = s("g", { class: "jm-k-over" }, null, ref);
  const layer = s("g", { class: "jm-k-nodes" }, null, ref);
  viewport.append(edgesAhead, edges, over, layer);
  svg.appendChild(viewport);

  let lay = { items: [], box: { x: 0, y: 0, w: 0, h: 0 }, g: METRICS.normal };
  let g = lay.g; // the sizes the layout was made with
  const byKey = new Map();
  const drawn = new Map(); // key -> {g, sig, item}
  let marks = { selected: null, hits: new Set(), inside: new Set(), key: null };
  /** Playback: `{state(item) -> state | null (not reached), current: Set, flash: Set}` of item keys; null: none. */
  let stage = null;
  let overview = false;
  let pending = false;
  const pz = createPanZoom(svg, viewport, { minScale: 0.01, maxScale: 3, onChange: () => schedule() });

  const size = () => ({ w: svg.clientWidth || DEFAULT_W, h: svg.clientHeight || DEFAULT_H });

  function schedule() {
    if (pending) return;
    pending = true;
    raf(() => {
      pending = false;
      draw();
    });
  }

  /** Items whose box meets the view (with the margin), in preorder. */
  function inView() {
    const t = pz.transform, { w, h } = size();
    const m = MARGIN / t.k;
    const x0 = -t.x / t.k - m, x1 = (w - t.x) / t.k + m, y0 = -t.y / t.k - m, y1 = (h - t.y) / t.k + m;
    const meets = (it) => it.y + g.H >= y0 && it.y - g.H <= y1 && it.x + it.w + 2 * g.TOG_DX >= x0 && it.x <= x1;
    const items = lay.items.filter(meets);
    const path = [];
    for (const c of lay.items) {
      const p = c.parent;
      if (!p) continue;
      if (Math.max(p.y, c.y) < y0 || Math.min(p.y, c.y) > y1 || c.x < x0 || p.x > x1) continue;
      path.push(c);
    }
    return { items, edgeItems: path, k: t.k };
  }

  /** The state an item is drawn in: the stage's at this step (null: not reached yet), else the document's. */
  const stateOf = (it) => (stage ? stage.state(it) : it.state);

  function classOf(it, flags) {
    const st = stateOf(it);
    const c = ["jm-k-item", `jm-k-t-${it.type}`, `jm-k-s-${st ?? "unused"}`, ...flags]; // a key not made yet shows no state
    if (stage) {
      if (st == null) c.push("jm-pb-future");
      if (stage.current.has(it.key)) c.push("jm-pb-current");
      if (stage.flash.has(it.key)) c.push("jm-pb-flash");
    }
    if (marks.selected === it.key) c.push("jm-k-sel");
    if (marks.hits.has(it.key)) c.push("jm-k-hit");
    if (marks.inside.has(it.key)) c.push("jm-k-hit-in");
    return c.join(" ");
  }

  /** The inner elements of an item's <g>: (back shape) shape, label, (badge), (toggle). */
  function fillItem(el, it, d) {
    clear(el);
    const { H, TOG_R, TOG_DX, LABEL_DY } = g;
    const w = it.w;
    const pill = it.type === "node" && !d.flags.includes("jm-k-array");
    if (d.flags.includes("jm-k-stack")) {
      el.appendChild(s("rect", { class: "jm-k-back", x: 3, y: -H / 2 - 3, width: w, height: H, rx: pill ? H / 2 : 3 }, null, ref));
    }
    el.appendChild(s("rect", { class: "jm-k-shape", x: 0, y: -H / 2, width: w, height: H, rx: pill ? H / 2 : 3 }, null, ref));
    el.appendChild(s("text", { class: "jm-k-label", x: w / 2, y: LABEL_DY, "text-anchor": "middle" }, shownLabel(it), ref));
    if (d.badge) el.appendChild(s("text", { class: "jm-k-badge", x: 4, y: -H / 2 - 3 }, d.badge, ref));
    if (it.collapsible) {
      const cx = w + TOG_DX, r = TOG_R;
      const sign = it.expanded ? `M${cx - 3} 0h6` : `M${cx - 3} 0h6M${cx} -3v6`;
      el.appendChild(s("path", { class: "jm-k-tog", d: `M${cx - r} 0a${r} ${r} 0 1 0 ${2 * r} 0a${r} ${r} 0 1 0 ${-2 * r} 0${sign}` }, null, ref));
    }
  }

  function detailed(items) {
    clear(over);
    const keep = new Set(items.map((it) => it.key));
    for (const [key, e] of drawn) {
      const focused = e.g === ref.ownerDocument.activeElement && byKey.has(key); // a pan keeps the focused item
      if (!keep.has(key) && !focused) {
        e.g.remove();
        drawn.delete(key);
      }
    }
    let prev = null;
    for (const it of items) {
      let e = drawn.get(it.key);
      const sig = `${it.type}|${it.label}|${it.w}|${it.state}|${it.collapsible}|${it.expanded}`;
      if (!e || e.item !== it) {
        const d = describe(it);
        if (!e) e = { g: s("g", { tabindex: 0, role: "treeitem", "data-key": it.key }, null, ref), sig: null };
        e.item = it;
        e.d = d;
        e.g.setAttribute("aria-label", d.aria);
        e.g.setAttribute("aria-level", String(it.depth + 1));
        if (it.collapsible) e.g.setAttribute("aria-expanded", String(it.expanded));
        else e.g.removeAttribute("aria-expanded");
        drawn.set(it.key, e);
      }
      if (e.sig !== sig) {
        fillItem(e.g, it, e.d);
        e.sig = sig;
      }
      e.g.setAttribute("transform", `translate(${it.x},${it.y})`);
      e.g.setAttribute("class", classOf(it, e.d.flags));
      e.g.setAttribute("aria-selected", String(marks.selected === it.key));
      if (marks.key === it.key) e.g.setAttribute("data-jm-key-element", "");
      else e.g.removeAttribute("data-jm-key-element");
      const want = prev ? prev.nextSibling : layer.firstChild;
      if (want !== e.g) layer.insertBefore(e.g, want);
      prev = e.g;
    }
  }

  /** One path of boxes per state, and the marks as outlines (playback: keys not reached yet faded, the step's outlined). */
  function overviewOf(items) {
    for (const e of drawn.values()) e.g.remove();
    drawn.clear();
    clear(over);
    const { H } = g;
    const box = (it) => `M${it.x} ${it.y - H / 2}h${it.w}v${H}h${-it.w}z`;
    const states = stage ? items.map(stateOf) : null;
    const ahead = stage ? items.filter((it, i) => states[i] == null).map(box).join("") : "";
    if (ahead) over.appendChild(s("path", { class: "jm-k-ov jm-k-s-unused jm-pb-future", d: ahead }, null, ref));
    for (const st of STATES) {
      const d = items.filter((it, i) => (stage ? states[i] : it.state) === st).map(box).join("");
      if (d) over.appendChild(s("path", { class: `jm-k-ov jm-k-s-${st}`, d }, null, ref));
    }
    const marked = (cls, pick) => {
      const d = items.filter(pick).map(box).join("");
      if (d) over.appendChild(s("path", { class: `jm-k-ov ${cls}`, d }, null, ref));
    };
    marked("jm-k-ov-hit", (it) => marks.hits.has(it.key) || marks.inside.has(it.key));
    marked("jm-k-ov-sel", (it) => marks.selected === it.key);
    if (stage) {
      marked("jm-k-ov-cur jm-pb-current", (it) => stage.current.has(it.key));
      marked(`jm-k-ov-cur jm-k-s-reused jm-pb-flash`, (it) => stage.flash.has(it.key));
    }
  }

  /** Draw what is in view now. `all`: every item in detail (the SVG export). */
  function draw({ all = false } = {}) {
    const v = all ? { items: lay.items, edgeItems: lay.items.filter((c) => c.parent), k: 1 } : inView();
    overview = !all && (v.k < LOD_K || v.items.length > DETAIL_MAX);
    const path = (list) => list.map((c) => edgePath(c.parent, c, overview, g)).join("");
    const reached = stage && !all ? (c) => stage.state(c) != null : null;
    edges.setAttribute("d", path(reached ? v.edgeItems.filter(reached) : v.edgeItems));
    edgesAhead.setAttribute("d", reached ? path(v.edgeItems.filter((c) => !reached(c))) : "");
    if (overview) overviewOf(v.items);
    else detailed(v.items);
    svg.classList.toggle("jm-k-overview", overview);
    if (!all) onDraw(pz.transform);
  }

  // ---- events ------------------------------------------------------------------------
  const itemOf = (target) => {
    const g = target && target.closest ? target.closest("[data-key]") : null;
    return g ? byKey.get(g.getAttribute("data-key")) || null : null;
  };
  const toContent = (e) => {
    const r = svg.getBoundingClientRect(), t = pz.transform;
    return { x: (e.clientX - r.left - t.x) / t.k, y: (e.clientY - r.top - t.y) / t.k };
  };
  const onClick = (e) => {
    const it = itemOf(e.target);
    if (it) {
      onActivate(it, { toggle: it.type !== "node" || !!e.target.closest(".jm-k-tog") });
      return;
    }
    if (!overview) return;
    // Overview: zoom to the item nearest the pointer.
    const p = toContent(e);
    let best = null, bd = Infinity;
    for (const c of lay.items) {
      const dx = Math.max(c.x - p.x, 0, p.x - c.x - c.w), dy = Math.abs(c.y - p.y);
      const d2 = dx * dx + dy * dy;
      if (d2 < bd) [best, bd] = [c, d2];
    }
    if (best && bd < (g.ROW * 4) ** 2) {
      centerOn(best, 1);
      onActivate(best, { toggle: false, zoomed: true });
    }
  };
  const onOver = (e) => onHover(itemOf(e.target));
  const onOut = (e) => {
    if (!itemOf(e.relatedTarget)) onHover(null);
  };
  const onFocusIn = (e) => onHover(itemOf(e.target));
  const onFocusOut = (e) => {
    if (!itemOf(e.relatedTarget)) onHover(null);
  };
  const onKeyDown = (e) => {
    const it = itemOf(e.target);
    if (it) onKey(it, e);
  };
  const listeners = { click: onClick, mouseover: onOver, mouseout: onOut, focusin: onFocusIn, focusout: onFocusOut, keydown: onKeyDown };
  for (const [type, fn] of Object.entries(listeners)) svg.addEventListener(type, fn);
  // A frame made before the svg had a size (a widget drawn while hidden or detached), or one the
  // reader has not moved since, is made again for the new size.
  let framedAt = null; // the transform the last framing set
  const onResize = () => {
    const t = pz.transform, f = framedAt;
    if (onSized && svg.clientWidth && f && t.x === f.x && t.y === f.y && t.k === f.k) onSized();
    else schedule();
  };
  const ro = typeof ResizeObserver !== "undefined" ? new ResizeObserver(onResize) : null;
  if (ro) ro.observe(svg);

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
    return x >= 0 && x + it.w * t.k <= w && y - (g.H / 2) * t.k >= 0 && y + (g.H / 2) * t.k <= h;
  }

  const api = {
    svg,
    /** Replace the forest, keeping the transform (the view frames it when it asks for that). */
    setLayout(next) {
      lay = next;
      g = lay.g || METRICS.normal;
      byKey.clear();
      for (const it of lay.items) byKey.set(it.key, it);
      for (const e of drawn.values()) e.item = null; // re-describe: a rebuilt tree has new item objects
      draw();
    },
    /** The laid-out forest drawn ({items, box, g}). */
    get layout() {
      return lay;
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
      framedAt = { ...pz.transform };
      draw();
    },
    setMarks(next) {
      marks = { selected: null, hits: new Set(), inside: new Set(), key: null, ...next };
      draw();
    },
    /** Show a playback step (see `stage` above), or the ordinary drawing (null). */
    setStage(next) {
      stage = next || null;
      draw();
    },
    /** Whether the item's box is wholly in view. */
    visible,
    draw,
    get overview() {
      return overview;
    },
    get transform() {
      return pz.transform;
    },
    /** Pan to item when it is not in view (zooming in to a legible scale), draw, and return its element. */
    show(it, { focus = false } = {}) {
      if (!visible(it) || overview || pz.transform.k < legibleK() - 1e-6) centerOn(it, legibleK());
      draw();
      const e = drawn.get(it.key);
      if (e && focus) e.g.focus({ preventScroll: true });
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
      const t = pz.transform;
      return { x: t.x + it.x * t.k, y: t.y + (it.y - g.H / 2) * t.k, w: it.w * t.k, h: g.H * t.k };
    },
    elementOf: (key) => (drawn.get(key) || {}).g || null,
    itemOf: (key) => byKey.get(key) || null,
    dispose() {
      pz.dispose();
      if (ro) ro.disconnect();
      for (const [type, fn] of Object.entries(listeners)) svg.removeEventListener(type, fn);
    },
  };
  return api;
}
