/**
 * What the key tree shows, from the document (model.js) and the view's choices (`ui`):
 * a forest of items in preorder. Items are document nodes, and three stand-ins that keep a
 * big tree drawable:
 *
 * - `run`: a folded chain of identical steps (doc.runs), at the place of its first node;
 *   folded, its children are the nodes leaving the run (`last` first); unfolded, its first
 *   node with at most `ui.runs.get(id)` of its nodes (preorder) and a `more` item for the rest.
 * - `agg`: more than AGG_OVER `row` children of one node, as one child; opened, a page of
 *   AGG_PAGE rows at a time and a `more` item.
 * - `more`: "+N more", the hidden rest of an opened run or aggregate; clicking shows a page more.
 *
 * Collapsed nodes (`ui.collapsed`) hide their subtree; with `ui.filter` only the nodes of
 * `reuseSet` are shown. `standIn` finds the drawn item that hides a node, `reveal` opens
 * whatever hides it. Iterative throughout: a chain of 5,000 keys is 5,000 levels deep.
 */
import { reuseSet, stateOf, worstState, STATES } from "./model.js";
import { plural } from "../ui/words.js";

/** A node with more than this many `row` children shows them as one aggregate child. */
export const AGG_OVER = 8;
/** Rows an opened aggregate shows per page. */
export const AGG_PAGE = 50;
/** Run nodes an unfolded run shows per page (in preorder). */
export const RUN_PAGE = 20;

/** The view's choices: collapsed nodes, unfolded runs and opened aggregates (id -> shown), the filter. */
export function initialUi() {
  return { collapsed: new Set(), runs: new Map(), aggs: new Map(), filter: false };
}

/** "40 keys: 2 reused, 38 consumed". */
export function countsText(m, ids) {
  const c = { unused: 0, consumed: 0, reused: 0 };
  for (const i of ids) c[stateOf(m.nodes[i])] += 1;
  const parts = [...STATES].reverse().filter((s) => c[s]).map((s) => `${c[s]} ${s}`);
  return `${plural(ids.length, "key")}: ${parts.join(", ")}`;
}

const worstOf = (m, ids) => worstState(ids.map((i) => stateOf(m.nodes[i])));

/** A node's own item. */
const nodeItem = (B, id) => ({ key: `n${id}`, type: "node", id, state: stateOf(B.m.nodes[id]), label: String(B.m.nodes[id].label ?? `key ${id}`) });

/** Record that `item` stands in for the nodes `ids`. */
function hide(B, ids, item) {
  for (const i of ids) B.hiddenBy.set(i, item);
}

/** The "+N more" item after the first `shown` of `list` (it hides the rest; `step` more a click). */
function moreItem(B, owner, list, shown, step) {
  const rest = list.slice(shown);
  const item = { key: `more:${owner.key}`, type: "more", id: -1, state: worstOf(B.m, rest), label: `+${rest.length} more`,
    owner, list, shown, step, collapsible: false, expanded: false };
  hide(B, rest, item);
  return item;
}

/** The stand-in of a run: folded (its exits below it), or unfolded a page at a time (its first member below it). */
function runItem(B, run) {
  const { m, ui, pass } = B;
  const members = run.members.filter(pass);
  const item = { key: `run${run.id}`, type: "run", id: -1, run, state: worstOf(m, members), collapsible: true,
    label: `×${run.length} ${run.label ?? ""}`.trim() };
  item.expanded = ui.runs.has(run.id);
  if (!item.expanded) {
    hide(B, members, item);
    item.kids = run.exits.filter(pass).map((e) => nodeItem(B, e));
    return item;
  }
  const shown = Math.max(1, ui.runs.get(run.id) || RUN_PAGE);
  const visible = new Set(members.slice(0, shown));
  const more = members.length > shown ? moreItem(B, item, members, shown, RUN_PAGE) : null;
  if (more) more.kids = run.exits.filter((e) => pass(e) && !visible.has(m.parent[e])).map((e) => nodeItem(B, e));
  B.runCtx.set(run.id, { visible, more, moreParent: more ? m.parent[members[shown]] : -1 });
  item.kids = [nodeItem(B, run.first)];
  return item;
}

/** Past AGG_OVER rows, node p's rows become one aggregate item (paged when open) where the first row was. */
function aggregateRows(B, p, out, rows) {
  if (rows.length <= AGG_OVER) return out;
  const { m, ui } = B;
  const ids = rows.map((r) => r.id);
  const agg = { key: `agg${p}`, type: "agg", id: -1, of: p, rows: ids, state: worstOf(m, ids), collapsible: true,
    label: countsText(m, ids), expanded: ui.aggs.has(p) };
  if (agg.expanded) {
    const shown = Math.max(1, ui.aggs.get(p) || AGG_PAGE);
    agg.kids = rows.slice(0, shown);
    if (ids.length > shown) agg.kids.push(moreItem(B, agg, ids, shown, AGG_PAGE));
  } else {
    hide(B, ids, agg);
    agg.kids = [];
  }
  const first = out.indexOf(rows[0]);
  const rowSet = new Set(rows);
  const rest = out.filter((x) => !rowSet.has(x));
  rest.splice(first, 0, agg);
  return rest;
}

