/**
 * The sharding view's legend (`data-jm-legend`, shown in normal and presentation mode): what
 * its colours and marks mean, each entry a swatch drawn exactly as the view draws it — the
 * device colours (one per device, the same in meshes, blocks and groups), the striped block of
 * a replicated array, the number in a block, and, when the cell's calls have any, a
 * collective's device group.
 */
import { h } from "../ui/dom.js";
import { cellBackground } from "./grid.js";
import { colorOf, partialSums } from "./model.js";
import { plural } from "./format.js";

/** Device chips the legend shows before "…" (the rest keep their colour in the mesh). */
export const LEGEND_DEVICES = 8;

const list = (x) => (Array.isArray(x) ? x : []);
const chip = (ref, m, d) => h("span", { class: "jm-sh-chip", style: `background:${colorOf(m, d)}` }, String(d), ref);
const item = (ref, swatch, words) => h("span", { class: "jm-sh-lg-item" }, [swatch, h("span", { class: "jm-sh-lg-words" }, words, ref)], ref);

/** The legend of `m` (model.js readSharding); null when there is no device to colour. */
export function shardingLegend(ref, m) {
  const devices = [...m.colors.keys()];
  if (!devices.length) return null;
  const shown = devices.slice(0, LEGEND_DEVICES);
  const more = devices.length - shown.length;
  const three = devices.slice(0, 3);
  const replicated = h("span", { class: "jm-sh-lg-block", style: `background:${cellBackground(three.map((d) => colorOf(m, d)))}` },
    `×${three.length}`, ref);
  const numbered = h("span", { class: "jm-sh-lg-block", style: `background:${colorOf(m, devices[0])}` }, String(devices[0]), ref);
  const col = m.calls.flatMap((c) => list(c.collectives)).find((c) => list(c.groups).some((g) => list(g).length));
  const group = col && list(col.groups).find((g) => list(g).length);
  return h("div", { class: "jm-sh-legend", "data-jm-legend": "", role: "note", "aria-label": "legend" }, [
    item(ref, h("span", { class: "jm-sh-lg-chips" }, [...shown.map((d) => chip(ref, m, d)), more ? ` +${more}` : null], ref),
      devices.length === 1 ? "the device's colour" : `one colour per device (${plural(devices.length, "device")})`),
    item(ref, numbered, `a block held by device ${devices[0]}`),
    item(ref, replicated, "replicated: one copy per striped colour"),
    m.arrays.some(partialSums) ? item(ref, h("span", { class: "jm-sh-lg-block", style: `background:${cellBackground(three.map((d) => colorOf(m, d)))}` },
      `Σ${three.length}`, ref), "unreduced: partial sums, one per striped colour, the block their sum") : null,
    group ? item(ref, h("span", { class: "jm-sh-grp jm-sh-lg-grp" }, [...list(group).slice(0, 4).map((d) => chip(ref, m, d)),
      group.length > 4 ? "…" : null], ref), "one collective's device group") : null,
  ], ref);
}
