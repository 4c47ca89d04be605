/**
 * Toggles in big drawings: a scene built as an update of the last one (scene.js) and
 * a placement that reuses edge routes (place.js) must give exactly what a build from
 * scratch gives, for any sequence of toggles; and drawing a zoomed-in view of a huge
 * drawing must not hand the canvas what is off screen.
 */
import { describe, it, expect } from "vitest";
import { indexFunction } from "../../widgets/graph/model.js";
import { allCollapsibles, defaultExpansion } from "../../widgets/graph/expansion.js";
import { buildScene, MAX_UPDATE_KEYS } from "../../widgets/graph/scene.js";
import { placeScene, edgePoints } from "../../widgets/graph/place.js";
import { drawFrame } from "../../widgets/graph/canvas.js";
import { traceCurve } from "../../widgets/graph/curve.js";
import { layoutTree, createCache } from "../../widgets/ui/layout.js";
import { allFixtures } from "./helpers.js";
import { scopedLayers, flatBlocks } from "./big.js";

/** Everything a scene and its placement say, in an order-free form. */
function canonical(scene, geo) {
  const sorted = (xs) => xs.sort();
  return {
    containers: sorted([...scene.containers.values()].map((c) => c.key + JSON.stringify(c.edges) +
      JSON.stringify(c.items.map((it) => [it.id, it.role, it.child ? 0 : it.w, it.child ? 0 : it.h, !!it.virtual])))),
    chains: sorted(scene.chains.map((c) => [c.id, c.segs.join(","), c.from, c.to, c.lca, sorted([...c.vars].map(String)).join()].join("|"))),
    labels: sorted([...scene.containers.keys()].map((k) => k + JSON.stringify(sorted([...(scene.labels.get(k) || [])].map(String))))),
    faces: sorted([...scene.containers.values()].flatMap((c) => [c.id, ...c.items.map((i) => i.id)])
      .map((k) => k + JSON.stringify(scene.faces.get(k) || null))),
    leaves: sorted(geo.leaves.map((l) => [l.key, l.x, l.y, l.w, l.h].join())),
    edges: sorted(geo.edges.map((e) => `${e.from}>${e.to}:${e.vars.join()}:` + JSON.stringify(edgePoints(e).map((p) => p.map((v) => Math.round(v * 100) / 100))))),
    drawnLabels: sorted(geo.labels.map((l) => [Math.round(l.x), Math.round(l.y), l.text].join())),
  };
}

/** A deterministic pseudo-random sequence in [0, 1). */
function rng(seed) {
  return () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
}

/**
 * Toggle random keys (1–3 at a time) `steps` times; after each step the updated scene,
 * placed with a layout shared with a fresh build, must equal the fresh build.
 */
function checkToggles(fn, start, steps, seed) {
  const ix = indexFunction(fn);
  const keys = [...allCollapsibles(ix)];
  const expanded = new Set(start(ix));
  const cache = createCache();
  const random = rng(seed);
  buildScene(ix, expanded, "u:");
  let updated = 0;
  for (let s = 0; s < steps && keys.length; s++) {
    const n = 1 + Math.floor(random() * 3);
    for (let j = 0; j < n; j++) {
      const k = keys[Math.floor(random() * keys.length)];
      if (expanded.has(k)) expanded.delete(k);
      else expanded.add(k);
    }
    const a = buildScene(ix, expanded, "u:");
    const b = buildScene(ix, expanded, "u:", { update: false });
    if (a !== b) updated++;
    const { results } = layoutTree(a.root, cache, {});
    // A layout result is per container key: both scenes have the same keys.
    const all = {};
    for (const c of a.containers.values()) all[c.key] = results[c.key];
    const ga = placeScene(a, all), gb = placeScene(b, all);
    expect(canonical(a, ga)).toEqual(canonical(b, gb));
    // Placing again reuses every route and gives the same drawing.
    expect(canonical(a, placeScene(a, all)).edges).toEqual(canonical(b, gb).edges);
  }
  return updated;
}

