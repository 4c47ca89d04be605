/**
 * Indexes one `Function` of a graph document (docs/schema.md) into the lookup
 * structures the view needs: the element tree (groups, scope boxes, eqn nodes,
 * ports, and the made-up containers below), derived edges, eqn counts and line
 * lookups.
 *
 * Element keys are prefixed ("G:", "N:", "S:", "P:", "O:", "R:", "U:", "K:", "Q:")
 * so document ids, which are arbitrary strings, can never collide with the ids made
 * up here: a document id only ever follows "G:", "N:", "P:" or "O:", and the made-up
 * keys ("S:", "R:", "U:", "K:", "Q:") are a prefix and integers.
 *
 * No container holds more than CAP items, so no layout ever sees more: a run of
 * identical layers (`fn.repeats`) becomes one "R:" box (its units "U:" boxes unless
 * each unit is a single item), and any list still longer is cut into consecutive
 * "K:" chunk boxes, recursively (a 50k-eqn flat group becomes two levels of chunks).
 * A group with more than PORT_CAP input (or output) ports draws them as "Q:" port
 * bundles of at most CAP ports, each opening in place in the port column.
 */
import { fullWhere, shortWhere } from "../ui/source-text.js";
import { plural } from "../ui/words.js";
import * as ids from "./ids.js";

/** Most items one container holds (and one layout lays out), ports aside. */
export const CAP = 120;
/** More input (or output) ports than this on one group: bundle them ("Q:"). */
export const PORT_CAP = 24;

// Id constructors under their older names, for the modules that import them from here.
export { group as gKey, node as nKey, port as pKey, output as oKey } from "./ids.js";

/**
 * Derive edges with the schema's single rule: one edge per var use, from the var's
 * definition (eqn node, or input/const port) to the consuming eqn or output port.
 * Uses of unknown vars are skipped (malformed input must not break the view).
 * @returns {{var: string, from: string, to: string, group: string}[]}
 */
export function deriveEdges(fn) {
  const vars = new Map((fn.vars || []).map((v) => [v.id, v]));
  const defKey = (v) => (v.def === "in" || v.def === "const" ? ids.port(v.id) : ids.node(v.def));
  const edges = [];
  for (const n of fn.nodes || []) {
    for (const op of n.ins || []) {
      const v = op && op.var != null ? vars.get(op.var) : null;
      if (v) edges.push({ var: v.id, from: defKey(v), to: ids.node(n.id), group: n.group });
    }
  }
  for (const g of fn.groups || []) {
    (g.outvars || []).forEach((op, i) => {
      const v = op && op.var != null ? vars.get(op.var) : null;
      if (v) edges.push({ var: v.id, from: defKey(v), to: ids.output(g.id, i), group: g.id });
    });
  }
  return edges;
}

/**
 * Build the element tree of a function.
 * Containers: "G:" groups (ports + direct items), "S:" scope boxes (items),
 * "N:" owner nodes when expanded (their subgroups), "R:" repeats, "U:" repeat units
 * and "K:" chunks (items). `parent` maps every element to the element that holds
 * it, so visibility questions are simple ancestor walks.
 */
export function indexFunction(fn) {
  const groups = new Map((fn.groups || []).map((g) => [g.id, g]));
  const nodes = new Map((fn.nodes || []).map((n) => [n.id, n]));
  const vars = new Map((fn.vars || []).map((v) => [v.id, v]));
  const t = elementTree(fn, groups, vars);
  const { parent, items, ports, scopes, first } = t;
  const virt = new Map(); // "R:"/"U:"/"K:"/"Q:" key -> {kind, ...} (labels filled in below)
  applyRepeats(fn, { items, parent, first, scopes, virt });
  bundlePorts(ports, parent, virt);
  chunkContainers(items, parent, virt);
  const count = eqnCounts(items, t.rootKey);

  const ix = {
    fn, groups, nodes, vars, parent, items, ports, scopes, count, virt,
    labels: new Map(), // R/U/K key -> one-line label (breadcrumbs, details, tooltips)
    root: t.rootKey,
    edges: deriveEdges(fn).filter((e) => parent.has(e.from) && parent.has(e.to)),
  };
  labelContainers(ix);
  return ix;
}

/**
 * The tree of groups, scope boxes and eqns below the root group, each group once:
 * `parent`, `items` (container key -> ordered child keys: nodes/scopes/groups),
 * `ports` (group key -> {ins, consts, outs}), `scopes` ("S:i" -> {key, group, path,
 * name}), `first` (item key -> index in fn.nodes of its first node, for repeats), `rootKey`.
 */
