/**
 * An array card: name, dtype[shape], total bytes, placement (spec, or the sharding's
 * kind), mesh and replication, then its blocks (geometry.js arrayLayout), each in the
 * colour of the device that holds it, striped when several do.
 */
import { h } from "../ui/dom.js";
import { createGrid } from "./grid.js";
import { arrayLayout, PLANE_W, PRESENT } from "./geometry.js";
import { blockLines, colorOf, meshRef, partialSums } from "./model.js";
import { avalText, bytesText, plural, shardingText } from "./format.js";
import { presentFits } from "./mesh.js";

/** `×8 replicated`, `1 copy`; `partial sums ×4 (unreduced)` where devices hold parts of a sum, not copies. */
export const replicationText = (arr) => (partialSums(arr) ? `partial sums ×${arr.partial_sums ?? "?"} (unreduced)`
  : arr.replication > 1 ? `×${arr.replication} replicated` : "1 copy");

/**
 * `arrayCard(ref, m, arr, on, present)`: on = `{pickBlock(arr, i), tip(lines | null, rect)}`;
 * `present` draws the blocks at presentation sizes (geometry.js PRESENT).
 * Returns `{el, grid}`; the grid's items carry `block` and `holders`.
 */
export function arrayCard(ref, m, arr, on, present = false) {
  const lay = present ? arrayLayout(arr, PRESENT.plane, { facetW: PRESENT.facet, labelH: PRESENT.label, compact: PRESENT.compact, maxH: PRESENT.planeH, block: PRESENT.block })
    : arrayLayout(arr, PLANE_W);
  for (const it of lay.items) it.holders = arr.blocks[it.block].devices || [];
  const s = arr.sharding || {};
  const name = arr.name ?? "(unnamed)";
  const grid = createGrid(ref, lay, {
    label: `${name}: ${plural(arr.blocks.length, "block")}`,
    colors: (it) => (it.holders.length ? it.holders.map((d) => colorOf(m, d)) : [colorOf(m, null)]),
    text: (it) => (it.holders.length > 1 ? `${partialSums(arr) ? "Σ" : "×"}${it.holders.length}` : String(it.holders[0] ?? "")),
    aria: (it) => blockLines(arr, it.block).join("; "),
    pick: (it) => on.pickBlock(arr, it.block),
    tip: (it, rect) => on.tip(it && blockLines(arr, it.block), rect),
    fits: present ? presentFits : undefined,
  });
  const call = arr.origin === "output" && arr.call != null ? m.calls.find((c) => c.call === arr.call) : null;
  // Each piece its own span: presentation mode stacks them beside the grid (sharding.css), without the dots.
  const part = (text) => h("span", { class: "jm-sh-part" }, [h("span", { class: "jm-sh-sep" }, " · ", ref), text], ref);
  const meta = [
    h("span", { class: "jm-sh-spec" }, shardingText(s), ref),
    s.mesh != null ? part(meshRef(m, s.mesh)) : null,
    part(replicationText(arr)),
    call ? part(`output of ${call.name}`) : null,
    arr.addressable === false ? part("some shards not addressable here") : null,
  ];
  const nd = arr.shape.length;
  // An earlier cell's array is context, not the story: the view puts it in the closed row at the end.
  const el = h("section", { class: "jm-sh-card jm-sh-array" + (arr.earlier ? " jm-sh-earlier" : ""), tabindex: -1 }, [
    h("div", { class: "jm-sh-card-head" }, [
      h("span", { class: "jm-sh-name" }, name, ref), " ",
      h("span", { class: "jm-sh-aval" }, avalText(arr.dtype, arr.shape), ref), " ",
      h("span", { class: "jm-muted" }, bytesText(arr.bytes), ref),
    ], ref),
    h("div", { class: "jm-sh-meta" }, meta, ref),
    grid.el,
    arr.note ? h("div", { class: "jm-sh-note jm-muted" }, String(arr.note), ref) : null,
    nd >= 3 && lay.labels.length ? h("div", { class: "jm-sh-more jm-muted" },
      `facets over dim${nd > 3 ? "s 0–" + (nd - 3) : " 0"}${lay.hidden ? `, +${lay.hidden} more` : ""}`, ref) : null,
  ], ref);
  return { el, grid };
}
