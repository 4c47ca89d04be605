/**
 * Text and box geometry shared by the scene builder (which sizes boxes for layout,
 * possibly in a worker with no DOM to measure text in) and the renderer (which draws
 * them). All graph text is monospace, so width is estimated from character counts.
 *
 * Sizes come in one metrics object per text scale (`metricsAt(z)`): `BASE` for the
 * ordinary view, `PRESENT` for presentation mode, whose text is PRESENT_SCALE times
 * larger. Boxes are measured at the scale they are drawn at, so presentation mode lays
 * the graph out again with bigger boxes rather than zooming a layout made for small
 * text: the gaps between boxes stay as they are, and more of a graph fits a projector
 * at a legible size. The named constants below are the base sizes.
 */
import { operandText } from "./model.js";
import { plural } from "../ui/words.js";
import { boundaryOf, boundaryLine, boundaryTip } from "./boundary.js";
import * as ids from "./ids.js";

export const F_PRIM = 12; // primitive names, headers
export const F_SMALL = 11; // avals, port labels
export const F_TINY = 11; // literal chips, edge labels: the smallest text, legible (framing.js LEGIBLE_PX) at zoom 1
const CHAR_EM = 0.62; // monospace advance, with a little slack

export const PAD_X = 10; // inner horizontal padding of node boxes
export const NODE_H1 = 26; // one-line node
export const NODE_H2 = 42; // node with an avals line
export const NODE_H3 = 58; // collapsed box: title, "47 eqns · in 3 · out 1", out avals
export const PORT_H = 22;
export const CHIP_H = 16;
export const GAP = 6;
export const HEAD_G = 26; // group box header
export const HEAD_S = 24; // scope box header
export const BOX_PAD = 12; // padding inside container boxes

/** Width in px of `s` drawn at font size `px`. */
export const textW = (s, px) => Math.ceil(String(s).length * px * CHAR_EM);

/** Cut long text with an ellipsis so one value cannot blow up the layout. */
export const cut = (s, n) => (String(s).length > n ? String(s).slice(0, n - 1) + "…" : String(s));

export const F_BADGE = 11; // decoration badges ("custom rule"): no smaller than any other text

/**
 * Text scale of presentation mode: the smallest graph text (edge labels, chips, badges:
 * 11 px) becomes 14 px, what a 1280x720 projector shows legibly, at zoom 1.
 */
export const PRESENT_SCALE = 14 / 11;

/**
 * Every size the scene builder and both renderers use, at text scale `z`: fonts,
 * paddings, box heights, and the baselines text is drawn at (relative to its box).
 */
export function metricsAt(z = 1) {
  const q = (v) => Math.round(v * z * 100) / 100;
  return Object.freeze({
    z,
    F_PRIM: q(F_PRIM), F_SMALL: q(F_SMALL), F_TINY: q(F_TINY), F_BADGE: q(F_BADGE),
    PAD_X: q(PAD_X), NODE_H1: q(NODE_H1), NODE_H2: q(NODE_H2), NODE_H3: q(NODE_H3), PORT_H: q(PORT_H),
    CHIP_H: q(CHIP_H), GAP: q(GAP), HEAD_G: q(HEAD_G), HEAD_S: q(HEAD_S), BOX_PAD,
    // baselines and small boxes inside a node
    Y1: q(17), Y2: q(34), Y3: q(50), CHIP_Y: q(5), CHIP_TY: q(12), MARK_Y: q(4), MARK_H: q(18), MARK_TY: q(13),
    HEAD_TY: q(17), SCOPE_TY: q(16), HEAD_HIT: q(22), PORT_TX: q(9), PORT_TY: q(4), LABEL_DY: q(3.5), LABEL_H: q(14),
  });
}

/** Sizes of the ordinary view, and of presentation mode. */
export const BASE = metricsAt(1);
export const PRESENT = metricsAt(PRESENT_SCALE);

/** Width of a literal chip. */
export const chipW = (t, m = BASE) => textW(t, m.F_TINY) + 8 * m.z;

/** A decoration badge on a box `w` wide: a pill across its top edge at the right, relative to the box. */
export const badgeBox = (t, w, m = BASE) => {
  const bw = textW(t, m.F_BADGE) + 10 * m.z, bh = m.F_BADGE + 4 * m.z;
  return { x: Math.max(4, w - bw - 6), y: -Math.round(bh / 2), w: bw, h: bh };
};

