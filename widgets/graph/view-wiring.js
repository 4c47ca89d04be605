/**
 * What the graph view's controls do (view.js): toolbar buttons and search box, export,
 * text pane clicks, label modes (modes.js), the cost overlay (overlay.js), a host's
 * decorations and edge labels (js/README.md, "Drawing API") and keyboard shortcuts
 * (keys.js). Installs methods on the view state `v`.
 */
import { clear, download } from "../ui/dom.js";
import * as ids from "./ids.js";
import { allCollapsibles } from "./expansion.js";
import { searchRecords } from "./find.js";
import { svgExport, fileName } from "./export.js";
import { svgToPng, canvasToPng } from "./png.js";
import { bindKeys, expandBelow } from "./keyboard.js";
import { modeState, labelFor } from "./modes.js";
import { costOverlay, legend } from "./overlay.js";
import { install } from "./view-state.js";

/** Listeners of the toolbar: fit, expand / collapse all, search, export, help. */
export function wireToolbar(v) {
  const { ui, root, fns, doc } = v;
  const { stage, canvas, searchBox } = ui;
  const on = (el, ev, fn) => el.addEventListener(ev, fn);
  on(ui.bFit, "click", v.fit);
  on(ui.bExpand, "click", () => {
    v.st().expanded = allCollapsibles(v.st().ix);
    v.relayout(v.firstView);
  });
  on(ui.bCollapse, "click", () => {
    v.st().expanded = new Set();
    v.relayout(v.firstView);
  });
  on(searchBox, "input", v.runSearch);
  on(searchBox, "keydown", v.onSearchKey);
  // Build the search records (~50 ms at 50k eqns) when the box is entered, not on the first key.
  on(searchBox, "focus", () => { const st = v.st(); if (!st.records) st.records = searchRecords(st.ix); });
  const exportSvg = () => stage.withSvg((el) => svgExport(el, v.drawn.bbox, root.ownerDocument.defaultView.getComputedStyle(canvas).backgroundColor));
  on(ui.bSvg, "click", () => v.drawn && download(fileName(fns[v.current].name, ".svg"), exportSvg().text, "image/svg+xml"));
  on(ui.bPng, "click", () => {
    if (!v.drawn) return;
    const bg = root.ownerDocument.defaultView.getComputedStyle(canvas).backgroundColor;
    // On the canvas renderer (big scenes): the view as drawn; else the whole drawing via SVG.
    const png = stage.renderer === "canvas"
      ? (stage.flush(), canvasToPng(stage.els[0], bg))
      : ((x) => svgToPng(x.text, x.w, x.h, root.ownerDocument))(exportSvg());
    png.then(
      (blob) => download(fileName(fns[v.current].name, ".png"), blob, "image/png"),
      (err) => { ui.status.textContent = `PNG export failed: ${err && err.message}`; });
  });
  on(ui.bPrev, "click", () => v.stepMatch(-1));
  on(ui.bNext, "click", () => v.stepMatch(1));
  on(ui.bHelp, "click", () => { ui.help.hidden = !ui.help.hidden; });
  on(ui.bJson, "click", () => download(fileName("jaxmagic-" + (doc.kind || "doc"), ".json"), JSON.stringify(doc, null, 2), "application/json"));
}

/** A click on line `line` of text pane `name`: select the node owning it, else mark the line. */
function onPaneLine(v, name, line) {
  const id = v.ui.panes.ownerOf(name, line);
  if (id) v.focus(ids.node(id));
  else {
    v.select(null);
    v.ui.panes.markLine(name, line);
  }
}

function setMode(v, m) {
  const { ui } = v;
  if (!modeState(v.fns[v.current], m).ok) return;
  v.mode = m;
  ui.modes.update(v.fns[v.current], v.mode);
  if (ui.legendLine) ui.legendLine.update(v.mode);
  v.applyLabels();
  v.select(v.st().selected, false); // details show values / batch dims per mode
}

/**
 * Edge labels of the current mode for the current function (modes.js). In presentation
 * mode trace labels are left out: they repeat the avals every box already shows, and
 * the room they take keeps a graph from fitting a projector at a legible size.
 */
const applyLabels = (v) => (v.present && v.mode === "trace"
  ? v.setLabelMode("trace-bare", () => "")
  : v.setLabelMode(v.mode, labelFor(v.mode, v.st().ix)));

function setOverlay(v, m) {
  v.overlay = m;
  v.applyOverlay();
}

/** Cost colours and their legend for the current function (overlay.js); else the host's decorations. */
function applyOverlay(v) {
  const ov = costOverlay(v.st().ix, v.overlay);
  v.setDecorations(ov ? ov.decorate : v.hostDecorate);
  clear(v.ui.legendSlot);
  if (ov) v.ui.legendSlot.appendChild(legend(ov, v.root));
}

/** `fn(key) -> {fill?: string} | null` fills node boxes in both renderers; null: none. */
const setDecorations = (v, fn) => v.ui.stage.setDecorations(fn);

/** Edge labels from `fn(varIds) -> text` (null: avals); `name` keys the layout cache. */
function setLabelMode(v, name, fn) {
  v.labelMode = String(name || "aval");
  v.labelOf = fn || null;
  if (v.drawn) v.relayout();
}

/** Install onPaneLine, setMode, labels, overlay and decorations on `v`. */
export const installModes = (v) => install(v, {
  onPaneLine, setMode, applyLabels, setOverlay, applyOverlay, setDecorations, setLabelMode,
});

/** Keyboard shortcuts on the view's root (keys.js); returns their unbinding. */
export function bindShortcuts(v) {
  const { ui } = v;
  v.root.setAttribute("tabindex", "0");
  return bindKeys(v.root, (action) => {
    const st = v.st();
    if (action === "fit") v.fit();
    else if (action === "expand") {
      for (const k of expandBelow(st.ix, st.selected)) st.expanded.add(k);
      v.relayout(st.selected ? () => v.focus(st.selected) : v.firstView);
    } else if (action === "collapse") ui.bCollapse.click();
    else if (action === "next" || action === "prev") v.stepMatch(action === "next" ? 1 : -1);
    else if (action === "search") ui.searchBox.focus();
    else if (action === "clear") ui.hood.exit() || v.select(null); // Escape leaves a neighbourhood first
    else if (action === "help") ui.help.hidden = !ui.help.hidden;
  });
}
