/**
 * The keys view's playback story (widgets/ui/playback.js): the cell's key events in program
 * order, told on the tree as drawn. Pure functions of the document (model.js) and the drawn
 * forest (tree.js); nothing here touches the DOM.
 *
 * What happened, and when, comes from the document only (docs/schema.md, "Keys documents"):
 * - every use carries `order`, a sequence number over the capture (the uses of one jitted call
 *   share their call's number; nodes are a preorder, so a parent's use sorts before its child's);
 * - roots are listed in the order the cell first touched them, so a root appears no later than
 *   the next root and no later than the first event in its tree;
 * - a `split`, `fold_in` or `clone` node is made by its parent's use of that kind (the k-th such
 *   child by the k-th such use: a split JAX answers with keys already seen makes no new node);
 * - a `row` is made with the key array it belongs to: "a split adds its children";
 * - any other node (loop carries, keys made inside a program without a use on the parent)
 *   appears with the first event in its subtree, or with its parent.
 * A key's state follows its consuming uses (and those of the key arrays it was taken from, and
 * of the loop keys carried from it: the rules of docs/schema.md): one makes it consumed, the
 * second reuses it, and at its last such use it takes the document's own state, so the last
 * step equals the ordinary view. A key with such a state but no consuming use to show takes it
 * when it appears.
 *
 * Steps are taken on the drawn items: the events inside one folded run, or one aggregate of
 * rows, or one collapsed subtree, that follow one another are one step (the label says how
 * many). What a step draws is given per item key: when it appears, and its state step by step.
 */
import { STATES, stateOf } from "./model.js";
import { linesWhere, shortWhere } from "../ui/source-text.js";
import { plural } from "../ui/words.js";

const RANK = { unused: 0, consumed: 1, reused: 2 };
/** The use kind that makes a child of each `how`. */
const MAKER = { split: "split", fold_in: "fold_in", clone: "clone" };
/** Longest code shown in a step's label, in characters (the whole line is in the details panel). */
const CODE_MAX = 64;
/** Most child labels a split's label lists. */
const KIDS_MAX = 4;

const list = (x) => (Array.isArray(x) ? x : []);
const ORDINALS = ["zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"];
const ordinal = (n) => ORDINALS[n] || `${n}th`;

/** `cell [3], line 7` for a line of a cell, `train.py:12` elsewhere (widgets/ui/source-text.js). */
export function lineText(src) {
  if (!src || typeof src !== "object") return null;
  const line = Number.isFinite(src.line) ? src.line : null;
  return shortWhere(src.file == null ? "" : String(src.file), line) || null;
}

/** The code of a line, trimmed and cut for a one-line label; null when unknown. */
function codeText(src) {
  const code = src && src.code != null ? String(src.code).trim().replace(/\s+/g, " ") : "";
  if (!code) return null;
  return code.length > CODE_MAX ? code.slice(0, CODE_MAX - 1) + "…" : code;
}

/** `line 7 · jr.normal(sub, (3,))`: where and what, or the fallback when the line is unknown. */
function head(src, fallback) {
  const where = lineText(src);
  const code = codeText(src);
  if (where && code) return `${where} · ${code}`;
  return where || code || fallback;
}

