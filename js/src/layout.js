/**
 * Hierarchical layout of a container tree, one container at a time, bottom-up.
 *
 * A container is `{key, items:[{id, role, w, h, child?}], edges:[{id, v, w, lw?, lh?}],
 * head, pad, minW, stack?}`. Roles: "in" items form the left column (input/const
 * ports, virtual entries), "out" items the right column, "node"/"box" go in between;
 * a "box" item's size is the size of its `child` container's layout.
 *
 * Each container is laid out on its own (dagre, rankdir LR) and the result is cached
 * under `key`, which encodes what is open below it: toggling one group re-lays out
 * only that group and its ancestors. Containers over `maxItems`, containers reached
 * after the time budget is spent, and dagre failures use `layered()`, a simple
 * longest-path / barycentre layout that is linear-ish and never hangs.
 *
 * Results are `{w, h, method, pos: {id: [x, y, w, h]}, edges: {id: {pts: [[x, y]…],
 * lx?, ly?}}}` in the container's own coordinates (top-left = 0, 0).
 *
 * This module has no DOM dependency: it runs in the layout worker and, when no worker
 * can be started, on the main thread.
 */
import { layout as dagreLayout, graphlib } from "@dagrejs/dagre";

export const DEFAULTS = { maxItems: 300, budgetMs: 1500, nodesep: 16, ranksep: 44, edgesep: 10, gap: 10, cacheSize: 5000 };

const now = () => (globalThis.performance ? performance.now() : Date.now());
const SRC = "\u0000src", SINK = "\u0000sink";

/** An LRU map for layout results (Map keeps insertion order). */
export function createCache() {
  return new Map();
}

/**
 * Lay out a whole tree. `cache` persists between calls (per worker / per page).
 * @returns {{results: Object<string, object>, stats: object}}
 */
export function layoutTree(root, cache, opts) {
  const o = { ...DEFAULTS, ...opts };
  const t0 = now();
  const results = {};
  const stats = { dagre: 0, layered: 0, stack: 0, cached: 0, ms: 0 };
  const visit = (c) => {
    for (const it of c.items) {
      if (!it.child) continue;
      const r = visit(it.child);
      it.w = r.w;
      it.h = r.h;
    }
    let r = cache.get(c.key);
    if (r) {
      stats.cached++;
      cache.delete(c.key);
    } else {
      r = layoutContainer(c, o, now() - t0 > o.budgetMs);
      stats[r.method]++;
    }
    cache.set(c.key, r);
    if (cache.size > o.cacheSize) cache.delete(cache.keys().next().value);
    results[c.key] = r;
    return r;
  };
  if (root) visit(root);
  stats.ms = Math.round(now() - t0);
  return { results, stats };
}

/** Lay out one container whose item sizes are known. */
export function layoutContainer(c, opts, overBudget = false) {
  const o = { ...DEFAULTS, ...opts };
  if (c.stack) return stacked(c, o);
  let inner = null;
  if (!overBudget && c.items.length <= o.maxItems) {
    try {
      inner = viaDagre(c, o);
    } catch (err) {
      inner = null; // fall through to the layered fallback
    }
  }
  if (!inner) inner = layered(c, o);
  return wrap(c, inner, o);
}

/** Split items into the left column, middle, and right column. */
function columns(c) {
  const L = [], M = [], R = [];
  for (const it of c.items) (it.role === "in" ? L : it.role === "out" ? R : M).push(it);
  return { L, M, R };
}

/** Edges whose ends are both items of the container, no self-loops. */
function validEdges(c) {
  const ids = new Set(c.items.map((it) => it.id));
  return c.edges.filter((e) => ids.has(e.v) && ids.has(e.w) && e.v !== e.w);
}

