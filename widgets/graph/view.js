/**
 * The graph view: header, one tab per Function, toolbar, SVG canvas, details panel
 * and jaxpr text pane. Owns the interaction state (per function: what is expanded,
 * what is selected, search matches) and asks the layout engine for a new layout
 * whenever the expansion changes.
 */
import { h, s, clear, download } from "../../js/src/dom.js";
import { createPanZoom } from "../../js/src/panzoom.js";
import { search, step, countText } from "../../js/src/search.js";
import { docHeader } from "../header.js";
import { indexFunction, isCollapsible, visibleRep, nodeAtLine, nKey } from "./model.js";
import { defaultExpansion, allCollapsibles, visibleEqnCount, reveal } from "./expansion.js";
import { buildScene } from "./scene.js";
import { drawScene } from "./render.js";
import { showDetails } from "./details.js";
import { createTextPane } from "./textpane.js";
import { functionTabs } from "./tabs.js";
import { searchRecords } from "./find.js";
import { svgText, fileName } from "./export.js";

let viewCounter = 0;
/** Per-module-instance tag: SVG ids (the arrow marker) must be unique in the page. */
const instance = Math.random().toString(36).slice(2, 7);

/**
 * Mount a graph view for `doc` into `root`.
 * @param {{run: Function}} engine layout engine (see js/src/layout-client.js)
 * @returns {() => void} cleanup
 */
