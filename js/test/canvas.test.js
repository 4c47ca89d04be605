// @vitest-environment jsdom
// The drawing stage: placement, the canvas renderer's hit testing, culling and level
// of detail (on a recording 2D context), the SVG/canvas switch in the real view, clicks
// on a canvas, decorations and edge-label modes, and the neighbourhood view.
import { describe, it, expect, afterEach, beforeAll, afterAll } from "vitest";
import { mount } from "../../widgets/index.js";
import { indexFunction, nKey } from "../../widgets/graph/model.js";
import { allCollapsibles } from "../../widgets/graph/expansion.js";
import { buildScene } from "../../widgets/graph/scene.js";
import { placeScene } from "../../widgets/graph/place.js";
import { hitTest, drawFrame, TEXT_MIN_PX } from "../../widgets/graph/canvas.js";
import { createStage, CANVAS_THRESHOLD } from "../../widgets/graph/stage.js";
import { minimapFrame } from "../../widgets/graph/minimap.js";
import { layoutTree, createCache } from "../../widgets/ui/layout.js";
import { fixture, docOf } from "./helpers.js";
import { flatBlocks } from "./big.js";
import { useMounting, settled as settledOn } from "./mounting.js";
const render = useMounting();
const settled = (el) => settledOn(el, "data-draws", 400);

/** A 2D context that records calls (jsdom has no canvas). */
function recorder() {
  const calls = [];
  const ctx = new Proxy({ calls }, {
    get(t, k) {
      if (k in t) return t[k];
      if (k === "getImageData") return () => ({ data: [10, 20, 30, 255] });
      if (k === "createImageData") return (w, h) => ({ data: new Uint8ClampedArray(w * h * 4) });
      return (...args) => calls.push([k, ...args]);
    },
    set(t, k, v) {
      calls.push(["set:" + String(k), v]);
      return true;
    },
  });
  return ctx;
}
const PAL = new Proxy({ mono: "monospace" }, { get: (t, k) => t[k] ?? `c-${String(k)}` });
const count = (ctx, name) => ctx.calls.filter((c) => c[0] === name).length;

function placed(fn, exp) {
  const ix = indexFunction(fn);
  const scene = buildScene(ix, exp(ix), "t:");
  const { results } = layoutTree(scene.root, createCache());
  return { ix, scene, geo: placeScene(scene, results) };
}

describe("placement and hit testing", () => {
  it("every leaf is hit at its centre, with the part the SVG would report", () => {
    for (const exp of [allCollapsibles, () => new Set()]) {
      const { ix, geo } = placed(fixture("control").functions[0], exp);
      expect(geo.leaves.length).toBeGreaterThan(0);
      for (const l of geo.leaves) {
        const h = hitTest(geo, l.x + l.w / 2, l.y + Math.min(l.h, 20) / 2 + 2);
        expect(h && h.key, l.key).toBe(l.key);
        if (l.key.startsWith("N:") && ix.items.has(l.key)) {
          // the ▸/▾ marker toggles, the body selects
          const marker = hitTest(geo, l.x + l.w - 14, l.y + 10);
          expect(marker).toEqual({ key: l.key, part: "toggle" });
          expect(hitTest(geo, l.x + 4, l.y + 10).part).toBe("body");
        }
      }
      expect(hitTest(geo, -1000, -1000)).toBe(null);
    }
  });

  it("open box headers toggle; sub-jaxpr group headers toggle their owner; the root header does not", () => {
    const { geo } = placed(fixture("scoped").functions[0], allCollapsibles);
    const scope = geo.conts.find((c) => c.kind === "S");
    expect(hitTest(geo, scope.x + scope.w - 4, scope.y + 8)).toEqual({ key: scope.key, part: "toggle" });
    const root = geo.conts[0];
    expect(hitTest(geo, root.x + root.w - 4, root.y + 8)).toBe(null);
    const { geo: g2 } = placed(fixture("control").functions[0], allCollapsibles);
    const sub = g2.conts.find((c, i) => c.kind === "G" && i > 0);
    expect(hitTest(g2, sub.x + sub.w - 4, sub.y + 8)).toEqual({ key: sub.key, part: "grouphead" });
  });
});

