/**
 * The sharding document read once for the view: lookups by id, the device palette,
 * bytes each device holds over all arrays, and the texts the hover card and the
 * selection bar show. Pure functions of the document (docs/schema.md, "Sharding
 * documents"); missing lists read as empty, so a partial document still draws.
 */
import { devicePalette } from "./colors.js";
import { avalText, bytesText, idsText, plural, sliceText } from "./format.js";

const list = (x) => (Array.isArray(x) ? x : []);
/** Colour of a device the palette does not know (an abstract mesh's cells). */
export const NO_DEVICE = "#9e9e9e";

/**
 * `{devices, deviceById, meshes, meshById, arrays, calls, callById, findings, colors,
 * totals, empty}`. `totals`: device id -> `{bytes, blocks, arrays}` held over all arrays;
 * `findings` warnings first, order kept otherwise.
 */
export function readSharding(doc) {
  const arrays = list(doc.arrays).filter((a) => a && Array.isArray(a.shape)).map((a) => ({ ...a, blocks: list(a.blocks) }));
  const calls = list(doc.calls);
  const meshes = list(doc.meshes);
  const sev = (f) => ({ bug: 0, warning: 1 })[f.severity] ?? 2;
  const findings = list(doc.findings).map((f, i) => [f, i]).sort((p, q) => sev(p[0]) - sev(q[0]) || p[1] - q[1]).map((p) => p[0]);
  const totals = new Map();
  for (const a of arrays) {
    for (const [d, n] of Object.entries(a.bytes_per_device || {})) {
      const t = totals.get(Number(d)) || { bytes: 0, blocks: 0, arrays: 0 };
      t.bytes += n;
      t.arrays += 1;
      totals.set(Number(d), t);
    }
    for (const b of a.blocks) for (const d of list(b.devices)) if (totals.has(d)) totals.get(d).blocks += 1;
  }
  return {
    devices: list(doc.devices),
    deviceById: new Map(list(doc.devices).map((d) => [d.id, d])),
    meshes,
    meshById: new Map(meshes.map((m) => [m.id, m])),
    arrays,
    calls,
    callById: new Map(calls.map((c, i) => [c.id, i])),
    findings,
    colors: devicePalette(doc),
    totals,
    empty: !arrays.length && !calls.length && !meshes.length,
  };
}

/**
 * How a mesh is called everywhere in the view (jaxmagic/views/static_sharding.py `mesh_title`,
 * the same rule): by the user's first name for it, `mesh dp`; else by what set it, `mesh m1 (set
 * with jax.set_mesh)`; else `unnamed mesh m0`: the id is a label, never passed off as a name.
 */
export function meshTitle(mesh) {
  const names = list(mesh && mesh.names);
  if (names.length) return `mesh ${names[0]}`;
  if (mesh && mesh.context) return `mesh ${mesh.id} (set with jax.set_mesh)`;
  return `unnamed mesh ${mesh ? mesh.id : "?"}`;
}

/** A mesh referred to by id in an array or a call: its title, or `mesh <id>` when the document lacks it. */
export const meshRef = (m, id) => (m.meshById.has(id) ? meshTitle(m.meshById.get(id)) : `mesh ${id}`);

/** The short form beside a call's leaf spec: the user's name, else the id. */
export const meshShort = (m, id) => {
  const mesh = m.meshById.get(id);
  return mesh && list(mesh.names).length ? String(mesh.names[0]) : String(id);
};

/** Colour of device `d` (grey for none). */
export const colorOf = (m, d) => (d == null ? NO_DEVICE : m.colors.get(d) || NO_DEVICE);

/** Elements in a block and the array's bytes per element (0 for an empty array). */
function blockSize(arr, b) {
  const n = arr.shape.reduce((p, x) => p * x, 1);
  const elems = b.index.reduce((p, r) => p * (r[1] - r[0]), 1);
  return { elems, bytes: n ? (elems * arr.bytes) / n : 0 };
}

/** `on device 3`, `replicated ×8 on devices 0, 1, …`; `partial sums on devices …` for an unreduced array's block. */
export function holdersText(devices, partial = false) {
  const ds = list(devices);
  if (ds.length === 1) return `on device ${ds[0]}`;
  if (partial && ds.length) return `partial sums (unreduced) on devices ${idsText(ds)}: the block is their sum`;
  return ds.length ? `replicated ×${ds.length} on devices ${idsText(ds)}` : "held by no addressable device";
}

/** True for an array whose spec has unreduced mesh axes: the holders of a block hold partial sums of it. */
export const partialSums = (arr) => list((arr.sharding || {}).unreduced).length > 0;

/** The hover card of block `i` of `arr`, as lines: name, slice, shape and bytes, holders. */
export function blockLines(arr, i) {
  const b = arr.blocks[i];
  const shape = b.index.map((r) => r[1] - r[0]);
  return [
    `${arr.name ?? "(unnamed)"} · block ${i + 1} of ${arr.blocks.length}`,
    `index ${sliceText(b.index)}`,
    `${avalText(arr.dtype, shape)} · ${bytesText(blockSize(arr, b).bytes)}`,
    holdersText(b.devices, partialSums(arr)),
  ];
}

/** The hover card of a mesh cell: device, position by axis, what it holds. */
export function deviceLines(m, mesh, item) {
  const names = mesh.axis_names || [];
  const shape = mesh.shape || [];
  const pos = [];
  let p = item.pos;
  for (let d = shape.length - 1; d >= 0; d--) {
    pos.unshift(`${names[d] ?? d}=${p % shape[d]}`);
    p = Math.floor(p / shape[d]);
  }
  const lines = [item.device == null ? "abstract mesh: no device" : deviceTitle(m, item.device)];
  if (pos.length && mesh.id != null) lines.push(`${meshTitle(mesh)} position ${pos.join(", ")}`);
  if (item.device != null) lines.push(heldText(m, item.device));
  return lines;
}

/** `device 3 · cpu`. */
export function deviceTitle(m, d) {
  const info = m.deviceById.get(d);
  return `device ${d}${info && info.kind ? " · " + info.kind : info && info.platform ? " · " + info.platform : ""}`;
}

/** `holds 2.3 MB: 9 blocks of 6 arrays` (or `holds nothing recorded`). */
export function heldText(m, d) {
  const t = m.totals.get(d);
  return t ? `holds ${bytesText(t.bytes)}: ${plural(t.blocks, "block")} of ${plural(t.arrays, "array")}` : "holds no recorded array";
}

/** Arrays device `d` holds, biggest share first: `[{array, bytes}]`. */
export function heldArrays(m, d) {
  const out = [];
  for (const a of m.arrays) {
    const n = (a.bytes_per_device || {})[String(d)];
    if (n != null) out.push({ array: a, bytes: n });
  }
  return out.sort((p, q) => q.bytes - p.bytes);
}

/**
 * What a collective lights up in the meshes: device id -> tag. Replica groups tag each
 * member with its group's number; a collective-permute tags each source with `→target`
 * (a device that only receives is lit untagged: tag "").
 */
export function collectiveTags(col) {
  const tags = new Map();
  list(col.groups).forEach((g, gi) => list(g).forEach((d) => tags.set(d, String(gi))));
  for (const [s, t] of list(col.pairs)) {
    tags.set(s, `→${t}`);
    if (!tags.has(t)) tags.set(t, "");
  }
  return tags;
}

/** Every device a collective involves. */
export const collectiveDevices = (col) => new Set(collectiveTags(col).keys());
