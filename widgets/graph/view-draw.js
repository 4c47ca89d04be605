/**
 * Layout and drawing for the graph view (view.js): the per-function state, a new
 * layout whenever the expansion changes, what follows each drawing (selection, key
 * element, story), and toggling a box in place. Installs methods on the view state `v`.
 */
import { indexFunction, isCollapsible, visibleRep } from "./model.js";
import * as ids from "./ids.js";
import { defaultExpansion, visibleEqnCount } from "./expansion.js";
import { buildScene } from "./scene.js";
import { timed, record, now } from "./timing.js";
import { firstBadNode, findingNode } from "./modes.js";
import { storySteps, storyLabel, stepLines } from "./story.js";
import { install } from "./view-state.js";

/** State of function `i`, built on first visit. */
function stateOf(v, i) {
  const { states, fns } = v;
  if (!states.has(i)) {
    const ix = timed("index", () => indexFunction(fns[i]));
    states.set(i, {
      ix, expanded: timed("expansion", () => defaultExpansion(ix)), selected: null, query: "", matches: [], matchIdx: -1, marks: new Map(),
      // the element a finding is about (an embedding view names its own: setKey)
      key: ((id) => (id && !v.compact ? ids.node(id) : null))(firstBadNode(ix.fn) || findingNode(v.doc, ix.fn)),
      records: null, transform: null, prefix: `${v.uid}:${i}:`, // records: on the first search
    });
  }
  return states.get(i);
}

/** Re-layout the current function; `after` runs once it is drawn. */
function relayout(v, after) {
  const { ui } = v;
  const st = v.st();
  const my = ++v.seq;
  const scene = timed("scene", () => buildScene(st.ix, st.expanded, `${st.prefix}${v.labelMode}:${v.present ? "P:" : ""}`, { labelOf: v.labelOf, m: v.M }));
  ui.status.textContent = "laying out…";
  ui.status.classList.add("jm-busy");
  const t0 = now();
  v.engine.run(scene.root).then((out) => {
    if (v.disposed || my !== v.seq) return;
    record("layout", t0);
    ui.status.classList.remove("jm-busy");
    ui.canvas.setAttribute("data-layout", v.engine.threaded ? "worker" : "main-thread");
    v.drawn = timed("draw", () => ui.stage.draw(scene, out.results, st.ix));
    v.elements = v.drawn.elements; // leaves and open containers (a breadcrumb selects those too)
    const shown = visibleEqnCount(st.ix, st.expanded), total = st.ix.count.get(st.ix.root) || 0;
    ui.status.textContent = `${shown} of ${total} eqns shown` + (out.stats && out.stats.layered ? " · simplified layout for large groups" : "");
    v.paintSelection();
    v.paintMatches();
    v.markKey(st);
    if (after) after();
    v.publishStory();
    for (const f of v.whenDrawn.splice(0)) f();
  }, (err) => {
    if (v.disposed || my !== v.seq) return;
    ui.status.classList.remove("jm-busy");
    ui.status.textContent = `layout failed: ${err && err.message}`;
  });
}

/** Toggle a collapsible, keeping it at the same place on screen. */
function toggle(v, key) {
  const st = v.st();
  const pz = v.ui.stage.pz;
  if (!isCollapsible(st.ix, key)) return;
  const before = v.drawn && v.drawn.boxes.get(key);
  const t0 = pz.transform;
  if (st.expanded.has(key)) st.expanded.delete(key);
  else st.expanded.add(key);
  v.relayout(() => {
    const after = v.drawn.boxes.get(key);
    if (before && after) {
      pz.set(t0.x + (before.x - after.x) * t0.k, t0.y + (before.y - after.y) * t0.k, t0.k);
    }
    v.grow();
  });
}

/**
 * After every drawing: its story (the drawn eqns in trace order) to the replay, and
 * to whoever plays it: the shared controls of a standalone view, or the host of an
 * embedded one. A new story starts at its end, the drawing as it is.
 */
function publishStory(v) {
  const { replay, strip } = v.ui, opts = v.opts;
  const st = v.st();
  const story = storySteps(st.ix, st.expanded);
  story.keys = story.keys.filter((k) => v.drawn.boxes.has(k));
  replay.bind(story);
  strip.mark(null);
  if (opts.onStory) opts.onStory();
  if (!opts.playback) return;
  const ix = st.ix, keys = story.keys;
  opts.playback.set({
    steps: keys.length,
    show: (p, from) => {
      // Values flow only where the edges show values: forward mode (`--values`).
      replay.show(p, from, { flow: v.mode === "forward" });
      strip.mark(p >= 1 && p < keys.length ? stepLines(ix, keys[p - 1]) : null);
    },
    label: (p) => storyLabel(ix, keys, p, { values: v.mode === "forward" ? ix.fn.values : null }),
  });
}

/** Mark the drawn element standing for the key element (its box when it is folded away). */
const markKey = (v, st) => v.ui.stage.setKey(st.key && st.markKey !== false && st.ix.parent.has(st.key) ? visibleRep(st.ix, st.key, st.expanded) : null);

/** The current function's state. */
const currentState = (v) => stateOf(v, v.current);

/** Install stateOf, st, markKey, relayout, toggle and publishStory on `v`. */
export const installDrawing = (v) => install(v, { stateOf, st: currentState, markKey, relayout, toggle, publishStory });
