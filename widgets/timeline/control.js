/**
 * What the timeline view does to its state: select a call, focus a lane, brush a range, sort
 * the table, follow a playback step, run a keyboard action, export a PNG. Each function takes
 * the view's state object (`TimelineView`, built by view.js), so the view itself only builds
 * its parts and wires events to these.
 */
import { download } from "../ui/dom.js";
import { fileName } from "../graph/export.js";
import { canvasToPng } from "../graph/png.js";
import { laneRows, stepMiss } from "./model.js";
import { showCall, showLane, showCapture } from "./details.js";
import { fmtUs } from "./time.js";

/**
 * @typedef {object} TimelineView  the timeline view's state and parts
 * @property {HTMLElement} root
 * @property {any} tl              readTimeline(doc)
 * @property {{selected: number, focus: any, brush: any, sortKey: (string | null), desc: boolean}} st
 *   the interaction state
 * @property {any} pb              the playback state shown (playback.js), null at the end: the ordinary view
 * @property {any} plot            createPlot(...) (plot.js)
 * @property {HTMLElement} details
 * @property {{el: HTMLElement, update(o: object): void}} table
 * @property {HTMLElement} toolbar
 * @property {HTMLElement} rangeChip
 * @property {HTMLElement} rangeText
 * @property {HTMLElement} shownText  the window shown, in the status line
 * @property {HTMLElement} help
 * @property {HTMLElement} stage   the canvas's surface (`.jm-tl-stage`): its background is the PNG's
 */

/** "12 ms – 40 ms". */
export const rangeText = (r) => `${fmtUs(r[0])} – ${fmtUs(r[1])}`;

/** The table: per-lane rows of the whole capture, of the brushed range, or so far in playback. */
export function refreshTable(V) {
  const { st, pb, tl } = V;
  V.table.update({
    rows: pb ? pb.counts : laneRows(tl, st.brush), sortKey: st.sortKey, desc: st.desc, focus: st.focus,
    caption: pb ? `So far (playback at ${fmtUs(Math.max(0, pb.now))}): calls and phases that had started`
      : st.brush ? `In ${rangeText(st.brush)}: calls and phases starting in the range` : "",
    rowClass: pb ? (row) => (row.lane === pb.lane ? "jm-pb-current" : !row.calls && !row.traces && !row.compiles ? "jm-pb-future" : "") : null,
  });
}

/** The details the interaction state asks for (what the view shows outside playback). */
function showDetails(V) {
  if (V.st.selected >= 0) showCall(V.details, V.tl, V.st.selected);
  else if (V.st.focus != null) showLane(V.details, V.tl, V.st.focus);
  else showCapture(V.details, V.tl);
}

function select(V, c, lane) {
  V.st.selected = c;
  V.st.focus = lane;
  V.plot.set({ selected: c, focus: lane });
  refreshTable(V);
}

export function selectCall(V, c) {
  select(V, c, V.tl.calls.lane[c]);
  V.plot.revealCall(c);
  showCall(V.details, V.tl, c);
}

export function focusLane(V, l) {
  select(V, -1, l);
  showLane(V.details, V.tl, l);
}

/** Brush the range r (clamped to the capture; empty: none): the plot, the chip and the table follow. */
export function setBrush(V, r) {
  const st = V.st;
  st.brush = r && r[1] > r[0] ? [Math.max(0, r[0]), Math.min(V.tl.duration, r[1])] : null;
  V.plot.set({ brush: st.brush });
  V.rangeChip.hidden = !st.brush;
  V.rangeText.textContent = st.brush ? rangeText(st.brush) : "";
  refreshTable(V);
}

/** Sort the table by column k: a second click reverses; numbers start biggest first, names A to Z. */
export function sortBy(V, k) {
  V.st.desc = V.st.sortKey === k ? !V.st.desc : k !== "name";
  V.st.sortKey = k;
  refreshTable(V);
}

/** A finding selects its first call, else focuses its lane. */
export function pickFinding(V, f) {
  const c = (f.calls || []).find((x) => x >= 0 && x < V.tl.calls.n);
  if (c != null) selectCall(V, c);
  else if (V.tl.lanes[f.lane]) focusLane(V, f.lane);
}

/** Download the canvas as PNG on the stage's background; a failure is said in the status line. */
export function exportPng(V) {
  V.plot.flush();
  const bg = V.root.ownerDocument.defaultView.getComputedStyle(V.stage).backgroundColor;
  new Promise((ok) => ok(canvasToPng(V.plot.canvas, bg)))
    .then((blob) => download(fileName("jaxmagic-timeline", ".png"), blob, "image/png"),
      (err) => (V.shownText.textContent = `PNG export failed: ${err && err.message}`));
}

/** Run a keyboard action (keyboard.js). */
export function runAction(V, a) {
  const { plot, tl } = V;
  if (a === "next" || a === "prev") {
    const c = stepMiss(tl, V.st.selected, a === "next" ? 1 : -1);
    if (c >= 0) selectCall(V, c);
  } else if (a === "clear") {
    select(V, -1, null);
    setBrush(V, null);
    showCapture(V.details, tl);
  } else if (a === "help") V.help.hidden = !V.help.hidden;
  else ({ fit: () => plot.fit(), in: () => plot.zoom(2), out: () => plot.zoom(0.5), left: () => plot.pan(-0.2),
    right: () => plot.pan(0.2), up: () => plot.scrollRows(-1), down: () => plot.scrollRows(1) })[a]();
}

/** A playback step (null: the end): the details follow the step, the table counts what happened so far. */
export function followStep(V, state) {
  V.pb = state;
  if (!state) showDetails(V);
  else if (state.call >= 0) showCall(V.details, V.tl, state.call);
  else if (state.lane != null) showLane(V.details, V.tl, state.lane);
  else showCapture(V.details, V.tl);
  refreshTable(V);
}
