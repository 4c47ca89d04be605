/**
 * The keys document read once for the view (docs/schema.md, "Keys documents"): the
 * children of every node, the runs with their members in preorder and the nodes leaving
 * them, findings bugs first, the set the "only paths to reused keys" filter keeps, and
 * search records. Pure functions of the document; missing lists read as empty and a
 * malformed link is dropped (a parent that does not precede its child makes a root, a
 * run member whose parent is outside its run leaves the run), so a partial document
 * still draws as a forest.
 */

const list = (x) => (Array.isArray(x) ? x : []);

/** The states a key can be in, from harmless to a bug (the order aggregates take the worst of). */
export const STATES = ["unused", "consumed", "reused"];
const RANK = { unused: 0, consumed: 1, reused: 2 };
/** Findings whose node the filter keeps even when its state is not `reused`. */
const REUSE_KINDS = new Set(["key_reuse", "loop_reuse"]);

/** A node's state as one of STATES (an unknown state draws as unused). */
export const stateOf = (n) => (n && RANK[n.state] != null ? n.state : "unused");

/** The worst of `states` (reused before consumed before unused); "unused" for none. */
export function worstState(states) {
  let w = 0;
  for (const s of states) w = Math.max(w, RANK[s] ?? 0);
  return STATES[w];
}

/** Findings sorted bugs, then warnings, then the rest; document order kept within each. */
export function sortFindings(findings) {
  const sev = (f) => ({ bug: 0, warning: 1 })[f.severity] ?? 2;
  return list(findings).filter((f) => f && typeof f === "object")
    .map((f, i) => [f, i]).sort((p, q) => sev(p[0]) - sev(q[0]) || p[1] - q[1]).map((p) => p[0]);
}

/**
 * `{nodes, parent, children, roots, runs, runOf, findings, findingsOf, summary, empty}`.
 * `parent[i]` is -1 for a root; `runOf[i]` the run id node i is folded into (-1: none);
 * `runs` maps run id to `{id, first, last, length, label, parent, members, exits}` where
 * `members` are the run's nodes in preorder and `exits` the nodes outside the run whose
 * parent is in it (`last` first): what the folded run draws as its children.
 */
export function readKeys(doc) {
  const nodes = list(doc.nodes).map((n, i) => ({ ...(n && typeof n === "object" ? n : {}), id: i }));
  const N = nodes.length;
  const parent = new Int32Array(N).fill(-1);
  const children = Array.from({ length: N }, () => []);
  const roots = [];
  nodes.forEach((n, i) => {
    n.uses = list(n.uses).filter((u) => u && typeof u === "object");
    n.made = list(n.made).filter((s) => s && typeof s === "object");
    const p = n.parent;
    if (Number.isInteger(p) && p >= 0 && p < i) {
      parent[i] = p;
      children[p].push(i);
    } else roots.push(i);
  });

  // Runs: members in preorder; a member joins only when its parent is a member (or it is the first).
  const runs = new Map();
  const runOf = new Int32Array(N).fill(-1);
  for (const r of list(doc.runs)) {
    if (!r || !Number.isInteger(r.id) || runs.has(r.id)) continue;
    runs.set(r.id, { ...r, members: [], exits: [], parent: -1 });
  }
  for (let i = 0; i < N; i++) {
    const run = runs.get(nodes[i].run);
    if (!run || stateOf(nodes[i]) === "reused") continue;
    const p = parent[i];
    if (run.members.length && !(p >= 0 && runOf[p] === run.id)) continue; // the first member joins as it is
    if (!run.members.length) run.parent = p;
    run.members.push(i);
    runOf[i] = run.id;
  }
  for (const [id, run] of runs) {
    if (!run.members.length) {
      runs.delete(id);
      continue;
    }
    run.first = run.members[0];
  }
  for (let i = 0; i < N; i++) {
    const p = parent[i];
    if (runOf[i] < 0 && p >= 0 && runOf[p] >= 0) runs.get(runOf[p]).exits.push(i);
  }
  for (const run of runs.values()) {
    const k = run.exits.indexOf(run.last);
    if (k > 0) run.exits.unshift(...run.exits.splice(k, 1));
    run.length = Number.isInteger(run.length) ? run.length : run.members.length;
  }

  const findings = sortFindings(doc.findings);
  const findingsOf = new Map();
  for (const f of findings) {
    if (!Number.isInteger(f.node) || f.node < 0 || f.node >= N) continue;
    if (!findingsOf.has(f.node)) findingsOf.set(f.node, []);
    findingsOf.get(f.node).push(f);
  }
  return {
    nodes, parent, children, roots, runs, runOf, findings, findingsOf,
    summary: doc.summary && typeof doc.summary === "object" ? doc.summary : null,
    empty: N === 0,
  };
}

/**
 * The node the view is about: the key of the first reuse finding (bugs come first), else the
 * first reused key, else the node of the first finding; -1 when nothing is wrong.
 */
export function storyNode(m) {
  const ok = (i) => Number.isInteger(i) && i >= 0 && i < m.nodes.length;
  const reuse = m.findings.find((f) => REUSE_KINDS.has(f.kind) && ok(f.node));
  if (reuse) return reuse.node;
  const reused = m.nodes.find((n) => stateOf(n) === "reused");
  if (reused) return reused.id;
  const any = m.findings.find((f) => ok(f.node));
  return any ? any.node : -1;
}

/** Node ids from the root of `id`'s tree down to `id`. */
export function pathTo(m, id) {
  const path = [];
  for (let i = id; i >= 0; i = m.parent[i]) path.push(i);
  return path.reverse();
}

/**
 * What "only paths to reused keys" keeps: every reused node and every node of a
 * `key_reuse` / `loop_reuse` finding (the targets), their ancestors, and the keys made
 * from a target directly (its children). Closed under ancestors.
 */
export function reuseSet(m) {
  const keep = new Set();
  const targets = m.nodes.filter((n) => stateOf(n) === "reused").map((n) => n.id);
  for (const f of m.findings) if (REUSE_KINDS.has(f.kind) && m.findingsOf.has(f.node)) targets.push(f.node);
  for (const t of targets) {
    for (let i = t; i >= 0 && !keep.has(i); i = m.parent[i]) keep.add(i);
    keep.add(t);
  }
  for (const t of targets) for (const c of m.children[t]) keep.add(c);
  return keep;
}

/**
 * Search records (widgets/ui/search.js) for every node: label, detail, how, function, loop,
 * namespace names, the names, functions and library lines of its uses and the code of its lines match as
 * text; where it was made and where it was used match `file:line` queries.
 */
export function searchRecords(m) {
  return m.nodes.map((n) => {
    const srcs = [...n.made, ...n.uses.map((u) => u.source)].filter((s) => s && typeof s === "object");
    const text = [n.label, n.detail, n.function, n.loop, ...(Array.isArray(n.names) ? n.names : [])];
    for (const u of n.uses) text.push(u.name, u.function, u.via, u.loop);
    for (const s of srcs) text.push(s.code);
    return { id: n.id, text: text.filter((t) => t != null && t !== "").map(String), exact: [n.how], locs: srcs };
  });
}
