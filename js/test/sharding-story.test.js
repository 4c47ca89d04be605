// The sharding view's playback story (widgets/sharding/story.js) on real documents
// (js/dev/make-sharding-fixtures.mjs): step order, array labels against the blocks' own index
// ranges and holders, collectives in HLO text order with the mesh axes their groups span,
// and where each finding appears.
import { describe, it, expect } from "vitest";
import { fixture } from "./helpers.js";
import { readSharding } from "../../widgets/sharding/model.js";
import { looseDevices } from "../../widgets/sharding/mesh.js";
import { shardingStory, blocksText, axesOver, collectiveWhat, callStepText } from "../../widgets/sharding/story.js";

const storyOf = (doc) => {
  const m = readSharding(doc);
  return { m, story: shardingStory(m, [...m.meshes, looseDevices(m)].filter(Boolean)) };
};
const small = () => fixture("sharding-small");
const block = (index, devices) => ({ index, devices, replicas: devices.map(() => 0) });

/** Independent reading of an array's blocks: count per block shape, and holders per block. */
function expectedBlocks(arr) {
  const shapes = new Map();
  for (const b of arr.blocks) {
    const s = `${arr.dtype}[${b.index.map(([a, z]) => z - a).join(",")}]`;
    shapes.set(s, (shapes.get(s) || 0) + 1);
  }
  return { shapes, holders: arr.blocks.map((b) => b.devices.length) };
}

