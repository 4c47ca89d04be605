/**
 * Playback on the drawn sharding view: the story (story.js) shown as marks on cards that are
 * already laid out, so a step never re-lays anything out. What is not reached yet is faded
 * (`.jm-pb-future`), the step just taken stands out (`.jm-pb-current`); an array's step lights
 * the devices that hold its blocks in every mesh, a collective's step lights the devices of
 * its groups tagged with their group number, as a click on it does. Only the item classes
 * whose state changes are touched, so a step costs the same in a 5,000-step story.
 *
 * Motion, on a single forward step only (`show(p, p - 1)`) and never under
 * prefers-reduced-motion: the array's blocks turn from grey to their devices' colours while a
 * copy of each block flies to each of its holders' cells in the mesh (every holder of a
 * replicated block, at most MAX_FLIGHTS copies a step). Copies are plain coloured boxes in a
 * layer of their own and are removed when they land or at the next step; back steps, jumps
 * and the last position are drawn without motion, so `show(steps)` is the static view. The
 * flights are flights.js's.
 */
import { h } from "../ui/dom.js";
import { collectiveTags } from "./model.js";
import { flyBlocks, flightPlan } from "./flights.js";

export { MAX_FLIGHTS, FLIGHT_MS } from "./flights.js";

const FUTURE = "jm-pb-future", CURRENT = "jm-pb-current";

/** The elements each step reveals; bucket n holds findings that name nothing drawn (shown at the end). */
function stepItems(story, { meshes, arrays, calls, findings }) {
  const n = story.steps.length;
  const items = story.steps.map((s) =>
    s.kind === "mesh" ? [meshes[s.mesh].el]
      : s.kind === "array" ? [arrays[s.array].el]
        : s.kind === "call" ? [calls[s.call].el]
          : [calls[s.call].colls[s.k]]);
  items.push([]);
  story.findingStep.forEach((i, f) => findings[f] && items[Math.min(i, n)].push(findings[f]));
  return items;
}

/** Step i's elements become past, current or future (only when that changes). */
function setState(S, i, next) {
  if (S.state[i] === next) return;
  S.state[i] = next;
  for (const el of S.items[i]) {
    el.classList.toggle(FUTURE, next === "future");
    el.classList.toggle(CURRENT, next === "current");
    if (!el.classList.length) el.removeAttribute("class"); // the static view's own markup, exactly
  }
}

/** Drop what the last step marked: its flights, the lit mesh cells, the lit collective. */
function unmark(S) {
  for (const a of S.fl.moving) a.cancel(); // the last step's motion ends where the next one starts
  S.fl.moving = [];
  for (const f of S.fl.flights) f.remove();
  S.fl.flights = [];
  if (S.marked) for (const x of S.meshes) x.grid.mark(null);
  S.marked = false;
  if (S.litColl) {
    S.litColl.classList.remove("jm-sh-on");
    S.litColl.setAttribute("aria-pressed", "false");
  }
  S.litColl = null;
}

function markMeshes(S, fn) {
  for (const x of S.meshes) x.grid.mark(fn);
  S.marked = true;
}

/** Light what step s is about: an array's holders in every mesh (flying its blocks there on a single forward step), a collective's groups. */
function lightStep(S, s, animate) {
  const m = S.m;
  if (s.kind === "array") {
    const arr = m.arrays[s.array];
    const holders = new Set(arr.blocks.flatMap((b) => b.devices || []));
    markMeshes(S, (it) => holders.has(it.device));
    if (animate) flyBlocks(S.fl, s.array);
  } else if (s.kind === "collective") {
    const tags = collectiveTags(m.calls[s.call].collectives[s.k]);
    markMeshes(S, (it) => (tags.has(it.device) ? tags.get(it.device) || true : false));
    S.litColl = S.calls[s.call].colls[s.k];
    S.litColl.classList.add("jm-sh-on");
    S.litColl.setAttribute("aria-pressed", "true");
  }
}

/**
 * `shardingPlayback(o)`: o = `{root, view, m, story, meshes, arrays, calls, findings, clearSelection}`:
 * the drawn parts (view.js: mesh cards `{el, grid, mesh}`, array cards `{el, grid}`, call cards
 * `{el, colls}`, finding elements in `m.findings` order) and a function that drops the user's
 * selection. Returns the playback spec `{steps, show, label}` plus `dispose()`.
 */
export function shardingPlayback({ root, view, m, story, meshes, arrays, calls, findings, clearSelection }) {
  const n = story.steps.length;
  const layer = h("div", { class: "jm-sh-flights", "aria-hidden": "true" }, null, root);
  view.appendChild(layer);
  const win = root.ownerDocument.defaultView || globalThis;
  const still = () => !!(win.matchMedia && win.matchMedia("(prefers-reduced-motion: reduce)").matches);
  const S = {
    m, meshes, calls, items: stepItems(story, { meshes, arrays, calls, findings }),
    state: new Array(n + 1).fill("past"), // a view opens complete (position n)
    marked: false, litColl: null,
    fl: flightPlan(root, m, layer, meshes, arrays),
  };

  function show(p, from) {
    unmark(S);
    clearSelection();
    for (let i = 0; i < n; i++) setState(S, i, i < p - 1 || p === n ? "past" : i === p - 1 ? "current" : "future");
    setState(S, n, p < n ? "future" : "past");
    if (p <= 0 || p >= n) return;
    const el = S.items[p - 1][0];
    if (el && el.scrollIntoView) el.scrollIntoView({ block: "nearest" });
    lightStep(S, story.steps[p - 1], p === from + 1 && !still());
  }

  return {
    steps: n,
    show,
    label: (p) => (p <= 0 ? story.start : story.steps[p - 1] ? story.steps[p - 1].label : ""),
    dispose: () => unmark(S),
  };
}