describe("canvas drawing", () => {
  const { ix, geo } = placed(fixture("control").functions[0], allCollapsibles);
  const paint = { sel: null, hl: new Set(), match: new Map() };
  const view = (k, x = 0, y = 0) => ({ x, y, k, w: 6000, h: 4000, dpr: 1 });

  it("draws text only when it is at least TEXT_MIN_PX on screen", () => {
    const near = recorder();
    const s1 = drawFrame(near, geo, ix, view(1), paint, null, PAL);
    expect(s1.leaves).toBe(geo.leaves.length);
    expect(count(near, "fillText")).toBeGreaterThan(geo.leaves.length);
    const far = recorder();
    drawFrame(far, geo, ix, view((TEXT_MIN_PX - 0.2) / 12), paint, null, PAL); // 12 px: the biggest font
    expect(count(far, "fillText")).toBe(0);
    expect(count(far, "fill")).toBeGreaterThan(0); // boxes still drawn
  });

  it("culls what is off screen and batches boxes by style", () => {
    const off = recorder();
    const s = drawFrame(off, geo, ix, view(1, -100000, -100000), paint, null, PAL);
    expect(s).toMatchObject({ leaves: 0, edges: 0, conts: 0 });
    const on = recorder();
    drawFrame(on, geo, ix, view(1), paint, null, PAL);
    const rects = count(on, "roundRect") + count(on, "rect");
    expect(count(on, "stroke")).toBeLessThan(rects); // several boxes per stroke
  });

  it("paints decorations, matches and the selection", () => {
    const target = geo.leaves.find((l) => l.key.startsWith("N:"));
    const other = geo.leaves.filter((l) => l.key.startsWith("N:"))[1];
    const ctx = recorder();
    const p = { sel: target.key, hl: new Set([0]), match: new Map([[other.key, "match"]]) };
    drawFrame(ctx, geo, ix, view(1), p, (k) => (k === target.key ? { fill: "rgb(1,2,3)" } : null), PAL);
    const fills = ctx.calls.filter((c) => c[0] === "set:fillStyle").map((c) => c[1]);
    expect(fills).toContain("rgb(1,2,3)");
    expect(fills).toContain(PAL.match);
    const strokes = ctx.calls.filter((c) => c[0] === "set:strokeStyle").map((c) => c[1]);
    expect(strokes).toContain(PAL.brand);
  });

  it("minimap frame keeps the aspect ratio within 200×140", () => {
    const f = minimapFrame({ x: 0, y: 0, w: 20000, h: 1000 });
    expect(f.w).toBe(200);
    expect(f.h).toBeGreaterThanOrEqual(10);
    expect(minimapFrame({ x: 0, y: 0, w: 500, h: 5000 }).h).toBe(140);
  });
});

