/**
 * A mesh card: axis names and sizes, the grid of its devices (each cell in the device's
 * colour, with its id), and how many bytes its devices hold (least and most). Devices
 * outside every mesh get a card of their own, drawn as a 1-D mesh without axes.
 */
import { h } from "../ui/dom.js";
import { createGrid } from "./grid.js";
import { meshLayout, MESH_W, MESH_WRAP, PRESENT } from "./geometry.js";
import { colorOf, deviceLines, meshTitle } from "./model.js";
import { bytesText, plural } from "./format.js";

/**
 * `rows: x (2, Auto) · columns: y (4, Explicit)`: how to read the grid, with each axis's type
 * where the JAX version has axis types (Auto: the compiler decides; Explicit: the type carries
 * the sharding; Manual: inside shard_map).
 */
export function axesText(mesh, wrapped) {
  const names = mesh.axis_names || [];
  const shape = mesh.shape || [];
  const types = mesh.axis_types || [];
  const ax = (d) => `${names[d] ?? "axis " + d} (${shape[d]}${types[d] ? ", " + types[d] : ""})`;
  const nd = shape.length;
  if (!nd) return "";
  if (nd === 1) return `${ax(0)}${wrapped ? `, wrapped every ${MESH_WRAP}` : ""}`;
  const lead = nd > 2 ? `facets: ${shape.slice(0, nd - 2).map((_, d) => ax(d)).join(" × ")} · ` : "";
  return `${lead}rows: ${ax(nd - 2)} · columns: ${ax(nd - 1)}`;
}

/**
 * Whether a cell shows its text in presentation mode: 15 px monospace digits (about 9.2 px
 * each) with a little room, on a 20 px line. Smaller cells keep their ids in the hover card.
 */
export const presentFits = (it, text) => it.w >= String(text).length * 9.2 + 6 && it.h >= 20;

/**
 * `meshCard(ref, m, mesh, on, present)`: on = `{pickDevice(d), tip(lines | null, rect)}`;
 * `present` draws the cells at presentation sizes (geometry.js PRESENT).
 * Returns `{el, grid}`.
 */
export function meshCard(ref, m, mesh, on, present = false) {
  const lay = present ? meshLayout(mesh, PRESENT.mesh, { maxCell: PRESENT.cell, facetW: PRESENT.facet, labelH: PRESENT.label })
    : meshLayout(mesh, MESH_W);
  const named = mesh.id != null;
  const ids = Array.isArray(mesh.devices) ? mesh.devices : [];
  const held = ids.map((d) => (m.totals.get(d) || { bytes: 0 }).bytes);
  const grid = createGrid(ref, lay, {
    label: named ? meshTitle(mesh) : "devices outside every mesh",
    colors: (it) => [colorOf(m, it.device)],
    text: (it) => (it.device == null ? "" : String(it.device)),
    aria: (it) => deviceLines(m, mesh, it).join("; "),
    pick: (it) => it.device != null && on.pickDevice(it.device),
    tip: (it, rect) => on.tip(it && deviceLines(m, mesh, it), rect),
    fits: present ? presentFits : undefined,
  });
  // Small cells cannot show an id and a collective's tag side by side: the tag takes the id's place (sharding.css).
  if (lay.items.length && lay.items[0].w < (present ? 44 : 28)) grid.el.classList.add("jm-sh-small");
  const lo = Math.min(...held), hi = Math.max(...held);
  // A mesh of two or more axes is a block taller than its words: they go beside it (sharding.css).
  const side = (mesh.shape || []).length >= 2 ? " jm-sh-side" : "";
  const el = h("section", { class: "jm-sh-card jm-sh-mesh" + side }, [
    h("div", { class: "jm-sh-card-head" }, [
      h("span", { class: "jm-sh-name" }, named ? meshTitle(mesh) : "other devices", ref),
      " ", h("span", { class: "jm-muted" }, (mesh.shape || []).join(" × "), ref),
    ], ref),
    named && (mesh.names || []).length > 1 ? h("div", { class: "jm-sh-meta jm-muted" }, `also bound as ${mesh.names.slice(1).join(", ")}`, ref) : null,
    h("div", { class: "jm-sh-meta jm-muted jm-sh-axes" }, named ? axesText(mesh, (mesh.shape || []).length === 1 && mesh.shape[0] > MESH_WRAP)
      .split(" · ").map((t, i) => h("span", { class: "jm-sh-part" }, [i ? h("span", { class: "jm-sh-sep" }, " · ", ref) : null, t], ref)) : "", ref),
    mesh.abstract ? h("div", { class: "jm-sh-meta jm-muted" }, "abstract mesh: no devices bound", ref) : null,
    grid.el,
    lay.hidden > 0 ? h("div", { class: "jm-sh-more jm-muted" }, `+${lay.hidden} more`, ref) : null,
    ids.length ? h("div", { class: "jm-sh-meta jm-muted jm-sh-held" }, `${plural(ids.length, "device")} · ` +
      (lo === hi ? `${bytesText(lo)} held by each` : `${bytesText(lo)} – ${bytesText(hi)} held per device`), ref) : null,
  ], ref);
  return { el, grid };
}

/**
 * The devices in no concrete mesh, as a pseudo-mesh (null when every device is in one):
 * a single-device array on a device no mesh names still has somewhere to be selected.
 */
export function looseDevices(m) {
  const inMesh = new Set(m.meshes.flatMap((x) => (Array.isArray(x.devices) ? x.devices : [])));
  const rest = [...m.colors.keys()].filter((d) => !inMesh.has(d)).sort((a, b) => a - b);
  return rest.length ? { id: null, axis_names: [], shape: [rest.length], axis_types: [], devices: rest, abstract: false } : null;
}
