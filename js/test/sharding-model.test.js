// Pure functions of the sharding view: block geometry from index ranges, facet choice,
// mesh layout, arrow-key neighbours, device colours, spec and byte texts, hover text,
// replicated holders, collective tags, per-device totals.
import { describe, it, expect } from "vitest";
import { fixture } from "./helpers.js";
import { arrayLayout, facets, meshLayout, neighbour, planeSize, tileSize, intervals, PLANE_W, PLANE_H, FACET_W, MAX_FACETS, MESH_W,
  COMPACT, MIN_BLOCK, PRESENT } from "../../widgets/sharding/geometry.js";
import { devicePalette } from "../../widgets/sharding/colors.js";
import { bytesText, specText, sliceText, shardingText, idsText } from "../../widgets/sharding/format.js";
import { readSharding, blockLines, holdersText, collectiveTags, deviceLines, heldArrays, partialSums } from "../../widgets/sharding/model.js";
import { replicationText } from "../../widgets/sharding/arrays.js";
import { cellBackground, sampleColors, STRIPES } from "../../widgets/sharding/grid.js";
import { operandsText } from "../../widgets/sharding/calls.js";
import { axesText, looseDevices } from "../../widgets/sharding/mesh.js";

const small = () => fixture("sharding-small");
const arr = (name) => small().arrays.find((a) => a.name === name);
const block = (index, devices = [0]) => ({ index, devices, replicas: devices.map(() => 0) });

