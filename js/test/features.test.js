// Pure parts of the graph view's features: number formats, label modes, the cost
// overlay's sums and scale, breadcrumb paths, keyboard dispatch, PNG sizing.
import { describe, it, expect } from "vitest";
import { si, num, valueSummary, valueText, batchAval } from "../../widgets/graph/format.js";
import { modeState, bundleLabel, traceLabel, forwardLabel, vmapLabel, hasBadValues, labelFor } from "../../widgets/graph/modes.js";
import { costTable, domainOf, logPos, heat, costOverlay } from "../../widgets/graph/overlay.js";
import { crumbPath } from "../../widgets/graph/breadcrumbs.js";
import { keyAction, expandBelow } from "../../widgets/graph/keyboard.js";
import { pngScale, MAX_SIDE, MAX_PIXELS } from "../../widgets/graph/png.js";
import { nodesUnder, ownerMap, marksFor, paneText } from "../../widgets/graph/panes.js";
import { visibleRange, lineIndex, eqnSpan, ALL_LINES, LINE_H } from "../../widgets/graph/textpane.js";
import { indexFunction, nKey, gKey } from "../../widgets/graph/model.js";
import { allCollapsibles } from "../../widgets/graph/expansion.js";
import { fixture } from "./helpers.js";

describe("format", () => {
  it("writes SI quantities with three significant digits", () => {
    expect(si(0, "B")).toBe("0 B");
    expect(si(512, "B")).toBe("512 B");
    expect(si(1234, "FLOP")).toBe("1.23 kFLOP");
    expect(si(2.5e9, "FLOP")).toBe("2.5 GFLOP");
    expect(si(999960, "B")).toBe("1 MB"); // rounds up into the next prefix, never "1000 kB"
    expect(si(1e21, "B")).toBe("1000 EB");
    expect(si(null, "B")).toBe("—");
    expect(si(NaN, "B")).toBe("—");
  });
  it("writes compact numbers", () => {
    expect(num(3)).toBe("3");
    expect(num(-1.2345)).toBe("-1.23");
    expect(num(0.5)).toBe("0.5");
    expect(num(123456)).toBe("123456");
    expect(num(1.5e7)).toBe("1.5e7");
    expect(num(3e-7)).toBe("3e-7");
    expect(num(0)).toBe("0");
    expect(num(NaN)).toBe("NaN");
    expect(num(-Infinity)).toBe("-Inf");
  });
  it("summarises values, printed value first, NaN/Inf apart", () => {
    expect(valueSummary({ min: -1.2, max: 3.4, mean: 0.5, nan: 0, inf: 0 })).toEqual({ text: "[-1.2 … 3.4] μ 0.5", bad: "" });
    expect(valueSummary({ min: 0, max: 1, mean: null, nan: 3, inf: 1 })).toEqual({ text: "[0 … 1]", bad: "NaN 3 Inf 1" });
    expect(valueSummary({ min: 1, max: 2, mean: 1.5, nan: 0, inf: 0, value: "[1. 2.]" }).text).toBe("[1. 2.]");
    expect(valueText({ min: null, max: null, mean: null, nan: 4, inf: 0 })).toBe("NaN 4");
    expect(valueSummary(null)).toBe(null);
    expect(valueSummary({ value: "x".repeat(100) }).text.length).toBe(48);
    expect(valueSummary({ value: "[[1. 2.]\n [3. 4.]]" }).text).toBe("[[1. 2.] [3. 4.]]"); // labels are one line
  });
  it("marks the batch dimension in an aval", () => {
    expect(batchAval("f32[8,3]", 0)).toBe("f32[‹8›,3]");
    expect(batchAval("f32[3,8]", 1)).toBe("f32[3,‹8›]");
    expect(batchAval("f32[3, 8]", 1)).toBe("f32[3, ‹8›]");
    expect(batchAval("f32[8,3]", null)).toBe("f32[8,3]");
    expect(batchAval("f32[]", 0)).toBe("f32[]");
    expect(batchAval("f32[8]", 2)).toBe("f32[8]");
    expect(batchAval("key<fry>[8]", 0)).toBe("key<fry>[‹8›]");
  });
});

