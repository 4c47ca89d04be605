/**
 * `canvas.jmProbe` of the timeline plot (plot.js): where things are drawn, in client px, for
 * tests and automation that click a canvas where a call is (the canvas has no per-call element).
 */
import { layoutOf, rowsOf } from "./window.js";

/** The probe over the plot's state `P` (window.js PlotState). */
export function plotProbe(P) {
  const tl = P.tl;
  /** Client point of time t in lane l (the marker band), or null when not shown. */
  const at = (t, l) => {
    const L = layoutOf(P), r = rowsOf(P).indexOf(l), b = P.canvas.getBoundingClientRect();
    const { t0, t1 } = P;
    return r < 0 || t < t0 || t > t1 ? null : { x: b.left + L.plotX + ((t - t0) / (t1 - t0)) * L.plotW, y: b.top + L.rowsY + r * L.rowH + L.markY };
  };
  return {
    /** Client point of the middle of call c. */
    pointOf: (c) => at((tl.calls.start[c] + tl.calls.end[c]) / 2, tl.calls.lane[c]),
    window: () => ({ t0: P.t0, t1: P.t1 }),
    rows: () => rowsOf(P),
    /** Presentation-mode scale of the drawing (1 otherwise). */
    scale: P.k,
    /** Client box of lane l's row, or null when the lane is not among the rows shown. */
    rowBox(l) {
      const L = layoutOf(P), r = rowsOf(P).indexOf(l), b = P.canvas.getBoundingClientRect();
      return r < 0 ? null : { left: b.left + L.plotX, right: b.left + L.plotX + L.plotW, top: b.top + L.rowsY + r * L.rowH, height: L.rowH };
    },
    /** Draw the pending frame now (timing a step in tests). */
    flush: () => P.render(),
    /** The playback state drawn (null: the ordinary view): {now, marks, sweeping}. */
    playback: () => (P.st.playback ? { now: P.st.playback.now, marks: P.st.playback.marks, sweeping: P.sweepId > 0 } : null),
    /** Client point of time t on the overview strip. */
    overviewPoint(t) {
      const L = layoutOf(P), b = P.canvas.getBoundingClientRect();
      return { x: b.left + L.plotX + (t / P.D) * L.plotW, y: b.top + L.ovY + L.ovH / 2 };
    },
  };
}
