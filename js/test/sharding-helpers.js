/**
 * Test helpers of the sharding view: mounting it straight from widgets/sharding/view.js
 * (the bundle entries register it elsewhere), and a synthetic document far past the
 * element cap (never committed): a 64x64 mesh and an array of 4,096 blocks.
 */
import { useView } from "./mounting.js";
import { shardingView } from "../../widgets/sharding/view.js";

/** `render(doc)` mounts the sharding view into a fresh `.jm-root`; unmounted after each test. */
export const useSharding = () => useView(shardingView);

/** A `kind: "sharding"` document of `side` x `side` devices and one array tiled over all of them. */
export function bigMesh(side = 64) {
  const n = side * side;
  const devices = [...Array(n).keys()];
  const rows = side * 4, cols = side * 8;
  const blocks = devices.map((d) => {
    const r = Math.floor(d / side), c = d % side;
    return { index: [[r * 4, r * 4 + 4], [c * 8, c * 8 + 8]], devices: [d], replicas: [0] };
  });
  return {
    schema: "jaxmagic", version: 1, kind: "sharding", title: `${n} devices`, notes: [], error: null,
    devices: devices.map((id) => ({ id, platform: "tpu", kind: "TPU v5" })),
    meshes: [{ id: "m0", axis_names: ["data", "model"], shape: [side, side], axis_types: ["Auto", "Auto"], devices, abstract: false }],
    arrays: [{
      id: "a0", name: "w", origin: "namespace", call: null, shape: [rows, cols], dtype: "f32", bytes: rows * cols * 4,
      sharding: { kind: "named", text: "NamedSharding(...)", mesh: "m0", spec: ["data", "model"], memory_kind: "device", devices, fully_replicated: false },
      blocks, bytes_per_device: Object.fromEntries(devices.map((d) => [String(d), 128])), replication: 1, addressable: true,
    }],
    calls: [], findings: [],
  };
}
