/**
 * The sharding view's playback story (widgets/ui/playback.js): a pure function of the document
 * read by model.js. First the meshes appear, one step each; then each array's blocks go to
 * their devices, one step per array (arrays found in the namespace first, then the outputs
 * of jitted calls, in the order of their calls); then each jitted call, one step for its
 * input and output shardings and one per collective of its compiled HLO, in text order.
 *
 * Every label says only what the document holds (docs/schema.md, "Sharding documents"):
 * block counts and shapes come from the array's blocks (JAX's `devices_indices_map`), specs
 * from its sharding, collectives from the compiled text. The mesh axes a collective runs
 * over are not recorded by XLA; they are read off the document by matching the collective's
 * device groups against every split of a mesh's axes, and left out when none matches.
 */
import { avalText, bytesText, idsText, leafText, plural, shardingText } from "./format.js";
import { meshTitle } from "./model.js";

const list = (x) => (Array.isArray(x) ? x : []);
/** Leaves a call's label names per side before "+N more". */
const LEAVES = 3;
/** Source → target pairs a collective-permute's label lists. */
const PAIRS = 3;
const quote = (a) => `'${String(a)}'`;

/**
 * `mesh dp · 8 devices along 'data'`, `mesh grid · 8 devices as 2 × 4: 'x' (2) × 'y' (4)`, with
 * the axis types when one is not Auto (`· Explicit axes`); the mesh by the user's name (meshTitle).
 */
export function meshStepText(mesh) {
  const ids = list(mesh.devices);
  if (mesh.id == null) return `${plural(ids.length, "device")} outside every mesh: ${idsText(ids)}`;
  const shape = list(mesh.shape), names = list(mesh.axis_names);
  const axes = shape.map((n, d) => `${quote(names[d] ?? d)} (${n})`).join(" × ");
  const types = list(mesh.axis_types).some((t) => t !== "Auto") ? ` · ${list(mesh.axis_types).join(", ")} axes` : "";
  const title = meshTitle(mesh);
  if (mesh.abstract || !Array.isArray(mesh.devices)) return `${title} · abstract ${shape.join(" × ")}: ${axes}, no devices bound${types}`;
  if (shape.length === 1) return `${title} · ${plural(ids.length, "device")} along ${quote(names[0] ?? 0)}${types}`;
  return `${title} · ${plural(ids.length, "device")} as ${shape.join(" × ")}: ${axes}${types}`;
}

/** The global shape of each block, from its index ranges: `f32[8,16]`. */
export const blockAval = (arr, b) => avalText(arr.dtype, list(b.index).map((r) => r[1] - r[0]));

/**
 * How an array's blocks are laid on devices: `8 blocks of f32[8,16], one per device`,
 * `1 block of f32[16,4], replicated on 8 devices`, `4 blocks of f32[128], each on 2 devices`.
 */
export function blocksText(arr) {
  const blocks = list(arr.blocks);
  if (!blocks.length) return "no blocks recorded";
  const shapes = new Map();
  for (const b of blocks) shapes.set(blockAval(arr, b), (shapes.get(blockAval(arr, b)) || 0) + 1);
  const parts = [...shapes].map(([s, n]) => `${plural(n, "block")} of ${s}`).join(" and ");
  const counts = blocks.map((b) => list(b.devices).length);
  const lo = Math.min(...counts), hi = Math.max(...counts);
  const holders = new Set(blocks.flatMap((b) => list(b.devices)));
  let where;
  if (hi === 0) where = "held by no addressable device";
  else if (blocks.length === 1) where = hi === 1 ? `on device ${blocks[0].devices[0]}` : `replicated on ${hi} devices`;
  else if (hi === 1) where = holders.size === blocks.length ? "one per device" : `on ${plural(holders.size, "device")}`;
  else where = lo === hi ? `each on ${hi} devices` : `each on ${lo}–${hi} devices`;
  return `${parts}, ${where}`;
}

/** `batch f32[64,16] · P('data',) · 8 blocks of f32[8,16], one per device`. */
export function arrayStepText(m, arr) {
  const call = arr.call != null ? m.calls.find((c) => c.call === arr.call) : null;
  return `${arr.name ?? "(unnamed)"} ${avalText(arr.dtype, arr.shape)} · ${shardingText(arr.sharding)} · ${blocksText(arr)}` +
    (call ? ` · returned by ${call.name}` : "") + (arr.addressable === false ? " · some shards not addressable here" : "");
}

