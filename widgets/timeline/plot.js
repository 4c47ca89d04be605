/**
 * The interactive timeline canvas: which time window and which lanes are shown
 * (window.js), what the pointer does there (pointer.js), and the drawing of each frame.
 *
 * Redraws are coalesced to one per animation frame; `.jm-tl-plot[data-draws]`
 * counts them and `canvas.jmProbe` tells tests and automation where things are.
 *
 * Colours: nothing is drawn before the canvas is in a document (a widget may be rendered
 * into a detached element; its theme variables read "" there and the canvas would paint
 * black), and the palette is read again when the host's theme changes (theme-watch.js).
 * `.jm-tl-plot` is the drawing pane of the shared contract: `data-jm-pane="timeline"`,
 * `data-jm-framed`, `data-jm-text-px`, `data-jm-drawing` and, when a call recompiled,
 * `data-jm-key-rect` (the first recompile's marker), set on every frame.
 *
 * Playback (`setPlayback`) only changes what one frame draws over the same axis: the window
 * and the rows stay where the user left them (a lane scrolls into the rows when a step
 * happens in it). `sweep` moves the present from one time to the next over a few frames, so
 * a compile's trace, lower and compile spans appear one after the other.
 */
import { h } from "../ui/dom.js";
import { firstRecompile } from "./model.js";
import { drawFrame, readPalette, PRESENT_SCALE } from "./draw.js";
import { whenConnected, watchTheme } from "../ui/theme-watch.js";
import { MAX_ROWS, PRESENT_ROWS, framing, layoutOf, markerRect, revealCall, revealLane, rowsOf, scrollRows, setWindow, zoomAt } from "./window.js";
import { listenPointer } from "./pointer.js";
import { plotProbe } from "./probe.js";
import { nextFrame } from "../ui/frame.js";

export { MAX_ROWS, PRESENT_ROWS } from "./window.js";
export { HIT_PX } from "./pointer.js";

/** The plot's elements: the canvas, the tooltip and the pane holding both. */
function plotElements(ref) {
  const canvas = /** @type {HTMLCanvasElement} */ (h("canvas", { class: "jm-tl-canvas", role: "img", "aria-label": "JIT timeline" }, null, ref));
  const tip = h("div", { class: "jm-tl-tip", hidden: true, role: "tooltip" }, "", ref);
  const el = h("div", { class: "jm-tl-plot", "data-jm-pane": "timeline" }, [canvas, tip], ref);
  return { canvas, tip, el };
}

/** The pane's contract attributes for the frame just drawn (see the module comment). */
function publish(P, L) {
  const f = framing(P, L), el = P.el;
  el.setAttribute("data-jm-framed", f.framed);
  el.setAttribute("data-jm-text-px", f.textPx.toFixed(1));
  el.setAttribute("data-jm-drawing", f.drawing.map((v) => Math.round(v)).join(","));
  const r = P.recompile >= 0 ? markerRect(P, L, P.recompile) : null;
  if (r) el.setAttribute("data-jm-key-rect", r.map((v) => Math.round(v * 10) / 10).join(","));
  else el.removeAttribute("data-jm-key-rect");
}

/**
 * Draw one frame now. Not in a document yet: its colours cannot be read, so it draws once it is.
 * The canvas is resized only when its size changes (resizing clears it).
 */
function render(P) {
  P.pending = 0;
  const canvas = P.canvas;
  if (!canvas.isConnected) {
    P.waiting = P.waiting || whenConnected(canvas, () => {
      P.waiting = null;
      P.schedule();
    });
    return;
  }
  const L = layoutOf(P), dpr = P.win.devicePixelRatio || 1;
  const bw = Math.round(L.w * dpr), bh = Math.round(L.h * dpr);
  if (canvas.width !== bw || canvas.height !== bh) [canvas.width, canvas.height] = [bw, bh];
  canvas.style.height = `${L.h}px`;
  P.ctx = P.ctx || canvas.getContext("2d");
  if (!P.ctx) return;
  P.pal = P.pal || readPalette(canvas);
  drawFrame(P.ctx, P.tl, { w: L.w, h: L.h, dpr, t0: P.t0, t1: P.t1, rows: rowsOf(P), focus: P.focus, k: P.k }, P.st, P.pal, P.cache);
  P.el.setAttribute("data-draws", String(++P.draws));
  publish(P, L);
}

