/**
 * Turns (function index, expansion state) into the layout tree that widgets/ui/layout.js
 * consumes: one container per open group / scope / owner eqn, holding fixed-size
 * items and the edges between them. The tree is plain JSON so it can be posted to
 * the layout worker; drawing-only details (labels, faces) stay in `faces`/`labels`.
 *
 * Edges whose endpoints sit in different containers are "lifted": in the lowest
 * common container they run between the two child items containing the endpoints;
 * inside each nested container they run to a virtual exit ("<out>") or from a
 * virtual entry ("<in>") on the box edge. A drawn edge is the chain of those
 * segments, so an edge stays one continuous line across box boundaries.
 *
 * A toggle in a big drawing changes little of the scene, so the last scene of each
 * index is kept and a build that differs from it by a few toggled keys is an update:
 * containers whose subtree holds no toggled key are the previous objects (same cache
 * key, same layout result); a rebuilt ancestor keeps its previous segments (a
 * container's segments depend only on which container it is, not on what is open
 * in or around it); only edges with an end inside a toggled key's subtree are lifted
 * again. A fully expanded 50k-eqn drawing has 100k edges and 5k containers; a toggle
 * in it re-lifts a few hundred edges.
 */
import { isCollapsible, visibleRep } from "./model.js";
import { numbering, boundaryOf, edgesTouching } from "./boundary.js";
import { eqnFace, scopeFace, boxFace, bundleFace, portFace, headText, textW, BASE } from "./metrics.js";
import * as ids from "./ids.js";

/** Prefixes of virtual entry/exit items (followed by a var id, or "@" and an item key). */
export const VIN = "<in>";
export const VOUT = "<out>";
/**
 * Up to this many values entering (leaving) a box get an entry (exit) point each, so
 * they cross its border side by side; past it, each item inside gets one shared
 * point instead: a box then has at most as many entries as items (a layer of a
 * 46-layer grad can have 900 residuals leaving it).
 */
export const VIRT_PER_VAR = 24;

/**
 * The default edge label: the aval of the var(s) an edge carries — `f32[3]`,
 * `f32[3] ×2` when several share it, `3 values` otherwise.
 */
export function avalLabel(ix) {
  return (varIds) => {
    const avals = new Set(varIds.map((v) => (ix.vars.get(v) || {}).aval));
    return avals.size === 1 ? [...avals][0] + (varIds.length > 1 ? ` ×${varIds.length}` : "") : `${varIds.length} values`;
  };
}

/** Builds differing from the last scene by more toggled keys than this start afresh. */
export const MAX_UPDATE_KEYS = 64;

/** Last scene per index: {prefix, labelOf, expanded (a copy), scene}. */
const lastScene = new WeakMap();

/**
 * @param ix      index from indexFunction
 * @param expanded Set of expanded keys
 * @param prefix  cache namespace (document + function + label mode): keeps worker
 *                caches apart, and a new label mode (new label widths) re-lays out
 * @param {object} [opts]
 * @param [opts.labelOf] edge label provider (varIds) -> text; default avalLabel(ix)
 * @param [opts.update] false: build from scratch even when the last scene is close
 * @param [opts.m]      the sizes to measure boxes and labels with (metrics.js: BASE,
 *                      or PRESENT in presentation mode); the scene carries it as `m`
 * @returns `{root, faces, chains, labels, containers, m}`: `root` the layout tree;
 *   `containers` id -> container; `faces` element key -> face; `labels` container
 *   id -> Map(segment id -> text); `chains` the drawn edges as segment chains
 *   {id, segs, vars: Map(var -> edges), from, to, lca}. Treat all of it as read-only:
 *   the next build shares unchanged parts.
 */
export function buildScene(ix, expanded, prefix = "", { labelOf = null, update = true, m = BASE } = {}) {
  const last = update ? lastScene.get(ix) : null;
  let diff = null;
  if (last && last.prefix === prefix && last.labelOf === labelOf && last.scene.m === m) diff = toggledKeys(last.expanded, expanded);
  // A port bundle changes the items of its group itself, not a box inside it: the
  // group's segments cannot be kept, so such a toggle builds afresh.
  if (diff && diff.some((k) => ids.isBundle(k))) diff = null;
  const scene = diff && !diff.length ? last.scene : construct(ix, expanded, prefix, labelOf, diff ? last.scene : null, diff, m);
  lastScene.set(ix, { prefix, labelOf, expanded: new Set(expanded), scene });
  return scene;
}

