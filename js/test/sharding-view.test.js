// @vitest-environment jsdom
// The mounted sharding view on real documents (js/dev/make-sharding-fixtures.mjs): one
// element per block, device colours, device and collective selection checked against the
// document, findings, keyboard, hostile strings, the 256-device document's element count,
// a 4,096-device document drawn on canvases, and an empty document.
import { describe, it, expect } from "vitest";
import { fixture } from "./helpers.js";
import { useRecordingCanvas } from "./timeline-helpers.js";
import { useSharding, bigMesh } from "./sharding-helpers.js";
import { devicePalette } from "../../widgets/sharding/colors.js";
import { MAX_CHIPS, MAX_GROUPS } from "../../widgets/sharding/calls.js";

const render = useSharding();
const EVIL = "<img src=x onerror=alert(1)>";
const small = () => fixture("sharding-small");
const click = (node) => node.dispatchEvent(new MouseEvent("click", { bubbles: true }));
const key = (node, k) => node.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true }));

useRecordingCanvas();

const arrayCards = (el) => [...el.querySelectorAll(".jm-sh-array")];
const meshCards = (el) => [...el.querySelectorAll(".jm-sh-mesh")];
const cells = (card) => [...card.querySelectorAll(".jm-sh-cell")];
const lit = (card) => cells(card).filter((c) => c.classList.contains("jm-sh-on")).map((c) => Number(c.getAttribute("data-i")));
/** The mesh cell of device d in mesh card k (cells are in row-major mesh order). */
const meshCell = (el, doc, k, d) => cells(meshCards(el)[k])[doc.meshes[k].devices.indexOf(d)];
/** Block numbers of `arr` whose holders include d, as the document says. */
const heldBy = (arr, d) => arr.blocks.map((b, i) => (b.devices.includes(d) ? i : -1)).filter((i) => i >= 0);
/** Block number of each drawn cell of an array card, by its hover label ("block 3 of 8"). */
const blockOfCell = (c) => Number(/block (\d+) of/.exec(c.getAttribute("aria-label"))[1]) - 1;