/** Run dagre; returns item centres and edge polylines in dagre's coordinates. */
function viaDagre(c, o) {
  const { L, M, R } = columns(c);
  const edges = validEdges(c);
  const g = new graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: "LR", nodesep: o.nodesep, ranksep: o.ranksep, edgesep: o.edgesep, marginx: 0, marginy: 0 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const it of c.items) g.setNode(it.id, { width: it.w, height: it.h });
  // Pin the port columns: a virtual source/sink pulls ports to the outer ranks and
  // keeps middle nodes without predecessors/successors from sliding past them.
  const hasIn = new Set(edges.map((e) => e.w)), hasOut = new Set(edges.map((e) => e.v));
  if (L.length) {
    g.setNode(SRC, { width: 0, height: 0 });
    for (const it of L) g.setEdge(SRC, it.id, { minlen: 1, weight: 10 }, "pin");
    for (const it of M) if (!hasIn.has(it.id)) g.setEdge(SRC, it.id, { minlen: 2, weight: 0 }, "pin");
  }
  if (R.length) {
    g.setNode(SINK, { width: 0, height: 0 });
    for (const it of R) g.setEdge(it.id, SINK, { minlen: 1, weight: 10 }, "pin");
    for (const it of M) if (!hasOut.has(it.id)) g.setEdge(it.id, SINK, { minlen: 2, weight: 0 }, "pin");
  }
  for (const e of edges) {
    g.setEdge(e.v, e.w, { minlen: 1, weight: 1, width: e.lw || 0, height: e.lh || 0, labelpos: "c" }, e.id);
  }
  // Ask dagre to keep ports in signature order; alignColumns enforces it anyway.
  const constraints = [];
  for (const col of [L, R]) {
    const ports = col.filter((it) => !it.virtual);
    for (let i = 1; i < ports.length; i++) constraints.push({ left: ports[i - 1].id, right: ports[i].id });
  }
  dagreLayout(g, { constraints });
  const pos = {};
  for (const it of c.items) {
    const n = g.node(it.id);
    if (!Number.isFinite(n.x) || !Number.isFinite(n.y)) throw new Error("dagre: bad position");
    pos[it.id] = [n.x - it.w / 2, n.y - it.h / 2, it.w, it.h];
  }
  const out = {};
  for (const e of edges) {
    const d = g.edge({ v: e.v, w: e.w, name: e.id });
    const r = { pts: (d.points || []).map((p) => [p.x, p.y]) };
    if (e.lw && Number.isFinite(d.x)) {
      r.lx = d.x;
      r.ly = d.y;
    }
    out[e.id] = r;
  }
  alignColumns(c, pos, out, edges, L, R);
  return { pos, edges: out, method: "dagre" };
}

/**
 * Keep port columns flush and in document order (dagre orders a rank to reduce
 * crossings; port order is the function signature, so it must not change).
 * Ports of one column swap y slots; edge ends are re-attached to the moved ports.
 */
function alignColumns(c, pos, edges, list, L, R) {
  const fix = (col, left) => {
    if (!col.length) return;
    const edgeX = left
      ? Math.min(...col.map((it) => pos[it.id][0]))
      : Math.max(...col.map((it) => pos[it.id][0] + it.w));
    const ports = col.filter((it) => !it.virtual); // virtual entries keep dagre's order
    const slots = ports.map((it) => pos[it.id][1] + it.h / 2).sort((a, b) => a - b);
    col.forEach((it) => {
      const i = ports.indexOf(it);
      const cy = i < 0 ? pos[it.id][1] + it.h / 2 : slots[i];
      pos[it.id] = [left ? edgeX : edgeX - it.w, cy - it.h / 2, it.w, it.h];
    });
  };
  fix(L, true);
  fix(R, false);
  reattach(pos, edges, list);
}

/** Make each edge start/end on its moved endpoint (right side out, left side in). */
function reattach(pos, edges, list) {
  for (const e of list) {
    const r = edges[e.id];
    if (!r || r.pts.length < 2) continue;
    const a = pos[e.v], b = pos[e.w];
    r.pts[0] = [a[0] + a[2], a[1] + a[3] / 2];
    r.pts[r.pts.length - 1] = [b[0], b[1] + b[3] / 2];
  }
}

/**
 * Fallback: longest-path layers, a few barycentre sweeps, straight edges.
 * O(items + edges) per sweep; used for big groups or when dagre fails.
 */
export function layered(c, o = DEFAULTS) {
  const { L, M, R } = columns(c);
  const edges = validEdges(c);
  const preds = new Map(c.items.map((it) => [it.id, []]));
  const succs = new Map(c.items.map((it) => [it.id, []]));
  for (const e of edges) {
    preds.get(e.w).push(e.v);
    succs.get(e.v).push(e.w);
  }
  // Longest-path ranks over the middle items (Kahn order); cycles fall back to rank 1.
  const rank = new Map();
  for (const it of L) rank.set(it.id, 0);
  const mid = new Set(M.map((it) => it.id));
  const indeg = new Map(M.map((it) => [it.id, preds.get(it.id).filter((p) => mid.has(p)).length]));
  const queue = M.filter((it) => indeg.get(it.id) === 0).map((it) => it.id);
  for (const id of M.map((it) => it.id)) rank.set(id, 1);
  for (let i = 0; i < queue.length; i++) {
    const id = queue[i];
    for (const s of succs.get(id)) {
      if (!mid.has(s)) continue;
      rank.set(s, Math.max(rank.get(s), rank.get(id) + 1));
      indeg.set(s, indeg.get(s) - 1);
      if (indeg.get(s) === 0) queue.push(s);
    }
  }
  let maxR = 0;
  for (const id of mid) maxR = Math.max(maxR, rank.get(id));
  for (const it of R) rank.set(it.id, maxR + 1);
  const layers = Array.from({ length: maxR + 2 }, () => []);
  for (const it of c.items) layers[rank.get(it.id)].push(it);

  // Barycentre ordering, alternating sweeps; port columns keep document order.
  const order = new Map();
  const number = () => layers.forEach((ly) => ly.forEach((it, i) => order.set(it.id, i)));
  number();
  for (let sweep = 0; sweep < 4; sweep++) {
    const down = sweep % 2 === 0;
    const idx = down ? layers.keys() : [...layers.keys()].reverse();
    for (const r of idx) {
      if (r === 0 || r === maxR + 1) continue;
      const ly = layers[r];
      const bc = new Map(ly.map((it, i) => {
        const nb = (down ? preds : succs).get(it.id);
        return [it.id, nb.length ? nb.reduce((s, p) => s + order.get(p), 0) / nb.length : i];
      }));
      ly.sort((a, b) => bc.get(a.id) - bc.get(b.id));
      ly.forEach((it, i) => order.set(it.id, i));
    }
  }

  const pos = {};
  const heights = layers.map((ly) => ly.reduce((s, it) => s + it.h, 0) + Math.max(0, ly.length - 1) * o.nodesep);
  const H = Math.max(0, ...heights);
  let x = 0;
  layers.forEach((ly, r) => {
    const w = Math.max(0, ...ly.map((it) => it.w));
    let y = (H - heights[r]) / 2;
    for (const it of ly) {
      const ix = r === 0 ? x : r === maxR + 1 ? x + w - it.w : x + (w - it.w) / 2;
      pos[it.id] = [ix, y, it.w, it.h];
      y += it.h + o.nodesep;
    }
    if (ly.length) x += w + o.ranksep;
  });
  const out = {};
  for (const e of edges) {
    const a = pos[e.v], b = pos[e.w];
    out[e.id] = { pts: [[a[0] + a[2], a[1] + a[3] / 2], [b[0], b[1] + b[3] / 2]] };
  }
  return { pos, edges: out, method: "layered" };
}

