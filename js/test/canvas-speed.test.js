// @vitest-environment jsdom
// What keeps a big drawing's frames short stays true to the drawing: the grid index finds
// exactly the boxes a linear scan finds, in drawing order; hit testing through it picks
// the same element; an edge across a whole drawing is cut to the view on the same curve
// or line; sub-pixel dashes become a lighter solid line only when they are sub-pixel;
// and a pan copies the cached image only while nothing but the translation changed.
import { describe, it, expect, beforeAll, afterAll, afterEach } from "vitest";
import { gridIndex, meets } from "../../widgets/graph/spatial.js";
import { hitTest, drawFrame, createCanvasRenderer } from "../../widgets/graph/canvas.js";
import { traceCurve } from "../../widgets/graph/curve.js";
import { recorder } from "./timeline-helpers.js";

const PAL = new Proxy({ mono: "monospace", sw: 1 }, { get: (t, k) => t[k] ?? `c-${String(k)}` });
const PAINT = { sel: null, hl: new Set(), match: new Map() };
const IX = { root: "G:root", items: new Set() };

/** A deterministic pseudo-random sequence in [0, 1). */
function rng(seed) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

/** A row of `n` collapsed boxes (dashed frames) and a long edge across them, `W` px wide. */
function row(n, W = 4e6) {
  const leaves = [];
  for (let i = 0; i < n; i++) leaves.push({ key: `S:${i}`, x: (i * W) / n, y: 40, w: 120, h: 40, face: { kind: "scope", title: `s${i}` } });
  const pts = [[0, 0], [W / 2, 900], [W, 0]];
  const edge = { pts, ox: 0, oy: 100, x: 0, y: 100, w: W, h: 900, vars: [] };
  return {
    conts: [{ key: "G:root", kind: "G", x: -20, y: -20, w: W + 200, h: 1100, face: { title: "f", sub: "" } }],
    leaves, edges: [edge], labelGroups: [], bbox: { x: -20, y: -20, w: W + 200, h: 1100 },
  };
}

describe("grid index", () => {
  it("finds what a linear scan finds, ascending, for small, huge (a coarser grid) and empty boxes", () => {
    const r = rng(7);
    const items = [];
    for (let i = 0; i < 6000; i++) {
      const big = r() < 0.1; // 600 big boxes: a coarser grid of their own
      items.push({ x: r() * 1e6, y: r() * 5000, w: big ? r() * 1e6 : r() * 400, h: big ? r() * 5000 : r() * 60 });
    }
    items.push({ x: 10, y: 10, w: 0, h: 0 }, { x: -500, y: -500, w: 20, h: 20 }); // degenerate, outside the box
    const ix = gridIndex(items, { x: 0, y: 0, w: 1e6, h: 5000 });
    for (let q = 0; q < 200; q++) {
      const w = [50, 2000, 3e4, 2e6][q % 4];
      const x0 = r() * 1.1e6 - 5e4, y0 = r() * 6000 - 500;
      const rect = { x0, y0, x1: x0 + w, y1: y0 + w / 2 };
      const want = [];
      items.forEach((b, i) => meets(b, rect) && want.push(i));
      expect(ix.query(rect)).toEqual(want);
    }
  });

  it("hit testing through the index picks the topmost leaf, as the scan of every leaf does", () => {
    const r = rng(3);
    const leaves = [];
    for (let i = 0; i < 2000; i++) leaves.push({ key: `S:${i}`, x: r() * 20000, y: r() * 2000, w: 60 + r() * 200, h: 20 + r() * 40, face: {} });
    const conts = [{ key: "G:root", kind: "G", x: 0, y: 0, w: 21000, h: 2200 }];
    const geo = { leaves, conts, bbox: { x: 0, y: 0, w: 21000, h: 2200 } };
    for (let q = 0; q < 500; q++) {
      const x = r() * 21000, y = r() * 2200;
      let want = null;
      for (let i = leaves.length - 1; i >= 0 && !want; i--) {
        const l = leaves[i];
        if (x >= l.x && x <= l.x + l.w && y >= l.y && y <= l.y + l.h) want = { key: l.key, part: "toggle" };
      }
      expect(hitTest(geo, x, y)).toEqual(want);
    }
  });
});

