/**
 * The timeline plot's window and rows (plot.js): which time window `[t0, t1]` and which lanes
 * are shown, how to move them, and where things are drawn for that window (the frame's layout,
 * the drawing's box for the pane's contract, a call's miss marker). Every function reads and
 * writes the plot's state object (`PlotState`, made by plot.js).
 */
import { frameLayout, FONT, sizes } from "./draw.js";

/** Lanes shown at once; more scroll. */
export const MAX_ROWS = 12;
/** Lanes shown at once in presentation mode: rows are 1.6 times taller and a projector is 720 px high. */
export const PRESENT_ROWS = 6;
/** Narrowest window (µs): documents count whole µs. */
const MIN_SPAN = 20;

/**
 * @typedef {object} PlotState  the timeline plot's state, shared by plot.js, window.js, pointer.js and probe.js
 * @property {any} tl                 readTimeline(doc)
 * @property {HTMLCanvasElement} canvas
 * @property {HTMLElement} el         `.jm-tl-plot`
 * @property {HTMLElement} tip        `.jm-tl-tip`
 * @property {Window} win
 * @property {number} D               the capture's duration (µs, at least 1)
 * @property {number} k               drawing scale (PRESENT_SCALE in presentation mode, else 1)
 * @property {number} maxRows         lanes shown at once
 * @property {number} t0              window start (µs)
 * @property {number} t1              window end (µs)
 * @property {number} offset          first lane shown, among those that can be
 * @property {any} focus              the focused lane, or null
 * @property {{selected: number, brush: any, pick: any, missesOnly: boolean, playback: any}} st
 *   what a frame draws besides the window (draw.js drawFrame `st`)
 * @property {() => void} schedule   redraw at the next animation frame
 * @property {(t0: number, t1: number) => void} onWindow
 */

/** Lanes that can be shown: all, or with "misses only" those that missed or compiled. */
export const shownLanes = (P) => P.tl.lanes.filter((l) => !P.st.missesOnly || l.misses > 0 || l.compiles > 0).map((l) => l.pos);
/** The lanes shown now, top to bottom. */
export const rowsOf = (P) => shownLanes(P).slice(P.offset, P.offset + P.maxRows);
/** The frame's layout; no width yet (hidden, or jsdom): 800 px wide. */
export const layoutOf = (P) => frameLayout(P.canvas.clientWidth || 800, Math.max(1, Math.min(P.maxRows, shownLanes(P).length)), P.k);

/** Show the window [a, b], at least MIN_SPAN wide and inside the capture (with a 2% margin). */
export function setWindow(P, a, b) {
  const D = P.D, pad = 0.02 * D, span = Math.min(D + 2 * pad, Math.max(MIN_SPAN, b - a));
  P.t0 = Math.max(-pad, Math.min(a, D + pad - span));
  P.t1 = P.t0 + span;
  P.schedule();
  P.onWindow(P.t0, P.t1);
}

/** Zoom by `f` keeping time `t` where it is. */
export const zoomAt = (P, t, f) => setWindow(P, t - (t - P.t0) / f, t + (P.t1 - t) / f);

/** Make lane `l` one of the shown rows, scrolling as little as possible. */
export function revealLane(P, l) {
  const i = shownLanes(P).indexOf(l);
  if (i >= 0) P.offset = Math.min(i, Math.max(P.offset, i - P.maxRows + 1));
}

/** Scroll the rows by `d` lanes; false when they cannot move. */
export function scrollRows(P, d) {
  const o = Math.max(0, Math.min(shownLanes(P).length - P.maxRows, P.offset + d));
  if (o === P.offset) return false;
  P.offset = o;
  P.schedule();
  return true;
}

/** Bring call `c` into view: its lane shown, the window moved (or widened) to hold it. */
export function revealCall(P, c) {
  const tl = P.tl;
  revealLane(P, tl.calls.lane[c]);
  const a = tl.calls.start[c], b = tl.effEnd[c], span = P.t1 - P.t0;
  if (b - a > 0.8 * span) setWindow(P, a - (b - a) / 4, b + (b - a) / 4);
  else if (a < P.t0 || b > P.t1) setWindow(P, (a + b - span) / 2, (a + b + span) / 2);
  P.schedule();
}

/**
 * "whole" when the window holds the whole capture and every lane is a row, else "part";
 * the smallest text as drawn; the box of the whole drawing (every lane, the whole capture)
 * relative to the pane at the current zoom.
 */
export function framing(P, L) {
  const { t0, t1, D, k } = P;
  const span = Math.max(1e-9, t1 - t0), all = shownLanes(P).length;
  const x0 = L.plotX + ((0 - t0) / span) * L.plotW, x1 = L.plotX + ((D - t0) / span) * L.plotW;
  const left = Math.min(0, x0 - L.plotX), full = frameLayout(L.w, Math.max(1, all), k);
  const whole = t0 <= 0 && t1 >= D && all <= P.maxRows;
  return {
    framed: whole ? "whole" : "part",
    textPx: Math.min(...Object.values(FONT)) * k,
    drawing: [left, -P.offset * L.rowH, Math.max(L.w, x1 + sizes(k).geo.padR) - left, full.h],
  };
}

/** [x, y, w, h] of call c's miss marker in the pane, or null when its lane or time is not shown. */
export function markerRect(P, L, c) {
  const r = rowsOf(P).indexOf(P.tl.calls.lane[c]), t = P.tl.calls.start[c];
  if (r < 0 || t < P.t0 || t > P.t1) return null;
  const { band, k: s } = sizes(P.k);
  const x = L.plotX + ((t - P.t0) / (P.t1 - P.t0)) * L.plotW;
  return [x - 3.5 * s, L.rowsY + r * L.rowH + band.markY, 7 * s, 7 * s];
}
