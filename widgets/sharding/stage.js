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
 * and the last position are drawn without motion, so `show(steps)` is the static view.
 */
import { h } from "../ui/dom.js";
import { collectiveTags, colorOf } from "./model.js";

/** Block copies flown in one step, at most; the mesh lights every holder regardless. */
export const MAX_FLIGHTS = 256;
/** How long a copy flies, ms (a step at 1× lasts 900 ms, widgets/ui/playback.js). */
export const FLIGHT_MS = 700;
const STAGGER_MS = 12;
const MAX_STAGGER_MS = 240;

const FUTURE = "jm-pb-future", CURRENT = "jm-pb-current";

/**
 * `createStage(o)`: o = `{root, view, m, story, meshes, arrays, calls, findings, clearSelection}`:
 * the drawn parts (view.js: mesh cards `{el, grid, mesh}`, array cards `{el, grid}`, call cards
 * `{el, colls}`, finding elements in `m.findings` order) and a function that drops the user's
 * selection. Returns the playback spec `{steps, show, label}` plus `dispose()`.
 */
export function createStage({ root, view, m, story, meshes, arrays, calls, findings, clearSelection }) {
  const n = story.steps.length;
  // The elements each step reveals; bucket n holds findings that name nothing drawn (shown at the end).
  const items = story.steps.map((s) =>
    s.kind === "mesh" ? [meshes[s.mesh].el]
      : s.kind === "array" ? [arrays[s.array].el]
        : s.kind === "call" ? [calls[s.call].el]
          : [calls[s.call].colls[s.k]]);
  items.push([]);
  story.findingStep.forEach((i, f) => findings[f] && items[Math.min(i, n)].push(findings[f]));
  const state = new Array(n + 1).fill("past"); // a view opens complete (position n)

  const layer = h("div", { class: "jm-sh-flights", "aria-hidden": "true" }, null, root);
  view.appendChild(layer);
  const win = root.ownerDocument.defaultView || globalThis;
  const still = () => !!(win.matchMedia && win.matchMedia("(prefers-reduced-motion: reduce)").matches);

  // Device -> [mesh card index, cell index], per mesh card, for the flights.
  const cellOf = meshes.map((x) => new Map(x.grid.items.map((it, i) => [it.device, i])));
  const meshIndex = new Map(meshes.map((x, i) => [x.mesh.id, i]));
  let marked = false, litColl = null, flights = [], moving = [];

  function setState(i, next) {
    if (state[i] === next) return;
    state[i] = next;
    for (const el of items[i]) {
      el.classList.toggle(FUTURE, next === "future");
      el.classList.toggle(CURRENT, next === "current");
      if (!el.classList.length) el.removeAttribute("class"); // the static view's own markup, exactly
    }
  }

  function unmark() {
    for (const a of moving) a.cancel(); // the last step's motion ends where the next one starts
    moving = [];
    for (const f of flights) f.remove();
    flights = [];
    if (marked) for (const x of meshes) x.grid.mark(null);
    marked = false;
    if (litColl) {
      litColl.classList.remove("jm-sh-on");
      litColl.setAttribute("aria-pressed", "false");
    }
    litColl = null;
  }

  function markMeshes(fn) {
    for (const x of meshes) x.grid.mark(fn);
    marked = true;
  }

  /** The mesh card and cell a block held by device `d` flies to: the array's own mesh first. */
  function target(arr, d) {
    const own = arr.sharding && meshIndex.get(arr.sharding.mesh);
    if (own != null && cellOf[own].has(d)) return [own, cellOf[own].get(d)];
    const k = cellOf.findIndex((c) => c.has(d));
    return k < 0 ? null : [k, cellOf[k].get(d)];
  }

  /** Grey to colour, and a copy of each block to each holder's mesh cell. */
  function arrive(ai) {
    const arr = m.arrays[ai], grid = arrays[ai].grid;
    if (typeof grid.el.animate !== "function") return;
    moving.push(grid.el.animate([{ filter: "grayscale(1)", opacity: 0.55 }, { filter: "grayscale(1)", opacity: 0.55, offset: 0.25 },
      { filter: "none", opacity: 1 }], { duration: FLIGHT_MS + 200, easing: "ease-in-out" }));
    const base = layer.getBoundingClientRect();
    let flown = 0;
    grid.items.forEach((it, i) => {
      for (const d of it.holders || []) {
        if (flown >= MAX_FLIGHTS) return;
        const to = target(arr, d);
        if (!to) continue;
        const a = grid.rect(i), b = meshes[to[0]].grid.rect(to[1]);
        if (!a.width || !a.height || !b.width || !b.height) continue;
        const ghost = h("div", {
          class: "jm-sh-ghost",
          style: `left:${a.left - base.left}px;top:${a.top - base.top}px;width:${a.width}px;height:${a.height}px;background:${colorOf(m, d)}`,
        }, null, root);
        layer.appendChild(ghost);
        flights.push(ghost);
        const move = `translate(${b.left - a.left}px, ${b.top - a.top}px) scale(${b.width / a.width}, ${b.height / a.height})`;
        const anim = ghost.animate([{ transform: "none", opacity: 0.95 }, { transform: move, opacity: 0.9 }],
          { duration: FLIGHT_MS, delay: Math.min(flown * STAGGER_MS, MAX_STAGGER_MS), easing: "ease-in-out", fill: "both" });
        anim.onfinish = () => ghost.remove();
        moving.push(anim);
        flown += 1;
      }
    });
  }

  function show(p, from) {
    unmark();
    clearSelection();
    for (let i = 0; i < n; i++) setState(i, i < p - 1 || p === n ? "past" : i === p - 1 ? "current" : "future");
    setState(n, p < n ? "future" : "past");
    if (p <= 0 || p >= n) return;
    const s = story.steps[p - 1];
    const el = items[p - 1][0];
    if (el && el.scrollIntoView) el.scrollIntoView({ block: "nearest" });
    if (s.kind === "array") {
      const arr = m.arrays[s.array];
      const holders = new Set(arr.blocks.flatMap((b) => b.devices || []));
      markMeshes((it) => holders.has(it.device));
      if (p === from + 1 && !still()) arrive(s.array);
    } else if (s.kind === "collective") {
      const tags = collectiveTags(m.calls[s.call].collectives[s.k]);
      markMeshes((it) => (tags.has(it.device) ? tags.get(it.device) || true : false));
      litColl = calls[s.call].colls[s.k];
      litColl.classList.add("jm-sh-on");
      litColl.setAttribute("aria-pressed", "true");
    }
  }

  return {
    steps: n,
    show,
    label: (p) => (p <= 0 ? story.start : story.steps[p - 1] ? story.steps[p - 1].label : ""),
    dispose: unmark,
  };
}