/** Keys in exactly one of the two sets, or null past MAX_UPDATE_KEYS. */
function toggledKeys(a, b) {
  const out = [];
  for (const k of a) if (!b.has(k) && out.push(k) > MAX_UPDATE_KEYS) return null;
  for (const k of b) if (!a.has(k) && out.push(k) > MAX_UPDATE_KEYS) return null;
  return out;
}

/**
 * The scene for `expanded`: from scratch when `prev` is null, else as an update of
 * `prev` (built for an expansion differing by the keys `diff`).
 */
function construct(ix, expanded, prefix, labelOf, prev, diff, mt) {
  const label = labelOf || avalLabel(ix);
  const b = buildState(ix, expanded, prev, diff, mt);
  const root = ix.root ? (prev && prev.root && !touched(b, ix.root) ? reuse(b, prev.root) : make(b, ix.root)) : null;
  const lifted = liftEdges(b);
  attachSegments(b, lifted.segs, label);
  if (root) cacheKey(root, prefix);
  return { root, faces: b.faces, chains: [...lifted.chains.values()], labels: b.labels, containers: b.containers, chainMap: lifted.chains, edgeChain: lifted.edgeChain, m: mt };
}

/** What one build shares: its inputs, what it fills (faces, containers, labels) and the tree numbering. */
function buildState(ix, expanded, prev, diff, mt) {
  return {
    ix, expanded, prev, diff, mt,
    faces: prev ? new Map(prev.faces) : new Map(), // element key -> face used for drawing
    containers: new Map(), // element key -> container
    labels: prev ? new Map(prev.labels) : new Map(), // container key -> Map(segment id -> text)
    open: (k) => isCollapsible(ix, k) && expanded.has(k),
    closed: [], // drawn boxes that hide elements: collapsed scopes, repeats, chunks, owners, bundles
    fresh: new Set(), // containers whose segments this build lifts
    ...numbering(ix), // tin, tout, depth
  };
}

// ---- containers -------------------------------------------------------------------

/** True when a toggled key is `k` or inside it (its previous container is stale). */
function touched(b, k) {
  const { tin, diff } = b;
  const lo = tin.get(k), hi = b.tout.get(k);
  return lo == null || diff.some((d) => {
    const t = tin.get(d);
    return t != null && t >= lo && t < hi;
  });
}

/** Take over a previous container whose subtree did not change. */
function reuse(b, c) {
  b.containers.set(c.id, c);
  for (const it of c.items) if (it.child) reuse(b, it.child);
  return c;
}

/** A container's header: its face, the room it takes and the width its text needs. */
function headOf(b, c, key) {
  const { ix, mt } = b;
  if (!ids.isNode(key)) {
    // Group, or scope, repeat, unit or chunk box: a header and its items.
    const ht = headText(ix, key);
    b.faces.set(key, ht);
    c.head = ids.isGroup(key) ? mt.HEAD_G : mt.HEAD_S;
    c.minW = textW(ht.title, mt.F_PRIM) + textW(ht.sub, mt.F_SMALL) + 30 * mt.z;
    return;
  }
  // Open owner eqn: its face is the box header; sub-groups stack below it.
  const face = eqnFace(ix, ix.nodes.get(ids.body(key)), { expanded: true, m: mt });
  b.faces.set(key, face);
  c.head = face.h + 4;
  c.pad = 8;
  c.minW = face.w;
  c.stack = true;
}

/** A new container for open element `key` (group, scope / repeat / unit / chunk box, owner eqn). */
function make(b, key) {
  const { ix, prev } = b;
  const c = { key: "", id: key, kind: ids.letter(key), items: [], edges: [], pad: b.mt.BOX_PAD };
  b.containers.set(key, c);
  headOf(b, c, key);
  if (ids.isGroup(key)) {
    const p = ix.ports.get(key);
    const bundles = p.bundles || {};
    // Constvars first, as JAX prints them (`{ lambda c; a b. let …`).
    for (const pk of bundles.in || [...p.consts, ...p.ins]) portItems(b, c, pk, "in");
    for (const k of ix.items.get(key) || []) c.items.push(item(b, k));
    for (const pk of bundles.out || p.outs) portItems(b, c, pk, "out");
  } else for (const k of ix.items.get(key) || []) c.items.push(item(b, k));
  // A container's segments depend only on which container it is: a rebuilt one
  // (an ancestor of a toggled key) keeps its previous segments and border points.
  const was = prev && prev.containers.get(key);
  if (was) {
    c.edges = was.edges;
    const ins = [], outs = [];
    for (const it of was.items) if (it.virtual) (it.role === "in" ? ins : outs).push(it);
    c.items = [...ins, ...c.items, ...outs];
  } else b.fresh.add(key);
  return c;
}

