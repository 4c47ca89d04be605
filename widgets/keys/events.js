/**
 * The key events of a keys document in program order, and what each does to the keys: which
 * nodes appear with it and which states it changes (the rules are in story.js's header and in
 * docs/schema.md, "Keys documents"). A pure function of the document (model.js); the story
 * (story.js) groups these events into steps on the drawn tree.
 */
import { STATES, stateOf } from "./model.js";

const RANK = { unused: 0, consumed: 1, reused: 2 };
/** The use kind that makes a child of each `how`. */
const MAKER = { split: "split", fold_in: "fold_in", clone: "clone" };

const list = (x) => (Array.isArray(x) ? x : []);

/** How many times one use counts: its repeats per call (null: unbounded, a while loop). */
export function timesOf(u) {
  if (u.times === null) return Infinity;
  return Number.isFinite(u.times) && u.times >= 0 ? u.times : 1;
}

/** Every use and every root as an event, sorted by program order (roots in first-touch order). */
function orderedEvents(m) {
  const nodes = m.nodes, N = nodes.length, parent = m.parent;
  const events = [];
  const orderOf = (u) => (Number.isFinite(u.order) ? u.order : Infinity);
  for (let i = 0; i < N; i++) {
    list(nodes[i].uses).forEach((u, j) => events.push({ kind: "use", node: i, use: j, o: orderOf(u), r: 1 }));
  }
  // First event of each subtree (ids are a preorder: children after their parent).
  const first = new Float64Array(N).fill(Infinity);
  for (const e of events) first[e.node] = Math.min(first[e.node], e.o);
  for (let i = N - 1; i >= 0; i--) if (parent[i] >= 0) first[parent[i]] = Math.min(first[parent[i]], first[i]);
  // Roots in first-touch order: each no later than the next one.
  let next = Infinity;
  for (let k = m.roots.length - 1; k >= 0; k--) {
    const r = m.roots[k];
    next = Math.min(first[r], next);
    events.push({ kind: "root", node: r, use: -1, o: next, r: 0 });
  }
  events.sort((a, b) => (a.o < b.o ? -1 : a.o > b.o ? 1 : a.r - b.r || a.node - b.node || a.use - b.use));
  return events;
}

/**
 * Where each node's events are: `useAt[i][j]` the event of use j, `rootAt[i]` a root's event,
 * `firstOwn[i]` its first use's event, `firstSub[i]` the first use's event in its subtree (-1: none).
 */
function eventIndex(m, events) {
  const N = m.nodes.length, parent = m.parent;
  const useAt = Array.from({ length: N }, () => []);
  const rootAt = new Int32Array(N).fill(-1);
  const firstOwn = new Int32Array(N).fill(-1);
  events.forEach((e, k) => {
    if (e.kind === "root") rootAt[e.node] = k;
    else {
      useAt[e.node][e.use] = k;
      if (firstOwn[e.node] < 0) firstOwn[e.node] = k;
    }
  });
  const firstSub = Int32Array.from(firstOwn);
  for (let i = N - 1; i >= 0; i--) {
    const p = parent[i];
    if (p >= 0 && firstSub[i] >= 0 && (firstSub[p] < 0 || firstSub[i] < firstSub[p])) firstSub[p] = firstSub[i];
  }
  return { useAt, rootAt, firstOwn, firstSub };
}

/** The event of the parent's use that makes child i (the k-th child of a kind by the k-th use of that kind), or -1. */
function makerEvent(m, idx, taken, i, kind) {
  const p = m.parent[i];
  const slot = `${p} ${kind}`;
  const k = taken.get(slot) || 0;
  taken.set(slot, k + 1);
  let seen = 0;
  const uses = list(m.nodes[p].uses);
  for (let j = 0; j < uses.length; j++) {
    if (uses[j].kind !== kind) continue;
    if (seen++ === k) return idx.useAt[p][j];
  }
  return -1;
}