function elementTree(fn, groups, vars) {
  const byGroup = new Map();
  (fn.nodes || []).forEach((n, i) => {
    if (!byGroup.has(n.group)) byGroup.set(n.group, []);
    byGroup.get(n.group).push([n, i]);
  });
  const t = {
    groups, vars, byGroup, parent: new Map(), items: new Map(), ports: new Map(), scopes: new Map(), first: new Map(),
    seen: new Set(), scopeCounter: 0, rootKey: null,
  };
  t.rootKey = visitGroup(t, fn.root, null);
  return t;
}

/** Walk a group (reachable from the root only, each once) and its sub-groups. */
function visitGroup(t, gid, parentKey) {
  const { parent, items, first } = t;
  const g = t.groups.get(gid);
  if (!g || t.seen.has(gid)) return null;
  t.seen.add(gid);
  const gk = ids.group(gid);
  if (parentKey) parent.set(gk, parentKey);
  const p = {
    ins: (g.invars || []).filter((v) => t.vars.has(v)).map(ids.port),
    consts: (g.constvars || []).filter((v) => t.vars.has(v)).map(ids.port),
    outs: (g.outvars || []).map((_, i) => ids.output(gid, i)),
  };
  for (const k of [...p.ins, ...p.consts, ...p.outs]) parent.set(k, gk);
  t.ports.set(gk, p);
  items.set(gk, []);
  for (const [n, at] of t.byGroup.get(gid) || []) {
    const path = Array.isArray(n.scope) ? n.scope : [];
    const ck = path.length ? containerFor(t, gid, gk, path, at) : gk;
    const nk = ids.node(n.id);
    parent.set(nk, ck);
    first.set(nk, at);
    items.get(ck).push(nk);
    const subs = [];
    for (const sg of n.subgroups || []) if (visitGroup(t, sg, nk)) subs.push(ids.group(sg));
    if (subs.length) items.set(nk, subs);
  }
  return gk;
}

/**
 * The scope box of group `gk` for an eqn with scope `path` at node index `at`. A scope
 * box is one contiguous run of eqns under a name: a name entered again after other
 * items (the `vmap(…)` of the next block's einsum) is a new box, so blocks stay whole.
 */
function containerFor(t, gid, gk, path, at) {
  const { items, scopes } = t;
  let cur = gk;
  for (let i = 0; i < path.length; i++) {
    const siblings = items.get(cur);
    const tail = siblings[siblings.length - 1];
    let sk = tail && ids.isScope(tail) && scopes.get(tail).name === String(path[i]) ? tail : null;
    if (!sk) {
      sk = ids.scope(t.scopeCounter++);
      scopes.set(sk, { key: sk, group: gid, path: path.slice(0, i + 1), name: String(path[i]) });
      t.parent.set(sk, cur);
      t.first.set(sk, at);
      siblings.push(sk);
      items.set(sk, []);
    }
    cur = sk;
  }
  return cur;
}

/** Cut every item list over CAP into consecutive "K:" chunks, recursively. */
function chunkContainers(items, parent, virt) {
  let chunkCounter = 0;
  for (const ck of [...items.keys()]) {
    if (ids.isNode(ck)) continue; // an owner holds its few sub-groups
    let list = items.get(ck);
    while (list.length > CAP) {
      // Balanced consecutive chunks; a list of chunks still over CAP is chunked again.
      const size = Math.ceil(list.length / Math.ceil(list.length / CAP));
      const next = [];
      for (let i = 0; i < list.length; i += size) {
        const kk = ids.chunk(chunkCounter++);
        const part = list.slice(i, i + size);
        for (const x of part) parent.set(x, kk);
        items.set(kk, part);
        virt.set(kk, { kind: "K" });
        next.push(kk);
      }
      list = next;
    }
    for (const x of list) parent.set(x, ck);
    items.set(ck, list);
  }
}

/** Recursive eqn counts, bottom-up over the tree: element key -> eqns inside; nodes count themselves. */
function eqnCounts(items, rootKey) {
  const count = new Map();
  const countOf = (k) => {
    if (count.has(k)) return count.get(k);
    let c = ids.isNode(k) ? 1 : 0;
    for (const ch of items.get(k) || []) c += countOf(ch);
    count.set(k, c);
    return c;
  };
  if (rootKey) countOf(rootKey);
  return count;
}

/**
 * Port bundles: a side of a group with more than PORT_CAP ports becomes consecutive
 * "Q:" bundles of at most CAP ports (`ports.get(g).bundles = {in, out}`, keys in
 * column order). A bundle is collapsible; open, its ports follow it in the column.
 * Ports stay in `ports` as they are; their parent becomes the bundle.
 */