/** The plot's state (window.js PlotState) at the whole capture, nothing selected. */
function plotState(ref, tl, els, { onWindow, present }) {
  const D = Math.max(1, tl.duration);
  /** @type {any} */
  const P = {
    tl, ...els, win: ref.ownerDocument.defaultView, D, onWindow,
    // pick: a window being dragged out on the overview
    st: { selected: -1, brush: null, pick: null, missesOnly: false, playback: null },
    k: present ? PRESENT_SCALE : 1, maxRows: present ? PRESENT_ROWS : MAX_ROWS,
    sweepId: 0, sweeps: 0, // the running sweep (0: none; ids never repeat); a new state or sweep cancels it
    t0: 0, t1: D, offset: 0, focus: null, draws: 0, pending: 0, pal: null, ctx: null, cache: {},
    recompile: firstRecompile(tl), // the call the story points at: its marker is the key rect
    waiting: null, // stops waiting for the canvas to be attached
  };
  P.render = () => render(P);
  P.schedule = () => {
    P.pending = P.pending || nextFrame(P.win, P.render);
  };
  return P;
}

/**
 * Playback state `{now, marks, counts}` (story.js stepState plus the counts so far), or
 * null for the ordinary view. Cancels a running sweep; the lanes the step touched are
 * scrolled into the rows.
 */
function setPlayback(P, state) {
  P.sweepId = 0;
  P.el.removeAttribute("data-sweeping");
  P.st.playback = state;
  if (state) for (const m of state.marks || []) revealLane(P, m.lane);
  P.schedule();
}

/**
 * Show `state` with its present moving from `from` to `state.now` over `ms` (eased), one
 * frame at a time; `.jm-tl-plot[data-sweeping]` while it runs.
 */
function sweep(P, state, from, ms) {
  setPlayback(P, { ...state, now: from });
  if (!(state.now > from) || !(ms > 0)) return setPlayback(P, state);
  const win = P.win;
  const clock = () => (win.performance ? win.performance.now() : Date.now());
  const next = (f) => nextFrame(win, f);
  const id = (P.sweepId = ++P.sweeps), begin = clock();
  P.el.setAttribute("data-sweeping", "");
  const frame = () => {
    if (P.sweepId !== id) return;
    const u = Math.min(1, (clock() - begin) / ms), e = u < 0.5 ? 2 * u * u : 1 - 2 * (1 - u) * (1 - u);
    P.st.playback = { ...state, now: from + (state.now - from) * e };
    render(P);
    if (u < 1) next(frame);
    else setPlayback(P, state);
  };
  next(frame);
}

/**
 * @param ref  widget root (owner document)
 * @param tl   readTimeline(doc)
 * @param {{onSelect: (call: number, lane: any) => void, onBrush: (range: any) => void, onWindow: (t0: number, t1: number) => void, present?: boolean}} on
 *   `onSelect(call | -1, lane)`, `onBrush(range)`, `onWindow(t0, t1)`, `present`: presentation mode
 */
export function createPlot(ref, tl, { onSelect, onBrush, onWindow, present = false }) {
  const P = plotState(ref, tl, plotElements(ref), { onWindow, present });
  const unwatch = watchTheme(P.canvas, () => {
    P.pal = null; // the host changed theme: read the colours again
    P.schedule();
  });
  listenPointer(P, { onSelect, onBrush });
  const win = P.win;
  const ro = win.ResizeObserver ? new win.ResizeObserver(P.schedule) : null;
  if (ro) ro.observe(P.el);
  /** @type {any} */ (P.canvas).jmProbe = plotProbe(P);
  const fit = () => setWindow(P, -0.01 * P.D, 1.01 * P.D);
  if (P.recompile >= 0) revealLane(P, tl.calls.lane[P.recompile]); // the story's recompile is on screen from the first frame
  fit();
  return {
    el: P.el,
    canvas: P.canvas,
    fit,
    setWindow: (a, b) => setWindow(P, a, b),
    zoom: (f) => zoomAt(P, (P.t0 + P.t1) / 2, f),
    pan: (f) => setWindow(P, P.t0 + f * (P.t1 - P.t0), P.t1 + f * (P.t1 - P.t0)),
    scrollRows: (d) => scrollRows(P, d),
    /** Bring call `c` into view: its lane shown, the window moved (or widened) to hold it. */
    revealCall: (c) => revealCall(P, c),
    /** Selection, brush, filter and focused lane ({selected, brush, missesOnly, focus}); redraws. */
    set(o) {
      if (o.missesOnly !== undefined && o.missesOnly !== P.st.missesOnly) P.offset = 0;
      Object.assign(P.st, o);
      if (o.focus !== undefined) P.focus = o.focus;
      if (P.focus != null) revealLane(P, P.focus);
      P.schedule();
    },
    /** Playback state, or null for the ordinary view (see setPlayback above). */
    setPlayback: (state) => setPlayback(P, state),
    /** Show `state` with its present sweeping from `from` (see sweep above). */
    sweep: (state, from, ms) => sweep(P, state, from, ms),
    /** Draw now (tests, before an export). */
    flush: P.render,
    dispose() {
      P.sweepId = 0;
      unwatch();
      if (P.waiting) P.waiting();
      if (ro) ro.disconnect();
      if (P.pending && win.cancelAnimationFrame) win.cancelAnimationFrame(P.pending);
    },
  };
}