/** `weights P(), batch P('data',)`, at most LEAVES, then `+N more`. */
function leavesText(leaves) {
  const ls = list(leaves);
  if (!ls.length) return "none";
  const one = (l) => `${l.path ? String(l.path) + " " : ""}${leafText(l)}${l.mismatch ? ` (arrives as ${l.given ?? "one device"})` : ""}`;
  return ls.slice(0, LEAVES).map(one).join(", ") + (ls.length > LEAVES ? `, +${ls.length - LEAVES} more` : "");
}

/** `1 all-reduce`, `2 all-gathers and 1 all-reduce`, kinds in order of first appearance. */
export function collectivesSummary(cols) {
  const n = new Map();
  for (const c of list(cols)) n.set(String(c.kind ?? "?"), (n.get(String(c.kind ?? "?")) || 0) + 1);
  const parts = [...n].map(([k, c]) => plural(c, k));
  return parts.length > 1 ? `${parts.slice(0, -1).join(", ")} and ${parts[parts.length - 1]}` : parts[0] || "";
}

/** `step(w P('x', 'y'), batch P('data',)) → out P('y',) · 2 all-gathers and 1 all-reduce`. */
export function callStepText(call) {
  const cols = list(call.collectives);
  const tail = cols.length ? collectivesSummary(cols)
    : call.collectives_known === false ? "collectives unknown: no compiled HLO was read"  // JAX 0.4: it would compile again
      : "no collectives: no communication between devices";
  return `${call.name ?? "?"}(${leavesText(call.inputs)}) → ${leavesText(call.outputs)} · ${tail}`;
}

/** Row-major coordinates of every device of a concrete mesh: device id -> coords. */
function coordsOf(mesh) {
  const shape = list(mesh.shape), at = new Map();
  list(mesh.devices).forEach((d, p) => {
    const c = new Array(shape.length);
    for (let k = shape.length - 1; k >= 0; k--) {
      c[k] = p % shape[k];
      p = Math.floor(p / shape[k]);
    }
    at.set(d, c);
  });
  return at;
}

const canon = (groups) => groups.map((g) => [...g].sort((a, b) => a - b).join(",")).sort().join("|");

/**
 * The axes of `mesh` a collective runs over, or null: replica groups that are exactly the
 * devices sharing every other axis's coordinate (all axes of the subset vary inside a group),
 * or permute pairs whose ends differ only along those axes.
 */
export function axesOver(col, mesh) {
  if (!mesh || !Array.isArray(mesh.devices) || !mesh.devices.length) return null;
  const at = coordsOf(mesh), nd = list(mesh.shape).length, names = list(mesh.axis_names);
  const groups = list(col.groups).filter((g) => list(g).length), pairs = list(col.pairs);
  if (groups.length) {
    const all = groups.flat();
    if (all.length !== at.size || all.some((d) => !at.has(d)) || new Set(all).size !== all.length) return null;
    const want = canon(groups);
    for (let mask = 1; mask < 1 << nd; mask++) {
      const by = new Map();
      for (const [d, c] of at) {
        const key = c.filter((_, k) => !(mask & (1 << k))).join(",");
        if (!by.has(key)) by.set(key, []);
        by.get(key).push(d);
      }
      if (canon([...by.values()]) === want) return [...Array(nd).keys()].filter((k) => mask & (1 << k)).map((k) => names[k] ?? k);
    }
    return null;
  }
  if (!pairs.length || pairs.some(([s, t]) => !at.has(s) || !at.has(t))) return null;
  const moved = [...Array(nd).keys()].filter((k) => pairs.some(([s, t]) => at.get(s)[k] !== at.get(t)[k]));
  return moved.length ? moved.map((k) => names[k] ?? k) : null;
}

/** `2 groups of 4`, `1 group of 8`, `4 groups of 1–3`. */
function groupsText(groups) {
  const sizes = groups.map((g) => list(g).length);
  const lo = Math.min(...sizes), hi = Math.max(...sizes);
  return `${plural(groups.length, "group")} of ${lo === hi ? hi : `${lo}–${hi}`}`;
}

/** What one collective does, from its kind, shapes and groups. */
export function collectiveWhat(col) {
  const groups = list(col.groups).filter((g) => list(g).length), pairs = list(col.pairs);
  const ops = list(col.operands).map(String);
  const op = ops.length === 1 ? ops[0] : ops.length ? `${ops.length} × ${ops[0]}` : "?";
  const res = String(col.result ?? "?");
  const per = typeof col.result_bytes === "number" ? ` (${bytesText(col.result_bytes)} per device)` : "";
  const within = groups.length ? ` within ${groupsText(groups)}` : "";
  switch (col.kind) {
    case "all-reduce":
      return `each device's ${op} combined${within}; every member gets the result${per}`;
    case "all-gather":
      return `${op} pieces gathered into ${res} on each device${within}${per}`;
    case "reduce-scatter":
      return `${op} combined${within}; each device keeps its ${res} piece${per}`;
    case "all-to-all":
      return `each device sends a piece of its ${op} to every member${within}${per}`;
    case "collective-permute": {
      const shown = pairs.slice(0, PAIRS).map(([s, t]) => `${s}→${t}`).join(", ");
      return `each device sends its ${op} to one other: ${shown}${pairs.length > PAIRS ? ", …" : ""} (${plural(pairs.length, "pair")})`;
    }
    default:
      return `${op} → ${res}${within}${per}`;
  }
}

