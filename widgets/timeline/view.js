/**
 * The timeline view (`kind: "timeline"`): what `%%trace` recorded, per jitted
 * function: trace / lower / compile / dispatch spans, cache hits and misses, and why
 * each recompile happened. Header, toolbar, the canvas (plot.js), the details panel,
 * the findings list and the per-function table. Owns the interaction state: the
 * selected call, the focused lane, the brushed range, the "misses only" filter and
 * the table's sort.
 *
 * Playback (stage.js) replays the calls in the order they happened; while it is before its
 * end the table counts what had happened so far and the details follow the step. The
 * interaction state is left alone, so the last step gives back exactly the view it started
 * from. Presentation mode (`options.present`) draws the canvas at a larger scale and hides
 * the export and help controls (.jm-clutter).
 */
import { h, download } from "../ui/dom.js";
import { docHeader } from "../ui/header.js";
import { fileName } from "../graph/export.js";
import { canvasToPng } from "../graph/png.js";
import { readTimeline, laneRows, stepMiss } from "./model.js";
import { createPlot } from "./plot.js";
import { showCall, showLane, showCapture } from "./details.js";
import { summaryTable, findingsList } from "./table.js";
import { bindKeys, helpPanel } from "./keys.js";
import { timelinePlayback, motionAllowed } from "./stage.js";
import { fmtUs } from "./time.js";
import { timelineLegend } from "./legend.js";

import { plural } from "../ui/words.js";
const range = (r) => `${fmtUs(r[0])} – ${fmtUs(r[1])}`;

/** The status line's totals: "N calls, H hits, M misses, C compiles in T". */
export function statusText(tl) {
  const t = tl.totals;
  return `${plural(t.calls, "call")}, ${plural(t.hits, "hit")}, ${plural(t.misses, "miss", "misses")}, ` +
    `${plural(t.compiles, "compile")} in ${fmtUs(tl.duration)}`;
}

/** The status line's second part: the window shown, clamped to the capture ("showing 0 µs – 603 ms"). */
export function windowText(tl, a, b) {
  return "showing " + range([Math.max(0, a), Math.min(tl.duration, b)]);
}