function portItem(b, pk, side) {
  // A port's face depends on the index only: an update keeps the previous one.
  const f = (b.prev && b.faces.get(pk)) || portFace(b.ix, pk, b.mt);
  b.faces.set(pk, f);
  return { id: pk, role: side, w: f.w, h: f.h };
}

/** A port, or a port bundle ("Q:") followed by its ports when open. */
function portItems(b, c, pk, side) {
  if (!ids.isBundle(pk)) return void c.items.push(portItem(b, pk, side));
  const open = b.open(pk);
  const was = b.prev && b.faces.get(pk); // a bundle's face depends on the index and whether it is open
  const f = was && was.open === open ? was : bundleFace(b.ix, pk, open, b.mt);
  b.faces.set(pk, f);
  if (!open) b.closed.push(pk);
  c.items.push({ id: pk, role: side, w: f.w, h: f.h });
  if (!open) return;
  for (const x of b.ix.virt.get(pk).ports) c.items.push(portItem(b, x, side));
  (c.openBundles ||= []).push(pk); // part of the cache key: the ports change the layout
}

/** The item for element `k` in its container: a box holding a container when open, else a node. */
function item(b, k) {
  const { ix, mt, prev } = b;
  if (ids.isGroup(k) || b.open(k)) {
    const was = prev && prev.containers.get(k);
    const child = was && !touched(b, k) ? reuse(b, was) : make(b, k);
    return { id: k, role: "box", w: 0, h: 0, child };
  }
  if (isCollapsible(ix, k)) b.closed.push(k);
  const f = ids.isNode(k)
    ? eqnFace(ix, ix.nodes.get(ids.body(k)), { collapsed: isCollapsible(ix, k), m: mt })
    : ids.isScope(k) ? scopeFace(ix, ix.scopes.get(k), mt) : boxFace(ix, k, mt);
  b.faces.set(k, f);
  return { id: k, role: "node", w: f.w, h: f.h };
}

// ---- edges --------------------------------------------------------------------------

/**
 * Visible stand-in of an element: the drawn collapsed box whose subtree (one interval
 * of the DFS numbering) holds it, else itself. A binary search per edge end, no
 * per-element state: a 50k-eqn function has 100k edge ends. (An update lifts few
 * edges and climbs the parents instead: `closed` lacks reused subtrees.)
 */
function visibleEnds(b) {
  const { ix, closed, tin, tout } = b;
  closed.sort((x, y) => tin.get(x) - tin.get(y));
  const starts = closed.map((k) => tin.get(k));
  return b.prev ? (k) => visibleRep(ix, k, b.expanded) : (k) => {
    const t = tin.get(k);
    if (t == null) return k;
    let lo = 0, hi = starts.length - 1, at = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid] <= t) {
        at = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return at >= 0 && t < tout.get(closed[at]) ? closed[at] : k;
  };
}

/**
 * `climb(s, t)`: the route between visible ends s and t, through their lowest common
 * container (null when malformed); `pathOf(route, var)`: its segments,
 * [container, segment id, v, w] flat: exits, one segment, entries.
 */