/** How many times one use counts: its repeats per call (null: unbounded, a while loop). */
function timesOf(u) {
  if (u.times === null) return Infinity;
  return Number.isFinite(u.times) && u.times >= 0 ? u.times : 1;
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

  // When each node appears.
  const appear = new Int32Array(N).fill(-1);
  const taken = new Map(); // `${parent} ${kind}` -> children of that kind matched so far
  for (let i = 0; i < N; i++) {
    const p = parent[i];
    if (p < 0) {
      appear[i] = rootAt[i];
      continue;
    }
    const kind = MAKER[nodes[i].how];
    if (nodes[i].how === "row") appear[i] = appear[p];
    else if (kind) {
      const slot = `${p} ${kind}`;
      const k = taken.get(slot) || 0;
      taken.set(slot, k + 1);
      let seen = 0;
      const uses = list(nodes[p].uses);
      for (let j = 0; j < uses.length; j++) {
        if (uses[j].kind !== kind) continue;
        if (seen++ === k) {
          appear[i] = Math.max(appear[p], useAt[p][j]);
          break;
        }
      }
    }
    if (appear[i] < 0) appear[i] = Math.max(appear[p], firstSub[i]);
  }
  // A key is never used before it appears, nor after its children (a malformed document only).
  for (let i = N - 1; i >= 0; i--) {
    if (firstOwn[i] >= 0 && firstOwn[i] < appear[i]) appear[i] = firstOwn[i];
    const p = parent[i];
    if (p >= 0 && appear[i] < appear[p]) appear[p] = appear[i];
  }
  const appearing = events.map(() => []);
  for (let i = 0; i < N; i++) appearing[appear[i]].push(i);

  // Consuming uses, and whom they consume.
  const rowKids = Array.from({ length: N }, () => []);
  for (let i = 0; i < N; i++) if (parent[i] >= 0 && nodes[i].how === "row") rowKids[parent[i]].push(i);
  const arrayLike = (n) => n.how === "row" || list(n.shape).length > 0;
  const counted = Array.from({ length: N }, () => []); // node -> [[event, times], ...] in order
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

  const changes = events.map(() => []);
  for (let i = 0; i < N; i++) {
    const doc = RANK[stateOf(nodes[i])];
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
  return { events, appear, appearing, changes };
}

/** A key's name in a label: its label, and the array a row was taken from. */
function keyName(m, i) {
  const n = m.nodes[i];
  const label = String(n.label ?? `key ${i}`);
  const p = m.parent[i];
  if (n.how === "loop") return `the key carried through ${label}`;
  return n.how === "row" && p >= 0 ? `${label} of ${m.nodes[p].label ?? "a key array"}` : label;
}

/** `split 2 ([1], [0])`: what a split or fold_in made, from the nodes appearing with it. */
function madeText(m, ev, e, node) {
  const kids = ev.appearing[e].filter((i) => m.parent[i] === node);
  if (!kids.length) return null;
  const k = kids[0];
  const rows = ev.appearing[e].filter((i) => m.parent[i] === k);
  const label = String(m.nodes[k].label ?? "a key");
  if (!rows.length) return label;
  const shown = rows.slice(0, KIDS_MAX).map((r) => String(m.nodes[r].label ?? "?"));
  return `${label} (${shown.join(", ")}${rows.length > KIDS_MAX ? `, … ${plural(rows.length, "key")}` : ""})`;
}

/** The reuse part of a label: `second use: reuse (first at line 4)`, or null. */
function reuseText(m, ev, e, node) {
  const own = ev.changes[e].find((c) => c.node === node && c.state === "reused");
  const u = m.nodes[node].uses[ev.events[e].use];
  if (own) {
    if (own.nth >= 2) {
      const f = ev.events[own.first];
      const fu = f && f.kind === "use" ? m.nodes[f.node].uses[f.use] : null;
      const where = fu ? lineText(fu.source) : null;
      return `${ordinal(own.nth)} use: reuse${where ? ` (first at ${where})` : ""}`;
    }
    return `reuse${u.loop != null ? ` inside ${u.loop}` : ""}`;
  }
  const rows = ev.changes[e].filter((c) => c.node !== node && c.state === "reused").length;
  return rows ? `${plural(rows, "key")} taken from it reused` : null;
}

/** The one-line label of event `e`. */
export function eventLabel(m, ev, e) {
  const { kind, node, use } = ev.events[e];
  const n = m.nodes[node];
  const name = keyName(m, node);
  if (kind === "root") {
    const made = list(n.made)[0];
    const where = made ? head(made, null) : null;
    const what = n.how === "seed" ? `makes root key ${name}` : `root key ${name} appears: ${n.detail ?? n.how ?? "first seen"}`;
    return where ? `${where} ${what}` : what;
  }
  const u = n.uses[use];
  const where = head(u.source, `${u.name ?? u.kind ?? "use"}(…)`);
  const jit = u.function != null ? ` (in jitted ${u.function})` : "";
  let what;
  if (u.kind === "sampler") {
    const times = timesOf(u);
    const repeat = !Number.isFinite(times) ? " an unknown number of times per call" : times > 1 ? ` ${times} times per call` : "";
    what = `consumes ${name}${repeat}`;
  } else if (u.kind === "split") {
    const made = madeText(m, ev, e, node);
    what = made ? `splits ${name} into ${made}` : `splits ${name} again`;
  } else if (u.kind === "fold_in") {
    const made = madeText(m, ev, e, node);
    what = `derives ${made ?? "a key"} from ${name} (fold_in does not consume it)`;
  } else if (u.kind === "clone") what = `copies ${name} (clone)`;
  else if (u.kind === "data") what = `reads the data of ${name} (does not consume it)`;
  else if (u.kind === "wrap") what = `wraps the data of ${name} as a key again: the same key`;
  else what = `uses ${name}`;
  const reuse = u.consuming ? reuseText(m, ev, e, node) : null;
  return `${where}${jit} ${what}${reuse ? ` — ${reuse}` : ""}`;
}

/** `cell [3], lines 44–45`, `train.py:12–14`, `line 54`, or the distinct places joined. */
function linesOf(srcs) {
  const known = srcs.filter((x) => x && typeof x === "object" && Number.isFinite(x.line));
  const texts = [...new Set(srcs.map(lineText).filter(Boolean))];
  if (texts.length <= 1) return texts[0] || null;
  const files = new Set(known.map((x) => (x.file == null ? "" : String(x.file))));
  if (files.size === 1) {
    const range = linesWhere([...files][0], known.map((x) => x.line));
    if (range) return range;
  }
  return texts.slice(0, 3).join(", ") + (texts.length > 3 ? ", …" : "");
}

/** The label of several events inside one stand-in item (a run, an aggregate, a folded subtree). */
function groupLabel(m, ev, es, item) {
  const uses = es.map((e) => ev.events[e]).filter((x) => x.kind === "use").map((x) => m.nodes[x.node].uses[x.use]);
  const made = es.reduce((a, e) => a + ev.appearing[e].length, 0);
  const keys = new Set(es.map((e) => ev.events[e].node)).size;
  const reused = new Set(es.flatMap((e) => ev.changes[e].filter((c) => c.state === "reused").map((c) => c.node))).size;
  const where = linesOf(uses.map((u) => u.source)) || "";
  let what;
  if (item.type === "run") {
    what = `×${item.run.length} identical steps, folded into one run (${item.run.label ?? ""})`;
  } else if (item.type === "agg") {
    what = `${plural(item.rows.length, "key")} of ${m.nodes[item.of].label ?? "a key array"}`;
  } else if (item.type === "more") what = `${plural(item.list.length - item.shown, "key")} not shown (${item.label})`;
  else what = `inside folded ${m.nodes[item.id].label ?? "key"}`;
  const byName = new Map();
  for (const u of uses) {
    const nm = String(u.name ?? u.kind ?? "use");
    byName.set(nm, (byName.get(nm) || 0) + 1);
  }
  const verbs = [...byName].map(([nm, c]) => `${nm} ×${c}`).join(", ");
  const sameLine = uses.length > 1 && uses.every((u) => u.kind === "sampler" && lineText(u.source) === lineText(uses[0].source));
  if (sameLine && item.type === "agg") {
    const all = head(uses[0].source, String(uses[0].name));
    return `${all} consumes ${plural(keys, "key")} of ${m.nodes[item.of].label ?? "a key array"} (${plural(uses.length, "use")})` +
      (reused ? ` — ${reused} reused` : "");
  }
  const facts = [verbs, made ? `${plural(made, "key")} made` : null].filter(Boolean).join("; ");
  return `${where ? `${where} · ` : ""}${what}: ${facts || `${es.length} events`}${reused ? ` — ${reused} reused` : ""}`;
}

/**
 * The story on the drawn forest `t` (tree.js buildTree), from `ev = keyEvents(m)`:
 * `{steps, label(p), stage(p), stateAt(key, p), appearAt, trans}`. `steps[s]` is
 * `{events, group, label, items: Set, flash: Set, focus}` (item keys; `group`: the stand-in
 * item whose events the step gathers, or null; `focus`: the item the step is about).
 * `stage(p)` is what draw.js paints after p steps (null at the end: the ordinary drawing);
 * `appearAt` (item key -> step) and `trans` (item key -> [[step, state], ...]) say when each
 * item appears and how its state changes.
 */
export function keyStory(m, ev, t) {
  const N = m.nodes.length;
  // The drawn item of each node (its own, or the stand-in hiding it; null: filtered out).
  const itemOf = new Array(N).fill(null);
  const own = new Uint8Array(N); // 1: the node counts in its item's state (tree.js: worstOf)
  for (let i = 0; i < N; i++) {
    if (t.keep && !t.keep.has(i)) continue;
    const p = m.parent[i];
    const mine = t.byNode.get(i);
    const hider = mine ? null : t.hiddenBy.get(i);
    const it = mine || hider || (p >= 0 ? itemOf[p] : null);
    itemOf[i] = it;
    own[i] = mine || (hider && hider.type !== "node") ? 1 : 0;
  }
  // An unfolded run or an opened aggregate is drawn beside its nodes' own items and takes their worst state (tree.js)
  const extra = new Map(); // node -> more items its state counts in
  for (const it of t.items) {
    if (!it.expanded || (it.type !== "run" && it.type !== "agg")) continue;
    for (const i of it.type === "run" ? it.run.members : it.rows) {
      if (t.keep && !t.keep.has(i)) continue;
      if (!extra.has(i)) extra.set(i, []);
      extra.get(i).push(it);
    }
  }
  const none = [];
  /** The items whose state node i counts in. */
  const owners = (i) => {
    const more = extra.size ? extra.get(i) || none : none;
    return own[i] && itemOf[i] ? (more.length ? [itemOf[i], ...more] : [itemOf[i]]) : more;
  };
  const standsIn = (i) => itemOf[i] && t.byNode.get(i) !== itemOf[i];

  // Group the events into steps.
  const steps = [];
  ev.events.forEach((x, e) => {
    const items = new Set();
    let made = null, run = null; // the first item a key made here is drawn in, and the first run
    if (itemOf[x.node]) items.add(itemOf[x.node]);
    for (const i of ev.appearing[e]) {
      const it = itemOf[i];
      if (!it) continue;
      items.add(it);
      if (!made && it !== itemOf[x.node]) made = it;
      if (!run && it.type === "run") run = it;
    }
    for (const c of ev.changes[e]) if (itemOf[c.node]) items.add(itemOf[c.node]);
    if (!items.size) return; // nothing drawn changes (the filter hides it)
    const group = (standsIn(x.node) ? itemOf[x.node] : null) || run;
    const last = steps[steps.length - 1];
    if (group && last && last.group === group) {
      last.events.push(e);
      for (const it of items) last.items.add(it);
    } else {
      // what the step is about, for the view to keep in sight: the run or aggregate, else the key it made, else the key it used
      steps.push({ events: [e], group, items, focus: (group || made || itemOf[x.node] || items.values().next().value).key });
    }
  });

  // Replay the steps: when each item appears, and its state (the worst of its own nodes) after each step.
  const appearAt = new Map();
  const trans = new Map();
  const counts = new Map(); // item -> [unused, consumed, reused] among its appeared own nodes
  const nodeRank = new Int8Array(N).fill(-1);
  const countOf = (it) => {
    let c = counts.get(it);
    if (!c) counts.set(it, (c = [0, 0, 0]));
    return c;
  };
  steps.forEach((st, k) => {
    const s = k + 1;
    const dirty = new Set();
    const flashNodes = [];
    for (const e of st.events) {
      for (const i of ev.appearing[e]) {
        nodeRank[i] = 0;
        if (itemOf[i] && !appearAt.has(itemOf[i].key)) appearAt.set(itemOf[i].key, s);
        for (const it of owners(i)) {
          if (!appearAt.has(it.key)) appearAt.set(it.key, s);
          countOf(it)[0] += 1;
          dirty.add(it);
        }
      }
      for (const c of ev.changes[e]) {
        const was = nodeRank[c.node];
        nodeRank[c.node] = RANK[c.state];
        if (c.state === "reused" && c.nth > 0) flashNodes.push(c.node);
        for (const it of owners(c.node)) {
          const cnt = countOf(it);
          if (was >= 0) cnt[was] -= 1;
          cnt[RANK[c.state]] += 1;
          dirty.add(it);
        }
      }
    }
    for (const it of dirty) {
      const c = countOf(it);
      const state = STATES[c[2] ? 2 : c[1] ? 1 : 0];
      const tr = trans.get(it.key) || [];
      if (!tr.length || tr[tr.length - 1][1] !== state) tr.push([s, state]);
      trans.set(it.key, tr);
    }
    st.label = st.events.length === 1 || !st.group ? st.events.map((e) => eventLabel(m, ev, e)).join("; ")
      : groupLabel(m, ev, st.events, st.group);
    st.items = new Set([...st.items].map((it) => it.key));
    st.flash = new Set();
    for (const i of flashNodes) {
      const it = itemOf[i];
      if (it && stateAt(it.key, s) === "reused") st.flash.add(it.key);
    }
  });

  /** An item's state after p steps; null when it has not appeared yet. */
  function stateAt(key, p) {
    const a = appearAt.get(key);
    if (a == null || a > p) return null;
    const tr = trans.get(key);
    if (!tr) return "unused";
    let lo = 0, hi = tr.length - 1, found = "unused";
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (tr[mid][0] <= p) {
        found = tr[mid][1];
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }

  const nothing = new Set();
  return {
    steps,
    appearAt,
    trans,
    stateAt,
    label(p) {
      if (p <= 0) {
        return `Before the first key: ${plural(steps.length, "step")} replay how the cell made and used its ${plural(N, "key")}, in program order`;
      }
      return steps[Math.min(p, steps.length) - 1].label;
    },
    /** What draw.js paints after p steps (null at the end: the ordinary drawing). */
    stage(p) {
      if (p >= steps.length) return null;
      const st = p > 0 ? steps[p - 1] : null;
      return { state: (it) => stateAt(it.key, p), current: st ? st.items : nothing, flash: st ? st.flash : nothing };
    },
  };
}