describe("label modes", () => {
  const fn = fixture("trig").functions[0];
  const ix = indexFunction(fn);
  const [a, b] = fn.vars.filter((v) => v.def !== "in" && v.def !== "const").map((v) => v.id);
  it("bundles labels: one text, `×n` when equal, else a count", () => {
    expect(bundleLabel(["x"], () => "f32[3]")).toBe("f32[3]");
    expect(bundleLabel(["x", "y"], () => "f32[3]")).toBe("f32[3] ×2");
    expect(bundleLabel(["x", "y"], (v) => v)).toBe("2 values");
    expect(bundleLabel([], () => "?")).toBe("");
  });
  it("trace shows avals; forward shows recorded values, falling back to the aval", () => {
    expect(traceLabel(ix)([a])).toBe(ix.vars.get(a).aval);
    const values = { [a]: { min: -1, max: 1, mean: 0, nan: 2, inf: 0 } };
    const fwd = forwardLabel(ix, values);
    expect(fwd([a])).toBe("[-1 … 1] μ 0 ⚠ NaN 2");
    expect(fwd([b])).toBe(ix.vars.get(b).aval);
    expect(hasBadValues(values, [b, a])).toBe(true);
    expect(hasBadValues(values, [b])).toBe(false);
    expect(hasBadValues(null, [a])).toBe(false);
  });
  it("vmap marks the batch dim from fn.batch", () => {
    const v = { id: "vb", name: "q", aval: "f32[8,3]", group: fn.root, def: "in" };
    const ix2 = indexFunction({ ...fn, vars: [...fn.vars, v] });
    expect(vmapLabel(ix2, { vb: 0 })(["vb"])).toBe("f32[‹8›,3]");
    expect(vmapLabel(ix2, { vb: null })(["vb"])).toBe("f32[8,3]");
  });
  it("says why a mode is off, and passes on the document's notes", () => {
    expect(modeState(fn, "trace").ok).toBe(true);
    expect(modeState(fn, "forward")).toMatchObject({ ok: false });
    expect(modeState(fn, "forward").why).toContain("--values");
    expect(modeState(fn, "vmap").why).toContain("--vmap");
    expect(modeState({ ...fn, batch: null, batch_note: "no vmap in this program" }, "vmap")).toMatchObject({ ok: false, why: "no vmap in this program" });
    expect(modeState({ ...fn, values: {}, values_note: "only 100 of 400 vars" }, "forward")).toEqual({ ok: true, why: "", note: "only 100 of 400 vars" });
    expect(labelFor("forward", ix)).toBe(null); // no values: no label function
    expect(typeof labelFor("vmap", indexFunction({ ...fn, batch: {} }))).toBe("function");
  });
});

describe("cost overlay", () => {
  // control: a cond with two branches, a scan and a jit, each owning sub-jaxprs.
  const base = fixture("control").functions[0];
  const withCost = (pick) => ({ ...base, nodes: base.nodes.map((n) => ({ ...n, cost: pick(n) })) });

  it("sums containers over their items, owner eqns keep their own estimate", () => {
    const fn = withCost((n) => (n.subgroups.length ? { flops: 1000, bytes: null, estimate: true } : { flops: 10, bytes: 4, estimate: true }));
    const ix = indexFunction(fn);
    const t = costTable(ix, "flops");
    const leaves = fn.nodes.filter((n) => !n.subgroups.length && n.group === fn.root).length;
    const owners = fn.nodes.filter((n) => n.subgroups.length && n.group === fn.root).length;
    expect(t.get(ix.root)).toBe(leaves * 10 + owners * 1000);
    for (const n of fn.nodes) expect(t.get(nKey(n.id))).toBe(n.subgroups.length ? 1000 : 10);
    // a sub-jaxpr group sums its own eqns
    const g = fn.groups.find((x) => x.node);
    expect(t.get(gKey(g.id))).toBe(fn.nodes.filter((n) => n.group === g.id).reduce((s, n) => s + (n.subgroups.length ? 1000 : 10), 0));
    // owners without an estimate sum their sub-jaxprs; bytes: owners null -> sum of their bodies
    const tb = costTable(ix, "bytes");
    const owner = fn.nodes.find((n) => n.subgroups.length);
    expect(tb.get(nKey(owner.id))).toBe(owner.subgroups.reduce((s, gid) => s + tb.get(gKey(gid)), 0));
    expect(t.has("nope")).toBe(false);
  });
  it("unknown or zero costs stay uncoloured; the domain leaves out the root", () => {
    const fn = withCost((n) => (n.prim === "add" ? { flops: 0, bytes: 8 } : n.prim === "mul" ? null : { flops: 100, bytes: 8 }));
    const ov = costOverlay(indexFunction(fn), "flops");
    expect(ov.decorate(nKey(fn.nodes.find((n) => n.prim === "add").id))).toEqual({});
    expect(ov.decorate(nKey(fn.nodes.find((n) => n.prim === "mul").id))).toEqual({});
    expect(ov.domain[0]).toBe(100);
    expect(ov.domain[1]).toBeLessThan(ov.table.get(ov.table.keys().next().value) + 1); // never above the root total
    expect(costOverlay(indexFunction(fn), "none")).toBe(null);
    expect(costOverlay(indexFunction(base), "flops").domain).toBe(null); // no costs at all
  });
  it("log scale: ends of the domain map to 0 and 1, colours get stronger", () => {
    expect(logPos(10, [10, 1000])).toBe(0);
    expect(logPos(100, [10, 1000])).toBeCloseTo(0.5);
    expect(logPos(1000, [10, 1000])).toBe(1);
    expect(logPos(1e6, [10, 1000])).toBe(1);
    expect(logPos(5, [5, 5])).toBe(1);
    expect(logPos(0, [1, 2])).toBe(null);
    expect(logPos(null, [1, 2])).toBe(null);
    const alpha = (c) => Number(/,([\d.]+)\)$/.exec(c)[1]);
    expect(alpha(heat(0))).toBeLessThan(alpha(heat(0.5)));
    expect(alpha(heat(0.5))).toBeLessThan(alpha(heat(1)));
    expect(heat(1)).toMatch(/^rgba\(/); // a plain colour: usable as SVG fill and canvas fillStyle
  });
  it("domainOf ignores non-positive entries", () => {
    expect(domainOf(new Map([["a", 0], ["b", 5], ["c", 50], ["r", 1e9]]), "r")).toEqual([5, 50]);
    expect(domainOf(new Map([["a", 0]]), "r")).toBe(null);
  });
});

