// @vitest-environment jsdom
// Playback and presentation mode of the mounted sharding view (widgets/sharding/playback.js
// through widgets/mount.js, with the shared controls): what each step shows against the
// document, random access, the last position equal to the static view, the selection dropped
// by a step, presentation sizes, and the time of one step in a 1,000-step story (printed).
import { describe, it, expect } from "vitest";
import { fixture } from "./helpers.js";
import { useMounting, click } from "./mounting.js";
import { collectiveTags } from "../../widgets/sharding/model.js";
import { meshLayout, PRESENT } from "../../widgets/sharding/geometry.js";

const render = useMounting();
const small = () => fixture("sharding-small");
const key = (node, k) => node.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true }));

function open(doc) {
  const el = render(doc);
  const root = el.querySelector(".jm-root");
  const view = root.querySelector(".jm-sharding");
  const count = () => root.querySelector(".jm-pb-count").textContent.split("/").map((s) => Number(s));
  const go = (p) => {
    const slider = root.querySelector(".jm-pb-slider");
    slider.value = String(p);
    slider.dispatchEvent(new Event("input"));
  };
  return { root, view, count, go, label: () => root.querySelector(".jm-pb-label").textContent };
}

/** The view's markup without the playback's step line (as opened it invites to play; after End it names the last step). */
const withoutStepLine = (el) => {
  const c = el.cloneNode(true);
  for (const x of c.querySelectorAll(".jm-pb-label")) x.remove();
  return c.outerHTML;
};
const future = (el) => el.classList.contains("jm-pb-future");
const current = (el) => el.classList.contains("jm-pb-current");
const meshCells = (root, k) => [...root.querySelectorAll(".jm-sh-mesh")[k].querySelectorAll(".jm-sh-cell")];
/** Go to the first position whose label starts with `text` (walking the story by its labels); returns it. */
const stepOf = ({ count, go, label }, text) => {
  for (let p = 1; p <= count()[1]; p++) {
    go(p);
    if (label().startsWith(text)) return p;
  }
  throw new Error(`no step labelled ${text}`);
};