/** Open owner eqn: sub-group boxes stacked top to bottom under the header. */
function stacked(c, o) {
  const pad = c.pad ?? 8;
  let y = (c.head || 0) + pad, w = c.minW || 0;
  const pos = {};
  for (const it of c.items) {
    if (it.role !== "box" && it.role !== "node") continue;
    pos[it.id] = [pad, y, it.w, it.h];
    y += it.h + o.gap;
    w = Math.max(w, it.w + 2 * pad);
  }
  const h = Math.max(y - o.gap + pad, (c.head || 0) + pad);
  for (const it of c.items) {
    if (it.role === "in") pos[it.id] = [0, (c.head || 0) / 2, it.w, it.h];
    if (it.role === "out") pos[it.id] = [w - it.w, (c.head || 0) / 2, it.w, it.h];
  }
  const edges = {};
  for (const e of validEdges(c)) {
    const a = pos[e.v], b = pos[e.w];
    edges[e.id] = { pts: [[a[0] + a[2], a[1] + a[3] / 2], [b[0], b[1] + b[3] / 2]] };
  }
  return { w, h, method: "stack", pos, edges };
}

/**
 * Move an inner layout to the container's padded content area, size the box, push
 * the right column to the right edge when the header makes the box wider, and put
 * virtual entries/exits exactly on the box's left/right border.
 */
function wrap(c, inner, o) {
  const pad = c.pad ?? 12, head = c.head || 0;
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  const grow = (x, y) => {
    x0 = Math.min(x0, x); y0 = Math.min(y0, y); x1 = Math.max(x1, x); y1 = Math.max(y1, y);
  };
  for (const [x, y, w, h] of Object.values(inner.pos)) {
    grow(x, y);
    grow(x + w, y + h);
  }
  for (const e of Object.values(inner.edges)) {
    for (const [x, y] of e.pts) grow(x, y);
    if (e.lx != null) grow(e.lx, e.ly);
  }
  if (x0 === Infinity) x0 = y0 = x1 = y1 = 0;
  const dx = pad - x0, dy = head + pad - y0;
  const w = Math.max(c.minW || 0, x1 - x0 + 2 * pad);
  const h = y1 - y0 + head + 2 * pad;
  const extra = w - (x1 - x0 + 2 * pad);
  const right = new Set(c.items.filter((it) => it.role === "out").map((it) => it.id));
  const pos = {};
  for (const [id, [x, y, iw, ih]] of Object.entries(inner.pos)) {
    pos[id] = [x + dx + (right.has(id) ? extra : 0), y + dy, iw, ih];
  }
  for (const it of c.items) {
    if (!it.virtual || !pos[it.id]) continue;
    pos[it.id][0] = it.role === "in" ? 0 : w - it.w;
  }
  const edges = {};
  const list = validEdges(c);
  for (const e of list) {
    const r = inner.edges[e.id];
    if (!r) continue;
    edges[e.id] = { pts: r.pts.map(([x, y]) => [x + dx, y + dy]) };
    if (r.lx != null) {
      edges[e.id].lx = r.lx + dx;
      edges[e.id].ly = r.ly + dy;
    }
  }
  // Only edge ends touching moved items (pushed right column, virtual ends) need fixing.
  const moved = new Set(c.items.filter((it) => it.virtual || (extra > 0 && right.has(it.id))).map((it) => it.id));
  if (moved.size) reattach(pos, edges, list.filter((e) => moved.has(e.v) || moved.has(e.w)));
  return { w, h, method: inner.method, pos, edges };
}