describe("breadcrumbs", () => {
  it("gives the container path from the function to the element", () => {
    const fn = fixture("control").functions[0];
    const ix = indexFunction(fn);
    const inner = fn.nodes.find((n) => n.group !== fn.root && !n.subgroups.length);
    const path = crumbPath(ix, nKey(inner.id));
    expect(path[0]).toEqual({ key: ix.root, label: fn.name });
    const owner = fn.groups.find((g) => g.id === inner.group).node;
    expect(path.map((c) => c.key)).toContain(nKey(owner));
    expect(path.map((c) => c.key)).toContain(gKey(inner.group));
    expect(path[path.length - 1]).toEqual({ key: nKey(inner.id), label: inner.prim });
    expect(crumbPath(ix, null)).toEqual([{ key: ix.root, label: fn.name }]);
  });
  it("names scopes by their last path element", () => {
    const fn = fixture("scoped").functions[0];
    const ix = indexFunction(fn);
    const n = fn.nodes.find((x) => x.scope.length >= 2);
    const labels = crumbPath(ix, nKey(n.id)).map((c) => c.label);
    expect(labels.slice(-1 - n.scope.length, -1)).toEqual(n.scope.map(String));
  });
});

describe("keyboard", () => {
  const ev = (key, extra = {}) => ({ key, target: { closest: () => null }, ...extra });
  it("maps shortcut keys to actions", () => {
    expect(keyAction(ev("f"))).toBe("fit");
    expect(keyAction(ev("e"))).toBe("expand");
    expect(keyAction(ev("c"))).toBe("collapse");
    expect(keyAction(ev("n"))).toBe("next");
    expect(keyAction(ev("N", { shiftKey: true }))).toBe("prev");
    expect(keyAction(ev("/"))).toBe("search");
    expect(keyAction(ev("Escape"))).toBe("clear");
    expect(keyAction(ev("?"))).toBe("help");
    expect(keyAction(ev("x"))).toBe(null);
  });
  it("never takes keys typed into inputs or with modifiers", () => {
    expect(keyAction(ev("f", { target: { closest: (sel) => (sel.includes("input") ? {} : null) } }))).toBe(null);
    expect(keyAction(ev("c", { ctrlKey: true }))).toBe(null);
    expect(keyAction(ev("f", { metaKey: true }))).toBe(null);
  });
  it("expands below the selection, or everything", () => {
    const fn = fixture("control").functions[0];
    const ix = indexFunction(fn);
    expect(expandBelow(ix, null)).toEqual(allCollapsibles(ix));
    const owner = fn.nodes.find((n) => n.prim === "cond");
    const below = expandBelow(ix, nKey(owner.id));
    expect(below.has(nKey(owner.id))).toBe(true);
    expect(below.size).toBeLessThan(allCollapsibles(ix).size);
    // a leaf in a branch expands that branch's owner path downwards from its container
    const leaf = fn.nodes.find((n) => n.group === owner.subgroups[0] && !n.subgroups.length);
    expect([...expandBelow(ix, nKey(leaf.id))].every((k) => below.has(k))).toBe(true);
  });
});

