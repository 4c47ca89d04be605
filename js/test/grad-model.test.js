// Pure functions of the grad view (widgets/grad/model.js) on real grad documents
// (fixtures from dev/make-grad-fixtures.mjs), and the mirrored drawing of the graph
// viewer (widgets/graph/mirror.js, curve.js's direction).
import { describe, it, expect } from "vitest";
import { fixture } from "./helpers.js";
import {
  bytesText, shortName, entryTab, residualOrder, producerText, chipParts, residualTargets, linkMaps, userOpOf,
  roleCounts, decorator, customNodes, sortFindings, gradValue, gradRows, hasValues, residualById, jitResiduals, nodeOf, rootGroup,
} from "../../widgets/grad/model.js";
import { indexFunction, nKey, pKey, oKey } from "../../widgets/graph/model.js";
import { allCollapsibles } from "../../widgets/graph/expansion.js";
import { buildScene } from "../../widgets/graph/scene.js";
import { placeScene, edgePoints } from "../../widgets/graph/place.js";
import { mirrorGeometry } from "../../widgets/graph/mirror.js";
import { curve } from "../../widgets/graph/curve.js";
import { layoutTree, createCache } from "../../widgets/ui/layout.js";

const mlp = () => fixture("grad-mlp").entries[0];
const jit = () => fixture("grad-jit").entries[0];

describe("grad text", () => {
  it("sizes read as the Python titles write them (binary units)", () => {
    expect(bytesText(48)).toBe("48 bytes");
    expect(bytesText(1536)).toBe("1.5 KB");
    expect(bytesText(2 * 2 ** 20)).toBe("2.0 MB");
    expect(bytesText(0)).toBe("0 bytes");
    // the document's own title uses the same words
    const d = fixture("grad-mlp");
    expect(d.title).toContain(bytesText(d.residual_bytes));
  });

  it("tabs: kind of short name, calls, residual bytes, vmap badge; jit entries say so", () => {
    expect(shortName("mlp.<locals>.loss")).toBe("loss");
    expect(shortName("MLP.__call__")).toBe("MLP.__call__");
    const t = entryTab(mlp());
    expect(t.title).toBe("value_and_grad of loss");
    expect(t.stats).toBe(`1 call · ${bytesText(mlp().residual_bytes)} residuals`);
    expect(t.badge).toBeNull();
    const batched = fixture("grad-multi").entries.find((e) => e.batch);
    expect(entryTab(batched).badge).toBe("vmap over 5");
    const j = entryTab(jit());
    expect(j.title).toBe("value_and_grad inside step (jit)");
    expect(j.stats).toBe(`3 calls · 1 region · ${bytesText(jit().residual_bytes)} residuals`);
  });

  it("residual chips: largest first (document order among equals), producer and uses", () => {
    const e = mlp();
    const order = residualOrder(e.residuals);
    expect(order.map((r) => r.bytes)).toEqual([...e.residuals.map((r) => r.bytes)].sort((a, b) => b - a));
    const equal = order.filter((r) => r.bytes === order[0].bytes).map((r) => r.id);
    expect(equal).toEqual(e.residuals.filter((r) => r.bytes === order[0].bytes).map((r) => r.id));
    for (const r of e.residuals) {
      const p = chipParts(r, e.forward);
      expect(p.text).toBe([r.aval, bytesText(r.bytes), p.producer, `${r.consumers.length} use${r.consumers.length === 1 ? "" : "s"}`].join(" · "));
      if (typeof r.producer === "string") {
        expect(p.producer.startsWith(nodeOf(e.forward, r.producer).prim)).toBe(true);
        if (r.source) expect(p.producer).toContain(`:${r.source.line}`);
      } else expect(p.producer).toBe(`input ${r.producer.path}`);
    }
    expect(producerText({ producer: { literal: "2.0" } }, null)).toBe("literal 2.0");
    expect(producerText({ producer: { const: 1 } }, null)).toBe("const 1");
  });
});