describe("block geometry", () => {
  it("splits a 2-D array in proportion to the index ranges", () => {
    const w = arr("w"); // 512x512, P('x', 'y') on 2x4
    const lay = arrayLayout(w);
    const S = PLANE_H; // a square plane is as tall as a plane may be
    expect([lay.width, lay.height]).toEqual([S, S]);
    expect(lay.items.length).toBe(w.blocks.length);
    for (const it of lay.items) {
      const [[r0, r1], [c0, c1]] = w.blocks[it.block].index;
      expect(it.x).toBeCloseTo((S * c0) / 512, 1);
      expect(it.w).toBeCloseTo((S * (c1 - c0)) / 512, 1);
      expect(it.y).toBeCloseTo((S * r0) / 512, 1);
      expect(it.h).toBeCloseTo((S * (r1 - r0)) / 512, 1);
    }
    // the blocks tile the rectangle: areas add up
    expect(lay.items.reduce((s, it) => s + it.w * it.h, 0)).toBeCloseTo(S * S, 0);
  });

  it("draws a one-block array as a small tile: a 16-byte f32[4,1] is not a tall column", () => {
    const one = (shape, devices = [0]) => ({ shape, blocks: [block(shape.map((n) => [0, n]), devices)] });
    for (const [shape, want] of [[[4, 1], [COMPACT.short, COMPACT.long]], [[16, 4], [COMPACT.short, COMPACT.long]],
      [[4, 4], [COMPACT.long, COMPACT.long]], [[1, 64], [COMPACT.long, COMPACT.short]], [[3], [COMPACT.long, COMPACT.short]]]) {
      const lay = arrayLayout(one(shape));
      expect([lay.width, lay.height], String(shape)).toEqual(want);
      expect(lay.items).toEqual([{ x: 0, y: 0, w: want[0], h: want[1], block: 0 }]);
    }
    // replicated whole over 8 devices: one block too, still room for its ×8
    const rep = arrayLayout(one([16, 4], [0, 1, 2, 3, 4, 5, 6, 7]));
    expect(rep.height).toBeLessThanOrEqual(COMPACT.long);
    expect(rep.width).toBeGreaterThanOrEqual(18);
    // presentation sizes: larger, still small
    const big = arrayLayout(one([4, 1]), PRESENT.plane, { compact: PRESENT.compact });
    expect([big.width, big.height]).toEqual([PRESENT.compact.short, PRESENT.compact.long]);
    expect(tileSize(4, 1, COMPACT)).toEqual({ w: COMPACT.short, h: COMPACT.long });
  });

  it("grows a plane split into many short rows until each block has room for its id", () => {
    const rows = { shape: [64, 16], blocks: [...Array(8).keys()].map((i) => block([[i * 8, i * 8 + 8], [0, 16]], [i])) };
    const lay = arrayLayout(rows);
    expect(Math.min(...lay.items.map((it) => it.h))).toBeGreaterThanOrEqual(MIN_BLOCK.h);
    const big = arrayLayout(rows, PRESENT.plane, { maxH: PRESENT.planeH, block: PRESENT.block });
    expect(Math.min(...big.items.map((it) => it.h))).toBeGreaterThanOrEqual(PRESENT.block.h);
  });

  it("keeps uneven blocks proportional", () => {
    const a = { shape: [10], blocks: [block([[0, 4]]), block([[4, 8]], [1]), block([[8, 10]], [2])] };
    const lay = arrayLayout(a);
    expect(lay.items.map((it) => it.w)).toEqual([88, 88, 44]);
    expect(lay.items.map((it) => it.x)).toEqual([0, 88, 176]);
    expect(lay.height).toBe(20); // a 1-D array is a strip
  });

  it("draws a scalar as one square and sizes planes by their aspect within bounds", () => {
    expect(arrayLayout({ shape: [], blocks: [block([])] }).items).toEqual([{ x: 0, y: 0, w: 28, h: 28, block: 0 }]);
    expect(planeSize(64, 512, 220)).toEqual({ w: 220, h: 28 });
    expect(planeSize(1, 100000, 220)).toEqual({ w: 220, h: 16 });
    expect(planeSize(4096, 512, 220)).toEqual({ w: 40, h: PLANE_H });
    expect(planeSize(1024, 512, 220)).toEqual({ w: PLANE_H / 2, h: PLANE_H });
    expect(planeSize(1024, 512, 220, 275)).toEqual({ w: 138, h: 275 });
  });

  it("facets a 3-D array over its leading dimension's block ranges, each block in one facet", () => {
    const t3 = arr("t3"); // [4,4,8] on a 2x2x2 mesh
    const F = facets(t3);
    expect(F.count).toBe(2);
    expect([F.label(0), F.label(1)]).toEqual(["[0:2]", "[2:4]"]);
    const counts = [0, 0];
    for (const b of t3.blocks) counts[F.of(b)]++;
    expect(counts).toEqual([4, 4]);
    const lay = arrayLayout(t3);
    expect(lay.items.length).toBe(8);
    expect(lay.labels.map((l) => l.text)).toEqual(["[0:2]", "[2:4]"]);
    for (const it of lay.items) expect(it.x + it.w).toBeLessThanOrEqual(lay.width + 0.05);
    // a 3-D array whose leading dimension is not split is one facet, unlabelled
    const cube = arrayLayout(arr("params['cube']"));
    expect([cube.labels.length, cube.items.length, cube.width]).toEqual([0, 8, planeSize(8, 6, PLANE_W).w]);
  });

  it("caps facets and says how many are left out", () => {
    const blocks = [];
    for (let i = 0; i < 4; i++) for (let j = 0; j < 3; j++) blocks.push(block([[i, i + 1], [j * 2, j * 2 + 2], [0, 4], [0, 4]], [i * 3 + j]));
    const a = { shape: [4, 6, 4, 4], blocks };
    const F = facets(a);
    expect(F.count).toBe(12);
    expect(F.label(5)).toBe("[1:2, 4:6]");
    const lay = arrayLayout(a);
    expect(lay.hidden).toBe(12 - MAX_FACETS);
    expect(lay.items.length).toBe(MAX_FACETS);
    expect(lay.items.map((it) => it.block)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(lay.items[1].x).toBe(FACET_W + 8);
    expect(intervals(blocks, 1)).toEqual([[0, 2], [2, 4], [4, 6]]);
  });
});

describe("mesh layout", () => {
  it("puts a 2-D mesh's devices row-major, rows by the first axis", () => {
    const m = small().meshes.find((x) => x.shape.length === 2);
    const lay = meshLayout(m);
    expect(lay.items.map((it) => it.device)).toEqual(m.devices);
    const cell = lay.items[0].w;
    expect(lay.items[5]).toMatchObject({ x: cell, y: cell, pos: 5 }); // x=1, y=1
    expect(lay.width).toBe(4 * cell);
    expect(axesText(m)).toBe("rows: x (2, Auto) · columns: y (4, Auto)"); // each axis with its type
    expect(axesText({ ...m, axis_types: ["Explicit", "Auto"] })).toBe("rows: x (2, Explicit) · columns: y (4, Auto)");
    expect(axesText({ ...m, axis_types: [] })).toBe("rows: x (2) · columns: y (4)"); // a JAX without axis types
  });

  it("wraps a long 1-D mesh, facets a 3-D one, draws an abstract one without devices", () => {
    const ring = meshLayout({ id: "m", axis_names: ["data"], shape: [256], devices: [...Array(256).keys()] });
    expect(ring.items.length).toBe(256);
    expect(ring.items[17]).toMatchObject({ x: ring.items[1].x, y: ring.items[16].y });
    expect(ring.width).toBe(MESH_W);
    expect(axesText({ axis_names: ["data"], shape: [256] }, true)).toBe("data (256), wrapped every 16");
    const cube = meshLayout(small().meshes.find((x) => x.shape.length === 3));
    expect(cube.labels.map((l) => l.text)).toEqual(["a=0", "a=1"]);
    expect(cube.items.length).toBe(8);
    const abstract = meshLayout({ id: "m9", axis_names: ["x"], shape: [4], devices: null, abstract: true });
    expect(abstract.items.map((it) => it.device)).toEqual([null, null, null, null]);
    const many = meshLayout({ id: "m", axis_names: ["a", "b", "c"], shape: [20, 2, 2], devices: [...Array(80).keys()] });
    expect([many.items.length, many.hidden]).toEqual([64, 4]);
  });

  it("arrow keys go to the nearest cell that way", () => {
    const items = meshLayout({ id: "m", axis_names: ["x", "y"], shape: [2, 4], devices: [...Array(8).keys()] }).items;
    expect(neighbour(items, 0, "ArrowRight")).toBe(1);
    expect(neighbour(items, 1, "ArrowDown")).toBe(5);
    expect(neighbour(items, 5, "ArrowUp")).toBe(1);
    expect(neighbour(items, 0, "ArrowLeft")).toBe(-1);
    expect(neighbour(items, 3, "ArrowRight")).toBe(-1);
  });
});

describe("device colours", () => {
  // The rule itself (8 clearly different colours, 256 neighbours apart, the primary mesh's order)
  // lives in Python and is tested there: tests/test_device_colors.py.
  it("reads each device's colour from the document, and nothing else", () => {
    const d = small();
    const pal = devicePalette(d);
    expect([...pal.keys()]).toEqual(d.devices.map((x) => x.id));
    for (const x of d.devices) expect(pal.get(x.id)).toBe(x.color);
    expect(new Set(pal.values()).size).toBe(8);
    for (const c of pal.values()) expect(c).toMatch(/^#[0-9a-f]{6}$/);
    const hostile = { devices: [{ id: 0, color: "red;background:url(x)" }, { id: 1, color: "#12345" }, { id: 2 }, { id: "3", color: "#123456" }, null, { id: 4, color: "#A0b1C2" }] };
    expect([...devicePalette(hostile)]).toEqual([[4, "#A0b1C2"]]);
    expect([...devicePalette({})]).toEqual([]);
  });

  it("stripes a replicated cell with at most STRIPES sampled holder colours", () => {
    const cs = fixture("sharding-256").devices.map((x) => x.color);
    expect(cs.length).toBe(256);
    expect(sampleColors(cs).length).toBe(STRIPES);
    expect(sampleColors(cs)[1]).toBe(cs[32]);
    expect(cellBackground([cs[0]])).toBe(cs[0]);
    expect(cellBackground(cs.slice(0, 2))).toBe(`repeating-linear-gradient(135deg,${cs[0]} 0px 5px,${cs[1]} 5px 10px)`);
  });
});

describe("texts", () => {
  it("writes specs, bytes, slices and id lists as JAX and jaxmagic do", () => {
    expect(specText(["x", "y"])).toBe("P('x', 'y')");
    expect(specText([null, "y", "x"])).toBe("P(None, 'y', 'x')");
    expect(specText([["data", "model"]])).toBe("P(('data', 'model'),)");
    expect(specText(["data"])).toBe("P('data',)");
    expect(specText([])).toBe("P()");
    expect(specText(null)).toBeNull();
    expect(shardingText(arr("on3").sharding)).toBe("device 3");
    expect(shardingText({ kind: "GSPMDSharding", spec: null, devices: [0, 1] })).toBe("GSPMDSharding");
    expect([bytesText(48), bytesText(1536), bytesText(2 << 20), bytesText(1.1 * 2 ** 30)]).toEqual(["48 bytes", "1.5 KB", "2.0 MB", "1.1 GB"]);
    expect([bytesText(1), bytesText(0)]).toEqual(["1 byte", "0 bytes"]); // one plural rule (widgets/ui/words.js)
    expect(sliceText([[0, 256], [128, 256]])).toBe("[0:256, 128:256]");
    expect(idsText([...Array(20).keys()])).toBe("0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, … (+8)");
    expect(operandsText(["f32[8]", "f32[8]", "?"])).toBe("2 × f32[8], ?");
  });

  it("hover text of a block: name, slice, block shape and bytes, every holder", () => {
    const out = arr("out"); // f32[512] P('y') on 2x4: 4 blocks, each on 2 devices
    expect(blockLines(out, 1)).toEqual(["out · block 2 of 4", "index [128:256]", "f32[128] · 512 bytes", "replicated ×2 on devices 1, 5"]);
    const w = arr("w");
    expect(blockLines(w, 7)).toEqual(["w · block 8 of 8", "index [256:512, 384:512]", "f32[256,128] · 128.0 KB", "on device 7"]);
    expect(holdersText([])).toBe("held by no addressable device");
    expect(blockLines(arr("scale"), 0)[1]).toBe("index []");
  });

  it("an unreduced array: its spec as JAX prints it, partial sums (not copies) on each block's holders", () => {
    const out = arr("out");
    const partial = { ...out, name: "partial", partial_sums: 2, replication: 1, note: "JAX cannot index partial",
      sharding: { ...out.sharding, spec: ["y"], unreduced: ["x"] } };
    expect(shardingText(partial.sharding)).toBe("P('y', unreduced={'x'})");
    expect(specText(["y", null], ["x", "<b>"])).toBe("P('y', None, unreduced={'x', '<b>'})");
    expect(specText(["y"], [])).toBe("P('y',)");
    expect(partialSums(partial)).toBe(true);
    expect(partialSums(out)).toBe(false);
    expect(blockLines(partial, 1)[3]).toBe("partial sums (unreduced) on devices 1, 5: the block is their sum");
    expect(replicationText(partial)).toBe("partial sums ×2 (unreduced)");
    expect(replicationText(out)).toBe("×2 replicated");
  });

  it("per-device totals, the arrays a device holds, the hover text of a mesh cell", () => {
    const d = small();
    const m = readSharding(d);
    for (const dev of [0, 3, 7]) {
      const want = d.arrays.reduce((s, a) => s + (a.bytes_per_device[String(dev)] || 0), 0);
      expect(m.totals.get(dev).bytes).toBe(want);
      expect(m.totals.get(dev).blocks).toBe(d.arrays.reduce((s, a) => s + a.blocks.filter((b) => b.devices.includes(dev)).length, 0));
      expect(heldArrays(m, dev).map((x) => x.array.id).sort()).toEqual(d.arrays.filter((a) => String(dev) in a.bytes_per_device).map((a) => a.id).sort());
    }
    const mesh = d.meshes[0];
    const lines = deviceLines(m, mesh, { device: 6, pos: 6 });
    expect(lines[0]).toBe("device 6 · cpu");
    expect(lines[1]).toBe(`mesh ${mesh.names[0]} position x=1, y=2`);
    expect(lines[2]).toMatch(/^holds .+: \d+ blocks of \d+ arrays$/);
    expect(m.findings.map((f) => f.severity)).toEqual(d.findings.map((f) => f.severity).sort((a, b) => (a === "warning" ? 0 : 1) - (b === "warning" ? 0 : 1)));
    expect(looseDevices(m)).toBeNull();
    expect(looseDevices(readSharding({ ...d, meshes: [] })).devices).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it("collective tags: group numbers for replica groups, targets for permute pairs", () => {
    const tags = collectiveTags({ groups: [[0, 4], [1, 5]], pairs: [] });
    expect([...tags]).toEqual([[0, "0"], [4, "0"], [1, "1"], [5, "1"]]);
    const ring = collectiveTags({ groups: [], pairs: [[0, 1], [1, 2], [5, 6]] });
    expect(Object.fromEntries(ring)).toEqual({ 0: "→1", 1: "→2", 2: "", 5: "→6", 6: "" });
  });
});