function bundlePorts(ports, parent, virt) {
  let n = 0;
  for (const [gk, p] of ports) {
    const sides = { in: [...p.consts, ...p.ins], out: p.outs };
    for (const side of ["in", "out"]) {
      const list = sides[side];
      if (list.length <= PORT_CAP) continue;
      const size = Math.ceil(list.length / Math.ceil(list.length / CAP));
      const keys = [];
      for (let i = 0; i < list.length; i += size) {
        const qk = ids.bundle(n++);
        const part = list.slice(i, i + size);
        for (const pk of part) parent.set(pk, qk);
        parent.set(qk, gk);
        virt.set(qk, { kind: "Q", side, ports: part, from: i + 1, to: i + part.length, of: list.length });
        keys.push(qk);
      }
      (p.bundles ||= {})[side] = keys;
    }
  }
}

/** Short name of an item, for container labels: prim, scope name or a box label. */
function itemName(ix, k) {
  if (ids.isNode(k)) return String((ix.nodes.get(ids.body(k)) || {}).prim ?? "?");
  if (ids.isScope(k)) return ix.scopes.get(k).name;
  if (ids.isChunk(k)) return itemName(ix, ix.items.get(k)[0]);
  const v = ix.virt.get(k);
  if (v && v.kind === "R") return `×${v.n} ${v.name}`;
  if (v && v.kind === "U") return `block ${v.i + 1}`;
  return k;
}
const lastLeaf = (ix, k) => (ids.isChunk(k) ? lastLeaf(ix, ix.items.get(k).at(-1)) : k);

/**
 * Titles of the made-up containers, once counts are known:
 *   R  "×46 layer_0 … layer_45 (identical, 96 eqns each)"
 *   U  "block 3 of 700"
 *   K  "eqns 1–120: dot_general … tanh" (eqn numbers within the chunked container)
 */
function labelContainers(ix) {
  const { virt, items, count, labels } = ix;
  for (const [k, v] of virt) {
    if (v.kind === "U") labels.set(k, `block ${v.i + 1} of ${v.of}`);
    if (v.kind === "Q") labels.set(k, `${v.side === "in" ? "inputs" : "outputs"} ${v.from}–${v.to} of ${v.of}`);
  }
  for (const [k, v] of virt) {
    if (v.kind !== "R") continue;
    const units = v.units;
    const per = count.get(units[0]) || 0;
    const a = units[0], z = units[units.length - 1];
    v.name = v.single
      ? (ids.isScope(a) ? `${itemName(ix, a)} … ${itemName(ix, z)}` : itemName(ix, a))
      : `blocks ${itemName(ix, items.get(a)[0])} … ${itemName(ix, lastLeaf(ix, items.get(a).at(-1)))}`;
    labels.set(k, `×${v.n} ${v.name} (identical, ${plural(per, "eqn")} each)`);
  }
  const fmt = (n) => n.toLocaleString("en-US");
  const chunks = (ck, off) => {
    for (const k of items.get(ck) || []) {
      if (ids.isChunk(k)) {
        const c = count.get(k) || 0;
        const head = c ? `eqns ${fmt(off + 1)}–${fmt(off + c)}` : `${items.get(k).length} items`;
        labels.set(k, `${head}: ${itemName(ix, k)} … ${itemName(ix, lastLeaf(ix, k))}`);
        chunks(k, off);
      }
      off += count.get(k) || 0;
    }
  };
  for (const ck of items.keys()) if (!ids.isChunk(ck)) chunks(ck, 0);
}

/**
 * Fold each run of `fn.repeats` (contract: consecutive structurally identical units
 * among the items of one container, given as node index ranges) into an "R:" box.
 * An item belongs to the unit holding its first node. Runs that do not match the
 * tree (unknown container, an empty unit, units not contiguous in the container's
 * item list, items already folded) are ignored: the view then shows the items as is.
 */
