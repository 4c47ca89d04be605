/**
 * Painting on the graph's drawing surface (stage.js): selection and the edges at it,
 * search matches, a host's marks, and decorations (fills, strokes, dashes, badges), in
 * whichever renderer drew. SVG paint is classes and inline styles on the drawn elements,
 * remembered in `surface.painted` so the next paint can take them off again.
 */
import { s } from "../ui/dom.js";
import { visibleRep } from "./model.js";
import { badgeBox, BASE } from "./metrics.js";

/** Nothing painted yet (a new drawing). */
export const nothingPainted = () => ({ sel: [], match: [], hl: [], fills: [], marks: [] });

/**
 * Marks to paint: `marks` is a Map cls -> {keys, vars}; an element key stands for
 * its visible representative (a collapsed box hiding a marked node is marked), and
 * a drawn edge carrying one of `vars` is marked. Returns {leaves: Map rep -> [cls],
 * edges: Map edge index -> [cls]}.
 */
function markedOf(geo, marks, pix, expanded) {
  const leaves = new Map(), edges = new Map();
  const add = (m, k, cls) => (m.get(k) || m.set(k, []).get(k)).push(cls);
  for (const [cls, m] of marks || []) {
    for (const k of m.keys || []) add(leaves, visibleRep(pix, k, expanded), cls);
    const vars = m.vars && m.vars.size ? m.vars : null;
    if (vars) geo.edges.forEach((e, i) => e.vars.some((v) => vars.has(v)) && add(edges, i, cls));
  }
  return { leaves, edges };
}

/** Take the last SVG paint (selection, edge highlights, matches, marks) off its elements. */
function unpaint(painted) {
  for (const el of painted.sel) el.classList.remove("jm-selected");
  for (const el of painted.hl) el.classList.remove("jm-edge-hl");
  for (const el of painted.match) el.classList.remove("jm-match", "jm-has-match");
  for (const [el, cls] of painted.marks) el.classList.remove(...cls);
  painted.sel = [];
  painted.hl = [];
  painted.match = [];
  painted.marks = [];
}

/** SVG: classes for marks, the selection and the edges at it, and matches. */
function paintSvg(surface, rep, match, marked) {
  const { painted, elements, edgeEls } = surface;
  unpaint(painted);
  const markEl = (el, cls, base) => {
    if (!el) return;
    const all = [base, ...cls];
    el.classList.add(...all);
    painted.marks.push([el, all]);
  };
  for (const [k, cls] of marked.leaves) markEl(elements.get(k), cls, "jm-mark");
  for (const [i, cls] of marked.edges) markEl(edgeEls[i], cls, "jm-edge-mark");
  const el = rep && elements.get(rep);
  if (el) {
    el.classList.add("jm-selected");
    painted.sel.push(el);
  }
  if (rep) {
    for (const e of edgeEls) {
      if (e.getAttribute("data-from") === rep || e.getAttribute("data-to") === rep) {
        e.classList.add("jm-edge-hl");
        painted.hl.push(e);
      }
    }
  }
  for (const [k, how] of match) {
    const m = elements.get(k);
    if (!m) continue;
    m.classList.add(how === "match" ? "jm-match" : "jm-has-match");
    painted.match.push(m);
  }
}

/**
 * Paint selection (and the edges at it), search matches (a collapsed box hiding a
 * match is marked "has match"), marks and decorations, for the current expansion.
 */
export function paint(surface, state) {
  surface.lastPaint = state;
  const { geo } = surface;
  if (!geo) return;
  const { selected, matches, expanded } = state;
  const pix = state.ix || surface.ix;
  const rep = selected ? visibleRep(pix, selected, expanded) : null;
  const match = new Map();
  for (const k of matches || []) {
    const r = visibleRep(pix, k, expanded);
    if (match.get(r) !== "match") match.set(r, r === k ? "match" : "has");
  }
  const marked = markedOf(geo, state.marks, pix, expanded);
  if (surface.mode === "canvas") {
    const hl = new Set();
    if (rep) geo.edges.forEach((e, i) => (e.from === rep || e.to === rep) && hl.add(i));
    surface.renderer.setPaint({ sel: rep, hl, match, marks: marked.leaves, markEdges: marked.edges });
    return;
  }
  paintSvg(surface, rep, match, marked);
}

/** A decoration's badge: a pill with a short text on the box's top-right corner. */
function badge(surface, d, l) {
  const { root } = surface;
  const m = surface.geo.m || BASE;
  const b = badgeBox(d.badge, l.w, m);
  const pill = s("rect", { width: b.w, height: b.h, rx: b.h / 2 }, null, root);
  if (d.stroke) pill.style.stroke = d.stroke;
  return s("g", { class: "jm-badge", transform: `translate(${b.x},${b.y})` }, [
    pill, s("text", { x: 5 * m.z, y: b.h - 3.5 * m.z }, d.badge, root),
  ], root);
}

/**
 * `fn(key) -> {fill?, stroke?, dash?, badge?} | null` decorates node boxes (cost
 * overlay, grad roles): fill and stroke colours, a dash pattern ("4,2"), and a short
 * badge text on the box's top-right corner; null = none.
 */
export function setDecorations(surface, fn) {
  const decorate = (surface.decorate = fn || null);
  const { painted, geo, elements } = surface;
  if (surface.mode === "canvas") return surface.renderer && surface.renderer.setDecorations(decorate);
  for (const x of painted.fills) {
    if (x.classList.contains("jm-badge")) x.remove();
    else for (const p of ["fill", "stroke", "stroke-dasharray"]) x.style.removeProperty(p);
  }
  painted.fills = [];
  if (!decorate || !geo) return;
  for (const l of geo.leaves) {
    const d = decorate(l.key);
    const el = d && elements.get(l.key);
    const box = el && el.querySelector(":scope > .jm-box");
    if (!box) continue;
    if (d.fill) box.style.fill = d.fill;
    if (d.stroke) box.style.stroke = d.stroke;
    if (d.dash) box.style.strokeDasharray = d.dash.replace(",", " ");
    painted.fills.push(box);
    if (d.badge) {
      const g = badge(surface, d, l);
      el.appendChild(g);
      painted.fills.push(g);
    }
  }
}