describe("stage: decorations and label modes", () => {
  it("fills node boxes from decorate(key) in SVG, again after a redraw, and clears", () => {
    const root = document.createElement("div");
    document.body.appendChild(root);
    const stage = createStage(root, "t", { onSelect() {}, onToggle() {} });
    const host = document.createElement("div");
    host.className = "jm-canvas";
    host.append(...stage.els);
    root.appendChild(host);
    const ix = indexFunction(fixture("trig").functions[0]);
    const draw = () => {
      const scene = buildScene(ix, new Set(), "d:");
      return stage.draw(scene, layoutTree(scene.root, createCache()).results, ix);
    };
    draw();
    const nid = ix.fn.nodes[0].id;
    stage.setDecorations((k) => (k === "N:" + nid ? { fill: "rgb(9, 9, 9)" } : null));
    const box = () => host.querySelector(`.jm-eqn[data-node-id="${nid}"] > .jm-box`);
    expect(box().style.fill).toBe("rgb(9, 9, 9)");
    draw();
    expect(box().style.fill).toBe("rgb(9, 9, 9)");
    stage.setDecorations(null);
    expect(box().style.fill).toBe("");
    expect(host.getAttribute("data-renderer")).toBe("svg");
    stage.dispose();
  });

  it("edge labels come from labelOf, and a label mode is part of the layout cache key", () => {
    const ix = indexFunction(fixture("trig").functions[0]);
    const a = buildScene(ix, new Set(), "p:aval:");
    const b = buildScene(ix, new Set(), "p:values:", { labelOf: (vs) => `«${vs.length}»` });
    const texts = (sc) => [...sc.labels.values()].flatMap((m) => [...m.values()]);
    expect(texts(b).length).toBeGreaterThan(0);
    expect(texts(b).every((t) => /^«\d+»$/.test(t))).toBe(true);
    expect(texts(a).some((t) => t.startsWith("f32"))).toBe(true);
    expect(a.root.key).not.toBe(b.root.key);
  });
});

// ---- the real view, in canvas mode (a recording context stands in for the canvas) ----

let realGetContext;
beforeAll(() => {
  realGetContext = HTMLCanvasElement.prototype.getContext;
  HTMLCanvasElement.prototype.getContext = function () {
    return (this.__ctx ||= recorder());
  };
});
afterAll(() => {
  HTMLCanvasElement.prototype.getContext = realGetContext;
});
const button = (el, label) => [...el.querySelectorAll(".jm-btn")].find((b) => b.textContent === label);
const click = (node, init = {}) => node.dispatchEvent(new MouseEvent("click", { bubbles: true, ...init }));
const sized = (el) => {
  const svg = el.querySelector(".jm-svg");
  for (const [k, v] of [["clientWidth", 1000], ["clientHeight", 700]]) Object.defineProperty(svg, k, { value: v, configurable: true });
  svg.getBoundingClientRect = () => ({ left: 0, top: 0, right: 1000, bottom: 700, width: 1000, height: 700 });
};

describe("view on canvas", () => {
  it("switches to canvas past the threshold; clicks select and toggle through hit testing", async () => {
    const { fn } = flatBlocks(150, 14, false); // 2,100 eqns
    const el = render(docOf(fn));
    await settled(el);
    sized(el);
    const host = el.querySelector(".jm-canvas");
    expect(host.getAttribute("data-renderer")).toBe("svg");
    button(el, "Expand all").click();
    await settled(el);
    expect(host.getAttribute("data-renderer")).toBe("canvas");
    expect(el.querySelectorAll(".jm-eqn").length).toBe(0);
    expect(el.querySelector(".jm-status").textContent).toMatch(/^2100 of 2100 eqns shown/);
    expect(CANVAS_THRESHOLD).toBe(1500);
    // click an eqn where the canvas drew it: it is selected, details say what it is
    const boxes = host.jmProbe.visible();
    const eqn = boxes.find((b) => b.key.startsWith("N:") && b.w > 10);
    expect(eqn).toBeTruthy();
    const svg = el.querySelector(".jm-svg");
    click(svg, { clientX: eqn.x + 5, clientY: eqn.y + 5 });
    const prim = fn.nodes.find((n) => nKey(n.id) === eqn.key).prim;
    expect(el.querySelector(".jm-details").textContent).toContain(prim);
    // a click on an open chunk's header folds it (the canvas hit test, as in SVG)
    const chunk = indexFunction(fn).parent.get(eqn.key);
    expect(chunk.startsWith("K:")).toBe(true);
    const cb = host.jmProbe.box(chunk);
    const before = host.getAttribute("data-draws");
    click(svg, { clientX: cb.x + cb.w - 6, clientY: cb.y + 6 });
    await settled(el);
    expect(host.getAttribute("data-draws")).not.toBe(before);
    expect(el.querySelector(".jm-status").textContent).toMatch(/^\d+ of 2100 eqns shown/);
    expect(el.querySelector(".jm-status").textContent).not.toMatch(/^2100 of/);
    expect(host.jmProbe.visible().some((b) => b.key === chunk && b.canOpen)).toBe(true);
    // double click on an eqn of a closed owner would toggle it; on a plain eqn it does nothing
    const eqn2 = host.jmProbe.visible().find((b) => b.key.startsWith("N:"));
    const draws = host.getAttribute("data-draws");
    el.querySelector(".jm-svg").dispatchEvent(new MouseEvent("dblclick", { bubbles: true, clientX: eqn2.x + 3, clientY: eqn2.y + 3 }));
    await settled(el);
    expect(host.getAttribute("data-draws")).toBe(draws);
  });
});