/** Point at t of the cubic (a, b, c, d). */
const cubicAt = (a, b, c, d, t) => [0, 1].map((i) =>
  (1 - t) ** 3 * a[i] + 3 * (1 - t) ** 2 * t * b[i] + 3 * (1 - t) * t ** 2 * c[i] + t ** 3 * d[i]);

describe("edges across the whole drawing", () => {
  it("a curve piece much bigger than the view is cut to pieces near it, on the same curve", () => {
    const pts = [[0, 0], [3e6, 2e5], [6e6, 0]];
    const all = [], cut = [];
    const rec = (list) => {
      let at = null;
      return {
        moveTo: (x, y) => (at = [x, y]),
        lineTo: (x, y) => (at = [x, y]),
        bezierCurveTo: (ax, ay, bx, by, x, y) => {
          list.push([at, [ax, ay], [bx, by], [x, y]]);
          at = [x, y];
        },
      };
    };
    traceCurve(pts, rec(all));
    // a view of 1400 by 1000 px around where the curve passes x = 2.9e6
    const dense = all.flatMap((c) => Array.from({ length: 4001 }, (_, i) => cubicAt(...c, i / 4000)));
    const at = dense.reduce((a, p) => (Math.abs(p[0] - 2.9e6) < Math.abs(a[0] - 2.9e6) ? p : a));
    const clip = { x0: at[0] - 700, y0: at[1] - 500, x1: at[0] + 700, y1: at[1] + 500 };
    traceCurve(pts, rec(cut), 0, 0, clip);
    expect(cut.length).toBeGreaterThan(0);
    expect(cut.length).toBeLessThan(40);
    // every piece handed over is small (at most twice the view) and lies on the full curve
    const near = (p) => Math.min(...dense.map((q) => Math.hypot(p[0] - q[0], p[1] - q[1])));
    for (const c of cut) {
      const xs = c.map((p) => p[0]), ys = c.map((p) => p[1]);
      expect(Math.max(...xs) - Math.min(...xs)).toBeLessThanOrEqual(2 * 1400);
      for (const t of [0, 0.3, 0.7, 1]) expect(near(cubicAt(...c, t))).toBeLessThan(800); // dense sampling step
    }
    // the curve's part in the view is all drawn: sampled points of the full curve inside
    // the clip are on some cut piece
    const onCut = cut.flatMap((c) => Array.from({ length: 4001 }, (_, i) => cubicAt(...c, i / 4000)));
    for (const c of all) {
      for (let i = 0; i <= 20000; i++) {
        const p = cubicAt(...c, i / 20000);
        if (p[0] < clip.x0 || p[0] > clip.x1 || p[1] < clip.y0 || p[1] > clip.y1) continue;
        expect(Math.min(...onCut.map((q) => Math.hypot(p[0] - q[0], p[1] - q[1])))).toBeLessThan(1);
      }
    }
  });

  it("zoomed far out, an edge is drawn as its lines cut to the view", () => {
    const geo = row(400);
    const ctx = recorder();
    const v = { x: -1.5e6 * 0.01, y: 0, k: 0.01, w: 1400, h: 900, dpr: 1 };
    drawFrame(ctx, geo, IX, v, PAINT, null, PAL);
    const m = 20 / v.k;
    const r = { x0: -v.x / v.k - m, y0: -v.y / v.k - m, x1: (v.w - v.x) / v.k + m, y1: (v.h - v.y) / v.k + m };
    const line = ctx.calls.filter((c) => c[0] === "moveTo" || c[0] === "lineTo").map((c) => [c[1], c[2]]);
    // the edge's points are at y 100 + 900 * x / 2e6 (first half): lines on it, inside r
    const onEdge = line.filter(([x, y]) => Math.abs(y - (100 + (900 * x) / 2e6)) < 1e-6);
    expect(onEdge.length).toBeGreaterThanOrEqual(2);
    for (const [x, y] of onEdge) {
      expect(x).toBeGreaterThanOrEqual(r.x0 - 1e-6);
      expect(x).toBeLessThanOrEqual(r.x1 + 1e-6);
      expect(y).toBeGreaterThanOrEqual(r.y0 - 1e-6);
    }
    expect(Math.max(...onEdge.map((p) => p[0])) - Math.min(...onEdge.map((p) => p[0]))).toBeGreaterThan(0.9 * (r.x1 - r.x0));
  });

  it("dashes are drawn while a period is a few px on screen, a lighter solid line when sub-pixel", () => {
    const dashes = (k) => {
      const ctx = recorder();
      drawFrame(ctx, row(40, 40 * 200), IX, { x: 0, y: 0, k, w: 1400, h: 900, dpr: 1 }, PAINT, null, PAL);
      return ctx.calls.filter((c) => c[0] === "setLineDash" && c[1].length).length;
    };
    expect(dashes(1)).toBeGreaterThan(0);
    expect(dashes(0.2)).toBe(0);
  });
});

