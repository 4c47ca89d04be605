/**
 * The linked text panes of the side panel: "jaxpr | StableHLO | HLO" tabs
 * (.jm-pane-tab[data-pane], .jm-active), each a virtualised text pane
 * (.jm-text[data-pane]). Selecting an element marks the lines it became at each
 * level — its jaxpr eqn (node.line and the eqn's continuation lines), the StableHLO
 * ops lowered from it (node.shlo), the HLO instructions compiled from it (node.hlo)
 * — and a click on a line asks for the node that owns it. Reverse maps (line ->
 * node) are built once per function and level, on the first click.
 *
 * Texts are indexed and panes built only when a pane is first shown, so a function
 * whose StableHLO is never opened costs nothing for it.
 */
import { h, clear } from "../ui/dom.js";
import { nodeAtLine } from "./model.js";
import * as ids from "./ids.js";
import { createTextPane, eqnSpan, lineIndex } from "./textpane.js";
import { deferredStatus, levelsStatus } from "./deferred.js";

export const PANES = [
  { name: "jaxpr", label: "jaxpr", field: "line" },
  { name: "stablehlo", label: "StableHLO", field: "shlo" },
  { name: "hlo", label: "HLO", field: "hlo" },
];
const MISSING = "not recorded for this function";
/** A container selection marks at most this many eqns' lines (a whole 50k program is noise). */
const MAX_MARKED_EQNS = 5000;

/** The text of pane `name` for `fn`, or {why} when there is none. */
export function paneText(fn, name) {
  if (name === "jaxpr") {
    const status = deferredStatus(fn, "jaxpr"); // the document carries the text's first eqns; the rest is asked for
    if (typeof fn.text === "string" && fn.text) return { text: fn.text, note: status || "" };
    return { why: status || "No jaxpr text in this document." };
  }
  const status = levelsStatus(fn);
  if (status) return { why: status };
  const lv = fn.levels && fn.levels[name];
  if (!lv || typeof lv !== "object") return { why: `${name === "hlo" ? "HLO" : "StableHLO"} text ${MISSING}.` };
  if (typeof lv.text !== "string") return { why: String(lv.note || `${name === "hlo" ? "HLO" : "StableHLO"} text ${MISSING}.`) };
  return { text: lv.text, note: lv.note ? String(lv.note) : "" };
}

/** Node records of `key`: the node itself, or every eqn inside a container (in order). */
export function nodesUnder(ix, key, cap = MAX_MARKED_EQNS) {
  if (!key) return [];
  if (ids.isNode(key) && !ix.items.has(key)) return [ix.nodes.get(ids.body(key))].filter(Boolean);
  const out = [];
  const walk = (k) => {
    if (out.length >= cap) return;
    if (ids.isNode(k)) {
      const n = ix.nodes.get(ids.body(k));
      if (n) out.push(n);
    }
    for (const c of ix.items.get(k) || []) walk(c);
  };
  walk(key);
  return out;
}

/** line -> node id of the first node (document order) listing that line in `field`. */
export function ownerMap(ix, field) {
  const m = new Map();
  for (const n of ix.fn.nodes || []) {
    if (!Array.isArray(n[field]) || !ix.parent.has(ids.node(n.id))) continue;
    for (const i of n[field]) if (Number.isInteger(i) && !m.has(i)) m.set(i, n.id);
  }
  return m;
}

/** Lines each pane marks for `nodes` (jaxpr lines need the jaxpr text's lines). */
export function marksFor(nodes, jaxprLines) {
  const out = { jaxpr: [], stablehlo: [], hlo: [] };
  for (const n of nodes) {
    if (jaxprLines && Number.isInteger(n.line) && n.line < jaxprLines.length) out.jaxpr.push(...eqnSpan(jaxprLines, n.line));
    if (Array.isArray(n.shlo)) for (const i of n.shlo) out.stablehlo.push(i);
    if (Array.isArray(n.hlo)) for (const i of n.hlo) out.hlo.push(i);
  }
  return out;
}

/** Tabs, bodies and note of the pane block; a tab click shows its pane (`show`) and tells `onTab`. */
function paneElements(ref, show, onTab) {
  const tabs = new Map(), bodies = new Map();
  for (const p of PANES) {
    const t = h("button", { type: "button", class: "jm-pane-tab", role: "tab", "data-pane": p.name }, p.label, ref);
    t.addEventListener("click", () => {
      show(p.name);
      if (onTab) onTab(p.name);
    });
    tabs.set(p.name, t);
    bodies.set(p.name, h("div", { class: "jm-text", "data-pane": p.name, role: "tabpanel", "aria-label": `${p.label} text` }, null, ref));
  }
  // A level's note (e.g. why its text is partial) sits above the scroller, not in it,
  // so line positions stay i * LINE_H.
  const note = h("div", { class: "jm-pane-note jm-pane-note-top", hidden: true }, null, ref);
  const el = h("div", { class: "jm-panes" }, [
    h("div", { class: "jm-pane-tabs", role: "tablist" }, [...tabs.values()], ref),
    note,
    ...bodies.values(),
  ], ref);
  return { tabs, bodies, note, el };
}

