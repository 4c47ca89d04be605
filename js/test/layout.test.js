import { describe, it, expect } from "vitest";
import { layoutTree, layoutContainer, layered, createCache } from "../../widgets/ui/layout.js";
import { indexFunction } from "../../widgets/graph/model.js";
import { allCollapsibles, defaultExpansion } from "../../widgets/graph/expansion.js";
import { buildScene } from "../../widgets/graph/scene.js";
import { allFixtures, synthFunction } from "./helpers.js";

const overlap = (a, b) => a[0] < b[0] + b[2] - 0.5 && b[0] < a[0] + a[2] - 0.5 && a[1] < b[1] + b[3] - 0.5 && b[1] < a[1] + a[3] - 0.5;

/** Every container: finite boxes inside its bounds, no two items overlapping. */
function checkTree(root, results) {
  const walk = (c) => {
    const r = results[c.key];
    expect(r, c.key).toBeTruthy();
    expect(Number.isFinite(r.w) && Number.isFinite(r.h)).toBe(true);
    const boxes = c.items.filter((it) => !it.virtual).map((it) => [it.id, r.pos[it.id]]);
    for (const [id, b] of boxes) {
      expect(b, id).toBeTruthy();
      expect(b.every(Number.isFinite), id).toBe(true);
      expect(b[0]).toBeGreaterThanOrEqual(-0.5);
      expect(b[1]).toBeGreaterThanOrEqual(-0.5);
      expect(b[0] + b[2]).toBeLessThanOrEqual(r.w + 0.5);
      expect(b[1] + b[3]).toBeLessThanOrEqual(r.h + 0.5);
    }
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        expect(overlap(boxes[i][1], boxes[j][1]), `${boxes[i][0]} overlaps ${boxes[j][0]}`).toBe(false);
      }
    }
    for (const e of Object.values(r.edges)) expect(e.pts.flat().every(Number.isFinite)).toBe(true);
    for (const it of c.items) if (it.child) walk(it.child);
  };
  walk(root);
}

describe("layout", () => {
  for (const [name, doc] of allFixtures()) {
    for (const fn of doc.functions) {
      it(`${name}/${fn.name}: finite, non-overlapping boxes (default and all expanded)`, () => {
        const ix = indexFunction(fn);
        for (const exp of [defaultExpansion(ix), allCollapsibles(ix), new Set()]) {
          const scene = buildScene(ix, exp, "t:");
          const { results } = layoutTree(scene.root, createCache());
          checkTree(scene.root, results);
        }
      });
    }
  }

  it("keeps ports in signature order on the left/right edges", () => {
    const [, doc] = allFixtures().find(([n]) => n === "scoped");
    const ix = indexFunction(doc.functions[0]);
    const scene = buildScene(ix, allCollapsibles(ix), "t:");
    const r = layoutTree(scene.root, createCache()).results[scene.root.key];
    const ins = scene.root.items.filter((it) => it.role === "in");
    const ys = ins.map((it) => r.pos[it.id][1]);
    expect([...ys].sort((a, b) => a - b)).toEqual(ys);
    const xs = new Set(ins.map((it) => r.pos[it.id][0]));
    expect(xs.size).toBe(1);
    const out = scene.root.items.find((it) => it.role === "out");
    expect(r.pos[out.id][0] + r.pos[out.id][2]).toBeGreaterThan(r.w - 20);
  });

  it("uses the layered fallback for containers over ~300 items", () => {
    // indexFunction never makes such a container (model.js CAP); a hand-made one.
    const items = Array.from({ length: 400 }, (_, i) => ({ id: "n" + i, role: "node", w: 60, h: 26 }));
    const edges = items.slice(1).map((it, i) => ({ id: "e" + i, v: "n" + i, w: it.id }));
    const c = { key: "big", head: 20, pad: 10, items, edges };
    const { results, stats } = layoutTree(c, createCache());
    expect(results.big.method).toBe("layered");
    expect(stats.layered).toBe(1);
    checkTree(c, results);
  });

  it("uses dagre below the threshold", () => {
    const ix = indexFunction(synthFunction({ flat: 40 }));
    const scene = buildScene(ix, new Set(), "t:");
    expect(layoutTree(scene.root, createCache()).results[scene.root.key].method).toBe("dagre");
  });

  it("falls back when dagre fails or the time budget is spent", () => {
    const c = {
      key: "k", head: 20, pad: 10, items: [
        { id: "a", role: "node", w: NaN, h: 20 }, { id: "b", role: "node", w: 40, h: 20 },
      ], edges: [{ id: "e", v: "a", w: "b" }],
    };
    expect(layoutContainer(c).method).toBe("layered");
    const ok = { ...c, items: [{ id: "a", role: "node", w: 30, h: 20 }, c.items[1]] };
    expect(layoutContainer(ok).method).toBe("dagre");
    expect(layoutContainer(ok, {}, true).method).toBe("layered");
    const ix = indexFunction(synthFunction({ outer: 30, inner: 20 }));
    const scene = buildScene(ix, allCollapsibles(ix), "t:");
    const { stats } = layoutTree(scene.root, createCache(), { budgetMs: -1 });
    expect(stats.dagre).toBe(0);
  });

  it("caches per container: toggling one group re-lays out only it and its ancestors", () => {
    const ix = indexFunction(synthFunction({ outer: 6, inner: 5 }));
    const cache = createCache();
    const exp = allCollapsibles(ix);
    const first = layoutTree(buildScene(ix, exp, "t:").root, cache).stats;
    expect(first.cached).toBe(0);
    exp.delete("N:n0"); // collapse the first loop
    const second = layoutTree(buildScene(ix, exp, "t:").root, cache).stats;
    // root group re-laid out; the 5 other open loops (owner box + body group) come from the cache
    expect(second.dagre + second.layered + second.stack).toBe(1);
    expect(second.cached).toBe(10);
  });

  it("handles a cycle and an empty container without hanging", () => {
    const c = { key: "x", items: [{ id: "a", role: "node", w: 10, h: 10 }, { id: "b", role: "node", w: 10, h: 10 }],
      edges: [{ id: "1", v: "a", w: "b" }, { id: "2", v: "b", w: "a" }] };
    const r = layered(c);
    expect(Object.keys(r.pos)).toEqual(["a", "b"]);
    expect(layoutContainer({ key: "e", items: [], edges: [], head: 20, pad: 10, minW: 80 }).w).toBe(80);
  });
});
