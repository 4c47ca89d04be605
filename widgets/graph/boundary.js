/**
 * Which values cross the border of an element of the tree (a scope, repeat, unit or
 * chunk box, an owner eqn with its sub-jaxprs, a plain eqn): collapsing a box must
 * never hide what flows in and out of it.
 *
 *   ins  = vars defined outside `key` and used inside it (in order of first use)
 *   outs = vars defined inside `key` and used outside it, which includes values a
 *          group returns (its output ports are users) (in definition order)
 *
 * For a group box ("G:") the border is its ports: ins are its const and input vars,
 * outs the vars it returns.
 *
 * Precomputed once per index (a DFS numbering of the tree and the var uses sorted by
 * it), so one query costs O(log E + uses inside `key`): the elements of a subtree are
 * one contiguous interval of the numbering, and a var has a use outside an interval
 * iff its first or last use lies outside it.
 */
import * as ids from "./ids.js";

const cache = new WeakMap(); // ix -> tables

/** DFS numbering: tin[key] .. tout[key] (exclusive) covers the key's subtree (port bundles hold their ports). */
function number(ix) {
  const tin = new Map(), tout = new Map(), depth = new Map();
  let t = 0;
  const visit = (k, d) => {
    tin.set(k, t++);
    depth.set(k, d);
    const p = ids.isGroup(k) ? ix.ports.get(k) : null;
    const b = (p && p.bundles) || {};
    const kid = (c) => visit(c, d + 1);
    if (p) (b.in || [...p.consts, ...p.ins]).forEach(kid);
    for (const c of (ids.isBundle(k) ? ix.virt.get(k).ports : ix.items.get(k)) || []) kid(c);
    if (p) (b.out || p.outs).forEach(kid);
    tout.set(k, t);
  };
  if (ix.root) visit(ix.root, 0);
  return { tin, tout, depth };
}

/** The DFS numbering of `ix`'s tree, `{tin, tout, depth}` (cached; scene.js lifts edges with it). */
export const numbering = (ix) => tables(ix);

function tables(ix) {
  let tb = cache.get(ix);
  if (tb) return tb;
  const { tin, tout, depth } = number(ix);
  const vars = []; // var index -> id
  const vi = new Map(); // var id -> index
  const def = []; // var index -> tin of its definition
  const minU = [], maxU = [];
  const uses = []; // [tin of user, var index]
  const fromT = new Int32Array(ix.edges.length), toT = new Int32Array(ix.edges.length); // edge -> tin of its ends (-1: none)
  for (let j = 0; j < ix.edges.length; j++) {
    const e = ix.edges[j];
    const a = tin.get(e.from), b = tin.get(e.to);
    fromT[j] = a ?? -1;
    toT[j] = b ?? -1;
    if (a == null || b == null) continue;
    let i = vi.get(e.var);
    if (i == null) {
      i = vars.length;
      vi.set(e.var, i);
      vars.push(e.var);
      def.push(a);
      minU.push(b);
      maxU.push(b);
    } else {
      if (b < minU[i]) minU[i] = b;
      if (b > maxU[i]) maxU[i] = b;
    }
    uses.push([b, i]);
  }
  // Stable sorts: uses keep edge order (operand order) at one element; defs at one
  // element follow the document's var order (binder order).
  uses.sort((x, y) => x[0] - y[0]);
  const vpos = new Map((ix.fn.vars || []).map((v, i) => [v.id, i]));
  const defs = def.map((d, i) => [d, i]).sort((x, y) => x[0] - y[0] || (vpos.get(vars[x[1]]) ?? 0) - (vpos.get(vars[y[1]]) ?? 0));
  tb = {
    tin, tout, depth, vars, def, minU, maxU, fromT, toT,
    useT: Int32Array.from(uses, (u) => u[0]), useV: Int32Array.from(uses, (u) => u[1]),
    defT: Int32Array.from(defs, (d) => d[0]), defV: Int32Array.from(defs, (d) => d[1]),
    memo: new Map(),
  };
  cache.set(ix, tb);
  return tb;
}