// ---- the renderer's pan cache ------------------------------------------------------

let real;
beforeAll(() => {
  real = HTMLCanvasElement.prototype.getContext;
  HTMLCanvasElement.prototype.getContext = function () {
    const ctx = (this.__ctx ||= recorder());
    return new Proxy(ctx, { get: (t, k) => (k === "getImageData" ? () => ({ data: [10, 20, 30, 255] }) : t[k]) });
  };
});
afterAll(() => {
  HTMLCanvasElement.prototype.getContext = real;
});
afterEach(() => {
  document.body.textContent = "";
});

describe("pan cache", () => {
  it("a pan by whole pixels copies the cached image; any other change draws again", () => {
    const host = document.createElement("div"), cv = document.createElement("canvas");
    for (const [k, v] of [["clientWidth", 1000], ["clientHeight", 600]]) Object.defineProperty(host, k, { value: v });
    host.appendChild(cv);
    document.body.appendChild(host);
    const r = createCanvasRenderer(cv, host);
    const k = 0.05, geo = row(20000, 20000 * 10); // a box every 10 px: 2,000 in the 1000-px view
    r.setScene(geo, IX);
    r.setView({ x: 0, y: 0, k });
    const calls = () => cv.__ctx.calls.splice(0).map((c) => c[0]);
    const draws = (cs) => cs.filter((c) => c === "rect" || c === "roundRect").length;
    r.render();
    expect(draws(calls())).toBeGreaterThan(1500);
    // first frame of a pan: drawn once into the cache, copied; the next frames only copy
    r.setView({ x: -30, y: 4, k });
    r.render();
    let cs = calls();
    expect(cs.filter((c) => c !== "setTransform" && c !== "clearRect")).toEqual(["drawImage"]);
    for (const [x, y] of [[-60, 8], [-200, -10], [100, 0]]) {
      r.setView({ x, y, k });
      r.render();
      cs = calls();
      expect(cs.filter((c) => c !== "setTransform" && c !== "clearRect")).toEqual(["drawImage"]);
    }
    // a copy takes the cached image (drawn at -30, 4 with a 500 by 300 px margin) at the pan's shift
    r.setView({ x: 20, y: -7, k });
    r.render();
    const img = cv.__ctx.calls.splice(0).find((c) => c[0] === "drawImage");
    expect(img.slice(2)).toEqual([500 - 50, 300 + 11, 1000, 600, 0, 0, 1000, 600]);
    // past the margin: drawn again (into the cache)
    r.setView({ x: 20 + 600, y: -7, k });
    r.render();
    expect(draws(calls())).toBe(0); // drawn into the cache canvas, copied here
    // a selection, a zoom or a part-pixel shift draws the frame again
    for (const change of [
      () => r.setPaint({ ...PAINT, sel: "S:3" }),
      () => r.setView({ x: 20, y: -7, k: 0.055 }),
      () => r.setView({ x: 20.5, y: -7, k: 0.055 }),
    ]) {
      change();
      r.render();
      cs = calls();
      expect(cs).not.toContain("drawImage");
      expect(draws(cs)).toBeGreaterThan(100);
    }
    r.dispose();
  });
});