/**
 * `data_parallel_grad · all-reduce 1 of 1 over 'data' · each device's f32[4,16] combined within
 * 1 group of 8; … · from jit(data_parallel_grad)/transpose(jvp())/dot_general (backward pass)`.
 * `meshes` are tried in order for the axes (the call's own first).
 */
export function collectiveStepText(call, k, meshes) {
  const cols = list(call.collectives), col = cols[k];
  let over = null;
  for (const mesh of meshes) if ((over = axesOver(col, mesh))) break;
  const op = col.op_name ? String(col.op_name) : "";
  return `${call.name ?? "?"} · ${col.kind ?? "?"} ${k + 1} of ${cols.length}${over ? ` over ${over.map(quote).join(", ")}` : ""}` +
    ` · ${collectiveWhat(col)}${op ? ` · from ${op}${/transpose\(jvp/.test(op) ? " (backward pass)" : ""}` : ""}`;
}

/** The meshes a call names (its leaves and shard_map bodies), then every other mesh. */
function meshesFor(call, meshes, byId) {
  const ids = [...list(call.inputs), ...list(call.outputs), ...list(call.shard_maps)].map((x) => x.mesh).filter((id) => byId.has(id));
  const own = [...new Set(ids)].map((id) => byId.get(id));
  return [...own, ...meshes.filter((x) => !own.includes(x))];
}

/**
 * The story of `m` (model.js readSharding) whose mesh cards are `meshes` (the document's
 * meshes, then the pseudo-mesh of loose devices, mesh.js). Returns `{steps, start,
 * findingStep}`: each step `{kind: "mesh"|"array"|"call"|"collective", mesh | array | call,
 * k, label}` (indices into `meshes`, `m.arrays`, `m.calls`, and the call's collectives);
 * `start` the line shown before the first step; `findingStep[i]` the step (0-based) at which
 * `m.findings[i]` appears: with what it names, or after the last step when it names nothing
 * drawn.
 */
export function shardingStory(m, meshes) {
  const steps = [];
  meshes.forEach((mesh, i) => steps.push({ kind: "mesh", mesh: i, label: meshStepText(mesh) }));
  // Arrays an earlier cell placed were there before the cell ran: not part of its story.
  const order = m.arrays.map((a, i) => i).filter((i) => !m.arrays[i].earlier);
  const rank = (a) => (a.call == null ? -1 : a.call);
  order.sort((i, j) => rank(m.arrays[i]) - rank(m.arrays[j]) || i - j);
  const arrayStep = new Map();
  for (const i of order) {
    arrayStep.set(m.arrays[i].id, steps.length);
    steps.push({ kind: "array", array: i, label: arrayStepText(m, m.arrays[i]) });
  }
  const byId = new Map(m.meshes.map((x) => [x.id, x]));
  const callStep = [], collStep = [];
  m.calls.forEach((call, ci) => {
    callStep[ci] = steps.length;
    steps.push({ kind: "call", call: ci, label: callStepText(call) });
    const tried = meshesFor(call, m.meshes, byId);
    collStep[ci] = list(call.collectives).map((_, k) => {
      steps.push({ kind: "collective", call: ci, k, label: collectiveStepText(call, k, tried) });
      return steps.length - 1;
    });
  });
  const findingStep = m.findings.map((f) => {
    const ci = f.call != null ? m.callById.get(f.call) : undefined;
    if (ci != null && f.collective != null && collStep[ci][f.collective] != null) return collStep[ci][f.collective];
    if (f.array != null && arrayStep.has(f.array)) return arrayStep.get(f.array);
    if (ci != null) return callStep[ci];
    return steps.length;
  });
  const devices = new Set([...m.colors.keys()]);
  const earlier = m.arrays.length - order.length;
  const start = `Start: ${plural(m.meshes.length, "mesh", "meshes")} over ${plural(devices.size, "device")}, ` +
    `${plural(order.length, "array")}, ${plural(m.calls.length, "jitted call")}` +
    (earlier ? ` (and ${plural(earlier, "array")} from earlier cells, already placed)` : "");
  return { steps, start, findingStep };
}