describe("neighbourhood view", () => {
  it("shows the eqns around the selection flat with a banner; Escape restores the graph", async () => {
    const doc = fixture("control");
    const el = render(doc);
    await settled(el);
    const full = el.querySelectorAll(".jm-eqn").length;
    const fn = doc.functions[0];
    const target = fn.nodes.find((n) => n.prim === "add" && n.group !== fn.root) || fn.nodes[2];
    // select by search + Enter (reveals it if hidden)
    const input = el.querySelector(".jm-search");
    input.value = target.prim;
    input.dispatchEvent(new Event("input", { bubbles: true }));
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    await settled(el);
    const selected = el.querySelector(".jm-eqn.jm-selected").getAttribute("data-node-id");
    el.querySelector(".jm-depth").value = "1";
    click(el.querySelector(".jm-neighbourhood"));
    await settled(el);
    const banner = el.querySelector(".jm-banner");
    expect(banner.hidden).toBe(false);
    const n = el.querySelectorAll(".jm-eqn").length;
    const prim = fn.nodes.find((x) => x.id === selected).prim;
    expect(banner.textContent).toContain(`Neighbourhood of ${prim} (depth 1): ${n} eqns`);
    expect(banner.textContent).toContain("Back to full graph");
    expect(n).toBeLessThan(fn.n_eqns);
    expect(el.querySelector(".jm-eqn.jm-selected").getAttribute("data-node-id")).toBe(selected);
    expect(el.querySelector(".jm-status").textContent).toBe(`${n} of ${n} eqns shown`);
    // search works inside it
    input.value = prim;
    input.dispatchEvent(new Event("input", { bubbles: true }));
    expect(el.querySelector(".jm-match-count").textContent).toMatch(/^\d+ match/);
    // depth 2 re-centres on the selection
    el.querySelector(".jm-depth").value = "2";
    el.querySelector(".jm-depth").dispatchEvent(new Event("change", { bubbles: true }));
    await settled(el);
    expect(el.querySelector(".jm-banner").textContent).toContain("(depth 2)");
    expect(el.querySelectorAll(".jm-eqn").length).toBeGreaterThanOrEqual(n);
    // Escape: back to the full graph with the previous expansion
    el.querySelector(".jm-root").dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    await settled(el);
    expect(el.querySelector(".jm-banner").hidden).toBe(true);
    expect(el.querySelectorAll(".jm-eqn").length).toBeGreaterThanOrEqual(full);
    // the back link works too
    click(el.querySelector(".jm-neighbourhood"));
    await settled(el);
    click(el.querySelector(".jm-banner-back"));
    await settled(el);
    expect(el.querySelector(".jm-banner").hidden).toBe(true);
  });

  it("asks for an eqn when nothing is selected", async () => {
    const el = render(fixture("trig"));
    await settled(el);
    click(el.querySelector(".jm-neighbourhood"));
    expect(el.querySelector(".jm-banner").textContent).toContain("Select an eqn first");
    expect(el.querySelector(".jm-banner-back").hidden).toBe(true);
  });
});

