/**
 * The timeline view (`kind: "timeline"`): what `%%trace` recorded, per jitted
 * function: trace / lower / compile / dispatch spans, cache hits and misses, and why
 * each recompile happened. Header, toolbar, the canvas (plot.js), the details panel,
 * the findings list and the per-function table. Owns the interaction state: the
 * selected call, the focused lane, the brushed range, the "misses only" filter and
 * the table's sort.
 *
 * Playback (playback.js) plays the calls in the order they happened; while it is before its
 * end the table counts what had happened so far and the details follow the step. The
 * interaction state is left alone, so the last step gives back exactly the view it started
 * from. Presentation mode (`options.present`) draws the canvas at a larger scale and hides
 * the export and help controls (.jm-clutter).
 *
 * This module builds the parts and wires them; what the view does to its state is control.js's,
 * the toolbar toolbar.js's, the shortcuts keyboard.js's.
 */
import { h, download } from "../ui/dom.js";
import { docHeader } from "../ui/header.js";
import { fileName } from "../graph/export.js";
import { readTimeline } from "./model.js";
import { createPlot } from "./plot.js";
import { showCapture } from "./details.js";
import { summaryTable, findingsList } from "./table.js";
import { bindKeyboard, helpPanel } from "./keyboard.js";
import { timelinePlayback, motionAllowed } from "./playback.js";
import { fmtUs } from "./time.js";
import { timelineLegend } from "./legend.js";
import { timelineToolbar } from "./toolbar.js";
import { exportPng, focusLane, followStep, pickFinding, rangeText, refreshTable, runAction, selectCall, setBrush, sortBy } from "./control.js";
import { plural } from "../ui/words.js";

/** The status line's totals: "N calls, H hits, M misses, C compiles in T". */
export function statusText(tl) {
  const t = tl.totals;
  return `${plural(t.calls, "call")}, ${plural(t.hits, "hit")}, ${plural(t.misses, "miss", "misses")}, ` +
    `${plural(t.compiles, "compile")} in ${fmtUs(tl.duration)}`;
}

/** The status line's second part: the window shown, clamped to the capture ("showing 0 µs – 603 ms"). */
export function windowText(tl, a, b) {
  return "showing " + rangeText([Math.max(0, a), Math.min(tl.duration, b)]);
}

/** The whole status line as read aloud: the totals, then the window, as two parts ("… in 603 ms · showing …"). */
export const statusLine = (tl, a, b) => `${statusText(tl)} · ${windowText(tl, a, b)}`;

/** The surface under the toolbar (`.jm-tl-stage`): the plot, the status line, the legend and the help. */
function timelineStage(root, tl, plot, shownText, help) {
  return h("div", { class: "jm-tl-stage" }, [
    plot.el,
    h("div", { class: "jm-status jm-tl-status" }, [
      h("span", { class: "jm-tl-totals" }, statusText(tl), root), h("span", { class: "jm-muted", "aria-hidden": "true" }, "·", root), shownText,
    ], root),
    timelineLegend(root, tl), help,
  ], root);
}

/** The view's state with its toolbar and plot (control.js TimelineView); the panes are added by timelineView. */
function timelineState(root, doc, tl, present) {
  /** @type {import("./control.js").TimelineView} */
  const V = /** @type {any} */ ({ root, tl, st: { selected: -1, focus: null, brush: null, sortKey: null, desc: false }, pb: null });
  V.help = helpPanel(root);
  V.shownText = h("span", { class: "jm-tl-window" }, "", root);
  const bar = timelineToolbar(root, {
    fit: () => V.plot.fit(),
    zoom: (f) => V.plot.zoom(f),
    missesOnly: (on) => V.plot.set({ missesOnly: on }),
    zoomToRange: () => V.st.brush && V.plot.setWindow(...V.st.brush),
    clearRange: () => setBrush(V, null),
    png: () => exportPng(V),
    json: () => download(fileName("jaxmagic-timeline", ".json"), JSON.stringify(doc, null, 2), "application/json"),
    help: () => (V.help.hidden = !V.help.hidden),
  });
  Object.assign(V, { toolbar: bar.el, rangeChip: bar.rangeChip, rangeText: bar.rangeText });
  V.plot = createPlot(root, tl, {
    onSelect: (c, lane) => (c >= 0 ? selectCall(V, c) : focusLane(V, lane)),
    onBrush: (r) => setBrush(V, r),
    onWindow: (a, b) => (V.shownText.textContent = windowText(tl, a, b)),
    present,
  });
  return V;
}

/**
 * Mount a timeline view for `doc` into `root`; `options` = {present, playback} from
 * widgets/mount.js (undefined when a test mounts the view directly).
 * @param {import("../types/documents").TimelineDocument} doc a timeline document (its packed blocks already inflated)
 * @returns {() => void} cleanup
 */
export function timelineView(root, doc, engine, options) {
  const present = !!(options && options.present);
  const tl = readTimeline(doc);
  const view = h("div", { class: "jm-timeline" }, docHeader(doc, root), root);
  root.appendChild(view);
  if (!tl.lanes.length) {
    view.appendChild(h("div", { class: "jm-empty" }, "Nothing was recorded: the cell made no jitted call and JAX compiled nothing.", root));
    return () => {};
  }
  const V = timelineState(root, doc, tl, present);
  V.stage = timelineStage(root, tl, V.plot, V.shownText, V.help);
  V.details = h("div", { class: "jm-details jm-tl-details", "aria-label": "details" }, null, root);
  V.table = summaryTable(root, { onSort: (k) => sortBy(V, k), onPick: (l) => focusLane(V, l) });
  const findings = findingsList(root, tl, (f) => pickFinding(V, f));
  const sec = (title, body) => h("section", null, [h("h4", null, title, root), body], root);
  view.append(V.toolbar, h("div", { class: "jm-tl-main" }, [V.stage, V.details], root),
    h("div", { class: "jm-tl-below" }, [findings && sec("Findings", findings), sec("Functions", V.table.el)], root));

  root.setAttribute("tabindex", "0");
  const unbindKeyboard = bindKeyboard(root, (a) => runAction(V, a));
  // Playback: the story of the calls (playback.js); the details and the table follow each step.
  const playback = options && options.playback;
  if (playback) {
    const win = root.ownerDocument.defaultView;
    playback.set(timelinePlayback(tl, { plot: V.plot, animate: () => motionAllowed(win), onStep: (state) => followStep(V, state) }).spec);
  }
  showCapture(V.details, tl);
  refreshTable(V);
  V.plot.flush();
  return () => {
    V.plot.dispose();
    unbindKeyboard();
  };
}
