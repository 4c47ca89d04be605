/**
 * Playback marks on one drawing of the graph view: after step `p` of the story
 * (story.js), what the story has not reached is faded (`.jm-pb-future`), the step just
 * taken is marked (`.jm-pb-current`), and on a single step forward the values flowing
 * into it run along its input edges (`.jm-pb-flow`, a dash moving from the producer to
 * the eqn: left to right, or right to left in a mirrored drawing).
 *
 * Nothing is laid out again: each drawn element gets, once per drawing, the step it
 * appears at, and elements are kept sorted by it, so a step touches only the elements
 * whose state changes (a jump touches those in between). The canvas renderer gets the
 * same table and redraws (faded, no animation).
 *
 * When an element appears:
 * - an eqn or a collapsed box: at its own step;
 * - an open container's frame (group, scope, owner...): at the first step inside it;
 * - input ports of a group: when the group is entered (the function's inputs: from the
 *   start); output ports: at the group's last step;
 * - an edge: when both its ends have appeared, so an eqn's input edges appear with it;
 * - an edge label: with the first edge drawn through its segment.
 * Position `steps` is the drawing as it was: no class, no flow, nothing left over.
 * Position -1 (a host's "not started yet") fades everything.
 */
import { s } from "../ui/dom.js";
import * as ids from "./ids.js";

/** Distance (px) the step just taken keeps from the edges of the view when followed. */
const FOLLOW_MARGIN = 40;

const steps = (r) => (r.story ? r.story.keys.length : 0);

/** The step each drawn element (key), edge (index) and edge label appears at. */
function appearTables(geo, ix, story, N) {
  const clamp = (v) => Math.max(0, Math.min(N, v));
  const stepOf = new Map(story.keys.map((k, i) => [k, i + 1]));
  const groupOf = (k) => {
    let g = ix.parent.get(k);
    while (g && !ids.isGroup(g)) g = ix.parent.get(g);
    return g;
  };
  const contAt = (k) => (k === ix.root ? 0 : clamp(story.first.has(k) ? story.first.get(k) : 0));
  const portAt = (k, out) => {
    const g = groupOf(k);
    if (!g) return 0;
    if (out) return g === ix.root ? N : clamp(story.last.has(g) ? story.last.get(g) : N);
    return contAt(g);
  };
  const app = new Map(); // element key -> step
  for (const c of geo.conts) app.set(c.key, contAt(c.key));
  for (const l of geo.leaves) {
    const k = l.key;
    let a = 0;
    if (stepOf.has(k)) a = stepOf.get(k);
    else if (l.open) a = contAt(k);
    else if (ids.isPort(k)) a = portAt(k, false);
    else if (ids.isOutput(k)) a = portAt(k, true);
    else if (ids.isBundle(k)) a = portAt(k, (ix.virt.get(k) || {}).side === "out");
    app.set(k, a);
  }
  const edgeApp = new Int32Array(geo.edges.length);
  const segApp = new Map(); // container + "\n" + segment id -> step
  geo.edges.forEach((e, i) => {
    const a = Math.max(app.get(e.from) || 0, app.get(e.to) || 0);
    edgeApp[i] = a;
    const sg = e.segs || [];
    for (let q = 0; q < sg.length; q += 4) {
      const sk = sg[q] + "\n" + sg[q + 1];
      const was = segApp.get(sk);
      if (was === undefined || a < was) segApp.set(sk, a);
    }
  });
  const labelAt = (key, sid) => segApp.get(key + "\n" + sid) || 0;
  return { app, edgeApp, labelAt };
}

/** The step every drawn element appears at, and the SVG elements sorted by it (built once per drawing). */
function tables(r) {
  if (r.t) return r.t;
  const { d } = r, { geo } = d;
  const { app, edgeApp, labelAt } = appearTables(geo, d.index, r.story, steps(r));
  // SVG: every element with its step, sorted; the leaf element of each key.
  const items = [];
  const leafEl = new Map();
  d.conts.forEach((el, i) => items.push([app.get(geo.conts[i].key), el]));
  d.leaves.forEach((el, i) => {
    items.push([app.get(geo.leaves[i].key), el]);
    leafEl.set(geo.leaves[i].key, el);
  });
  d.edges.forEach((el, i) => items.push([edgeApp[i], el]));
  for (const l of d.labels) items.push([labelAt(l.key, l.sid), l.el]);
  items.sort((a, b) => a[0] - b[0]);
  r.t = { app, edgeApp, labelAt, items, at: Int32Array.from(items, (x) => x[0]), leafEl };
  return r.t;
}

