/**
 * Neighbourhood view: only the eqns within `depth` def-use hops of the selected eqn
 * (both directions), laid out flat. On a 50k-eqn program, "what feeds this and what
 * does it feed" is otherwise spread over many boxes.
 *
 * A hop follows a value from the eqn defining it to an eqn using it, and crosses
 * nesting through group ports: an eqn inside a sub-jaxpr that reads the sub-jaxpr's
 * input (or defines its output) is one hop from the owner eqn (scan, cond, pjit, …).
 *
 * The neighbourhood is drawn from an index of the same shape as indexFunction's
 * (model.js), with one root container holding the eqns, so the whole pipeline
 * (scene, layout, renderers, search, selection, details) works on it unchanged.
 */
import { h } from "../ui/dom.js";
import { plural } from "../ui/words.js";
import * as ids from "./ids.js";

/** Most eqns in a neighbourhood (the banner says when the set was cut). */
export const HOOD_CAP = 400;
export const MAX_DEPTH = 5;

const cache = new WeakMap(); // ix -> {adj, pos, ownerOf}

/** The element standing for a port on the eqn level: the owner eqn of its group, or null. */
function portOwner(ix, key) {
  let gid = null;
  if (ids.isPort(key)) {
    const v = ix.vars.get(ids.body(key));
    gid = v && v.group;
  } else if (ids.isOutput(key)) gid = ids.splitOutput(key)[0];
  const g = gid != null ? ix.groups.get(gid) : null;
  return g && g.node != null && ix.nodes.has(g.node) ? ids.node(g.node) : null;
}

/** Eqn-level endpoint of an edge end: nodes as is, ports as their owner eqn. */
const eqnEnd = (ix, key) => (ids.isNode(key) ? key : portOwner(ix, key));

/** Undirected eqn adjacency (def-use, through ports), built once per index. */
function tables(ix) {
  let t = cache.get(ix);
  if (t) return t;
  const adj = new Map();
  const link = (a, b) => {
    if (!a || !b || a === b) return;
    if (!adj.has(a)) adj.set(a, new Set());
    if (!adj.has(b)) adj.set(b, new Set());
    adj.get(a).add(b);
    adj.get(b).add(a);
  };
  for (const e of ix.edges) link(eqnEnd(ix, e.from), eqnEnd(ix, e.to));
  const pos = new Map();
  (ix.fn.nodes || []).forEach((n, i) => pos.set(ids.node(n.id), i));
  t = { adj, pos };
  cache.set(ix, t);
  return t;
}

/**
 * Eqn keys within `depth` hops of eqn `key`, in document order, at most `cap`
 * (nearest first when cut): `{keys, capped, dist}`.
 */
export function neighbourhood(ix, key, depth, cap = HOOD_CAP) {
  const { adj, pos } = tables(ix);
  const dist = new Map([[key, 0]]);
  const queue = [key];
  let capped = false;
  for (let i = 0; i < queue.length && !capped; i++) {
    const k = queue[i], d = dist.get(k);
    if (d >= depth) continue;
    for (const nb of adj.get(k) || []) {
      if (dist.has(nb)) continue;
      if (dist.size >= cap) {
        capped = true;
        break;
      }
      dist.set(nb, d + 1);
      queue.push(nb);
    }
  }
  const keys = [...dist.keys()].sort((a, b) => (pos.get(a) ?? 0) - (pos.get(b) ?? 0));
  return { keys, capped, dist };
}

/**
 * An index (indexFunction's shape) of the neighbourhood of eqn `key`: one root box
 * holding the eqns flat (owner eqns as plain boxes), the def-use edges between them,
 * and edges through ports turned into edges to / from the owner eqn.
 * `hood` = {center, depth, size, capped, cap} describes it.
 */
export function neighbourhoodIndex(ix, key, depth, cap = HOOD_CAP) {
  const { keys, capped } = neighbourhood(ix, key, depth, cap);
  const set = new Set(keys);
  const root = ids.group(ix.fn.root);
  const parent = new Map(keys.map((k) => [k, root]));
  const count = new Map(keys.map((k) => [k, 1]));
  count.set(root, keys.length);
  const edges = [];
  const seen = new Set();
  for (const e of ix.edges) {
    const from = eqnEnd(ix, e.from), to = eqnEnd(ix, e.to);
    if (!from || !to || from === to || !set.has(from) || !set.has(to)) continue;
    const id = e.var + "|" + from + "|" + to;
    if (seen.has(id)) continue;
    seen.add(id);
    edges.push({ var: e.var, from, to, group: e.group });
  }
  return {
    fn: ix.fn, groups: ix.groups, nodes: ix.nodes, vars: ix.vars,
    parent, items: new Map([[root, keys]]), ports: new Map([[root, { ins: [], consts: [], outs: [] }]]),
    scopes: new Map(), count, virt: new Map(), labels: new Map(),
    root, edges,
    hood: { center: key, depth, size: keys.length, capped, cap },
  };
}