/** Everything drawn on an eqn box; computed once and used for both size and drawing. */
export function eqnFace(ix, node, { collapsed = false, expanded = false, m = BASE } = {}) {
  const prim = cut(node.prim || "?", 32);
  const lits = (node.ins || []).filter((o) => o && o.var == null && o.lit != null);
  const chips = lits.slice(0, 3).map((o) => cut(o.lit, 12));
  if (lits.length > 3) chips.push(`+${lits.length - 3}`);
  const avals = cut(
    (node.outs || []).map((v) => (ix.vars.get(v) || {}).aval || "?").join(", "),
    44,
  );
  const key = ids.node(node.id);
  const marker = collapsed ? `▸ ${ix.count.get(key) - 1}` : expanded ? "▾" : "";
  let w1 = textW(prim, m.F_PRIM);
  for (const c of chips) w1 += m.GAP + chipW(c, m);
  if (marker) w1 += m.GAP * 2 + textW(marker, m.F_SMALL) + 8 * m.z;
  // A collapsed owner hides a sub-jaxpr: say what crosses its border.
  const b = collapsed ? boundaryOf(ix, key) : null;
  const io = b ? boundaryLine(b) : "";
  const w = Math.max(56 * m.z, w1, avals ? textW(avals, m.F_SMALL) : 0, textW(io, m.F_SMALL)) + m.PAD_X * 2;
  const h = io ? m.NODE_H3 : avals ? m.NODE_H2 : m.NODE_H1;
  return { prim, chips, avals, marker, io, tip: b ? boundaryTip(ix, b) : "", w, h };
}

/** "47 eqns", "1,024 eqns" (widgets/ui/words.js: grouped without a locale, ~0.3 µs a call) */
const eqns = (n) => plural(n, "eqn");

/**
 * Face of a collapsed container box (scope, repeat, unit, chunk): title, a line
 * "47 eqns · in 3 · out 1", and the avals of the values leaving it (cut); the
 * tooltip lists every crossing value.
 */
function collapsedFace(ix, key, name, m) {
  const title = "▸ " + cut(name, 56);
  const b = boundaryOf(ix, key);
  const sub = `${eqns(ix.count.get(key) || 0)} · ${boundaryLine(b)}`;
  const avals = b.outs.length ? cut(b.outs.map((v) => (ix.vars.get(v) || {}).aval || "?").join(", "), 44) : "";
  const w = Math.max(textW(title, m.F_PRIM), textW(sub, m.F_SMALL), textW(avals, m.F_SMALL)) + m.PAD_X * 2;
  return { title, sub, avals, tip: `${name}\n${boundaryTip(ix, b)}`, w, h: m.NODE_H3 };
}

/** Name of a container for its header or collapsed box. */
export function containerName(ix, key) {
  if (ids.isScope(key)) return ix.scopes.get(key).name;
  return ix.labels.get(key) || key;
}

/** Face of a collapsed repeat ("R:"), unit ("U:") or chunk ("K:") box. */
export function boxFace(ix, key, m = BASE) {
  return collapsedFace(ix, key, containerName(ix, key), m);
}

/** Face of a collapsed scope box. */
export function scopeFace(ix, sc, m = BASE) {
  const f = collapsedFace(ix, sc.key, sc.name, m);
  f.tip = `scope ${sc.path.join("/")} — click to expand\n${f.tip.slice(f.tip.indexOf("\n") + 1)}`;
  return f;
}

/** Face of a port bundle ("Q:"): a port pill "▸ inputs 1–94 of 280"; "▾ …" when open. */
export function bundleFace(ix, key, open, m = BASE) {
  const v = ix.virt.get(key);
  const title = `${open ? "▾" : "▸"} ${ix.labels.get(key)}`;
  const tip = v.ports.map((pk) => portFace(ix, pk).text).join("\n");
  return { kind: v.side, bundle: true, open: !!open, title, tip, w: textW(title, m.F_PRIM) + 18 * m.z, h: m.PORT_H };
}

/** Face of a port: kind "in" | "const" | "out". */
export function portFace(ix, key, m = BASE) {
  let kind, text, varId = null;
  if (ids.isPort(key)) {
    varId = ids.body(key);
    const v = ix.vars.get(varId);
    kind = v && v.def === "const" ? "const" : "in";
    // a function input names its pytree leaf (`params['w']`), then the jaxpr's own name and aval
    const leaf = v.path ? `${cut(String(v.path), 30)} · ` : "";
    text = (kind === "const" ? "const " : "") + leaf + cut(`${v.name}: ${v.aval}`, 40);
  } else {
    const [gid, i] = ids.splitOutput(key);
    const op = (ix.groups.get(gid).outvars || [])[i];
    kind = "out";
    varId = op && op.var != null ? op.var : null;
    text = cut(operandText(ix, op), 40);
  }
  return { kind, text, varId, w: textW(text, m.F_SMALL) + 18 * m.z, h: m.PORT_H };
}

/** Header text of an open container box. */
export function headText(ix, key) {
  if (ids.isGroup(key)) {
    const g = ix.groups.get(ids.body(key));
    const n = ix.count.get(key) || 0;
    return { title: cut(g.label || g.id, 40), sub: eqns(n) };
  }
  return { title: "▾ " + cut(containerName(ix, key), 56), sub: eqns(ix.count.get(key) || 0) };
}
