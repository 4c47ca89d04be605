/**
 * The motion of an array's step in the sharding view's playback (playback.js): its blocks turn
 * from grey to their devices' colours while a copy of each block flies to each of its holders'
 * cells in the mesh (every holder of a replicated block, at most MAX_FLIGHTS copies a step).
 * Copies are plain coloured boxes in a layer of their own, removed when they land or when the
 * next step starts (playback.js cancels `moving` and removes `flights`).
 */
import { h } from "../ui/dom.js";
import { colorOf } from "./model.js";

/** Block copies flown in one step, at most; the mesh lights every holder regardless. */
export const MAX_FLIGHTS = 256;
/** How long a copy flies, ms (a step at 1× lasts 900 ms, widgets/ui/playback.js). */
export const FLIGHT_MS = 700;
const STAGGER_MS = 12;
const MAX_STAGGER_MS = 240;

/**
 * What flights need, made once per view: the drawn cards, the layer, device -> cell per mesh
 * card, and the running animations (`moving`) and copies (`flights`).
 */
export function flightPlan(root, m, layer, meshes, arrays) {
  return {
    root, m, layer, meshes, arrays,
    cellOf: meshes.map((x) => new Map(x.grid.items.map((it, i) => [it.device, i]))),
    meshIndex: new Map(meshes.map((x, i) => [x.mesh.id, i])),
    flights: [], moving: [],
  };
}

/** The mesh card and cell a block held by device `d` flies to: the array's own mesh first. */
function target(F, arr, d) {
  const own = arr.sharding && F.meshIndex.get(arr.sharding.mesh);
  if (own != null && F.cellOf[own].has(d)) return [own, F.cellOf[own].get(d)];
  const k = F.cellOf.findIndex((c) => c.has(d));
  return k < 0 ? null : [k, F.cellOf[k].get(d)];
}

/** A copy of the block at rect `a` flying to rect `b` (layer at `base`), coloured as device `d`; `flown` earlier copies stagger it. */
function flyOne(F, base, a, b, d, flown) {
  const ghost = h("div", {
    class: "jm-sh-ghost",
    style: `left:${a.left - base.left}px;top:${a.top - base.top}px;width:${a.width}px;height:${a.height}px;background:${colorOf(F.m, d)}`,
  }, null, F.root);
  F.layer.appendChild(ghost);
  F.flights.push(ghost);
  const move = `translate(${b.left - a.left}px, ${b.top - a.top}px) scale(${b.width / a.width}, ${b.height / a.height})`;
  const anim = ghost.animate([{ transform: "none", opacity: 0.95 }, { transform: move, opacity: 0.9 }],
    { duration: FLIGHT_MS, delay: Math.min(flown * STAGGER_MS, MAX_STAGGER_MS), easing: "ease-in-out", fill: "both" });
  anim.onfinish = () => ghost.remove();
  F.moving.push(anim);
}

/** Grey to colour, and a copy of each block of array `ai` to each holder's mesh cell. */
export function flyBlocks(F, ai) {
  const arr = F.m.arrays[ai], grid = F.arrays[ai].grid;
  if (typeof grid.el.animate !== "function") return;
  F.moving.push(grid.el.animate([{ filter: "grayscale(1)", opacity: 0.55 }, { filter: "grayscale(1)", opacity: 0.55, offset: 0.25 },
    { filter: "none", opacity: 1 }], { duration: FLIGHT_MS + 200, easing: "ease-in-out" }));
  const base = F.layer.getBoundingClientRect();
  let flown = 0;
  grid.items.forEach((it, i) => {
    for (const d of it.holders || []) {
      if (flown >= MAX_FLIGHTS) return;
      const to = target(F, arr, d);
      if (!to) continue;
      const a = grid.rect(i), b = F.meshes[to[0]].grid.rect(to[1]);
      if (!a.width || !a.height || !b.width || !b.height) continue;
      flyOne(F, base, a, b, d, flown);
      flown += 1;
    }
  });
}
