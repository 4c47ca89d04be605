/**
 * Turns (function index, expansion state) into the layout tree that js/src/layout.js
 * consumes: one container per open group / scope / owner eqn, holding fixed-size
 * items and the edges between them. The tree is plain JSON so it can be posted to
 * the layout worker; drawing-only details (labels, faces) stay in `faces`/`labels`.
 *
 * Edges whose endpoints sit in different containers are "lifted": in the lowest
 * common container they run between the two child items containing the endpoints;
 * inside each nested container they run to a virtual exit ("<out>") or from a
 * virtual entry ("<in>") on the box edge. A drawn edge is the chain of those
 * segments, so an edge stays one continuous line across box boundaries.
 */
import { isCollapsible, visibleRep, ancestors } from "./model.js";
import {
  eqnFace, scopeFace, portFace, headText, textW,
  F_PRIM, F_SMALL, F_TINY, HEAD_G, HEAD_S, BOX_PAD,
} from "./metrics.js";

/** Prefixes of virtual entry/exit items (followed by a var id). */
export const VIN = "<in>";
export const VOUT = "<out>";

/**
 * @param ix      index from indexFunction
 * @param expanded Set of expanded keys
 * @param prefix  cache namespace (document + function), keeps worker caches apart
 */
export function buildScene(ix, expanded, prefix = "") {
  const faces = new Map(); // element key -> face used for drawing
  const containers = new Map(); // element key -> container
  const open = (k) => isCollapsible(ix, k) && expanded.has(k);

  const make = (key) => {
    const c = { key: "", id: key, kind: key[0], items: [], edges: [], pad: BOX_PAD };
    containers.set(key, c);
    if (key.startsWith("G:")) {
      const ht = headText(ix, key);
      faces.set(key, ht);
      c.head = HEAD_G;
      c.minW = textW(ht.title, F_PRIM) + textW(ht.sub, F_SMALL) + 30;
      const p = ix.ports.get(key);
      // Constvars first, as JAX prints them (`{ lambda c; a b. let …`).
      for (const pk of [...p.consts, ...p.ins]) c.items.push(portItem(pk, "in"));
      for (const k of ix.items.get(key) || []) c.items.push(item(k));
      for (const pk of p.outs) c.items.push(portItem(pk, "out"));
    } else if (key.startsWith("S:")) {
      const ht = headText(ix, key);
      faces.set(key, ht);
      c.head = HEAD_S;
      c.minW = textW(ht.title, F_PRIM) + textW(ht.sub, F_SMALL) + 30;
      for (const k of ix.items.get(key) || []) c.items.push(item(k));
    } else {
      // Open owner eqn: its face is the box header; sub-groups stack below it.
      const face = eqnFace(ix, ix.nodes.get(key.slice(2)), { expanded: true });
      faces.set(key, face);
      c.head = face.h + 4;
      c.pad = 8;
      c.minW = face.w;
      c.stack = true;
      for (const k of ix.items.get(key) || []) c.items.push(item(k));
    }
    return c;
  };
  const portItem = (pk, side) => {
    const f = portFace(ix, pk);
    faces.set(pk, f);
    return { id: pk, role: side, w: f.w, h: f.h };
  };
  const item = (k) => {
    if (k.startsWith("G:") || open(k)) {
      const child = make(k);
      return { id: k, role: "box", w: 0, h: 0, child };
    }
    const f = k.startsWith("S:")
      ? scopeFace(ix, ix.scopes.get(k))
      : eqnFace(ix, ix.nodes.get(k.slice(2)), { collapsed: isCollapsible(ix, k) });
    faces.set(k, f);
    return { id: k, role: "node", w: f.w, h: f.h };
  };

  const root = ix.root ? make(ix.root) : null;

  // Edges: lift each derived edge to visible endpoints and split it into segments.
  const segs = new Map(); // container key -> Map(segId -> {id, v, w, vars:Set})
  const chains = new Map(); // chain id -> {segs:[[containerKey, segId]], vars:Set, from, to}
  const addSeg = (ck, v, w, varId) => {
    if (!segs.has(ck)) segs.set(ck, new Map());
    const m = segs.get(ck);
    const id = v + ">" + w;
    if (!m.has(id)) m.set(id, { id, v, w, vars: new Set() });
    m.get(id).vars.add(varId);
    return [ck, id, v, w];
  };
  const pathTo = (k) => [k, ...ancestors(ix, k)].reverse();
  for (const e of ix.edges) {
    const s = visibleRep(ix, e.from, expanded);
    const t = visibleRep(ix, e.to, expanded);
    if (s === t) continue; // both ends hidden in the same collapsed box
    const ps = pathTo(s), pt = pathTo(t);
    let i = 0;
    while (i + 1 < ps.length && i + 1 < pt.length && ps[i + 1] === pt[i + 1]) i++;
    if (ps[i] !== pt[i]) continue; // different roots: malformed, skip
    // One entry/exit per var and box, so values cross a box edge side by side.
    const vin = VIN + e.var, vout = VOUT + e.var;
    const chain = [];
    for (let j = ps.length - 1; j >= i + 2; j--) chain.push(addSeg(ps[j - 1], ps[j], vout, e.var));
    chain.push(addSeg(ps[i], ps[i + 1], pt[i + 1], e.var));
    for (let j = i + 2; j < pt.length; j++) chain.push(addSeg(pt[j - 1], vin, pt[j], e.var));
    const cid = chain.map((x) => x.join("|")).join(" ");
    if (!chains.has(cid)) chains.set(cid, { id: cid, segs: chain, vars: new Set(), from: s, to: t });
    chains.get(cid).vars.add(e.var);
  }

  // Attach segments to containers, with labels and virtual entry/exit items.
  const labels = new Map(); // "containerKey|segId" -> label text
  const isVirtual = (id) => id.startsWith(VIN) || id.startsWith(VOUT);
  for (const [ck, m] of segs) {
    const c = containers.get(ck);
    if (!c) continue;
    const ins = new Set(), outs = new Set();
    for (const sg of m.values()) {
      if (sg.v.startsWith(VIN)) ins.add(sg.v);
      if (sg.w.startsWith(VOUT)) outs.add(sg.w);
      const edge = { id: sg.id, v: sg.v, w: sg.w };
      // Ports already show their aval; label only edges between eqns/boxes.
      const plain = !isVirtual(sg.v) && !isVirtual(sg.w) && !sg.v.startsWith("P:") && !sg.w.startsWith("O:");
      const avals = new Set([...sg.vars].map((v) => (ix.vars.get(v) || {}).aval));
      const text = avals.size === 1 ? [...avals][0] + (sg.vars.size > 1 ? ` ×${sg.vars.size}` : "") : `${sg.vars.size} values`;
      if (plain && text) {
        labels.set(ck + "|" + sg.id, text);
        edge.lw = textW(text, F_TINY) + 6;
        edge.lh = 14;
      }
      c.edges.push(edge);
    }
    c.items.unshift(...[...ins].map((id) => ({ id, role: "in", w: 2, h: 8, virtual: true })));
    c.items.push(...[...outs].map((id) => ({ id, role: "out", w: 2, h: 8, virtual: true })));
  }

  // Cache keys: a container's layout depends only on what is open below it.
  const keyOf = (c) => {
    const inner = c.items.filter((it) => it.child).map((it) => keyOf(it.child));
    c.key = prefix + c.id + (inner.length ? "{" + inner.join(",") + "}" : "");
    return c.key;
  };
  if (root) keyOf(root);
  return { root, faces, chains: [...chains.values()], labels, containers };
}