describe("sharding playback", () => {
  it("starts from nothing drawn, shows the meshes first and ends equal to the static view", () => {
    const d = small();
    const o = open(d);
    const { root, view, count, label } = o;
    const before = withoutStepLine(view);
    const steps = d.meshes.length + d.arrays.length + d.calls.reduce((s, c) => s + 1 + c.collectives.length, 0);
    expect(count()).toEqual([steps, steps]);
    key(root, "Home");
    expect(count()).toEqual([0, steps]);
    expect(label()).toBe(`Start: 3 meshes over 8 devices, ${d.arrays.length} arrays, ${d.calls.length} jitted calls`);
    const cards = [...view.querySelectorAll(".jm-sh-mesh, .jm-sh-array, .jm-sh-call, .jm-sh-findings > li")];
    expect(cards.length).toBe(d.meshes.length + d.arrays.length + d.calls.length + d.findings.length);
    expect(cards.every(future)).toBe(true);
    key(root, "ArrowRight");
    const meshes = [...view.querySelectorAll(".jm-sh-mesh")];
    expect(meshes.map((x) => [future(x), current(x)])).toEqual([[false, true], [true, false], [true, false]]);
    expect(label()).toBe("mesh mesh · 8 devices as 2 × 4: 'x' (2) × 'y' (4)"); // by the name the cell bound
    key(root, "End");
    expect(count()).toEqual([steps, steps]);
    expect(withoutStepLine(view)).toBe(before); // the step line now says what End did
    expect(root.classList.contains("jm-pb-active")).toBe(false);
  });

  it("an array's step shows its card and lights exactly its holders in every mesh", () => {
    const d = small();
    const o = open(d);
    const { root, view } = o;
    for (const name of ["out", "rep", "on3"]) {
      const ai = d.arrays.findIndex((a) => a.name === name);
      const p = stepOf(o, `${name} `);
      const card = view.querySelectorAll(".jm-sh-array")[ai];
      expect([future(card), current(card)]).toEqual([false, true]);
      const holders = new Set(d.arrays[ai].blocks.flatMap((b) => b.devices));
      d.meshes.forEach((mesh, k) => {
        const lit = meshCells(root, k).filter((c) => c.classList.contains("jm-sh-on")).map((c) => Number(c.textContent));
        expect(new Set(lit)).toEqual(new Set(mesh.devices.filter((x) => holders.has(x))));
      });
      // an array shown later is still faded; one shown earlier is plain
      const later = [...view.querySelectorAll(".jm-sh-array")].filter(future).length;
      expect(later).toBe(d.meshes.length + d.arrays.length - p);
    }
  });

  it("a collective's step lights its groups in the mesh, tagged, and shows the collective in its call", () => {
    const d = small();
    const o = open(d);
    const { root, view } = o;
    const ci = d.calls.findIndex((c) => c.name.endsWith("step"));
    const call = d.calls[ci];
    stepOf(o, `${call.name} · all-gather 1 of 3`);
    const card = view.querySelectorAll(".jm-sh-call")[ci];
    const colls = [...card.querySelectorAll(".jm-sh-coll")];
    expect(future(card)).toBe(false);
    expect(colls.map((b) => [future(b), current(b), b.classList.contains("jm-sh-on")])).toEqual([[false, true, true], [true, false, false], [true, false, false]]);
    const want = collectiveTags(call.collectives[0]);
    const lit = meshCells(root, 0).filter((c) => c.classList.contains("jm-sh-on")).map((c) => [Number(c.textContent), c.getAttribute("data-tag")]);
    expect(new Map(lit)).toEqual(new Map([...want].map(([dv, t]) => [dv, t || null])));
    // the finding about gram's all-gather is not shown yet; on that collective's step it is
    const finding = [...view.querySelectorAll(".jm-sh-findings > li")].find((li) => li.textContent.includes("gram: all-gather"));
    expect(future(finding)).toBe(true);
    stepOf(o, `${d.calls.find((c) => c.name.endsWith("gram")).name} · all-gather 1 of 2`);
    expect(future(finding)).toBe(false);
  });

  it("random access: a position looks the same however it is reached", () => {
    const o = open(small());
    const { root, view, go, count } = o;
    const n = count()[1];
    const snap = () => view.outerHTML;
    const at = [];
    key(root, "Home");
    for (let p = 1; p <= n; p++) {
      key(root, "ArrowRight");
      at[p] = snap();
    }
    for (const p of [17, 3, n - 1, 1, 20]) {
      go(p);
      expect(snap()).toBe(at[p]);
    }
  });

  it("a step drops the user's selection", () => {
    const d = small();
    const o = open(d);
    const { root, view } = o;
    click(meshCells(root, 0)[2]);
    expect(view.querySelectorAll(".jm-sh-array .jm-sh-on").length).toBeGreaterThan(0);
    key(root, "Home");
    expect(view.querySelectorAll(".jm-sh-array .jm-sh-on").length).toBe(0);
    expect(view.querySelector(".jm-sh-bar b")).toBe(null);
  });

  it("presentation mode draws larger grids whose ids fit their cells", () => {
    const d = { ...small(), present: true };
    const { root, view } = open(d);
    expect(root.classList.contains("jm-present")).toBe(true);
    const cells = meshCells(root, 0);
    const lay = meshLayout(d.meshes[0], PRESENT.mesh, { maxCell: PRESENT.cell, facetW: PRESENT.facet, labelH: PRESENT.label });
    expect(cells[0].style.width).toBe(`${lay.items[0].w}px`);
    expect(lay.items[0].w).toBe(PRESENT.cell);
    expect(cells.map((c) => c.textContent)).toEqual(d.meshes[0].devices.map(String));
    expect(view.querySelector(".jm-sh-bar .jm-clutter")).not.toBe(null); // the hint is clutter there
    expect([...view.querySelectorAll(".jm-sh-lowered")].every((x) => x.classList.contains("jm-clutter"))).toBe(true);
  });

  it("steps a 1,000-step story touching only what changes (time printed)", { timeout: 60_000 }, () => {
    const doc = bigStory(600, 80, 4); // the 5,000-step story is timed in Chromium (tests/browser/test_sharding_stage.py)
    const t = performance.now();
    const { root, view, count, go } = open(doc);
    const mounted = performance.now() - t;
    const n = count()[1];
    expect(n).toBe(1 + 600 + 80 * 5);
    key(root, "Home");
    go(500);
    // one step changes two cards' classes (the last step's and this one's), and mesh cells only
    const seen = new MutationObserver(() => {});
    seen.observe(view, { attributes: true, subtree: true, attributeFilter: ["class"] });
    key(root, "ArrowRight");
    const touched = seen.takeRecords().map((r) => r.target).filter((t) => !t.closest(".jm-sh-mesh, .jm-stagebar"));
    seen.disconnect();
    expect(new Set(touched).size).toBe(2);
    const t0 = performance.now();
    const reps = 20;
    for (let i = 0; i < reps; i++) key(root, "ArrowRight");
    const step = (performance.now() - t0) / reps;
    const t1 = performance.now();
    key(root, "End");
    const jump = performance.now() - t1;
    expect(view.querySelectorAll(".jm-pb-future, .jm-pb-current").length).toBe(0);
    console.log(`[sharding] ${n}-step story in jsdom: mount ${mounted.toFixed(0)} ms, one step ${step.toFixed(2)} ms, jump to the end ${jump.toFixed(1)} ms`);
  });
});

