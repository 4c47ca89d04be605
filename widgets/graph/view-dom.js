/**
 * The graph view's elements (view.js): toolbar, drawing surface (stage.js) and the
 * panels around it, built once per view in the order the page shows them. Callbacks go
 * through the view state `v` (its methods are installed after the elements exist).
 */
import { h } from "../ui/dom.js";
import { docHeader } from "../ui/header.js";
import { findingsList } from "../ui/findings.js";
import { createStage } from "./stage.js";
import { createHood } from "./neighbourhood.js";
import { createPanes } from "./panes.js";
import { createBreadcrumbs } from "./breadcrumbs.js";
import { helpPanel } from "./keyboard.js";
import { modeControl, overlayControl } from "./controls.js";
import { graphLegend } from "./legend.js";
import { createReplay } from "./replay.js";
import { codeStrip } from "./codestrip.js";
import { srcText } from "./model.js";

/** The toolbar's buttons and search box. */
function toolbarControls(root) {
  const btn = (label, title, fn, cls = "") =>
    h("button", { type: "button", class: "jm-btn " + cls, title }, label, root);
  return {
    bFit: btn("Fit", "Fit the graph to the view"),
    bExpand: btn("Expand all", "Open every sub-jaxpr and scope"),
    bCollapse: btn("Collapse all", "Close every sub-jaxpr and scope"),
    searchBox: h("input", {
      type: "search", class: "jm-search", placeholder: "Search prim, var, scope, file:line",
      "aria-label": "Search the graph", spellcheck: "false",
    }, null, root),
    matchCount: h("span", { class: "jm-match-count", "aria-live": "polite" }, "", root),
    bPrev: btn("‹", "Previous match (Shift+Enter, N)", null, "jm-btn-quiet jm-search-prev"),
    bNext: btn("›", "Next match (Enter, n)", null, "jm-btn-quiet jm-search-next"),
    bSvg: btn("SVG", "Download the drawing as SVG", null, "jm-btn-quiet jm-clutter"),
    bPng: btn("PNG", "Download the drawing as PNG", null, "jm-btn-quiet jm-clutter"),
    bJson: btn("JSON", "Download the document as JSON", null, "jm-btn-quiet jm-clutter"),
    bHelp: btn("?", "Keyboard shortcuts (?)", null, "jm-btn-quiet jm-help-btn jm-clutter"),
  };
}

/** Toolbar controls, stage, replay, code strip, neighbourhood control and the toolbar row: `v.ui`. */
function buildToolbar(v) {
  const { root, opts, compact } = v;
  const ui = toolbarControls(root);
  ui.modes = modeControl(root, (m) => v.setMode(m));
  // Drawing surface: SVG or canvas renderer, pan/zoom, minimap, clicks (stage.js).
  const stage = createStage(root, v.uid, { onSelect: (k) => v.select(k), onToggle: (k) => v.toggle(k), mirrored: !!opts.mirrored });
  if (opts.label) stage.svg.setAttribute("aria-label", String(opts.label));
  stage.els[2].classList.add("jm-clutter"); // the minimap
  Object.assign(ui, { stage, svg: stage.svg, replay: createReplay(stage), strip: codeStrip(root) });
  ui.hood = createHood({
    ref: root, state: () => v.st(), relayout: (after) => v.relayout(after), pz: stage.pz,
    select: (k) => v.select(k), refresh: () => v.runSearch(), fit: () => v.fit(),
  });
  ui.toolbar = h("div", { class: "jm-toolbar" }, [
    ui.bFit, ui.bExpand, ui.bCollapse,
    h("div", { class: "jm-search-wrap" }, [ui.searchBox, ui.bPrev, ui.bNext, ui.matchCount], root),
    compact ? null : ui.modes.el, overlayControl(root, (m) => v.setOverlay(m)), ui.hood.control,
    h("span", { class: "jm-spacer" }, null, root),
    h("span", { class: "jm-muted jm-export-label jm-clutter" }, "Export", root), ui.bSvg, ui.bPng, ui.bJson, ui.bHelp,
  ], root);
  return ui;
}

/** Every element of the view, appended to `root`; returns them (`v.ui`). */
export function buildViewDom(v) {
  const { root, doc, opts, compact, present } = v;
  const ui = buildToolbar(v);
  const { stage, hood, strip } = ui;
  ui.status = h("div", { class: "jm-status jm-clutter" }, "", root);
  const crumbs = (ui.crumbs = createBreadcrumbs(root, (k) => (k === v.st().ix.root ? (v.select(null), v.fit()) : v.focus(k))));
  ui.legendSlot = h("div", { class: "jm-legend-slot" }, null, root);
  ui.help = helpPanel(root);
  ui.canvas = h("div", { class: "jm-canvas", "data-jm-pane": opts.pane || "graph" }, [...stage.els, crumbs.el, ui.legendSlot, ui.help, hood.banner, ui.status], root);
  ui.details = h("div", { class: "jm-details", "aria-label": "details" }, null, root);
  ui.panes = createPanes(root, (name, line) => v.onPaneLine(name, line), (name) => (name === "jaxpr" ? v.wantText(true) : v.wantLevels(true)));
  ui.side = h("div", { class: "jm-side" }, [ui.details, ui.panes.el], root);
  ui.main = h("div", { class: "jm-main" }, [ui.canvas, ui.side], root);
  ui.tabsSlot = h("div", { class: "jm-tabs-slot" }, null, root);
  crumbs.el.classList.add("jm-clutter");
  const cls = "jm-graph" + (compact ? " jm-compact" : "") + (opts.tone ? " jm-tone-" + opts.tone : "") + (present ? " jm-graph-present" : "");
  ui.legendLine = compact ? null : graphLegend(root); // an embedding view shows its own
  // The cell's findings (NaN, truncated float64, baked globals...): a click frames the node they name.
  const findingsEl = compact ? null : findingsList(root, doc.findings, (f) => v.pickFinding(f),
    { prefix: "jm-g", max: 12, clamp: true, where: (f) => [f.source && f.source.file ? srcText(f.source) : null] });
  ui.view = h("div", { class: cls }, [compact ? null : docHeader(doc, root), compact ? null : ui.tabsSlot, ui.toolbar,
    ui.legendLine && ui.legendLine.el, compact ? null : strip.el, findingsEl, ui.main], root);
  ui.view.style.setProperty("--jm-z", String(v.M.z)); // SVG text sizes follow the metrics (graph.css)
  if (compact) ui.side.remove();
  root.appendChild(ui.view);
  return ui;
}