function applyRepeats(fn, { items, parent, first, scopes, virt }) {
  const reps = Array.isArray(fn.repeats) ? fn.repeats : [];
  reps.forEach((r, ri) => {
    if (!r || !Array.isArray(r.units) || r.units.length < 2) return;
    const path = Array.isArray(r.scope) ? r.scope : [];
    const ck = repeatContainer(fn, r, path, parent, scopes);
    const list = ck && items.get(ck);
    if (!list) return;
    const units = r.units.filter((u) => Array.isArray(u) && u.length === 2);
    if (units.length !== r.units.length) return;
    const unitOf = (at) => {
      let lo = 0, hi = units.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        if (at < units[mid][0]) hi = mid - 1;
        else if (at >= units[mid][1]) lo = mid + 1;
        else return mid;
      }
      return -1;
    };
    const parts = units.map(() => []);
    let p0 = -1, p1 = -1;
    list.forEach((k, pos) => {
      const u = first.has(k) ? unitOf(first.get(k)) : -1;
      if (u < 0) return;
      parts[u].push(k);
      if (p0 < 0) p0 = pos;
      p1 = pos;
    });
    const taken = parts.reduce((s, p) => s + p.length, 0);
    if (parts.some((p) => !p.length) || p1 - p0 + 1 !== taken) return;
    const rk = ids.repeat(ri);
    const single = parts.every((p) => p.length === 1);
    const kids = single ? parts.map((p) => p[0]) : parts.map((p, j) => {
      const uk = ids.unit(ri, j);
      for (const x of p) parent.set(x, uk);
      items.set(uk, p);
      virt.set(uk, { kind: "U", i: j, of: parts.length, repeat: rk });
      return uk;
    });
    for (const x of kids) parent.set(x, rk);
    items.set(rk, kids);
    parent.set(rk, ck);
    first.set(rk, first.get(list[p0]));
    virt.set(rk, { kind: "R", n: parts.length, single, units: kids, doc: r });
    list.splice(p0, taken, rk);
  });
}

/**
 * The container a repeat folds items of: the scope box (of the repeat's path) or group
 * holding its first unit's first eqn. A path can name several boxes (a scope entered
 * again later), so the box is found from the eqns, not from the path alone.
 */
function repeatContainer(fn, r, path, parent, scopes) {
  const unit = r.units[0];
  const node = Array.isArray(unit) && (fn.nodes || [])[unit[0]];
  if (!node || node.group !== r.group) return null;
  const want = JSON.stringify(path.map(String));
  for (let k = parent.get(ids.node(node.id)); k; k = parent.get(k)) {
    if (k === ids.group(r.group)) return path.length ? null : k;
    const sc = scopes.get(k);
    if (sc && sc.group === r.group && sc.path.length === path.length) {
      return JSON.stringify(sc.path.map(String)) === want ? k : null;
    }
  }
  return null;
}

/**
 * True for elements that can be expanded/collapsed: scope, repeat, unit and chunk
 * boxes, port bundles, and eqns owning sub-jaxprs.
 */
export function isCollapsible(ix, key) {
  return ids.isMadeBox(key) || (ids.isNode(key) && ix.items.has(key));
}

/** Ancestors of `key`, nearest first (excluding the key itself). */
export function ancestors(ix, key) {
  const out = [];
  for (let k = ix.parent.get(key); k; k = ix.parent.get(k)) out.push(k);
  return out;
}

/** The visible element standing for `key`: its outermost collapsed ancestor, else itself. */
export function visibleRep(ix, key, expanded) {
  let rep = key;
  for (const a of ancestors(ix, key)) if (isCollapsible(ix, a) && !expanded.has(a)) rep = a;
  return rep;
}

/**
 * The drawn nodes by the jaxpr line their eqn starts at, sorted; made again when the function's
 * text changes (its whole text arrived from the kernel: deferred.js).
 */
export function lineIndexOf(ix) {
  if (!ix.lineIndex || ix.lineIndex.text !== ix.fn.text) {
    const lines = (ix.fn.nodes || [])
      .filter((n) => Number.isInteger(n.line) && ix.parent.has(ids.node(n.id)))
      .map((n) => ({ line: n.line, id: n.id }))
      .sort((a, b) => a.line - b.line);
    ix.lineIndex = { text: ix.fn.text, lines };
  }
  return ix.lineIndex.lines;
}

/** Node whose eqn starts at the nearest line at or above `line` (null if none). */
export function nodeAtLine(ix, line) {
  const ls = lineIndexOf(ix);
  let lo = 0, hi = ls.length - 1, best = null;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (ls[mid].line <= line) {
      best = ls[mid].id;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return best;
}

/** Human text for an operand: `name: aval` for vars, `lit: aval` for literals. */
export function operandText(ix, op) {
  if (!op) return "?";
  if (op.var != null) {
    const v = ix.vars.get(op.var);
    return v ? `${v.name}: ${v.aval}` : String(op.var);
  }
  return op.aval ? `${op.lit}: ${op.aval}` : String(op.lit);
}

/**
 * How a reader names a Source: `cell [3], line 7` or `train.py:12` (widgets/ui/source-text.js), or "".
 * The full path is `srcPath`, for a tooltip under it.
 */
export function srcText(src) {
  if (!src || !src.file) return "";
  return shortWhere(src.file, src.line);
}

/** The full `path:line` of a Source (a tooltip's text: where the file really is), or "". */
export function srcPath(src) {
  return src && src.file ? fullWhere(src.file, src.line) : "";
}