describe("sharding view", () => {
  it("puts the arrays earlier cells left in one closed row after the calls; a click or the keyboard opens it", () => {
    for (const n of [1, 3]) {
      const doc = small();
      doc.arrays.slice(0, n).forEach((a) => (a.earlier = true));
      const el = render(doc);
      const row = el.querySelector(".jm-sh-earlier-row");
      const btn = row.querySelector("button.jm-sh-earlier-toggle");
      expect(btn.textContent).toContain(n === 1 ? "1 array from earlier cells" : "3 arrays from earlier cells");
      expect(btn.getAttribute("aria-expanded")).toBe("false");
      const body = row.querySelector(".jm-sh-earlier-cards");
      expect(body.hidden).toBe(true);
      expect([...body.querySelectorAll(".jm-sh-array .jm-sh-name")].map((x) => x.textContent)).toEqual(doc.arrays.slice(0, n).map((a) => a.name));
      // order: meshes, the calls (the first collective is the story's key element), this cell's arrays, then the row
      const order = [...el.querySelectorAll(".jm-sh-mesh, .jm-sh-array:not(.jm-sh-earlier), .jm-sh-call, .jm-sh-earlier-row")];
      const last = (sel) => order.map((x) => x.matches(sel)).lastIndexOf(true);
      const first = (sel) => order.findIndex((x) => x.matches(sel));
      expect(last(".jm-sh-mesh")).toBeLessThan(first(".jm-sh-call"));
      expect(last(".jm-sh-call")).toBeLessThan(first(".jm-sh-array"));
      expect(order[order.length - 1]).toBe(row);
      expect(el.textContent).toContain(`Arrays from this cell (${doc.arrays.length - n})`);
      click(btn);
      expect([body.hidden, btn.getAttribute("aria-expanded")]).toEqual([false, "true"]);
      click(btn);
      expect(body.hidden).toBe(true);
      expect(btn.tagName).toBe("BUTTON"); // Enter and Space toggle it like any button
    }
  });

  it("has a legend of its colours and marks the first collective as the story's key element", () => {
    const d = small();
    const el = render(d);
    const legend = el.querySelector("[data-jm-legend]");
    expect(legend).not.toBeNull();
    const pal = devicePalette(d);
    const chips = [...legend.querySelectorAll(".jm-sh-lg-chips .jm-sh-chip")];
    expect(chips.map((c) => Number(c.textContent))).toEqual([...pal.keys()]);
    expect(legend.textContent).toContain("one colour per device (8 devices)");
    expect(legend.textContent).toMatch(/replicated/);
    expect(legend.textContent).toMatch(/collective's device group/);
    expect(legend.textContent).not.toMatch(/unreduced/); // only where an array holds partial sums
    const u = small();
    u.arrays[0].sharding.unreduced = ["x"];
    expect(render(u).querySelector("[data-jm-legend]").textContent).toContain("unreduced: partial sums, one per striped colour");
    const keys = el.querySelectorAll("[data-jm-key-element]");
    expect(keys.length).toBe(1);
    const firstCall = el.querySelectorAll(".jm-sh-call")[d.calls.findIndex((c) => c.collectives.length)];
    expect(keys[0]).toBe(firstCall.querySelector(".jm-sh-coll"));
  });

  it("draws header, findings (warnings first), a card per mesh and array, and one cell per block", () => {
    const d = small();
    const el = render(d);
    expect(el.querySelector(".jm-title").textContent).toBe(d.title);
    const sev = [...el.querySelectorAll(".jm-sh-finding .jm-sh-sev")].map((s) => s.textContent);
    expect(sev.length).toBe(d.findings.length);
    expect(sev).toEqual([...sev].sort((a, b) => (a === "warning" ? 0 : 1) - (b === "warning" ? 0 : 1)));
    expect(meshCards(el).length).toBe(d.meshes.length);
    const cards = arrayCards(el);
    expect(cards.length).toBe(d.arrays.length);
    d.arrays.forEach((a, i) => {
      expect(cards[i].querySelector(".jm-sh-name").textContent).toBe(a.name);
      expect(cards[i].querySelector(".jm-sh-aval").textContent).toBe(`${a.dtype}[${a.shape.join(",")}]`);
      expect(cells(cards[i]).length).toBe(a.blocks.length);
      expect(cells(cards[i]).map(blockOfCell).sort((x, y) => x - y)).toEqual(a.blocks.map((_, k) => k));
    });
    // specs as JAX writes them, the single-device array by its device
    const meta = (name) => cards[d.arrays.findIndex((a) => a.name === name)].querySelector(".jm-sh-meta").textContent;
    expect(meta("w")).toContain("P('x', 'y') · mesh mesh · 1 copy");
    expect(meta("rep")).toContain("P() · mesh mesh · ×8 replicated");
    // meshes by the names the cell bound, each axis with its type
    expect(meshCards(el).map((c) => c.querySelector(".jm-sh-name").textContent)).toEqual(d.meshes.map((x) => `mesh ${x.names[0]}`));
    expect(meshCards(el)[0].textContent).toContain("rows: x (2, Auto) · columns: y (4, Auto)");
    const unnamed = render({ ...d, meshes: d.meshes.map((x) => ({ ...x, names: [] })) });
    expect(meshCards(unnamed)[0].querySelector(".jm-sh-name").textContent).toBe(`unnamed mesh ${d.meshes[0].id}`);
    expect(meta("on3")).toContain("device 3");
    expect(meta("params['cube']")).toContain("P(None, 'y', 'x')");
  });

  it("colours every block by its holder, stripes and badges replicated ones", () => {
    const d = small();
    const el = render(d);
    const pal = devicePalette(d);
    expect(new Set(pal.values()).size).toBe(8);
    arrayCards(el).forEach((card, i) => {
      for (const c of cells(card)) {
        const b = d.arrays[i].blocks[blockOfCell(c)];
        const style = c.getAttribute("style");
        for (const dev of b.devices) expect(style).toContain(pal.get(dev));
        if (b.devices.length > 1) expect(style).toContain("repeating-linear-gradient");
      }
    });
    const rep = arrayCards(el)[d.arrays.findIndex((a) => a.name === "rep")];
    expect(cells(rep)[0].textContent).toBe("×8");
    // mesh cells carry their device's colour and id
    d.meshes[0].devices.forEach((dev) => {
      const c = meshCell(el, d, 0, dev);
      expect(c.textContent).toBe(String(dev));
      expect(c.getAttribute("style")).toContain(pal.get(dev));
    });
  });

  it("a mesh cell selects its device: exactly the blocks it holds light up, everywhere; again clears", () => {
    const d = small();
    const el = render(d);
    for (const dev of d.meshes[0].devices) {
      click(meshCell(el, d, 0, dev));
      arrayCards(el).forEach((card, i) => {
        const want = heldBy(d.arrays[i], dev);
        expect(cells(card).filter((c) => c.classList.contains("jm-sh-on")).map(blockOfCell).sort((x, y) => x - y)).toEqual(want);
        expect(card.querySelector(".jm-sh-grid").classList.contains("jm-sh-marking")).toBe(true);
      });
      // the same device is lit (and ringed) in every mesh
      meshCards(el).forEach((card, k) => {
        const on = cells(card).filter((c) => c.classList.contains("jm-sh-on"));
        expect(on.map((c) => c.textContent)).toEqual([String(dev)]);
        expect(on[0].classList.contains("jm-sh-ring")).toBe(true);
        expect(k).toBeLessThan(d.meshes.length);
      });
      const bar = el.querySelector(".jm-sh-bar").textContent;
      const total = d.arrays.reduce((s, a) => s + (a.bytes_per_device[String(dev)] || 0), 0);
      expect(bar).toContain(`device ${dev}`);
      expect(bar).toContain(total >= 1 << 20 ? `${(total / (1 << 20)).toFixed(1)} MB` : `${(total / 1024).toFixed(1)} KB`);
    }
    click(meshCell(el, d, 0, 7));
    expect(el.querySelectorAll(".jm-sh-on").length).toBe(0);
    expect(el.querySelectorAll(".jm-sh-marking").length).toBe(0);
  });

  it("a device lights its row in every collective's groups and permute pairs", () => {
    const d = small();
    const el = render(d);
    for (const dev of d.meshes[0].devices) {
      click(meshCell(el, d, 0, dev));
      d.calls.forEach((c, ci) => {
        const rows = [...el.querySelectorAll(".jm-sh-call")[ci].querySelectorAll(".jm-sh-grp")];
        const want = c.collectives.flatMap((col) => [
          ...col.groups.slice(0, MAX_GROUPS).map((g) => g.includes(dev)),
          ...col.pairs.slice(0, MAX_CHIPS).map((p) => p.includes(dev)),
        ]);
        expect(rows.map((r) => r.classList.contains("jm-sh-on"))).toEqual(want);
      });
    }
    expect(el.querySelectorAll(".jm-sh-grp.jm-sh-on").length).toBeGreaterThan(0);
  });

  it("a block selects its holder; a replicated block steps through its holders, then clears; Esc clears", () => {
    const d = small();
    const el = render(d);
    const ai = d.arrays.findIndex((a) => a.name === "out");
    const card = arrayCards(el)[ai];
    const cell = cells(card).find((c) => blockOfCell(c) === 1);
    const holders = d.arrays[ai].blocks[1].devices;
    expect(holders.length).toBe(2);
    for (const dev of holders) {
      click(cell);
      expect(el.querySelector(".jm-sh-bar b").textContent).toMatch(new RegExp(`^device ${dev}\\b`));
      expect(lit(card).map((i) => blockOfCell(cells(card)[i]))).toEqual(heldBy(d.arrays[ai], dev));
    }
    click(cell);
    expect(el.querySelectorAll(".jm-sh-on").length).toBe(0);
    click(cell);
    expect(el.querySelectorAll(".jm-sh-on").length).toBeGreaterThan(0);
    key(cell, "Escape");
    expect(el.querySelectorAll(".jm-sh-on").length).toBe(0);
    expect(el.querySelector(".jm-sh-bar").textContent).toContain("Esc clears");
  });

  it("a collective lights the devices that talk, tagged by group; permute sources by target", () => {
    const d = small();
    const el = render(d);
    const ci = d.calls.findIndex((c) => c.collectives.some((x) => x.kind === "all-gather" && x.groups.length === 4));
    const k = d.calls[ci].collectives.findIndex((x) => x.kind === "all-gather" && x.groups.length === 4);
    const col = d.calls[ci].collectives[k];
    const btn = el.querySelectorAll(".jm-sh-call")[ci].querySelectorAll(".jm-sh-coll")[k];
    click(btn);
    expect(btn.getAttribute("aria-pressed")).toBe("true");
    col.groups.forEach((g, gi) => g.forEach((dev) => {
      const c = meshCell(el, d, 0, dev);
      expect(c.classList.contains("jm-sh-on")).toBe(true);
      expect(c.getAttribute("data-tag")).toBe(String(gi));
    }));
    expect(el.querySelector(".jm-sh-bar").textContent).toContain(col.op_name);
    // a ring ppermute: every source tagged with where it sends
    const pi = d.calls.findIndex((c) => c.collectives.some((x) => x.kind === "collective-permute"));
    const pk = d.calls[pi].collectives.findIndex((x) => x.kind === "collective-permute");
    click(el.querySelectorAll(".jm-sh-call")[pi].querySelectorAll(".jm-sh-coll")[pk]);
    expect(btn.getAttribute("aria-pressed")).toBe("false");
    for (const [s, t] of d.calls[pi].collectives[pk].pairs) expect(meshCell(el, d, 0, s).getAttribute("data-tag")).toBe(`→${t}`);
    key(el, "Escape");
    expect(el.querySelectorAll("[data-tag]").length).toBe(0);
  });

  it("calls: inputs and outputs side by side, the moved argument marked, collectives with their cause, shard_map and lowered text", () => {
    const d = small();
    const el = render(d);
    const cards = [...el.querySelectorAll(".jm-sh-call")];
    expect(cards.length).toBe(d.calls.length);
    d.calls.forEach((c, ci) => {
      const card = cards[ci];
      expect(card.querySelectorAll(".jm-sh-coll").length).toBe(c.collectives.length);
      expect(card.querySelectorAll(".jm-sh-mismatch").length).toBe(c.inputs.filter((l) => l.mismatch).length);
      const text = card.textContent;
      for (const l of [...c.inputs, ...c.outputs]) expect(text).toContain(l.aval);
      for (const col of c.collectives) if (col.op_name) expect(text).toContain(`from ${col.op_name}`);
      for (const s of c.shard_maps) for (const x of s.collectives) expect(text).toContain(`${x.source.file.split("/").pop()}:${x.source.line}`);
      if (c.lowered.args.some(Boolean)) expect(card.querySelector(".jm-sh-lowered pre").textContent).toContain(c.lowered.args.find(Boolean));
      expect(card.querySelectorAll(".jm-sh-inner tr").length).toBe((c.intermediates || []).length);
      for (const x of c.intermediates || []) expect(text).toContain(x.spec);
    });
    expect(d.calls.some((c) => (c.intermediates || []).some((x) => x.primitive === "sharding_constraint"))).toBe(true);
    const moved = cards[d.calls.findIndex((c) => c.inputs.some((l) => l.mismatch))].querySelector(".jm-sh-mismatch");
    expect(moved.textContent).toContain("moved on every call");
  });

  it("findings select what they name: the array, the call, the collective", () => {
    const d = small();
    const el = render(d);
    const buttons = [...el.querySelectorAll(".jm-sh-finding")];
    const byKind = (k) => buttons[d.findings.findIndex((f) => f.kind === k)];
    const rep = d.findings.find((f) => f.kind === "replicated");
    click(byKind("replicated"));
    const picked = el.querySelector(".jm-sh-picked");
    expect(arrayCards(el).indexOf(picked)).toBe(d.arrays.findIndex((a) => a.id === rep.array));
    const gather = d.findings.find((f) => f.kind === "large_all_gather");
    click(byKind("large_all_gather"));
    const ci = d.calls.findIndex((c) => c.id === gather.call);
    expect(el.querySelector(".jm-sh-picked")).toBe(el.querySelectorAll(".jm-sh-call")[ci]);
    expect(el.querySelectorAll(".jm-sh-call")[ci].querySelectorAll(".jm-sh-coll")[gather.collective].getAttribute("aria-pressed")).toBe("true");
    click(byKind("resharding"));
    const ri = d.calls.findIndex((c) => c.id === d.findings.find((f) => f.kind === "resharding").call);
    expect(el.querySelector(".jm-sh-picked")).toBe(el.querySelectorAll(".jm-sh-call")[ri]);
    expect(el.querySelectorAll(".jm-sh-picked").length).toBe(1);
  });

  it("keyboard: one tab stop per grid, arrows move between cells, Enter selects, focus shows the hover card", () => {
    const d = small();
    const el = render(d);
    const ai = d.arrays.findIndex((a) => a.name === "w");
    const cs = cells(arrayCards(el)[ai]);
    expect(cs.filter((c) => c.getAttribute("tabindex") === "0").length).toBe(1);
    cs[0].focus();
    const tip = el.querySelector(".jm-sh-tip");
    expect(tip.hidden).toBe(false);
    expect(tip.textContent).toContain("w · block 1 of 8");
    expect(tip.textContent).toContain("index [0:256, 0:128]");
    expect(tip.textContent).toContain("f32[256,128] · 128.0 KB");
    expect(tip.textContent).toContain("on device 0");
    key(document.activeElement, "ArrowRight");
    expect(blockOfCell(document.activeElement)).toBe(1);
    key(document.activeElement, "ArrowDown");
    expect(d.arrays[ai].blocks[blockOfCell(document.activeElement)].index).toEqual([[256, 512], [128, 256]]);
    expect(cs.filter((c) => c.getAttribute("tabindex") === "0")).toEqual([document.activeElement]);
    key(document.activeElement, "Enter");
    const b = d.arrays[ai].blocks[blockOfCell(document.activeElement)];
    expect(el.querySelector(".jm-sh-bar b").textContent).toMatch(new RegExp(`^device ${b.devices[0]}\\b`));
  });

  it("facets a 3-D array and a 3-D mesh; a scalar is one cell", () => {
    const d = small();
    const el = render(d);
    const t3 = arrayCards(el)[d.arrays.findIndex((a) => a.name === "t3")];
    expect([...t3.querySelectorAll(".jm-sh-flabel")].map((x) => x.textContent)).toEqual(["[0:2]", "[2:4]"]);
    const cube = meshCards(el)[d.meshes.findIndex((m) => m.shape.length === 3)];
    expect([...cube.querySelectorAll(".jm-sh-flabel")].map((x) => x.textContent)).toEqual(["a=0", "a=1"]);
    expect(cube.textContent).toContain("facets: a (2, Auto) · rows: b (2, Auto) · columns: c (2, Auto)");
    expect(cells(arrayCards(el)[d.arrays.findIndex((a) => a.shape.length === 0)]).length).toBe(1);
  });

  it("keeps document strings as text", () => {
    const d = small();
    d.title = EVIL;
    d.notes = [EVIL];
    d.arrays[0].name = EVIL;
    d.arrays[0].dtype = EVIL;
    d.arrays[0].sharding.spec = [EVIL];
    d.arrays[0].sharding.unreduced = [EVIL];
    d.arrays[0].note = EVIL;
    d.meshes[0].axis_names = [EVIL, EVIL];
    d.meshes[0].id = EVIL;
    d.devices[0].kind = EVIL;
    d.findings[0].message = EVIL;
    d.findings[0].kind = EVIL;
    const c = d.calls[0];
    c.name = c.signature = EVIL;
    c.inputs[0].path = c.inputs[0].aval = c.inputs[0].given = EVIL;
    c.collectives[0].op_name = c.collectives[0].kind = c.collectives[0].result = EVIL;
    c.collectives[0].operands = [EVIL];
    c.lowered.args = [EVIL];
    const el = render(d);
    expect(el.querySelector("img")).toBeNull();
    expect(el.querySelectorAll("script").length).toBe(0);
    expect(el.querySelector(".jm-title").textContent).toBe(EVIL);
    expect(arrayCards(el)[0].querySelector(".jm-sh-name").textContent).toBe(EVIL);
    expect(arrayCards(el)[0].querySelector(".jm-sh-note").textContent).toBe(EVIL); // an unreduced array's note
    expect(arrayCards(el)[0].querySelector(".jm-sh-spec").textContent).toContain(`unreduced={'${EVIL}'}`);
    expect(el.textContent.split(EVIL).length).toBeGreaterThan(10);
    cells(arrayCards(el)[0])[0].focus();
    expect(el.querySelector(".jm-sh-tip").textContent).toContain(EVIL);
    click(meshCell(el, d, 0, 0));
    expect(el.querySelector(".jm-sh-bar").textContent).toContain(EVIL);
    expect(el.querySelector("img")).toBeNull();
  });

  it("256 devices: one cell per block and per device, a bounded element count, a selection that matches the document", () => {
    const d = fixture("sharding-256");
    expect(d.devices.length).toBe(256);
    const el = render(d);
    expect(d.findings.length).toBe(0);
    expect(el.textContent).not.toMatch(/null|undefined|NaN/); // no findings section, nothing written from a missing value
    const blocks = d.arrays.reduce((s, a) => s + a.blocks.length, 0);
    const meshCells = d.meshes.reduce((s, m) => s + m.devices.length, 0);
    expect(el.querySelectorAll(".jm-sh-array .jm-sh-cell").length).toBe(blocks);
    expect(el.querySelectorAll(".jm-sh-mesh .jm-sh-cell").length).toBe(meshCells);
    const chips = d.calls.reduce((s, c) => s + c.collectives.reduce((t, x) => t + Math.min(x.groups.length, MAX_GROUPS) * MAX_CHIPS, 0), 0);
    expect(el.querySelectorAll("*").length).toBeLessThan(blocks + meshCells + chips + 400);
    for (const dev of [0, 37, 255]) {
      click(cells(meshCards(el)[0])[d.meshes[0].devices.indexOf(dev)]);
      arrayCards(el).forEach((card, i) => {
        expect(cells(card).filter((c) => c.classList.contains("jm-sh-on")).map(blockOfCell).sort((x, y) => x - y)).toEqual(heldBy(d.arrays[i], dev));
      });
    }
    // a block of 256 holders: stripes of at most 8 sampled colours, badge ×256, every holder counted in the hover text
    const rep = arrayCards(el)[d.arrays.findIndex((a) => a.replication === 256)];
    expect(cells(rep)[0].getAttribute("style").match(/#[0-9a-f]{6}/g).length).toBe(8);
    cells(rep)[0].focus();
    expect(el.querySelector(".jm-sh-tip").textContent).toContain("replicated ×256 on devices 0, 1,");
    expect(el.querySelector(".jm-sh-tip").textContent).toContain("(+244)");
  });

  it("4,096 devices: the mesh and the array are canvases; hit testing and selection still work", () => {
    const d = bigMesh(64);
    const el = render(d);
    expect(el.querySelectorAll(".jm-sh-cell").length).toBe(0);
    const canvases = [...el.querySelectorAll("canvas.jm-sh-canvas")];
    expect(canvases.length).toBe(2);
    expect(el.querySelectorAll("*").length).toBeLessThan(120);
    const [meshCanvas, arrCanvas] = canvases;
    const it = meshCanvas.jmProbe.item(64 * 3 + 5); // device at row 3, column 5
    meshCanvas.dispatchEvent(new MouseEvent("click", { bubbles: true, clientX: it.x + it.w / 2, clientY: it.y + it.h / 2 }));
    expect(el.querySelector(".jm-sh-bar b").textContent).toMatch(/^device 197\b/);
    // the array redraws: one cell at full opacity
    const calls = arrCanvas.__ctx.calls;
    const last = calls.map((c, i) => (c[0] === "clearRect" ? i : -1)).filter((i) => i >= 0).pop();
    const alphas = calls.slice(last).filter((c) => c[0] === "set:globalAlpha").map((c) => c[1]);
    expect(alphas.filter((a) => a < 1).length).toBe(4095);
    expect(Number(arrCanvas.getAttribute("data-draws"))).toBe(2);
    const b = arrCanvas.jmProbe.item(197);
    arrCanvas.dispatchEvent(new MouseEvent("mousemove", { bubbles: true, clientX: b.x + 1, clientY: b.y + 1 }));
    expect(el.querySelector(".jm-sh-tip").textContent).toContain("on device 197");
    key(arrCanvas, "Escape");
    expect(el.querySelector(".jm-sh-bar").textContent).toContain("Esc clears");
  });

  it("one device and no mesh: the device still has a cell to select; an abstract mesh draws grey cells that select nothing", () => {
    const d = small();
    d.arrays = d.arrays.filter((a) => a.name === "on3");
    d.devices = d.devices.filter((x) => x.id === 3);
    d.meshes = [{ id: "m5", axis_names: ["x"], shape: [4], axis_types: ["Explicit"], devices: null, abstract: true }];
    d.calls = [];
    d.findings = [];
    const el = render(d);
    const [abstract, loose] = meshCards(el);
    expect(abstract.textContent).toContain("abstract mesh");
    expect(abstract.textContent).toContain("Explicit");
    expect(cells(abstract).map((c) => c.textContent)).toEqual(["", "", "", ""]);
    click(cells(abstract)[0]);
    expect(el.querySelectorAll(".jm-sh-on").length).toBe(0);
    expect(loose.textContent).toContain("other devices");
    expect(cells(loose).map((c) => c.textContent)).toEqual(["3"]);
    click(cells(loose)[0]);
    expect(lit(arrayCards(el)[0])).toEqual([0]);
    expect(el.querySelector(".jm-sh-bar").textContent).toContain("device 3 · cpu holds 64 bytes: 1 block of 1 array");
  });

  it("says so when there is nothing to show, and still shows the header and the error", () => {
    const el = render({ schema: "jaxmagic", version: 1, kind: "sharding", title: "%%sharding: nothing", notes: [],
      error: { type: "ValueError", message: "boom" }, devices: [], meshes: [], arrays: [], calls: [], findings: [] });
    expect(el.querySelector(".jm-empty").textContent).toContain("Nothing to show");
    expect(el.querySelector(".jm-error-msg").textContent).toContain("ValueError");
  });
});
