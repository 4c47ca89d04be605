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
 * The events come from events.js, the step's words from step-labels.js.
 */
import { STATES } from "./model.js";
import { eventLabel, groupLabel } from "./step-labels.js";
import { plural } from "../ui/words.js";

/** Where a use happened, in a step label's words (step-labels.js). */
export { lineText } from "./step-labels.js";

const RANK = { unused: 0, consumed: 1, reused: 2 };

/**
 * Where each node is drawn on the forest `t`: `itemOf[i]` its own item or the stand-in hiding it
 * (null: filtered out), `owners(i)` the items whose state it counts in (tree.js worstOf: its
 * own, and an unfolded run or opened aggregate drawn beside it), `standsIn(i)` whether its item
 * is a stand-in.
 */
function drawnItems(m, t) {
  const N = m.nodes.length;
  const itemOf = new Array(N).fill(null);
  const own = new Uint8Array(N); // 1: the node counts in its item's state (tree.js: worstOf)
  for (let i = 0; i < N; i++) {
    if (t.keep && !t.keep.has(i)) continue;
    const p = m.parent[i];
    const mine = t.byNode.get(i);
    const hider = mine ? null : t.hiddenBy.get(i);
    itemOf[i] = mine || hider || (p >= 0 ? itemOf[p] : null);
    own[i] = mine || (hider && hider.type !== "node") ? 1 : 0;
  }
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
  const owners = (i) => {
    const more = extra.size ? extra.get(i) || none : none;
    return own[i] && itemOf[i] ? (more.length ? [itemOf[i], ...more] : [itemOf[i]]) : more;
  };
  const standsIn = (i) => itemOf[i] && t.byNode.get(i) !== itemOf[i];
  return { itemOf, owners, standsIn };
}

/** The events grouped into steps on the drawn items: `{events, group, items: Set<item>, focus}` each. */
function groupSteps(ev, { itemOf, standsIn }) {
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
  return steps;
}

/** An item's state after p steps from its appearance and transitions; null when it has not appeared yet. */
function stateAfter(appearAt, trans, key, p) {
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

/**
 * What step `s` (1-based) does to the drawn items: when each appears (into `pl.appearAt`), and
 * its state, the worst of its own nodes (into `pl.trans`). Returns the nodes reused at it.
 */
function playStep(pl, ev, drawn, st, s) {
  const dirty = new Set();
  const flashNodes = [];
  for (const e of st.events) {
    for (const i of ev.appearing[e]) {
      pl.nodeRank[i] = 0;
      const it0 = drawn.itemOf[i];
      if (it0 && !pl.appearAt.has(it0.key)) pl.appearAt.set(it0.key, s);
      for (const it of drawn.owners(i)) {
        if (!pl.appearAt.has(it.key)) pl.appearAt.set(it.key, s);
        pl.countOf(it)[0] += 1;
        dirty.add(it);
      }
    }
    for (const c of ev.changes[e]) {
      const was = pl.nodeRank[c.node];
      pl.nodeRank[c.node] = RANK[c.state];
      if (c.state === "reused" && c.nth > 0) flashNodes.push(c.node);
      for (const it of drawn.owners(c.node)) {
        const cnt = pl.countOf(it);
        if (was >= 0) cnt[was] -= 1;
        cnt[RANK[c.state]] += 1;
        dirty.add(it);
      }
    }
  }
  for (const it of dirty) {
    const c = pl.countOf(it);
    const state = STATES[c[2] ? 2 : c[1] ? 1 : 0];
    const tr = pl.trans.get(it.key) || [];
    if (!tr.length || tr[tr.length - 1][1] !== state) tr.push([s, state]);
    pl.trans.set(it.key, tr);
  }
  return flashNodes;
}

/** Play the steps once: each item's appearance and states; each step's label, item keys and flashing keys. */
function playSteps(m, ev, drawn, steps) {
  const counts = new Map(); // item -> [unused, consumed, reused] among its appeared own nodes
  const pl = {
    appearAt: new Map(),
    trans: new Map(),
    nodeRank: new Int8Array(m.nodes.length).fill(-1),
    countOf(it) {
      let c = counts.get(it);
      if (!c) counts.set(it, (c = [0, 0, 0]));
      return c;
    },
  };
  steps.forEach((st, k) => {
    const s = k + 1;
    const flashNodes = playStep(pl, ev, drawn, st, s);
    st.label = st.events.length === 1 || !st.group ? st.events.map((e) => eventLabel(m, ev, e)).join("; ")
      : groupLabel(m, ev, st.events, st.group);
    st.items = new Set([...st.items].map((it) => it.key));
    st.flash = new Set();
    for (const i of flashNodes) {
      const it = drawn.itemOf[i];
      if (it && stateAfter(pl.appearAt, pl.trans, it.key, s) === "reused") st.flash.add(it.key);
    }
  });
  return pl;
}

/**
 * The story on the drawn forest `t` (tree.js buildTree), from `ev = keyEvents(m)`:
 * `{steps, label(p), stepMarks(p), stateAt(key, p), appearAt, trans}`. `steps[s]` is
 * `{events, group, label, items: Set, flash: Set, focus}` (item keys; `group`: the stand-in
 * item whose events the step gathers, or null; `focus`: the item the step is about).
 * `stepMarks(p)` is what draw.js paints after p steps (null at the end: the ordinary drawing);
 * `appearAt` (item key -> step) and `trans` (item key -> [[step, state], ...]) say when each
 * item appears and how its state changes.
 */
export function keyStory(m, ev, t) {
  const N = m.nodes.length;
  const drawn = drawnItems(m, t);
  const steps = groupSteps(ev, drawn);
  const { appearAt, trans } = playSteps(m, ev, drawn, steps);
  /** An item's state after p steps; null when it has not appeared yet. */
  const stateAt = (key, p) => stateAfter(appearAt, trans, key, p);
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
    stepMarks(p) {
      if (p >= steps.length) return null;
      const st = p > 0 ? steps[p - 1] : null;
      return { state: (it) => stateAt(it.key, p), current: st ? st.items : nothing, flash: st ? st.flash : nothing };
    },
  };
}