describe("scene updates after toggles equal fresh builds", () => {
  for (const [name, doc] of allFixtures()) {
    it(`fixture ${name}`, () => {
      for (const fn of doc.functions) checkToggles(fn, () => [], 25, 11);
    });
  }
  it("a 46-layer scoped transformer, from fully expanded", () => {
    expect(checkToggles(scopedLayers(46).fn, allCollapsibles, 12, 5)).toBeGreaterThan(0);
  });
  it("700 unnamed blocks with repeats, from the default view", () => {
    expect(checkToggles(flatBlocks(700).fn, defaultExpansion, 12, 9)).toBeGreaterThan(0);
  });
  it("an unchanged expansion returns the same scene; many toggled keys build afresh", () => {
    const ix = indexFunction(scopedLayers(20).fn);
    const exp = new Set(allCollapsibles(ix));
    const a = buildScene(ix, exp, "s:");
    expect(buildScene(ix, exp, "s:")).toBe(a);
    const many = [...exp].slice(0, MAX_UPDATE_KEYS + 1);
    for (const k of many) exp.delete(k);
    const b = buildScene(ix, exp, "s:");
    expect(b).not.toBe(a);
    expect(canonical(b, { leaves: [], edges: [], labels: [] }))
      .toEqual(canonical(buildScene(ix, exp, "s:", { update: false }), { leaves: [], edges: [], labels: [] }));
  });
  it("a toggle re-lifts only the edges at the toggled box", () => {
    const ix = indexFunction(scopedLayers(46).fn);
    const exp = new Set(allCollapsibles(ix));
    const a = buildScene(ix, exp, "r:");
    const layer = [...exp].find((k) => k.startsWith("S:") && ix.labels.get(k) === "layer_3");
    exp.delete(layer);
    const b = buildScene(ix, exp, "r:");
    // Containers away from the toggled layer are the same objects (same layout key).
    const kept = [...b.containers.values()].filter((c) => a.containers.get(c.id) === c);
    expect(kept.length).toBeGreaterThan(0.9 * b.containers.size);
    const shared = b.chains.filter((c) => a.chainMap.get(c.id) === c).length;
    expect(shared).toBeGreaterThan(0.9 * b.chains.length);
  });
});

describe("drawing a zoomed-in view of a huge drawing", () => {
  /** A recording 2D context (jsdom has no canvas). */
  const recorder = () => {
    const calls = [];
    return new Proxy({ calls }, {
      get: (t, k) => (k in t ? t[k] : (...args) => calls.push([k, ...args])),
      set: (t, k, v) => (calls.push(["set:" + String(k), v]), true),
    });
  };

  it("a long edge costs only the curve pieces near the view, and they are the unclipped ones", () => {
    const pts = Array.from({ length: 400 }, (_, i) => [i * 100, (i % 2) * 40]);
    const full = recorder(), cut = recorder();
    traceCurve(pts, full, 5, 7);
    traceCurve(pts, cut, 5, 7, { x0: 20000, y0: -100, x1: 20600, y1: 100 });
    const curves = (r) => r.calls.filter((c) => c[0] === "bezierCurveTo").map((c) => c.slice(1).join());
    expect(curves(full).length).toBeGreaterThan(390);
    expect(curves(cut).length).toBeGreaterThan(2);
    expect(curves(cut).length).toBeLessThan(15);
    const all = new Set(curves(full));
    expect(curves(cut).every((c) => all.has(c))).toBe(true);
    // A view the edge never reaches gets nothing at all.
    const none = recorder();
    traceCurve(pts, none, 0, 0, { x0: 0, y0: 5000, x1: 600, y1: 5600 });
    expect(none.calls.length).toBe(0);
  });

  it("frames larger than the view are stroked only where the view is", () => {
    const ix = indexFunction(flatBlocks(700).fn);
    const scene = buildScene(ix, allCollapsibles(ix), "z:", { update: false });
    const geo = placeScene(scene, layoutTree(scene.root, createCache(), {}).results);
    expect(geo.bbox.w).toBeGreaterThan(20000);
    const view = { x: -geo.bbox.w / 2, y: -100, k: 1, w: 1200, h: 800, dpr: 1 };
    const ctx = recorder();
    drawFrame(ctx, geo, ix, view, { sel: null, hl: new Set(), match: new Map() }, null, new Proxy({ mono: "m" }, { get: (t, k) => t[k] ?? "c" }));
    const inView = (x) => x >= geo.bbox.w / 2 - 100 && x <= geo.bbox.w / 2 + 1300;
    // Frame sides: the moveTo/lineTo after each dash offset; frame fills: fillRect.
    const sides = [];
    ctx.calls.forEach((c, i) => {
      if (c[0] === "set:lineDashOffset" && ctx.calls[i + 2]?.[0] === "moveTo") sides.push(ctx.calls[i + 2], ctx.calls[i + 3]);
    });
    const fills = ctx.calls.filter((c) => c[0] === "fillRect");
    expect(sides.length).toBeGreaterThan(0);
    expect(fills.length).toBeGreaterThan(0);
    for (const c of [...sides, ...fills]) expect(inView(c[1])).toBe(true);
    for (const c of fills) expect(c[3]).toBeLessThan(1500); // never the frame's full width
    // Edges: a few curve pieces, not every piece of every long edge crossing the view.
    const pieces = geo.edges.filter((e) => e.x < geo.bbox.w / 2 + 1300 && e.x + e.w > geo.bbox.w / 2 - 100)
      .reduce((n, e) => n + e.pts.length, 0);
    expect(ctx.calls.filter((c) => c[0] === "bezierCurveTo").length).toBeLessThan(pieces / 4);
  });
});