/** First index of the sorted items appearing after step v. */
function after(t, v) {
  const at = t.at;
  let lo = 0, hi = at.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (at[mid] <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Fade exactly what appears after step p (SVG). */
function fade(r, p) {
  if (p === r.applied) return;
  const [lo, hi] = p < r.applied ? [p, r.applied] : [r.applied, p];
  const add = p < r.applied;
  for (let i = after(r.t, lo), end = after(r.t, hi); i < end; i++) r.t.items[i][1].classList.toggle("jm-pb-future", add);
  r.applied = p;
}

function unmark(r) {
  for (const el of r.cur) el.classList.remove("jm-pb-current");
  for (const el of r.flows) el.remove();
  r.cur = [];
  r.flows = [];
}

/** Values flowing into the eqn of step `key` along its drawn input edges (SVG). */
function flowInto(r, key, tone) {
  const { d } = r, { geo } = d;
  geo.edges.forEach((e, i) => {
    if (e.to !== key || !d.edges[i]) return;
    const path = d.edges[i].querySelector("path:not(.jm-edge-hit)");
    const dAttr = path && path.getAttribute("d");
    if (!dAttr) return;
    const el = s("path", { class: "jm-pb-flow" + (tone ? " jm-pb-flow-" + tone : ""), d: dAttr, pathLength: 100 }, null, d.flows);
    d.flows.appendChild(el);
    r.flows.push(el);
  });
}

/** Bring the step just taken into view when it is off screen (no zoom change). */
function follow(stage, d, key) {
  const b = d.geo.boxes.get(key);
  const svg = stage.svg;
  const w = svg.clientWidth || 0, h = svg.clientHeight || 0;
  if (!b || !w || !h) return;
  const { x, y, k } = stage.pz.transform;
  const bw = Math.min(b.w, 360), bh = Math.min(b.h, 60);
  const sx = x + b.x * k, sy = y + b.y * k;
  const inside = sx >= FOLLOW_MARGIN && sy >= FOLLOW_MARGIN / 2 && sx + bw * k <= w - FOLLOW_MARGIN && sy + bh * k <= h - FOLLOW_MARGIN / 2;
  if (!inside) stage.pz.centerOn(b.x + bw / 2, b.y + bh / 2);
}

/**
 * Show the drawing after `p` steps (-1: before the first, everything faded; steps:
 * complete, as drawn). `flow`: animate the values into the step just taken (only
 * on a single step forward); `tone`: "grad" for the adjoint colour.
 */
function show(r, p, from, { flow = false, tone = null } = {}) {
  const { stage, d, story } = r;
  if (!d || !story) return;
  const N = steps(r);
  p = Math.max(-1, Math.min(N, p));
  unmark(r);
  const key = p >= 1 && p < N ? story.keys[p - 1] : null;
  if (p >= N && !r.t) return stage.setPlay(null); // never left the end: nothing to undo
  const t = tables(r);
  if (d.renderer === "canvas") {
    r.applied = p;
    stage.setPlay(p >= N ? null : { p, current: key, leaf: (k) => t.app.get(k) || 0, edge: (i) => t.edgeApp[i], label: t.labelAt });
  } else {
    fade(r, p);
    const el = key && t.leafEl.get(key);
    if (el) {
      el.classList.add("jm-pb-current");
      r.cur.push(el);
    }
    if (key && flow && p === from + 1) flowInto(r, key, tone);
  }
  if (key) follow(stage, d, key);
}

/**
 * Playback for the drawings of `stage` (stage.js). `bind(story)` after every draw (the
 * story of what was drawn: storySteps); `show(p, from, {flow, tone})` applies position p.
 */
export function createReplay(stage) {
  /**
   * The replay's state: `d` stage.drawing() of the bound drawing, `t` its appear tables
   * (built on the first step away from the end); elements appearing after `applied`
   * carry .jm-pb-future; `cur` / `flows` the current step's marks.
   */
  const r = { stage, d: null, story: null, t: null, applied: 0, cur: [], flows: [] };
  return {
    /** A new drawing and its story (storySteps of what was drawn): shown complete. */
    bind(next) {
      unmark(r);
      r.d = stage.drawing();
      r.story = next;
      r.t = null;
      r.applied = steps(r);
      stage.setPlay(null);
    },
    steps: () => steps(r),
    /** The story bound last ({keys, first, last}), or null. */
    story: () => r.story,
    show: (p, from, o) => show(r, p, from, o),
  };
}