function router(ix, depth, byVar) {
  const P = ix.parent;
  // A drawn port inside a port bundle sits in its group's port column (the bundle is
  // open, or the port would not be drawn): the bundle is no container on its way.
  const inQ = (k) => ids.isBundle(P.get(k));
  const par = (k) => (inQ(k) ? P.get(P.get(k)) : P.get(k));
  const dep = (k) => (depth.has(k) ? depth.get(k) - (inQ(k) ? 1 : 0) : null);
  /** Climb to the lowest common container: up = s … (below the source's top box), down = t … likewise. */
  const climb = (s, t) => {
    let a = s, b = t, da = dep(s), db = dep(t);
    if (da == null || db == null) return null;
    const up = [], down = [];
    for (; da > db; da--) up.push(a), (a = par(a));
    for (; db > da; db--) down.push(b), (b = par(b));
    while (a !== b && par(a) !== par(b)) up.push(a), down.push(b), (a = par(a)), (b = par(b));
    const lca = par(a);
    if (a === b || lca == null) return null; // malformed: skip
    // A chain is fixed by its ends, and by the var when a border on the way has an
    // entry/exit per var.
    const keyed = up.some((x) => byVar(par(x), 1)) || down.some((x) => byVar(par(x), 0));
    return { keyed, up, down, a, b, lca, cid: s + "\n" + t, path: null, paths: keyed ? new Map() : null };
  };
  const pathOf = (r, v) => {
    const out = [];
    const seg = (ck, sv, sw) => out.push(ck, sv + ">" + sw, sv, sw);
    for (const x of r.up) seg(par(x), x, VOUT + (byVar(par(x), 1) ? v : "@" + x));
    seg(r.lca, r.a, r.b);
    for (let j = r.down.length - 1; j >= 0; j--) {
      const x = r.down[j];
      seg(par(x), VIN + (byVar(par(x), 0) ? v : "@" + x), x);
    }
    return out;
  };
  return { climb, pathOf };
}

/**
 * Lift each derived edge to visible endpoints and split it into segments. Returns
 * `segs` (container key -> Map(segId -> {id, v, w, vars: Set})), `chains` (chain id ->
 * {id, segs: [container, segId, v, w] flat (a cached route's: read-only), vars:
 * Map(var -> edges carrying it), from, to, lca}; shared with the previous scene until
 * changed, copied first) and `edgeChain` (edge -> chain id).
 */
function liftEdges(b) {
  const { ix, prev, diff } = b;
  const { routes, byVar } = routesOf(ix);
  const L = {
    ix, fresh: b.fresh, routes, repOf: visibleEnds(b), ...router(ix, b.depth, byVar),
    segs: new Map(), chains: prev ? new Map(prev.chainMap) : new Map(), own: new Set(), copy: !!prev,
    edgeChain: prev ? prev.edgeChain.slice() : new Array(ix.edges.length).fill(null),
  };
  if (routes.n > 4 * ix.edges.length + 1024) routes.m.clear(), (routes.n = 0); // many toggles: start over
  if (!prev) for (let i = 0; i < ix.edges.length; i++) lift(L, i);
  else {
    const again = new Set();
    for (const d of diff) for (const i of edgesTouching(ix, d)) again.add(i);
    // In edge order, as a fresh build lifts them: a container's segments (and so its
    // layout) come out the same whichever way it was built.
    for (const i of [...again].sort((x, y) => x - y)) lift(L, i);
  }
  return L;
}

/** Add var `varId` to segment `id` (v -> w) of container ck, if this build lifts ck's segments. */
function addSeg(L, ck, id, v, w, varId) {
  if (!L.fresh.has(ck)) return;
  let m = L.segs.get(ck);
  if (!m) L.segs.set(ck, (m = new Map()));
  let sg = m.get(id);
  if (!sg) m.set(id, (sg = { id, v, w, vars: new Set() }));
  sg.vars.add(varId);
}

/** Chain `cid`, copied from the previous scene before its first change here. */
function mine(L, cid) {
  let ch = L.chains.get(cid);
  if (!L.copy) return ch;
  if (ch && !L.own.has(cid)) L.chains.set(cid, (ch = { ...ch, vars: new Map(ch.vars) }));
  L.own.add(cid);
  return ch;
}

/** The route between visible ends s and t (cached per index; null when none). */
function routeOf(L, s, t) {
  if (s === t) return null; // both ends hidden in the same collapsed box
  // Nested maps on the keys themselves: no string is built per edge.
  const { routes } = L;
  let rs = routes.m.get(s);
  if (!rs) routes.m.set(s, (rs = new Map()));
  let r = rs.get(t);
  if (r === undefined) rs.set(t, (r = L.climb(s, t))), routes.n++;
  return r;
}