export function graphView(root, doc, engine) {
  const uid = `jm${instance}${++viewCounter}`;
  const fns = Array.isArray(doc.functions) ? doc.functions : [];
  const states = new Map(); // function index -> per-function state
  let current = 0;
  let disposed = false;
  let seq = 0;
  let drawn = null; // {boxes, bbox}
  let elements = new Map(); // element key -> drawn element
  let textPane = null;

  const btn = (label, title, fn, cls = "") =>
    h("button", { type: "button", class: "jm-btn " + cls, title }, label, root);
  const bFit = btn("Fit", "Fit the graph to the view");
  const bExpand = btn("Expand all", "Open every sub-jaxpr and scope");
  const bCollapse = btn("Collapse all", "Close every sub-jaxpr and scope");
  const searchBox = h("input", {
    type: "search", class: "jm-search", placeholder: "Search prim, var, scope, file:line",
    "aria-label": "Search the graph", spellcheck: "false",
  }, null, root);
  const matchCount = h("span", { class: "jm-match-count", "aria-live": "polite" }, "", root);
  const bSvg = btn("SVG", "Download the drawing as SVG", null, "jm-btn-quiet");
  const bJson = btn("JSON", "Download the document as JSON", null, "jm-btn-quiet");
  const toolbar = h("div", { class: "jm-toolbar" }, [
    bFit, bExpand, bCollapse,
    h("div", { class: "jm-search-wrap" }, [searchBox, matchCount], root),
    h("span", { class: "jm-spacer" }, null, root),
    h("span", { class: "jm-muted jm-export-label" }, "Export", root), bSvg, bJson,
  ], root);

  const layers = {
    boxes: s("g", { class: "jm-layer-boxes" }, null, root),
    edges: s("g", { class: "jm-layer-edges" }, null, root),
    labels: s("g", { class: "jm-layer-labels" }, null, root),
    nodes: s("g", { class: "jm-layer-nodes" }, null, root),
  };
  const viewport = s("g", { class: "jm-viewport" }, Object.values(layers), root);
  const markerId = `${uid}-arrow`;
  const svg = s("svg", { class: "jm-svg", role: "img", "aria-label": "computation graph" }, [
    s("defs", null, s("marker", {
      id: markerId, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse",
    }, s("path", { d: "M0,1.5L9,5L0,8.5z", class: "jm-arrow" }, null, root), root), root),
    viewport,
  ], root);
  const status = h("div", { class: "jm-status" }, "", root);
  const canvas = h("div", { class: "jm-canvas" }, [svg, status], root);
  const details = h("div", { class: "jm-details", "aria-label": "details" }, null, root);
  const textEl = h("div", { class: "jm-text", "aria-label": "jaxpr text" }, null, root);
  const side = h("div", { class: "jm-side" }, [details, textEl], root);
  const main = h("div", { class: "jm-main" }, [canvas, side], root);
  const tabsSlot = h("div", { class: "jm-tabs-slot" }, null, root);
  const view = h("div", { class: "jm-graph" }, [docHeader(doc, root), tabsSlot, toolbar, main], root);
  root.appendChild(view);

  if (!fns.length) {
    toolbar.remove();
    main.remove();
    view.appendChild(h("div", { class: "jm-empty" }, "No jitted functions were recorded in this cell.", root));
    return () => { disposed = true; };
  }

  const pz = createPanZoom(svg, viewport);

  /** State of function `i`, built on first visit. */
  const stateOf = (i) => {
    if (!states.has(i)) {
      const ix = indexFunction(fns[i]);
      states.set(i, {
        ix, expanded: defaultExpansion(ix), selected: null, query: "", matches: [], matchIdx: -1,
        records: searchRecords(ix), transform: null, prefix: `${uid}:${i}:`,
      });
    }
    return states.get(i);
  };

  // ---- layout + drawing -------------------------------------------------------

  /** Re-layout the current function; `after` runs once it is drawn. */
  const relayout = (after) => {
    const st = stateOf(current);
    const my = ++seq;
    const scene = buildScene(st.ix, st.expanded, st.prefix);
    status.textContent = "laying out…";
    status.classList.add("jm-busy");
    engine.run(scene.root).then((out) => {
      if (disposed || my !== seq) return;
      status.classList.remove("jm-busy");
      canvas.setAttribute("data-layout", engine.threaded ? "worker" : "main-thread");
      clear(layers.boxes); clear(layers.edges); clear(layers.labels); clear(layers.nodes);
      drawn = drawScene(layers, scene, out.results, st.ix, markerId);
      elements = new Map();
      for (const el of layers.nodes.querySelectorAll("[data-node-id]")) elements.set(nKey(el.getAttribute("data-node-id")), el);
      for (const el of layers.nodes.querySelectorAll("[data-port-id]")) elements.set(el.getAttribute("data-port-id"), el);
      for (const el of layers.nodes.querySelectorAll(".jm-scope[data-scope-id]")) elements.set(el.getAttribute("data-scope-id"), el);
      const shown = visibleEqnCount(st.ix, st.expanded), total = st.ix.count.get(st.ix.root) || 0;
      status.textContent = `${shown} of ${total} eqns shown` + (out.stats && out.stats.layered ? " · simplified layout for large groups" : "");
      paintSelection();
      paintMatches();
      if (after) after();
    }, (err) => {
      if (disposed || my !== seq) return;
      status.classList.remove("jm-busy");
      status.textContent = `layout failed: ${err && err.message}`;
    });
  };

  /** Toggle a collapsible, keeping it at the same place on screen. */
  const toggle = (key) => {
    const st = stateOf(current);
    if (!isCollapsible(st.ix, key)) return;
    const before = drawn && drawn.boxes.get(key);
    const t0 = pz.transform;
    if (st.expanded.has(key)) st.expanded.delete(key);
    else st.expanded.add(key);
    relayout(() => {
      const after = drawn.boxes.get(key);
      if (before && after) {
        pz.set(t0.x + (before.x - after.x) * t0.k, t0.y + (before.y - after.y) * t0.k, t0.k);
      }
    });
  };

  /** Fit button: the whole drawing. */
  const fit = () => drawn && pz.fit(drawn.bbox, { max: 1 });
  /** First view of a function: fit, but never so small that labels are unreadable. */
  const firstView = () => drawn && pz.fit(drawn.bbox, { max: 1, min: 0.75 });

  // ---- selection ---------------------------------------------------------------

  const paintSelection = () => {
    const st = stateOf(current);
    for (const el of svg.querySelectorAll(".jm-selected, .jm-edge-hl")) el.classList.remove("jm-selected", "jm-edge-hl");
    if (!st.selected) return;
    const rep = visibleRep(st.ix, st.selected, st.expanded);
    const el = elements.get(rep);
    if (el) el.classList.add("jm-selected");
    for (const e of layers.edges.children) {
      if (e.getAttribute("data-from") === rep || e.getAttribute("data-to") === rep) e.classList.add("jm-edge-hl");
    }
  };

  /** Select an element key (node or port) or null; update details and text. */
  const select = (key) => {
    const st = stateOf(current);
    st.selected = key;
    paintSelection();
    showDetails(details, st.ix, key);
    const n = key && key.startsWith("N:") ? st.ix.nodes.get(key.slice(2)) : null;
    if (textPane) textPane.highlight(n && Number.isInteger(n.line) ? n.line : null);
  };

  /** Select `key`, opening whatever hides it, and centre it. */
  const focus = (key) => {
    const st = stateOf(current);
    const center = () => {
      select(key);
      const b = drawn && drawn.boxes.get(visibleRep(st.ix, key, st.expanded));
      // Open boxes can be huge: centre on their header, not their middle.
      if (b) pz.centerOn(b.x + Math.min(b.w, 360) / 2, b.y + Math.min(b.h, 42) / 2, 0.7);
    };
    if (reveal(st.ix, st.expanded, key)) relayout(center);
    else center();
  };

  // ---- search ------------------------------------------------------------------

  const paintMatches = () => {
    const st = stateOf(current);
    for (const el of svg.querySelectorAll(".jm-match, .jm-has-match")) el.classList.remove("jm-match", "jm-has-match");
    for (const k of st.matches) {
      const rep = visibleRep(st.ix, k, st.expanded);
      const el = elements.get(rep);
      if (el) el.classList.add(rep === k ? "jm-match" : "jm-has-match");
    }
  };
  const runSearch = () => {
    const st = stateOf(current);
    st.query = searchBox.value;
    st.matches = search(st.records, st.query);
    st.matchIdx = -1;
    matchCount.textContent = countText(st.matches.length, st.query);
    paintMatches();
  };
  const onSearchKey = (e) => {
    if (e.key === "Escape") {
      searchBox.value = "";
      runSearch();
      return;
    }
    if (e.key !== "Enter") return;
    e.preventDefault();
    const st = stateOf(current);
    if (st.query !== searchBox.value) runSearch();
    if (!st.matches.length) return;
    st.matchIdx = step(st.matchIdx, st.matches.length, e.shiftKey ? -1 : 1);
    matchCount.textContent = `${st.matchIdx + 1} of ${countText(st.matches.length, st.query)}`;
    focus(st.matches[st.matchIdx]);
  };

  // ---- canvas clicks -----------------------------------------------------------

  const onCanvasClick = (e) => {
    const st = stateOf(current);
    const t = e.target;
    const owner = (el) => el.closest("[data-node-id], [data-scope-id]");
    const keyOf = (el) => (el.hasAttribute("data-node-id") ? nKey(el.getAttribute("data-node-id")) : el.getAttribute("data-scope-id"));
    const mark = t.closest(".jm-toggle, .jm-scope-head, .jm-scope.jm-collapsed");
    if (mark) {
      const o = owner(mark);
      if (o) toggle(keyOf(o));
      return;
    }
    const gh = t.closest(".jm-group-head");
    if (gh) {
      const gid = gh.parentNode.getAttribute("data-group-id");
      const parent = st.ix.parent.get("G:" + gid);
      if (parent) toggle(parent);
      return;
    }
    const node = t.closest(".jm-eqn");
    if (node) return select(nKey(node.getAttribute("data-node-id")));
    const port = t.closest(".jm-port");
    if (port) return select(port.getAttribute("data-port-id"));
    select(null);
  };
  const onCanvasDbl = (e) => {
    const node = e.target.closest(".jm-eqn");
    if (node) toggle(nKey(node.getAttribute("data-node-id")));
  };

  // ---- functions (tabs) ----------------------------------------------------------

  const show = (i) => {
    if (drawn && states.has(current)) states.get(current).transform = pz.transform;
    current = i;
    const st = stateOf(i);
    clear(tabsSlot);
    tabsSlot.appendChild(functionTabs(fns, i, (j) => j !== current && show(j), root));
    if (textPane) textPane.dispose();
    textPane = createTextPane(textEl, fns[i].text, (line) => {
      const id = nodeAtLine(st.ix, line);
      if (id) focus(nKey(id));
      else {
        select(null);
        textPane.highlight(line);
      }
    });
    searchBox.value = st.query;
    runSearch();
    select(st.selected);
    drawn = null;
    relayout(() => {
      if (st.transform) pz.set(st.transform.x, st.transform.y, st.transform.k);
      else firstView();
      select(st.selected);
    });
  };

  // ---- wiring ------------------------------------------------------------------

  const on = (el, ev, fn) => el.addEventListener(ev, fn);
  on(bFit, "click", fit);
  on(bExpand, "click", () => {
    stateOf(current).expanded = allCollapsibles(stateOf(current).ix);
    relayout(firstView);
  });
  on(bCollapse, "click", () => {
    stateOf(current).expanded = new Set();
    relayout(firstView);
  });
  on(searchBox, "input", runSearch);
  on(searchBox, "keydown", onSearchKey);
  on(svg, "click", onCanvasClick);
  on(svg, "dblclick", onCanvasDbl);
  on(bSvg, "click", () => {
    if (!drawn) return;
    const bg = root.ownerDocument.defaultView.getComputedStyle(canvas).backgroundColor;
    download(fileName(fns[current].name, ".svg"), svgText(svg, drawn.bbox, bg), "image/svg+xml");
  });
  on(bJson, "click", () => download(fileName("jaxmagic-" + (doc.kind || "doc"), ".json"), JSON.stringify(doc, null, 2), "application/json"));

  show(0);

  return () => {
    disposed = true;
    pz.dispose();
    if (textPane) textPane.dispose();
  };
}