/** A synthetic sharding document: `arrays` replicated arrays and `calls` calls of `per` all-reduces each. */
function bigStory(arrays, calls, per) {
  const devices = [...Array(8).keys()];
  const mesh = { id: "m0", axis_names: ["data"], shape: [8], axis_types: ["Auto"], devices, abstract: false };
  const arr = (i) => ({
    id: `a${i}`, name: `x${i}`, origin: "namespace", call: null, shape: [64, 16], dtype: "f32", bytes: 4096,
    sharding: { kind: "named", text: "", mesh: "m0", spec: [], memory_kind: "device", devices, fully_replicated: true },
    blocks: [{ index: [[0, 64], [0, 16]], devices, replicas: devices.map(() => 0) }],
    bytes_per_device: Object.fromEntries(devices.map((dv) => [String(dv), 4096])), replication: 8, addressable: true,
  });
  const col = { kind: "all-reduce", name: "all-reduce", computation: "main", result: "f32[16]", result_bytes: 64, operands: ["f32[16]"],
    operand_bytes: 64, groups: [devices], groups_text: "[1,8]<=[8]", pairs: [], dimensions: [], op_name: "jit(f)/reduce_sum" };
  const call = (i) => ({
    id: `c${i}`, call: i, name: `f${i}`, signature: "f32[64,16]", calls: 1, source: null, call_site: null,
    inputs: [{ path: "x", aval: "f32[64,16]", kind: "NamedSharding", text: "", mesh: "m0", spec: ["data"], given: null, mismatch: false }],
    outputs: [{ path: "out", aval: "f32[16]", kind: "NamedSharding", text: "", mesh: "m0", spec: [] }],
    lowered: { args: [], results: [] }, collectives: Array(per).fill(col), shard_maps: [], intermediates: [],
  });
  return {
    schema: "jaxmagic", version: 1, kind: "sharding", title: "big", notes: [], error: null,
    devices: devices.map((id) => ({ id, platform: "cpu", kind: "cpu" })), meshes: [mesh],
    arrays: [...Array(arrays).keys()].map(arr), calls: [...Array(calls).keys()].map(call), findings: [],
  };
}