describe("what a selection lights up", () => {
  it("split residual: producer node or input port + forward var; backward input ports + consumers", () => {
    const e = mlp();
    const root = rootGroup(e.forward);
    for (const r of e.residuals) {
      const t = residualTargets(e, r);
      const want = typeof r.producer === "string" ? nKey(r.producer) : pKey(root.invars[r.producer.input]);
      expect(t.forward.keys).toEqual([want]);
      expect(t.forward.vars).toEqual([r.forward_var]);
      expect(t.backward.keys).toEqual([...r.consumers.map(nKey), ...r.backward_vars.map(pKey)]);
      // every key names an element the graph viewer knows
      const fix = indexFunction(e.forward), bix = indexFunction(e.backward);
      for (const k of t.forward.keys) expect(fix.parent.has(k), k).toBe(true);
      for (const k of t.backward.keys) expect(bix.parent.has(k), k).toBe(true);
    }
  });

  it("jit residual: producer and consumers in the program, edges from one to the others", () => {
    const e = jit();
    const all = jitResiduals(e);
    expect(all.length).toBe(e.totals.n_residuals);
    for (const { residual: r } of all) {
      const t = residualTargets(e, r).program;
      expect(t.keys).toEqual([...(typeof r.producer === "string" ? [nKey(r.producer)] : []), ...r.consumers.map(nKey)]);
      if (typeof r.producer === "string") {
        const outs = nodeOf(e.program, r.producer).outs;
        expect(t.vars.length).toBeGreaterThan(0);
        for (const v of t.vars) expect(outs).toContain(v);
      }
      expect(residualById(e, r.id)).toBe(r);
    }
  });

  it("links both ways agree with the document", () => {
    const e = mlp();
    const m = linkMaps(e);
    for (const [b, f] of Object.entries(e.links.backward)) {
      expect(m.toForward.get(b)).toEqual([f]);
      expect(m.toBackward.get(f)).toContain(b);
      expect(m.kind.get(b)).toBe("exact");
    }
    const n = [...m.toBackward.values()].reduce((s, l) => s + l.length, 0);
    expect(n).toBe(Object.keys(e.links.backward).length);
    // user ops: the forward tanh and the backward nodes of that op share one source line
    const tanh = e.forward.nodes.find((x) => x.prim === "tanh");
    const op = userOpOf(e, "forward", tanh.id);
    expect(op.prim).toBe("tanh");
    const back = m.toBackward.get(tanh.id);
    expect(back.length).toBeGreaterThan(0);
    for (const b of back) expect(userOpOf(e, "backward", b).src.line).toBe(op.src.line);

    const j = jit(), jm = linkMaps(j);
    const links = j.regions.flatMap((r) => Object.entries(r.links));
    expect(jm.toForward.size).toBe(links.length);
    for (const [b, l] of links) {
      expect(jm.kind.get(b)).toBe(l.kind);
      for (const f of l.forward) expect(jm.toBackward.get(f)).toContain(b);
    }
    expect(new Set(links.map(([, l]) => l.kind))).toEqual(new Set(["exact", "by_source"]));
  });
});

describe("roles, decorations, findings, values", () => {
  it("role counts are the document's totals and match the roles", () => {
    const e = jit();
    const counts = Object.fromEntries(roleCounts(e));
    for (const role of ["forward", "backward", "other", "unknown"]) {
      expect(counts[role]).toBe(e.totals["n_" + role]);
      expect(Object.values(e.roles).filter((r) => r === role).length).toBe(counts[role]);
    }
    const dec = decorator(e.program, { roles: e.roles });
    const fills = new Map();
    for (const [id, role] of Object.entries(e.roles)) fills.set(role, (dec(nKey(id)) || {}).fill);
    expect(new Set(fills.values()).size).toBe(fills.size); // one colour per role
    expect(dec("P:v0")).toBeNull();
  });

  it("recomputed nodes are dashed with a badge; custom rules get theirs", () => {
    const e = fixture("grad-remat").entries[0];
    expect(e.recomputed.length).toBeGreaterThan(0);
    const dec = decorator(e.backward, { recomputed: new Set(e.recomputed) });
    for (const id of e.recomputed) expect(dec(nKey(id))).toMatchObject({ dash: "4,2", badge: "↻ recomputed" });
    const plain = e.backward.nodes.find((n) => !e.recomputed.includes(n.id));
    expect(dec(nKey(plain.id))).toBeNull();
    const c = fixture("grad-custom").entries[0];
    const owner = c.forward.nodes.find((n) => n.prim === "custom_jvp_call");
    expect(owner).toBeTruthy();
    expect(decorator(c.forward)(nKey(owner.id)).badge).toBe("custom rule");
    // A custom_vjp bwd rule is inlined into the backward: its nodes come from custom_rules.
    const vjp = c.custom_rules.find((r) => r.prim === "custom_vjp_call");
    expect(vjp.backward.length).toBeGreaterThan(0);
    const marked = customNodes(c.backward, c, "backward");
    expect(marked).toEqual(expect.arrayContaining(vjp.backward));
    const deco = decorator(c.backward, { custom: marked });
    for (const id of vjp.backward) expect(deco(nKey(id)).badge).toBe("custom rule");
  });

  it("findings: warnings first, document order within a severity", () => {
    const fs = [{ severity: "info", k: 1 }, { severity: "warning", k: 2 }, { severity: "info", k: 3 }, { severity: "warning", k: 4 }, { severity: "bug", k: 5 }];
    expect(sortFindings(fs).map((f) => f.k)).toEqual([5, 2, 4, 1, 3]);
    const d = fixture("grad-mlp");
    const sorted = sortFindings(d.findings);
    const firstInfo = sorted.findIndex((f) => f.severity === "info");
    expect(firstInfo).toBeGreaterThan(0);
    expect(sorted.slice(firstInfo).every((f) => f.severity === "info")).toBe(true);
  });

  it("gradient rows: the backward output port of each leaf, and its value summary with the norm", () => {
    const e = mlp();
    expect(hasValues(e)).toBe(true);
    expect(hasValues(fixture("grad-custom").entries[0])).toBe(false);
    const root = rootGroup(e.backward);
    const rows = gradRows(e);
    expect(rows.map((r) => r.path)).toEqual(e.grads_of.map((g) => g.path));
    rows.forEach((r, i) => {
      const g = e.grads_of[i];
      expect(r.key).toBe(oKey(root.id, g.output));
      // the port carries the var the document names
      expect(root.outvars[g.output].var).toBe(g.var);
      expect(r.value.text).toContain(`norm ${r.value.parts.find(([k]) => k === "norm")[1]}`);
    });
    expect(gradValue({ min: 0, max: 1, mean: 0.5, norm: 2, nan: 2, inf: 1 })).toEqual({
      parts: [["min", "0"], ["max", "1"], ["mean", "0.5"], ["norm", "2"]], bad: "NaN 2 Inf 1", text: "min 0 · max 1 · mean 0.5 · norm 2",
    });
    expect(gradValue(null)).toBeNull();
  });
});