/** The whole status line as read aloud: the totals, then the window, as two parts ("… in 603 ms · showing …"). */
export const statusLine = (tl, a, b) => `${statusText(tl)} · ${windowText(tl, a, b)}`;

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
  const st = { selected: -1, focus: null, brush: null, sortKey: null, desc: false };
  let pb = null; // the playback state shown (stage.js), null at the end: the ordinary view

  const btn = (label, title, fn, cls = "") => {
    const b = h("button", { type: "button", class: "jm-btn " + cls, title }, label, root);
    b.addEventListener("click", fn);
    return b;
  };
  const missBox = h("input", { type: "checkbox", class: "jm-tl-misses-only" }, null, root);
  missBox.addEventListener("change", () => plot.set({ missesOnly: missBox.checked }));
  const rangeText = h("span", null, "", root);
  const rangeChip = h("span", { class: "jm-tl-range", hidden: true }, [
    rangeText,
    btn("Zoom", "Zoom to the selected time range", () => st.brush && plot.setWindow(...st.brush), "jm-btn-quiet"),
    btn("✕", "Clear the time range (Esc)", () => setBrush(null), "jm-btn-quiet"),
  ], root);
  const help = helpPanel(root);
  const shownText = h("span", { class: "jm-tl-window" }, "", root);
  const toolbar = h("div", { class: "jm-toolbar" }, [
    btn("Fit", "Show the whole capture (f)", () => plot.fit()),
    btn("−", "Zoom out (-)", () => plot.zoom(0.5)),
    btn("+", "Zoom in (+)", () => plot.zoom(2)),
    h("label", { class: "jm-tl-filter", title: "Draw only cache misses, and only functions that missed or compiled" }, [missBox, " misses only"], root),
    rangeChip,
    h("span", { class: "jm-spacer" }, null, root),
    h("span", { class: "jm-muted jm-export-label jm-clutter" }, "Export", root),
    btn("PNG", "Download the timeline as PNG", () => exportPng(), "jm-btn-quiet jm-clutter"),
    btn("JSON", "Download the document as JSON", () => download(fileName("jaxmagic-timeline", ".json"), JSON.stringify(doc, null, 2), "application/json"), "jm-btn-quiet jm-clutter"),
    btn("?", "Keyboard shortcuts (?)", () => (help.hidden = !help.hidden), "jm-btn-quiet jm-clutter"),
  ], root);

  const plot = createPlot(root, tl, {
    onSelect: (c, lane) => (c >= 0 ? selectCall(c) : focusLane(lane)),
    onBrush: (r) => setBrush(r),
    onWindow: (a, b) => (shownText.textContent = windowText(tl, a, b)),
    present,
  });
  const stage = h("div", { class: "jm-tl-stage" }, [
    plot.el,
    h("div", { class: "jm-status jm-tl-status" }, [
      h("span", { class: "jm-tl-totals" }, statusText(tl), root), h("span", { class: "jm-muted", "aria-hidden": "true" }, "·", root), shownText,
    ], root),
    timelineLegend(root, tl), help,
  ], root);
  const details = h("div", { class: "jm-details jm-tl-details", "aria-label": "details" }, null, root);
  const table = summaryTable(root, { onSort: (k) => sortBy(k), onPick: (l) => focusLane(l) });
  const findings = findingsList(root, tl, (f) => {
    const c = (f.calls || []).find((x) => x >= 0 && x < tl.calls.n);
    if (c != null) selectCall(c);
    else if (tl.lanes[f.lane]) focusLane(f.lane);
  });
  const sec = (title, body) => h("section", null, [h("h4", null, title, root), body], root);
  view.append(toolbar, h("div", { class: "jm-tl-main" }, [stage, details], root),
    h("div", { class: "jm-tl-below" }, [findings && sec("Findings", findings), sec("Functions", table.el)], root));

  // ---- state changes -------------------------------------------------------------------

  const refreshTable = () => table.update({
    rows: pb ? pb.counts : laneRows(tl, st.brush), sortKey: st.sortKey, desc: st.desc, focus: st.focus,
    caption: pb ? `So far (playback at ${fmtUs(Math.max(0, pb.now))}): calls and phases that had started`
      : st.brush ? `In ${range(st.brush)}: calls and phases starting in the range` : "",
    rowClass: pb ? (row) => (row.lane === pb.lane ? "jm-pb-current" : !row.calls && !row.traces && !row.compiles ? "jm-pb-future" : "") : null,
  });
  /** The details the interaction state asks for (what the view shows outside playback). */
  const showDetails = () => {
    if (st.selected >= 0) showCall(details, tl, st.selected);
    else if (st.focus != null) showLane(details, tl, st.focus);
    else showCapture(details, tl);
  };
  const select = (c, lane) => {
    st.selected = c;
    st.focus = lane;
    plot.set({ selected: c, focus: lane });
    refreshTable();
  };
  const selectCall = (c) => {
    select(c, tl.calls.lane[c]);
    plot.revealCall(c);
    showCall(details, tl, c);
  };
  const focusLane = (l) => {
    select(-1, l);
    showLane(details, tl, l);
  };
  const setBrush = (r) => {
    st.brush = r && r[1] > r[0] ? [Math.max(0, r[0]), Math.min(tl.duration, r[1])] : null;
    plot.set({ brush: st.brush });
    rangeChip.hidden = !st.brush;
    rangeText.textContent = st.brush ? range(st.brush) : "";
    refreshTable();
  };
  const sortBy = (k) => {
    // A second click reverses; numbers start biggest first, names A to Z.
    st.desc = st.sortKey === k ? !st.desc : k !== "name";
    st.sortKey = k;
    refreshTable();
  };
  const exportPng = () => {
    plot.flush();
    new Promise((ok) => ok(canvasToPng(plot.canvas, root.ownerDocument.defaultView.getComputedStyle(stage).backgroundColor)))
      .then((blob) => download(fileName("jaxmagic-timeline", ".png"), blob, "image/png"),
        (err) => (shownText.textContent = `PNG export failed: ${err && err.message}`));
  };

  root.setAttribute("tabindex", "0");
  const unbindKeys = bindKeys(root, (a) => {
    if (a === "next" || a === "prev") {
      const c = stepMiss(tl, st.selected, a === "next" ? 1 : -1);
      if (c >= 0) selectCall(c);
    } else if (a === "clear") {
      select(-1, null);
      setBrush(null);
      showCapture(details, tl);
    } else if (a === "help") help.hidden = !help.hidden;
    else ({ fit: () => plot.fit(), in: () => plot.zoom(2), out: () => plot.zoom(0.5), left: () => plot.pan(-0.2),
      right: () => plot.pan(0.2), up: () => plot.scrollRows(-1), down: () => plot.scrollRows(1) })[a]();
  });

  // Playback: the story of the calls (stage.js); the details and the table follow each step.
  const playback = options && options.playback;
  if (playback) {
    const win = root.ownerDocument.defaultView;
    playback.set(timelinePlayback(tl, {
      plot,
      animate: () => motionAllowed(win),
      onStep: (state) => {
        pb = state;
        if (!state) showDetails();
        else if (state.call >= 0) showCall(details, tl, state.call);
        else if (state.lane != null) showLane(details, tl, state.lane);
        else showCapture(details, tl);
        refreshTable();
      },
    }).spec);
  }

  showCapture(details, tl);
  refreshTable();
  plot.flush();
  return () => {
    plot.dispose();
    unbindKeys();
  };
}