/** Lift edge i: its segments into the containers this build fills, its var into its chain. */
function lift(L, i) {
  const e = L.ix.edges[i];
  const s = L.repOf(e.from), t = L.repOf(e.to);
  const r = routeOf(L, s, t);
  let cid = null, path = null;
  const v = e.var;
  if (r) {
    path = r.path, cid = r.cid;
    if (r.keyed) {
      let pv = r.paths.get(v);
      if (!pv) r.paths.set(v, (pv = { path: L.pathOf(r, v), cid: cid + "\n" + v }));
      path = pv.path;
      cid = pv.cid;
    } else if (!path) path = r.path = L.pathOf(r, v);
    for (let q = 0; q < path.length; q += 4) addSeg(L, path[q], path[q + 1], path[q + 2], path[q + 3], v);
  }
  const was = L.edgeChain[i];
  if (was === cid) return;
  if (was != null) {
    const ch = mine(L, was), n = ch.vars.get(v) - 1;
    if (n > 0) ch.vars.set(v, n);
    else if (ch.vars.delete(v) && !ch.vars.size) L.chains.delete(was);
  }
  L.edgeChain[i] = cid;
  if (cid == null) return;
  let ch = mine(L, cid);
  if (!ch) L.chains.set(cid, (ch = { id: cid, segs: path, vars: new Map(), from: s, to: t, lca: r.lca }));
  ch.vars.set(v, (ch.vars.get(v) || 0) + 1);
}

const isVirtual = (id) => id.startsWith(VIN) || id.startsWith(VOUT);

/**
 * Attach segments to the containers this build fills, with labels and virtual
 * entry/exit items.
 */
function attachSegments(b, segs, label) {
  const { mt } = b;
  for (const ck of b.fresh) {
    const c = b.containers.get(ck), m = segs.get(ck);
    const texts = new Map();
    b.labels.set(ck, texts);
    if (!m) continue;
    const ins = new Set(), outs = new Set();
    for (const sg of m.values()) {
      if (sg.v.startsWith(VIN)) ins.add(sg.v);
      if (sg.w.startsWith(VOUT)) outs.add(sg.w);
      const edge = { id: sg.id, v: sg.v, w: sg.w };
      // Ports already show their aval; label only edges between eqns/boxes.
      const plain = !isVirtual(sg.v) && !isVirtual(sg.w) && !ids.isPortColumn(sg.v) && !ids.isPortColumn(sg.w);
      const text = plain ? label([...sg.vars]) : "";
      if (text) {
        texts.set(sg.id, text);
        edge.lw = textW(text, mt.F_TINY) + 6 * mt.z;
        edge.lh = mt.LABEL_H;
      }
      c.edges.push(edge);
    }
    c.items.unshift(...[...ins].map((id) => ({ id, role: "in", w: 2, h: 8, virtual: true })));
    c.items.push(...[...outs].map((id) => ({ id, role: "out", w: 2, h: 8, virtual: true })));
  }
}

/**
 * Cache keys: a container's layout depends only on what is open below it, open
 * port bundles included (a reused container keeps its key).
 */
function cacheKey(c, prefix) {
  if (c.key) return c.key;
  const inner = c.items.filter((it) => it.child).map((it) => cacheKey(it.child, prefix));
  c.key = prefix + c.id + (c.openBundles ? "[" + c.openBundles.join(",") + "]" : "") + (inner.length ? "{" + inner.join(",") + "}" : "");
  return c.key;
}

/**
 * Per-index caches shared by every scene built from it: edge routes {m: source ->
 * target -> route, n: routes held}, source and target being visible ends (a route
 * is the climb to their lowest common container, its chain id(s) and the segment
 * list(s) it gives, or null when the pair has no route), and which borders get an
 * entry/exit per value (`byVar(containerKey, 0 in | 1 out)`). Pure functions of the
 * index; the segment lists are read-only (placeScene only reads chain.segs).
 */
const routeCache = new WeakMap();
function routesOf(ix) {
  let rc = routeCache.get(ix);
  if (rc) return rc;
  // One entry/exit per value while a box has few values crossing its border
  // (VIRT_PER_VAR), else one per item inside; what crosses is boundaryOf's.
  const perVar = new Map();
  const byVar = (ck, side) => {
    let pv = perVar.get(ck);
    if (!pv) {
      const b = boundaryOf(ix, ck);
      perVar.set(ck, (pv = [b.ins.length <= VIRT_PER_VAR, b.outs.length <= VIRT_PER_VAR]));
    }
    return pv[side];
  };
  routeCache.set(ix, (rc = { routes: { m: new Map(), n: 0 }, byVar }));
  return rc;
}