describe("mirrored drawings", () => {
  const placed = (fn) => {
    const ix = indexFunction(fn);
    const scene = buildScene(ix, allCollapsibles(ix), "mirror:");
    const { results } = layoutTree(scene.root, createCache());
    return placeScene(scene, results);
  };

  it("flips every box, edge point and label around the drawing's middle; text keeps its width", () => {
    const geo = placed(mlp().backward);
    const m = mirrorGeometry(geo);
    const X = 2 * geo.bbox.x + geo.bbox.w;
    expect(m.mirrored).toBe(true);
    expect(m.bbox).toEqual(geo.bbox);
    geo.leaves.forEach((l, i) => {
      expect(m.leaves[i]).toMatchObject({ key: l.key, y: l.y, w: l.w, h: l.h, x: X - l.x - l.w, face: l.face });
      expect(m.boxes.get(l.key).x).toBe(X - l.x - l.w);
    });
    geo.conts.forEach((c, i) => expect(m.conts[i].x).toBe(X - c.x - c.w));
    geo.edges.forEach((e, i) => {
      const me = m.edges[i];
      expect(me.dir).toBe(-1);
      expect([me.from, me.to, me.vars]).toEqual([e.from, e.to, e.vars]);
      expect(edgePoints(me)).toEqual(edgePoints(e).map(([x, y]) => [X - x, y]));
      expect(me.x).toBeCloseTo(X - e.x - e.w, 6);
    });
    const la = geo.labels, lb = m.labels;
    expect(lb.map((l) => l.text)).toEqual(la.map((l) => l.text));
    lb.forEach((l, i) => expect(l.x).toBeCloseTo(X - la[i].x, 6));
    // inputs on the right, outputs (the gradients) on the left
    const ports = (kind) => m.leaves.filter((l) => l.face && l.face.kind === kind);
    expect(Math.max(...ports("out").map((l) => l.x))).toBeLessThan(Math.min(...ports("in").map((l) => l.x)));
  });

  it("a mirrored curve is the mirror of the curve (end stubs point the other way)", () => {
    const pts = [[0, 0], [40, 10], [90, 10], [120, 30]];
    const nums = (d) => d.match(/-?\d+(\.\d+)?/g).map(Number);
    const a = nums(curve(pts, 0, 0));
    const b = nums(curve(pts.map(([x, y]) => [-x, y]), 200, 0, -1));
    expect(b.length).toBe(a.length);
    a.forEach((v, i) => expect(b[i]).toBeCloseTo(i % 2 ? v : 200 - v, 1));
    // without the direction the stubs would point into the boxes: a different curve
    expect(curve(pts.map(([x, y]) => [-x, y]), 200, 0)).not.toBe(curve(pts.map(([x, y]) => [-x, y]), 200, 0, -1));
  });
});