/** Line index of pane `name`'s text for the current function (cached per function). */
function linesOf(ps, name) {
  const { fn, linesCache } = ps;
  if (!linesCache.has(fn)) linesCache.set(fn, {});
  const c = linesCache.get(fn);
  if (!(name in c)) {
    const t = paneText(fn, name);
    c[name] = t.text != null ? lineIndex(t.text) : null;
  }
  return c[name];
}

/** Create pane `name` for the current function if it does not exist yet. */
function build(ps, name) {
  if (ps.panes.has(name)) return ps.panes.get(name);
  const body = ps.bodies.get(name);
  clear(body);
  const t = paneText(ps.fn, name);
  let pane = null;
  if (t.text == null) body.appendChild(h("div", { class: "jm-pane-note" }, t.why, ps.ref));
  else {
    pane = createTextPane(body, linesOf(ps, name), (i) => ps.onLine(name, i));
    pane.mark(ps.marks[name], true);
  }
  ps.panes.set(name, pane);
  return pane;
}

/** Each tab says how many lines its pane marks. */
function counts(ps) {
  for (const p of PANES) {
    const k = p.name === "jaxpr" ? 0 : new Set(ps.marks[p.name]).size;
    ps.tabs.get(p.name).textContent = k ? `${p.label} · ${k}` : p.label;
  }
}

/** Show pane `name` (its tab active, its note, its text built and scrolled to the marks). */
function show(ps, api, name) {
  const { bodies, tabs, note } = ps;
  if (!bodies.has(name)) return;
  api.active = name;
  for (const p of PANES) {
    const on = p.name === name;
    tabs.get(p.name).classList.toggle("jm-active", on);
    tabs.get(p.name).setAttribute("aria-selected", on ? "true" : "false");
    bodies.get(p.name).hidden = !on;
  }
  if (!ps.fn) return;
  const t = paneText(ps.fn, name);
  note.textContent = t.text != null && t.note ? t.note : "";
  note.hidden = !note.textContent;
  const pane = build(ps, name);
  if (pane) pane.reveal();
}

/** Id of the node owning line i of pane `name` (jaxpr: the eqn starting at or above it). */
function ownerOf(ps, name, i) {
  const { ix, ownersCache } = ps;
  if (!ix) return null;
  if (name === "jaxpr") return nodeAtLine(ix, i);
  const field = PANES.find((p) => p.name === name).field;
  if (!ownersCache.has(ix)) ownersCache.set(ix, {});
  const c = ownersCache.get(ix);
  if (!c[field]) c[field] = ownerMap(ix, field);
  return c[field].get(i) ?? null;
}

/**
 * Build the pane block. `onLine(name, i)` reports a click on line i of pane `name`;
 * `onTab(name)` a click on a pane's tab (the view loads deferred texts then, deferred.js).
 * Returns {el, setFunction(fn, ix), refresh(), highlight(key), markLine(name, i),
 * ownerOf(name, i), show(name), active, dispose()}.
 */
export function createPanes(ref, onLine, onTab = null) {
  const dom = paneElements(ref, (name) => api.show(name), onTab);
  /** The panes' state: the current function, its panes (name -> text pane, or null: no text) and marks. */
  const ps = {
    ...dom, ref, onLine, fn: null, ix: null, panes: new Map(), marks: { jaxpr: [], stablehlo: [], hlo: [] },
    linesCache: new WeakMap(), // fn -> {name: lineIndex}
    ownersCache: new WeakMap(), // ix -> {field: Map}
  };
  const api = {
    el: dom.el,
    active: "jaxpr",
    setFunction(f, index) {
      for (const p of ps.panes.values()) if (p) p.dispose();
      Object.assign(ps, { panes: new Map(), fn: f, ix: index, marks: { jaxpr: [], stablehlo: [], hlo: [] } });
      for (const b of ps.bodies.values()) clear(b);
      counts(ps);
      api.show(api.active);
    },
    /** The function's texts or links changed (deferred levels arrived or failed): build its panes again. */
    refresh() {
      if (!ps.fn) return;
      ps.linesCache.delete(ps.fn);
      if (ps.ix) ps.ownersCache.delete(ps.ix);
      api.setFunction(ps.fn, ps.ix);
    },
    show: (name) => show(ps, api, name),
    /** Mark the lines of element `key` (node, container, or null) in every pane. */
    highlight(key) {
      if (!ps.fn) return;
      const nodes = key ? nodesUnder(ps.ix, key) : [];
      ps.marks = marksFor(nodes, nodes.some((n) => Number.isInteger(n.line)) ? linesOf(ps, "jaxpr") : null);
      for (const [name, pane] of ps.panes) if (pane) pane.mark(ps.marks[name], true);
      counts(ps);
    },
    /** Mark one clicked line that no node owns. */
    markLine(name, i) {
      ps.marks[name] = [i];
      const pane = ps.panes.get(name);
      if (pane) pane.mark([i], false);
    },
    ownerOf: (name, i) => ownerOf(ps, name, i),
    dispose() {
      for (const p of ps.panes.values()) if (p) p.dispose();
    },
  };
  return api;
}