describe("text panes (pure parts)", () => {
  const fn = fixture("control").functions[0];
  const ix = indexFunction(fn);
  it("renders all lines of short texts, a window of long ones", () => {
    expect(visibleRange(100, 0, 300)).toEqual([0, 100]);
    const [a, b] = visibleRange(100000, 50000 * LINE_H, 360);
    expect(a).toBeLessThanOrEqual(50000);
    expect(b).toBeGreaterThanOrEqual(50000 + 360 / LINE_H);
    expect(b - a).toBeLessThan(200);
    expect(visibleRange(ALL_LINES + 1, 0, 0)[1]).toBeLessThan(ALL_LINES);
  });
  it("indexes lines without splitting: same lines as split, widest known", () => {
    for (const t of ["", "a", "a\n", "\n\n", "ab\ncde\n\nf", fn.text]) {
      const li = lineIndex(t);
      const sp = t.split("\n");
      expect(li.length).toBe(sp.length);
      expect(Array.from({ length: li.length }, (_, i) => li.at(i))).toEqual(sp);
      expect(li.widest).toBe(Math.max(...sp.map((x) => x.length)));
      expect(li.at(li.length)).toBeUndefined();
    }
    const many = Array.from({ length: 5000 }, (_, i) => "x".repeat(i % 7)).join("\n"); // grows the offset table
    expect(lineIndex(many).at(4999)).toBe("x".repeat(4999 % 7));
    const cond = fn.nodes.find((n) => n.prim === "cond");
    expect(eqnSpan(lineIndex(fn.text), cond.line)).toEqual(eqnSpan(fn.text.split("\n"), cond.line));
    expect(eqnSpan(fn.text.split("\n"), cond.line).length).toBeGreaterThan(1);
  });
  it("explains missing levels", () => {
    expect(paneText(fn, "stablehlo").why).toBe("StableHLO text not recorded for this function.");
    expect(paneText({ ...fn, levels: { hlo: { text: null, note: "compile failed: OOM" } } }, "hlo").why).toBe("compile failed: OOM");
    expect(paneText({ ...fn, levels: { hlo: { text: "a\nb", note: null } } }, "hlo").text).toBe("a\nb");
    expect(paneText(fn, "jaxpr").text).toBe(fn.text);
  });
  it("maps lines to nodes and nodes to lines at each level", () => {
    const nodes = fn.nodes.map((n, i) => ({ ...n, shlo: [2 * i, 2 * i + 1], hlo: [i % 3] }));
    const ix2 = indexFunction({ ...fn, nodes });
    const m = ownerMap(ix2, "shlo");
    expect(m.get(3)).toBe(nodes[1].id);
    expect(ownerMap(ix2, "hlo").get(1)).toBe(nodes[1].id); // shared line: first node wins
    const marks = marksFor([nodes[1]], fn.text.split("\n"));
    expect(marks.stablehlo).toEqual([2, 3]);
    expect(marks.hlo).toEqual([1]);
    expect(marks.jaxpr[0]).toBe(nodes[1].line);
  });
  it("a container marks every eqn inside it", () => {
    const owner = fn.nodes.find((n) => n.prim === "scan");
    const under = nodesUnder(ix, nKey(owner.id)).map((n) => n.id);
    expect(under[0]).toBe(owner.id);
    expect(under.length).toBe(ix.count.get(nKey(owner.id)));
    expect(nodesUnder(ix, ix.root).length).toBe(fn.n_eqns);
    expect(nodesUnder(ix, ix.root, 3).length).toBe(3);
    expect(nodesUnder(ix, null)).toEqual([]);
  });
});

describe("png", () => {
  it("keeps the pixel ratio when it fits and caps big drawings", () => {
    expect(pngScale(800, 600, 2)).toBe(2);
    expect(pngScale(800, 600, undefined)).toBe(1);
    const k = pngScale(60000, 3000, 2);
    expect(60000 * k).toBeLessThanOrEqual(MAX_SIDE + 1e-6);
    const k2 = pngScale(12000, 12000, 2);
    expect(12000 * 12000 * k2 * k2).toBeLessThanOrEqual(MAX_PIXELS * 1.0001);
    expect(pngScale(0, 10, 2)).toBe(0);
  });
});
