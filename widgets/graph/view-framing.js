/**
 * Framing for the graph view (view.js, framing.js): the pane's height, zoom and pan.
 * The reader's dragged height is kept; a resized output area frames again unless the
 * reader moved the drawing since. Installs methods on the view state `v`; its own
 * state is `v.frame` {fixedH, setH, framedAt, framedW} (reader's height; ours; the last framing).
 */
import { visibleRep } from "./model.js";
import { LEGIBLE_PX, PRESENT_PX } from "./framing.js";
import * as ids from "./ids.js";
import { install } from "./view-state.js";

/** Leaves that can show where a computation starts: eqns, input ports, scope / repeat / unit / chunk boxes. */
const startsComputation = (key) => ids.isNode(key) || ids.isPort(key) || (ids.isMadeBox(key) && !ids.isBundle(key));

/**
 * Where the computation visibly starts: the vertical middle of the leftmost leaf boxes
 * that are eqns, input ports or boxes of moderate size (not huge open containers). Ports
 * count: a train step's inputs (`model.hidden.kernel`, `opt.opt_state…`) are the names the
 * reader knows, and a long input column is taller than the first eqns beside it. Null when none.
 */
export function startOfComputation(boxes) {
  const leaves = [];
  for (const [key, b] of boxes) {
    if (startsComputation(key) && b.w < 900) leaves.push(b);
  }
  if (!leaves.length) return null;
  leaves.sort((a, b) => a.x - b.x);
  const first = leaves.slice(0, 8);
  return { y: first.reduce((sum, b) => sum + b.y + b.h / 2, 0) / first.length };
}

/** Tallest pane: an embedding view's --jm-graph-h; else what a 720 px screen holds under the bars. */
function maxHeight(v) {
  const { root } = v;
  const vh = (root.ownerDocument.defaultView || {}).innerHeight || 900;
  if (v.compact) return parseFloat(root.ownerDocument.defaultView.getComputedStyle(v.ui.main).getPropertyValue("--jm-graph-h")) || 380;
  return v.present ? Math.max(280, Math.min(vh - 410, 640)) : Math.max(280, Math.min(vh - 240, 580));
}

/**
 * Shortest pane. Beside the details and text panes (wide layout) it must leave them room to
 * read (a 5-eqn graph then sits centred); stacked (narrow) or embedded, a short pane is fine.
 */
const minHeight = (v) => (v.compact ? 120 : v.ui.view.closest(".jm-narrow") ? 180 : 300);

/** Fit button (and the first view of a function): frame it (framing.js). */
const fit = (v) => void v.reframe();

/** Size the pane (the .jm-main row holding it), in either layout of the view. */
function setHeight(v, px) {
  const { main, view } = v.ui;
  v.frame.setH = px;
  const narrow = !!view.closest(".jm-narrow");
  main.style.minHeight = "0px";
  main.style.gridTemplateRows = narrow ? (v.compact ? `${px}px` : `${px}px 360px`) : "";
  main.style.height = narrow ? "auto" : `${px}px`;
}

/** Box of `key` to centre on: an open box's header, not its middle. Null when not drawn. */
function anchorBox(v, key) {
  const st = v.st();
  const b = key && st.ix.parent.has(key) ? v.drawn.boxes.get(visibleRep(st.ix, key, st.expanded)) : null;
  return b ? { x: b.x, y: b.y, w: Math.min(b.w, 360), h: Math.min(b.h, 42) } : null;
}

/**
 * Frame the drawing: whole when legible, else the part around `anchors` (boxes; by
 * default the selection, else the finding's node, else the inputs on the left).
 */
function reframe(v, anchors) {
  if (!v.drawn) return null;
  const st = v.st();
  const start = startOfComputation(v.drawn.boxes);
  const sel = v.anchorBox(st.selected);
  // The story's key node sits near the pane's top (on screen as soon as the view's top is);
  // a selection the reader made is centred, with its neighbours around it.
  const f = v.ui.stage.frame({
    present: v.present, maxH: v.maxHeight(), minH: v.minHeight(), fixedH: v.frame.fixedH, anchorTop: !anchors && !sel,
    anchors: anchors || [sel || v.anchorBox(st.key)], startY: start ? start.y : null,
  }, v.setHeight);
  if (f) {
    v.frame.framedAt = v.ui.stage.pz.transform;
    v.frame.framedW = v.ui.svg.clientWidth;
  }
  return f;
}

/** After a box opened or closed: grow the pane (never past its maximum) to what the drawing needs. */
function grow(v) {
  const { frame } = v;
  if (!v.drawn || frame.fixedH || !frame.setH) return;
  const want = Math.min(v.maxHeight(), Math.ceil(v.drawn.bbox.h * v.ui.stage.pz.transform.k + 32));
  if (want > frame.setH) v.setHeight(want);
  v.ui.stage.publish();
}

/** True when `b` (content box) is on screen at a legible zoom: a reveal leaves the view alone. */
function inView(v, b) {
  const t = v.ui.stage.pz.transform, w = v.ui.svg.clientWidth, hh = v.ui.svg.clientHeight;
  const legible = v.M.F_TINY * t.k >= (v.present ? PRESENT_PX : LEGIBLE_PX) - 0.05;
  return !!b && legible && t.x + b.x * t.k >= 0 && t.y + b.y * t.k >= 0 && t.x + (b.x + b.w) * t.k <= w && t.y + (b.y + b.h) * t.k <= hh;
}

/**
 * A resized output area (a new width, a sidebar closed, narrow layout) frames again,
 * unless the reader moved the drawing since; a height the reader dragged is kept.
 */
function observeResize(v) {
  const { svg, view, stage, canvas } = v.ui, frame = v.frame;
  const win = v.root.ownerDocument.defaultView;
  const ro = win && win.ResizeObserver ? new win.ResizeObserver(() => {
    if (!v.drawn) return;
    const w = svg.clientWidth, hh = svg.clientHeight, t = stage.pz.transform;
    if (w && w !== frame.framedW) {
      if (!frame.framedAt || ["x", "y", "k"].every((c) => t[c] === frame.framedAt[c])) return void v.reframe();
      frame.framedW = w;
    } else if (frame.setH && hh && Math.abs(hh - frame.setH) > 2 && !view.closest(".jm-narrow")) frame.fixedH = hh;
    stage.publish();
  }) : null;
  if (ro) ro.observe(canvas);
  return ro;
}

/** Install the framing methods on `v` and start watching the pane's size (`v.ro`). */
export function installFraming(v) {
  v.frame = { fixedH: 0, setH: 0, framedAt: null, framedW: 0 };
  install(v, { maxHeight, minHeight, setHeight, anchorBox, reframe, grow, inView, fit, firstView: fit });
  v.ro = observeResize(v);
}