/** The child items of node item `item`; nodes they hide are recorded in hiddenBy. */
function childrenOfNode(B, item) {
  const { m, ui, pass } = B;
  const p = item.id;
  const kids = m.children[p].filter(pass);
  item.collapsible = kids.length > 0;
  item.expanded = item.collapsible && !ui.collapsed.has(p);
  if (!item.expanded) {
    hide(B, kids, item);
    return [];
  }
  const out = [];
  const rows = [];
  const inRun = m.runOf[p];
  for (const k of kids) {
    const r = m.runOf[k];
    if (r >= 0 && r !== inRun) {
      out.push(runItem(B, m.runs.get(r))); // entering a run: its stand-in
      continue;
    }
    if (r >= 0) {
      const ctx = B.runCtx.get(r);
      if (ctx && !ctx.visible.has(k)) continue; // past the unfolded run's page (hidden by its more item)
    }
    const n = nodeItem(B, k);
    if (m.nodes[k].how === "row") rows.push(n);
    out.push(n);
  }
  if (inRun >= 0) {
    const ctx = B.runCtx.get(inRun);
    if (ctx && ctx.more && ctx.moreParent === p) out.push(ctx.more);
  }
  return aggregateRows(B, p, out, rows);
}

/**
 * The visible forest: `{roots, items (preorder), byNode (node id -> item), hiddenBy, keep, hidden}`.
 * Item: `{key, type, id, state, label, parent, children, depth, index, collapsible, expanded}`
 * plus `run` (run items), `of` and `rows` (aggregates), `owner`, `list`, `shown` (more items).
 * `hidden` counts the nodes the filter hides (0 without it).
 */
export function buildTree(m, ui, keep = ui.filter ? reuseSet(m) : null) {
  const B = { m, ui, pass: keep ? (i) => keep.has(i) : () => true, hiddenBy: new Map(), runCtx: new Map() };
  const byNode = new Map();
  const items = [];
  const roots = m.roots.filter(B.pass).map((r) => (m.runOf[r] >= 0 ? runItem(B, m.runs.get(m.runOf[r])) : nodeItem(B, r)));
  const stack = [...roots].reverse();
  for (const r of roots) {
    r.parent = null;
    r.depth = 0;
  }
  while (stack.length) {
    const item = stack.pop();
    item.index = items.length;
    items.push(item);
    if (item.type === "node") byNode.set(item.id, item);
    const kids = item.type === "node" ? childrenOfNode(B, item) : item.kids || [];
    delete item.kids;
    if (item.collapsible == null) item.collapsible = kids.length > 0;
    if (item.expanded == null) item.expanded = kids.length > 0;
    item.children = kids;
    for (let i = kids.length - 1; i >= 0; i--) {
      kids[i].parent = item;
      kids[i].depth = item.depth + 1;
      stack.push(kids[i]);
    }
  }
  return { roots, items, byNode, hiddenBy: B.hiddenBy, keep, hidden: keep ? m.nodes.length - keep.size : 0 };
}

/**
 * The drawn item that stands for node `id`: its own item, or the run, aggregate, "more"
 * or collapsed node that hides it (or hides an ancestor). Null when the filter hides it.
 */
export function standIn(m, t, id) {
  if (t.keep && !t.keep.has(id)) return null;
  for (let i = id; i >= 0; i = m.parent[i]) {
    const it = t.byNode.get(i) || t.hiddenBy.get(i);
    if (it) return it;
  }
  return null;
}

/** Open `item` one step (unfold a run, open an aggregate, show another page, expand a node) or close it. */
export function toggle(ui, item) {
  if (item.type === "node") {
    if (ui.collapsed.has(item.id)) ui.collapsed.delete(item.id);
    else ui.collapsed.add(item.id);
  } else if (item.type === "run") {
    if (ui.runs.has(item.run.id)) ui.runs.delete(item.run.id);
    else ui.runs.set(item.run.id, RUN_PAGE);
  } else if (item.type === "agg") {
    if (ui.aggs.has(item.of)) ui.aggs.delete(item.of);
    else ui.aggs.set(item.of, AGG_PAGE);
  } else if (item.type === "more") showMore(ui, item, item.shown + item.step);
}

/** Show `count` (rounded up to a page) of the list a "more" item belongs to. */
function showMore(ui, more, count) {
  const n = Math.ceil(count / more.step) * more.step;
  const o = more.owner;
  if (o.type === "run") ui.runs.set(o.run.id, Math.max(n, ui.runs.get(o.run.id) || 0));
  else ui.aggs.set(o.of, Math.max(n, ui.aggs.get(o.of) || 0));
}

/**
 * Change `ui` so node `id` is drawn: the filter goes off if it hides the node, collapsed
 * ancestors expand, runs unfold and aggregates open far enough. Returns the new tree.
 */
export function reveal(m, ui, id) {
  if (ui.filter && !reuseSet(m).has(id)) ui.filter = false;
  let t = buildTree(m, ui);
  for (let guard = 0; guard <= m.nodes.length && !t.byNode.has(id); guard++) {
    const it = standIn(m, t, id);
    if (!it) break;
    if (it.type === "more") {
      let x = id; // the hidden member or row that id is (or descends from)
      while (x >= 0 && !it.list.includes(x)) x = m.parent[x];
      if (x < 0) break;
      showMore(ui, it, it.list.indexOf(x) + 1);
    } else if (!it.expanded) toggle(ui, it);
    else break; // an expanded stand-in cannot hide anything: a malformed document
    t = buildTree(m, ui);
  }
  return t;
}