/** First index in sorted `a` with a[i] >= x. */
function lowerBound(a, x) {
  let lo = 0, hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Values crossing the border of `key`: `{ins: varId[], outs: varId[]}` (empty for
 * unknown keys). Results are cached per index; treat them as read-only.
 */
export function boundaryOf(ix, key) {
  if (key && ids.isGroup(key) && ix.groups.has(ids.body(key))) {
    const g = ix.groups.get(ids.body(key));
    const known = (v) => v != null && ix.vars.has(v);
    return {
      ins: [...(g.constvars || []), ...(g.invars || [])].filter(known),
      outs: [...new Set((g.outvars || []).map((o) => o && o.var).filter(known))],
    };
  }
  const tb = tables(ix);
  if (tb.memo.has(key)) return tb.memo.get(key);
  const lo = tb.tin.get(key), hi = tb.tout.get(key);
  const out = { ins: [], outs: [] };
  if (lo == null) return out;
  const seen = new Set();
  for (let i = lowerBound(tb.useT, lo); i < tb.useT.length && tb.useT[i] < hi; i++) {
    const v = tb.useV[i];
    const d = tb.def[v];
    if ((d < lo || d >= hi) && !seen.has(v)) {
      seen.add(v);
      out.ins.push(tb.vars[v]);
    }
  }
  for (let i = lowerBound(tb.defT, lo); i < tb.defT.length && tb.defT[i] < hi; i++) {
    const v = tb.defV[i];
    if (tb.minU[v] < lo || tb.maxU[v] >= hi) out.outs.push(tb.vars[v]);
  }
  tb.memo.set(key, out);
  return out;
}

/**
 * Indices into `ix.edges` of the edges with an end inside `key`'s subtree (each
 * once, ascending): what a toggle of `key` can re-route (scene.js). Two sorted
 * copies of the edge ends per index make it O(log E + answer).
 */
export function edgesTouching(ix, key) {
  const tb = tables(ix);
  const lo = tb.tin.get(key), hi = tb.tout.get(key);
  if (lo == null) return [];
  if (!tb.ends) {
    // A counting sort on the numbering: 100k edge ends in a few ms.
    const byEnd = (ts) => {
      const count = new Int32Array(ts.reduce((m, x) => Math.max(m, x), -1) + 2);
      let n = 0;
      for (const x of ts) if (x >= 0) count[x + 1]++, n++;
      for (let k = 1; k < count.length; k++) count[k] += count[k - 1];
      const t = new Int32Array(n), idx = new Int32Array(n);
      ts.forEach((x, i) => {
        if (x < 0) return;
        const at = count[x]++;
        t[at] = x;
        idx[at] = i;
      });
      return { t, i: idx };
    };
    tb.ends = [byEnd(tb.fromT), byEnd(tb.toT)];
  }
  const out = new Set();
  for (const end of tb.ends) {
    for (let j = lowerBound(end.t, lo); j < end.t.length && end.t[j] < hi; j++) out.add(end.i[j]);
  }
  return [...out].sort((a, b) => a - b);
}

/** "in 3 · out 1": the compact line drawn on collapsed boxes. */
export function boundaryLine(b) {
  return `in ${b.ins.length} · out ${b.outs.length}`;
}

/** Tooltip text: every crossing value as `name: aval`, ins then outs. */
export function boundaryTip(ix, b, max = 40) {
  const one = (v) => {
    const vv = ix.vars.get(v);
    return vv ? `  ${vv.name}: ${vv.aval}` : `  ${v}`;
  };
  const list = (vs) => [...vs.slice(0, max).map(one), ...(vs.length > max ? [`  … ${vs.length - max} more`] : [])];
  return [`in (${b.ins.length}):`, ...list(b.ins), `out (${b.outs.length}):`, ...list(b.outs)].join("\n");
}