/** Banner text: "Neighbourhood of dot_general (depth 2): 37 eqns". */
export function hoodText(ix, hood) {
  const n = ix.nodes.get(ids.body(hood.center));
  return `Neighbourhood of ${n ? n.prim : hood.center} (depth ${hood.depth}): ${plural(hood.size, "eqn")}` +
    (hood.capped ? ` (capped at ${hood.cap}: the nearest)` : "");
}

/**
 * The neighbourhood controls and the glue to the view. `control`: a "Neighbourhood"
 * button (.jm-neighbourhood) and a depth input (.jm-depth) for the toolbar; `banner`
 * (.jm-banner, with .jm-banner-back) for the graph area. Entering swaps the current
 * function's state (index, expansion, search records, cache prefix) for the
 * neighbourhood's and remembers the old ones with the pan/zoom; leaving restores
 * them. `ctx` = {ref, state(), relayout(after), pz, select(key), refresh(), fit()}.
 */
export function createHood(ctx) {
  const ref = ctx.ref;
  const button = h("button", { type: "button", class: "jm-btn jm-neighbourhood",
    title: "Only the eqns within <depth> def-use hops of the selected eqn (Escape: back)" }, "Neighbourhood", ref);
  const depth = h("input", { type: "number", class: "jm-depth", min: 1, max: MAX_DEPTH, value: 2,
    "aria-label": "neighbourhood depth (hops)" }, null, ref);
  const text = h("span", null, "", ref);
  const back = h("button", { type: "button", class: "jm-banner-back" }, "Back to full graph", ref);
  const banner = h("div", { class: "jm-banner", role: "status", hidden: true }, [text, " · ", back], ref);
  const show = (t, withBack) => {
    text.textContent = t;
    back.hidden = !withBack;
    banner.hidden = false;
  };
  const active = () => !!ctx.state().hoodSaved;
  let counter = 0;

  const enter = () => {
    const st = ctx.state();
    const base = st.hoodSaved || st;
    // Around the selected eqn; inside a neighbourhood with nothing selected, its centre.
    const isEqn = (k) => !!k && ids.isNode(k) && base.ix.parent.has(k);
    const key = isEqn(st.selected) ? st.selected : st.hoodSaved ? st.ix.hood.center : null;
    if (!isEqn(key)) {
      show("Select an eqn first: the neighbourhood is drawn around it.", false);
      setTimeout(() => active() || (banner.hidden = true), 2500);
      return false;
    }
    const d = Math.max(1, Math.min(MAX_DEPTH, Math.round(+depth.value) || 2));
    const hix = neighbourhoodIndex(base.ix, key, d);
    st.hoodSaved ||= { ix: st.ix, expanded: st.expanded, records: st.records, prefix: st.prefix, transform: ctx.pz.transform };
    st.ix = hix;
    st.expanded = new Set();
    st.records = null;
    st.prefix = `${st.hoodSaved.prefix}hood${++counter}:`;
    show(hoodText(hix, hix.hood), true);
    ctx.refresh();
    ctx.relayout(() => {
      ctx.fit();
      ctx.select(key);
    });
    return true;
  };

  const exit = () => {
    const st = ctx.state();
    const saved = st.hoodSaved;
    banner.hidden = true;
    if (!saved) return false;
    st.hoodSaved = null;
    Object.assign(st, { ix: saved.ix, expanded: saved.expanded, records: saved.records, prefix: saved.prefix });
    ctx.refresh();
    const t = saved.transform;
    ctx.pz.set(t.x, t.y, t.k);
    ctx.relayout(() => {
      ctx.pz.set(t.x, t.y, t.k);
      ctx.select(st.selected);
    });
    return true;
  };

  button.addEventListener("click", enter);
  depth.addEventListener("change", () => active() && enter());
  back.addEventListener("click", exit);
  return { control: h("span", { class: "jm-hood-wrap" }, [button, depth], ref), banner, enter, exit, active };
}
