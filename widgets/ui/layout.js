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
 * only that group and its ancestors. Results are also cached under the container's
 * *shape* (item roles and sizes, edges as item positions, labels' sizes): the 46
 * layers of a transformer or the 700 blocks of a deep MLP are laid out once and the
 * copies reuse that layout. Containers over `maxItems`, containers reached after
 * the time budget is spent, and dagre failures use `layered()`, a simple
 * longest-path / barycentre layout that is linear-ish and never hangs.
 *
 * Results are `{w, h, method, pos: {id: [x, y, w, h]}, edges: {id: {pts: [[x, y]…],
 * lx?, ly?}}}` in the container's own coordinates (top-left = 0, 0).
 *
 * This module has no DOM dependency: it runs in the layout worker and, when no worker
 * can be started, on the main thread.
 */
import { layout as dagreLayout, Graph } from "@dagrejs/dagre";

export const DEFAULTS = {
  maxItems: 300, budgetMs: 1500, nodesep: 16, ranksep: 44, edgesep: 10, gap: 10, cacheSize: 5000, busCost: 240,
  colMax: 16, fastRanker: 60, longSpan: 12,
};
/** Distance of the entry / exit buses from the items (bus routing, see viaDagre). */
const BUS_GAP = 14;

const now = () => (globalThis.performance ? performance.now() : Date.now());
const SRC = "\u0000src", SINK = "\u0000sink";

/**
 * An LRU map for layout results (Map keeps insertion order), with a second map of results by shape.
 * @typedef {Map<any, any> & {shapes: Map<string, any>}} LayoutCache
 * @returns {LayoutCache}
 */
export function createCache() {
  const c = /** @type {LayoutCache} */ (new Map());
  c.shapes = new Map(); // shape signature -> result by item / edge position
  return c;
}

/** Shape of a container: what its layout depends on, with ids replaced by positions. */
export function shapeOf(c) {
  const idx = new Map();
  let sig = `${c.stack ? "s" : ""}${c.head || 0},${c.pad ?? ""},${c.minW || 0}|`;
  c.items.forEach((it, i) => {
    idx.set(it.id, i);
    sig += `${it.role}${it.virtual ? "*" : ""}${it.w}x${it.h};`;
  });
  sig += "|";
  for (const e of c.edges) sig += `${idx.get(e.v)}>${idx.get(e.w)}${e.lw ? ":" + e.lw + "x" + e.lh : ""};`;
  return sig;
}

/** Result of shape `s` (by position) for container `c` (by id). */
function fromShape(c, s) {
  const pos = {}, edges = {};
  c.items.forEach((it, i) => {
    if (s.pos[i]) pos[it.id] = s.pos[i];
  });
  c.edges.forEach((e, i) => {
    if (s.edges[i]) edges[e.id] = s.edges[i];
  });
  return { w: s.w, h: s.h, method: s.method, pos, edges };
}
const toShape = (c, r) => ({
  w: r.w, h: r.h, method: r.method, pos: c.items.map((it) => r.pos[it.id]), edges: c.edges.map((e) => r.edges[e.id]),
});

/**
 * Lay out a whole tree. `cache` persists between calls (per worker / per page).
 * @returns {{results: Object<string, object>, stats: object}}
 */
export function layoutTree(root, cache, opts) {
  const o = { ...DEFAULTS, ...opts };
  const t0 = now();
  const results = {};
  const stats = { dagre: 0, layered: 0, stack: 0, cached: 0, shaped: 0, ms: 0 };
  const shapes = cache.shapes || (cache.shapes = new Map());
  const visit = (c) => {
    if (c.stub) return c; // laid out earlier; the caller has its result (layout-client.js)
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
      const sig = shapeOf(c);
      const s = shapes.get(sig);
      if (s && (s.method !== "layered" || now() - t0 > o.budgetMs || c.items.length > o.maxItems)) {
        r = fromShape(c, s);
        stats.shaped++;
      } else {
        r = layoutContainer(c, o, now() - t0 > o.budgetMs);
        stats[r.method]++;
        shapes.delete(sig);
        shapes.set(sig, toShape(c, r));
        if (shapes.size > o.cacheSize) shapes.delete(shapes.keys().next().value);
      }
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
  if (!overBudget && dagreSize(c, o) <= o.maxItems) {
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

/** Whether virtual items are bus-routed instead of given to dagre (see viaDagre). */
function usesBus(c, o) {
  const nVirt = c.items.reduce((n, it) => n + (it.virtual ? 1 : 0), 0);
  return nVirt * (c.items.length - nVirt) > o.busCost;
}

/** Nodes dagre would see. */
const dagreSize = (c, o) => (usesBus(c, o) ? c.items.filter((it) => !it.virtual).length : c.items.length);

/**
 * Run dagre; returns item centres and edge polylines in dagre's coordinates.
 *
 * Virtual entries/exits (values crossing the box border) are dagre nodes while they
 * are few. Many of them into a long row of items cost dagre a dummy node per rank
 * crossed (46 layers × 92 entries: 0.8 s instead of 15 ms), so past `busCost`
 * (entries and exits × middle items) they are left out of dagre and routed on a
 * bus: entries along a line above the items, dropping into their target; exits
 * along a line below, leaving from their source. Likewise, port columns longer than
 * `colMax` (a signature of 3,500 params in 30 bundles) stay out of dagre and are
 * stacked beside what it laid out.
 */
function viaDagre(c, o) {
  const bus = usesBus(c, o);
  const real = c.items.filter((it) => !it.virtual);
  const cols = real.filter((it) => it.role !== "node" && it.role !== "box");
  const aside = cols.length > o.colMax;
  const kept = bus ? real : c.items;
  const cc = bus || aside ? { ...c, items: aside ? kept.filter((it) => !cols.includes(it)) : kept } : c;
  const { L, M, R } = columns(cc);
  // In a big container an edge spanning many ranks (a forward layer's residual to its
  // backward twin 46 layers on) costs dagre a dummy node per rank: route those on the
  // bus above the items instead, like entries.
  const long = cc.items.length > o.fastRanker ? longEdges(cc, o.longSpan) : null;
  const edges = long ? validEdges(cc).filter((e) => !long.has(e.id)) : validEdges(cc);
  const g = new Graph({ multigraph: true });
  // Network simplex ranks best but costs most; past `fastRanker` nodes (an ancestor of
  // every toggle is laid out again) a tight tree is faster and looks much the same.
  const ranker = cc.items.length > o.fastRanker ? "tight-tree" : "network-simplex";
  g.setGraph({ rankdir: "LR", nodesep: o.nodesep, ranksep: o.ranksep, edgesep: o.edgesep, marginx: 0, marginy: 0, ranker });
  g.setDefaultEdgeLabel(() => ({}));
  for (const it of cc.items) g.setNode(it.id, { width: it.w, height: it.h });
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
  // Past `fastRanker` nodes also skip dagre's optimal-order search (~2x faster).
  dagreLayout(g, { constraints, disableOptimalOrderHeuristic: cc.items.length > o.fastRanker });
  const pos = {};
  for (const it of cc.items) {
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
  alignColumns(cc, pos, out, edges, L, R);
  if (aside) stackColumns(c, cols, pos, out, o);
  if (bus || long) busRoutes(c, pos, out);
  return { pos, edges: out, method: "dagre" };
}

/**
 * Port columns kept out of dagre: inputs stacked in order left of the laid-out
 * items, outputs right of them, both centred on them; their edges run straight
 * (the curve gives them horizontal ends).
 */
function stackColumns(c, cols, pos, out, o) {
  let x0 = 0, x1 = 0, y0 = 0, y1 = 0;
  const ids = Object.keys(pos);
  if (ids.length) {
    x0 = Math.min(...ids.map((id) => pos[id][0]));
    x1 = Math.max(...ids.map((id) => pos[id][0] + pos[id][2]));
    y0 = Math.min(...ids.map((id) => pos[id][1]));
    y1 = Math.max(...ids.map((id) => pos[id][1] + pos[id][3]));
  }
  for (const left of [true, false]) {
    const col = cols.filter((it) => (it.role === "in") === left);
    const h = col.reduce((s, it) => s + it.h + o.nodesep, -o.nodesep);
    const wmax = Math.max(0, ...col.map((it) => it.w));
    let y = (y0 + y1) / 2 - h / 2;
    for (const it of col) {
      pos[it.id] = [left ? x0 - o.ranksep * 2 - wmax : x1 + o.ranksep * 2 + wmax - it.w, y, it.w, it.h];
      y += it.h + o.nodesep;
    }
  }
  const ids2 = new Set(cols.map((it) => it.id));
  for (const e of validEdges(c)) {
    if (out[e.id] || !(ids2.has(e.v) || ids2.has(e.w)) || !pos[e.v] || !pos[e.w]) continue;
    const a = pos[e.v], b = pos[e.w];
    out[e.id] = { pts: [[a[0] + a[2], a[1] + a[3] / 2], [b[0], b[1] + b[3] / 2]] };
  }
}

/**
 * Ids of edges joining items more than `span` apart in the container's item order
 * (document order: def-use edges run forward, so this stands in for rank distance
 * and needs no ranking, which scope boxes' cycles would confuse).
 */
function longEdges(c, span) {
  const at = new Map(c.items.map((it, i) => [it.id, i]));
  return new Set(validEdges(c).filter((e) => Math.abs(at.get(e.w) - at.get(e.v)) > span).map((e) => e.id));
}

/**
 * Place virtual entries on a bus above the laid-out items and exits on one below,
 * and route their edges along it: entry -> along the top -> down into the target's
 * left side; source's right side -> down to the bottom -> along it to the exit.
 */
function busRoutes(c, pos, out) {
  let y0 = Infinity, y1 = -Infinity, x0 = Infinity, x1 = -Infinity;
  for (const id in pos) {
    const [x, y, w, h] = pos[id];
    y0 = Math.min(y0, y);
    y1 = Math.max(y1, y + h);
    x0 = Math.min(x0, x);
    x1 = Math.max(x1, x + w);
  }
  if (y0 === Infinity) y0 = y1 = x0 = x1 = 0;
  const top = y0 - BUS_GAP, bottom = y1 + BUS_GAP;
  for (const it of c.items) {
    if (!it.virtual || pos[it.id]) continue; // placed by dagre (no bus for them): keep
    const inside = it.role === "in";
    pos[it.id] = [inside ? x0 - it.w - 20 : x1 + 20, (inside ? top : bottom) - it.h / 2, it.w, it.h];
  }
  const byId = new Map(c.items.map((it) => [it.id, it]));
  for (const e of c.edges) {
    const vi = byId.get(e.v), wi = byId.get(e.w);
    if (!vi || !wi || e.v === e.w || out[e.id]) continue;
    const a = pos[e.v], b = pos[e.w];
    if (vi.virtual && vi.role === "in") {
      const tx = b[0], ty = b[1] + b[3] / 2;
      out[e.id] = { pts: [[a[0] + a[2], top], [tx - 18, top], [tx - 8, ty], [tx, ty]] };
    } else if (wi.virtual && wi.role === "out") {
      const sx = a[0] + a[2], sy = a[1] + a[3] / 2;
      out[e.id] = { pts: [[sx, sy], [sx + 8, sy], [sx + 18, bottom], [b[0], bottom]] };
    } else {
      // a long edge: up to the top bus, along it, down into the target
      const sx = a[0] + a[2], sy = a[1] + a[3] / 2, tx = b[0], ty = b[1] + b[3] / 2;
      out[e.id] = { pts: [[sx, sy], [sx + 8, sy], [sx + 18, top], [tx - 18, top], [tx - 8, ty], [tx, ty]] };
    }
  }
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