/** The event at which each node appears. */
function appearances(m, idx) {
  const nodes = m.nodes, N = nodes.length, parent = m.parent;
  const appear = new Int32Array(N).fill(-1);
  const taken = new Map(); // `${parent} ${kind}` -> children of that kind matched so far
  for (let i = 0; i < N; i++) {
    const p = parent[i];
    if (p < 0) {
      appear[i] = idx.rootAt[i];
      continue;
    }
    const kind = MAKER[nodes[i].how];
    if (nodes[i].how === "row") appear[i] = appear[p];
    else if (kind) {
      const e = makerEvent(m, idx, taken, i, kind);
      if (e !== -1) appear[i] = Math.max(appear[p], e);
    }
    if (appear[i] < 0) appear[i] = Math.max(appear[p], idx.firstSub[i]);
  }
  // A key is never used before it appears, nor after its children (a malformed document only).
  for (let i = N - 1; i >= 0; i--) {
    if (idx.firstOwn[i] >= 0 && idx.firstOwn[i] < appear[i]) appear[i] = idx.firstOwn[i];
    const p = parent[i];
    if (p >= 0 && appear[i] < appear[p]) appear[p] = appear[i];
  }
  return appear;
}

/** Consuming uses, and whom they consume: node -> [[event, times], ...] (rows of a used array, a loop key's parent too). */
function consumingUses(m, events) {
  const nodes = m.nodes, N = nodes.length, parent = m.parent;
  const rowKids = Array.from({ length: N }, () => []);
  for (let i = 0; i < N; i++) if (parent[i] >= 0 && nodes[i].how === "row") rowKids[parent[i]].push(i);
  const arrayLike = (n) => n.how === "row" || list(n.shape).length > 0;
  const counted = Array.from({ length: N }, () => []);
  events.forEach((e, k) => {
    if (e.kind !== "use") return;
    const n = nodes[e.node], u = n.uses[e.use];
    if (!u.consuming) return;
    const t = timesOf(u);
    counted[e.node].push([k, t]);
    if (arrayLike(n)) {
      const stack = [...rowKids[e.node]];
      while (stack.length) {
        const r = stack.pop();
        counted[r].push([k, t]);
        stack.push(...rowKids[r]);
      }
    }
    if (n.how === "loop" && parent[e.node] >= 0) counted[parent[e.node]].push([k, t]);
  });
  return counted;
}

/** The state changes each event makes: one consuming use consumes, the second reuses, the last takes the document's state. */
function stateChanges(m, counted, appear, nEvents) {
  const changes = Array.from({ length: nEvents }, () => []);
  for (let i = 0; i < m.nodes.length; i++) {
    const doc = RANK[stateOf(m.nodes[i])];
    const c = counted[i];
    if (!c.length) {
      if (doc > 0) changes[appear[i]].push({ node: i, state: STATES[doc], nth: 0, first: -1 });
      continue;
    }
    c.sort((a, b) => a[0] - b[0]);
    let total = 0, was = 0;
    c.forEach(([k, t], n) => {
      total += t;
      let r = Math.min(total === 0 ? 0 : total === 1 ? 1 : 2, doc);
      if (n === c.length - 1) r = doc;
      if (r !== was || r === 2) changes[k].push({ node: i, state: STATES[r], nth: n + 1, first: c[0][0] });
      was = r;
    });
  }
  return changes;
}

/**
 * The events of the document in program order, and what each does to the keys:
 * `{events, appear, changes, appearing}`. `events[e]` is `{kind: "root" | "use", node, use}`
 * (`use`: index in the node's uses, -1 for roots); `appear[i]` the event at which node i
 * appears; `appearing[e]` the nodes appearing at event e; `changes[e]` the state changes it
 * makes, `{node, state, nth, first}` (`nth`: the node's nth consuming use, `first`: the event
 * of its first).
 */
export function keyEvents(m) {
  const events = orderedEvents(m);
  const appear = appearances(m, eventIndex(m, events));
  const appearing = events.map(() => []);
  for (let i = 0; i < m.nodes.length; i++) appearing[appear[i]].push(i);
  const changes = stateChanges(m, consumingUses(m, events), appear, events.length);
  return { events, appear, appearing, changes };
}
