/**
 * Text and box geometry shared by the scene builder (which sizes boxes for layout,
 * possibly in a worker with no DOM to measure text in) and the renderer (which draws
 * them). All graph text is monospace, so width is estimated from character counts.
 */
import { operandText } from "./model.js";

export const F_PRIM = 12; // primitive names, headers
export const F_SMALL = 11; // avals, port labels
export const F_TINY = 10; // literal chips, edge labels
const CHAR_EM = 0.62; // monospace advance, with a little slack

export const PAD_X = 10; // inner horizontal padding of node boxes
export const NODE_H1 = 26; // one-line node
export const NODE_H2 = 42; // node with an avals line
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

/** Width of a literal chip. */
export const chipW = (t) => textW(t, F_TINY) + 8;

/** Everything drawn on an eqn box; computed once and used for both size and drawing. */
export function eqnFace(ix, node, { collapsed = false, expanded = false } = {}) {
  const prim = cut(node.prim || "?", 32);
  const lits = (node.ins || []).filter((o) => o && o.var == null && o.lit != null);
  const chips = lits.slice(0, 3).map((o) => cut(o.lit, 12));
  if (lits.length > 3) chips.push(`+${lits.length - 3}`);
  const avals = cut(
    (node.outs || []).map((v) => (ix.vars.get(v) || {}).aval || "?").join(", "),
    44,
  );
  const key = "N:" + node.id;
  const marker = collapsed ? `▸ ${ix.count.get(key) - 1}` : expanded ? "▾" : "";
  let w1 = textW(prim, F_PRIM);
  for (const c of chips) w1 += GAP + chipW(c);
  if (marker) w1 += GAP * 2 + textW(marker, F_SMALL) + 8;
  const w = Math.max(56, w1, avals ? textW(avals, F_SMALL) : 0) + PAD_X * 2;
  return { prim, chips, avals, marker, w, h: avals ? NODE_H2 : NODE_H1 };
}

/** Face of a collapsed scope box. */
export function scopeFace(ix, sc) {
  const title = "▸ " + cut(sc.name, 36);
  const n = ix.count.get(sc.key) || 0;
  const sub = `${n} eqn${n === 1 ? "" : "s"}`;
  return { title, sub, w: Math.max(textW(title, F_PRIM), textW(sub, F_SMALL)) + PAD_X * 2, h: NODE_H2 };
}

/** Face of a port: kind "in" | "const" | "out". */
export function portFace(ix, key) {
  let kind, text, varId = null;
  if (key.startsWith("P:")) {
    varId = key.slice(2);
    const v = ix.vars.get(varId);
    kind = v && v.def === "const" ? "const" : "in";
    text = (kind === "const" ? "const " : "") + cut(`${v.name}: ${v.aval}`, 40);
  } else {
    const [gid, i] = splitOut(key);
    const op = (ix.groups.get(gid).outvars || [])[i];
    kind = "out";
    varId = op && op.var != null ? op.var : null;
    text = cut(operandText(ix, op), 40);
  }
  return { kind, text, varId, w: textW(text, F_SMALL) + 18, h: PORT_H };
}

/** "O:<group id>:<i>" -> [group id, i]; group ids may contain ":". */
export function splitOut(key) {
  const j = key.lastIndexOf(":");
  return [key.slice(2, j), Number(key.slice(j + 1))];
}

/** Header text of an open container box. */
export function headText(ix, key) {
  if (key.startsWith("G:")) {
    const g = ix.groups.get(key.slice(2));
    const n = ix.count.get(key) || 0;
    return { title: cut(g.label || g.id, 40), sub: `${n} eqn${n === 1 ? "" : "s"}` };
  }
  const sc = ix.scopes.get(key);
  const n = ix.count.get(key) || 0;
  return { title: "▾ " + cut(sc.name, 36), sub: `${n} eqn${n === 1 ? "" : "s"}` };
}