describe("sharding story", () => {
  it("leaves out arrays an earlier cell placed: they were there before the cell ran", () => {
    const doc = small();
    const all = storyOf(doc).story.steps.filter((s) => s.kind === "array").length;
    doc.arrays[0].earlier = true;
    const { m, story } = storyOf(doc);
    const arrays = story.steps.filter((s) => s.kind === "array");
    expect(arrays.length).toBe(all - 1);
    expect(arrays.some((s) => m.arrays[s.array].id === doc.arrays[0].id)).toBe(false);
    expect(story.start).toMatch(/and 1 array from earlier cells, already placed/);
  });

  it("shows the meshes, then every array, then each call followed by its collectives", () => {
    const { m, story } = storyOf(small());
    const kinds = story.steps.map((s) => s.kind);
    const nm = m.meshes.length, na = m.arrays.length;
    expect(kinds.slice(0, nm)).toEqual(Array(nm).fill("mesh"));
    expect(kinds.slice(nm, nm + na)).toEqual(Array(na).fill("array"));
    const rest = story.steps.slice(nm + na);
    const want = m.calls.flatMap((c, ci) => [["call", ci, undefined], ...c.collectives.map((_, k) => ["collective", ci, k])]);
    expect(rest.map((s) => [s.kind, s.call, s.k])).toEqual(want);
    // every array exactly once; namespace arrays first, then outputs by their call's index
    const arrays = story.steps.filter((s) => s.kind === "array").map((s) => m.arrays[s.array]);
    expect(new Set(arrays.map((a) => a.id)).size).toBe(na);
    const rank = arrays.map((a) => (a.call == null ? -1 : a.call));
    expect(rank).toEqual([...rank].sort((x, y) => x - y));
    expect(story.start).toBe(`Start: ${nm} meshes over 8 devices, ${na} arrays, ${m.calls.length} jitted calls`);
  });

  it("labels each array with its spec, its block shapes and how many devices hold each block", () => {
    const { m, story } = storyOf(small());
    for (const s of story.steps.filter((x) => x.kind === "array")) {
      const arr = m.arrays[s.array];
      const { shapes, holders } = expectedBlocks(arr);
      expect(s.label.startsWith(`${arr.name} ${arr.dtype}[${arr.shape.join(",")}] · `)).toBe(true);
      for (const [shape, n] of shapes) expect(s.label).toContain(`${n} block${n > 1 ? "s" : ""} of ${shape}`);
      const max = Math.max(...holders);
      if (max > 1 && arr.blocks.length === 1) expect(s.label).toContain(`replicated on ${max} devices`);
      if (max > 1 && arr.blocks.length > 1) expect(s.label).toContain(`each on ${max} devices`);
      if (max === 1 && arr.blocks.length > 1) expect(s.label).toContain("one per device");
      if (arr.call != null) expect(s.label).toContain(`returned by ${m.calls.find((c) => c.call === arr.call).name}`);
    }
    const label = (name) => story.steps.find((x) => x.kind === "array" && m.arrays[x.array].name === name).label;
    expect(label("w")).toBe("w f32[512,512] · P('x', 'y') · 8 blocks of f32[256,128], one per device");
    expect(label("rep")).toBe("rep f32[1024,512] · P() · 1 block of f32[1024,512], replicated on 8 devices");
    expect(label("on3")).toBe("on3 f32[16] · device 3 · 1 block of f32[16], on device 3");
    expect(label("out")).toContain("P('y',) · 4 blocks of f32[128], each on 2 devices");
  });

  it("describes uneven and partly replicated blocks without rounding them into one shape", () => {
    const arr = { dtype: "f32", shape: [10], blocks: [block([[0, 4]], [0, 1]), block([[4, 8]], [2]), block([[8, 10]], [3, 4])] };
    expect(blocksText(arr)).toBe("2 blocks of f32[4] and 1 block of f32[2], each on 1–2 devices");
    expect(blocksText({ dtype: "f32", shape: [4], blocks: [block([[0, 2]], [0]), block([[2, 4]], [0])] })).toBe("2 blocks of f32[2], on 1 device");
    expect(blocksText({ dtype: "f32", shape: [4], blocks: [block([[0, 4]], [])] })).toBe("1 block of f32[4], held by no addressable device");
  });

  it("names each collective in text order with the mesh axes its groups span", () => {
    const { m, story } = storyOf(small());
    const over = {
      step: ["'y'", "'x'", "'x'"], // [2,4]<=[8]; [4,2]<=[2,4]T(1,0); mesh[...] {'axis_0'} on the 2x4 (x, y) mesh
      smap: ["'data'", "'data'"], // the shard_map's own 1-D mesh is tried first
      roll: ["'y'"], // permute pairs 0→1 … 3→0, 4→5 … 7→4 move along y only
      gram: ["'x'", "'y'"],
      constrained: ["'x', 'y'"], // one group of all 8 on the call's 2x4 mesh
    };
    m.calls.forEach((c, ci) => {
      const steps = story.steps.filter((s) => s.kind === "collective" && s.call === ci);
      expect(steps.map((s) => s.k)).toEqual(c.collectives.map((_, k) => k));
      const name = c.name.split(".").pop();
      steps.forEach((s, k) => {
        const col = c.collectives[k];
        expect(s.label.startsWith(`${c.name} · ${col.kind} ${k + 1} of ${c.collectives.length} over ${over[name][k]} · `)).toBe(true);
        expect(s.label).toContain(`from ${col.op_name}`);
      });
      const callStep = story.steps.find((s) => s.kind === "call" && s.call === ci);
      expect(callStep.label.startsWith(`${c.name}(`)).toBe(true);
      for (const kind of new Set(c.collectives.map((x) => x.kind))) expect(callStep.label).toContain(kind);
    });
  });

  it("says what each kind of collective does, from its shapes", () => {
    const { m } = storyOf(small());
    const col = (name, k) => m.calls.find((c) => c.name.endsWith(name)).collectives[k];
    expect(collectiveWhat(col("step", 0))).toBe("f32[8,512] pieces gathered into f32[32,512] on each device within 2 groups of 4 (64.0 KB per device)");
    expect(collectiveWhat(col("step", 2))).toBe("each device's f32[128] combined within 4 groups of 2; every member gets the result (512 bytes per device)");
    expect(collectiveWhat(col("roll", 0))).toBe("each device sends its f32[2,4] to one other: 0→1, 1→2, 2→3, … (8 pairs)");
    expect(collectiveWhat(col("smap", 0))).toContain("8 × f32[8,1,64] to every member within 1 group of 8");
  });

  it("leaves the axes out when the groups are no split of a mesh", () => {
    const mesh = { id: "m", axis_names: ["x", "y"], shape: [2, 4], devices: [...Array(8).keys()] };
    expect(axesOver({ groups: [[0, 1], [2, 3], [4, 5], [6, 7]] }, mesh)).toBe(null); // halves of y: no axis
    expect(axesOver({ groups: [[0, 1]] }, mesh)).toBe(null); // not every device
    expect(axesOver({ groups: [[0, 4], [1, 5], [2, 6], [3, 7]] }, mesh)).toEqual(["x"]);
    expect(axesOver({ groups: [[0, 4]] }, { ...mesh, devices: null, abstract: true })).toBe(null);
    expect(axesOver({ groups: [], pairs: [[0, 5]] }, mesh)).toEqual(["x", "y"]);
  });

  it("shows each finding with what it names", () => {
    const { m, story } = storyOf(small());
    m.findings.forEach((f, i) => {
      const s = story.steps[story.findingStep[i]];
      if (f.kind === "replicated") expect([s.kind, m.arrays[s.array].id]).toEqual(["array", f.array]);
      if (f.kind === "resharding") expect([s.kind, m.calls[s.call].id]).toEqual(["call", f.call]);
      if (f.kind === "large_all_gather") expect([s.kind, m.calls[s.call].id, s.k]).toEqual(["collective", f.call, f.collective]);
    });
    const none = shardingStory({ ...m, findings: [{ kind: "x", array: "nope", call: null, collective: null }] }, m.meshes);
    expect(none.findingStep).toEqual([none.steps.length]); // names nothing drawn: appears at the end
  });

  it("tells the 256-device story: one mesh, blocks one per device or replicated by the other axis", () => {
    const { m, story } = storyOf(fixture("sharding-256"));
    // a document without mesh names (recorded before jaxmagic named meshes): the id, said to be no name
    expect(story.steps[0].label).toBe("unnamed mesh m0 · 256 devices as 16 × 16: 'data' (16) × 'model' (16)");
    const label = (name) => story.steps.find((x) => x.kind === "array" && m.arrays[x.array].name === name).label;
    expect(label("w_dm")).toContain("256 blocks of f32[16,32], one per device");
    expect(label("w_d")).toContain("16 blocks of f32[16,512], each on 16 devices");
    expect(label("w_rep")).toContain("1 block of f32[256,512], replicated on 256 devices");
  });

  it("says collectives are unknown, never none, where no compiled HLO was read (JAX 0.4)", () => {
    const call = { name: "f", inputs: [], outputs: [], collectives: [] };
    expect(callStepText(call)).toContain("no collectives: no communication between devices");
    expect(callStepText({ ...call, collectives_known: false })).toContain("collectives unknown");
    expect(callStepText({ ...call, collectives_known: false })).not.toContain("no collectives");
  });
});
