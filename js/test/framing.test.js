import { describe, it, expect } from "vitest";
import { frameDrawing, unionBox, LEGIBLE_PX, PRESENT_PX, MARGIN } from "../../widgets/graph/framing.js";

/** The drawing box on screen after framing: pane-relative CSS px. */
const onScreen = (f, b) => ({ x: f.tx + b.x * f.scale, y: f.ty + b.y * f.scale, w: b.w * f.scale, h: b.h * f.scale });
const inside = (r, w, h) => r.x >= -0.01 && r.y >= -0.01 && r.x + r.w <= w + 0.01 && r.y + r.h <= h + 0.01;

describe("framing a drawing", () => {
  it("shows a small drawing whole at 100%, centred, the pane shrunk to it", () => {
    const box = { x: 0, y: 0, w: 730, h: 150 };
    const f = frameDrawing({ box, paneW: 830, maxH: 580, minH: 120, labelPx: 11 });
    expect(f.framed).toBe("whole");
    expect(f.scale).toBe(1); // never zoomed in past 100%
    expect(f.paneHeight).toBe(150 + 2 * MARGIN);
    const r = onScreen(f, box);
    expect(inside(r, 830, f.paneHeight)).toBe(true);
    expect(r.x).toBeCloseTo((830 - 730) / 2);
    expect(r.y).toBeCloseTo(MARGIN); // no empty band above or below
    expect(f.textPx).toBe(11);
  });

  it("keeps the minimum height for a one-node drawing and centres it", () => {
    const box = { x: 10, y: 20, w: 80, h: 40 };
    const f = frameDrawing({ box, paneW: 600, maxH: 500, minH: 120, labelPx: 11 });
    expect(f.framed).toBe("whole");
    expect(f.paneHeight).toBe(120);
    const r = onScreen(f, box);
    expect(r.y).toBeCloseTo((120 - 40) / 2);
    expect(r.x).toBeCloseTo((600 - 80) / 2);
  });

  it("zooms out a drawing whose labels stay legible when smaller", () => {
    const box = { x: 0, y: 0, w: 1600, h: 300 };
    // labels 16 px at zoom 1: legible down to 11/16
    const f = frameDrawing({ box, paneW: 1200, maxH: 500, labelPx: 16 });
    expect(f.framed).toBe("whole");
    expect(f.scale).toBeCloseTo((1200 - 2 * MARGIN) / 1600);
    expect(f.textPx).toBeGreaterThanOrEqual(LEGIBLE_PX);
    expect(inside(onScreen(f, box), 1200, f.paneHeight)).toBe(true);
  });

  it("shows a part at the legible scale when the whole would be too small to read", () => {
    const box = { x: 0, y: 0, w: 3000, h: 900 };
    const f = frameDrawing({ box, paneW: 800, maxH: 480, minH: 120, labelPx: 11, startY: 600 });
    expect(f.framed).toBe("part");
    expect(f.scale).toBe(1); // 11 px labels: legible only at 100%
    expect(f.textPx).toBe(11);
    expect(f.paneHeight).toBe(480);
    const r = onScreen(f, box);
    expect(r.x).toBeCloseTo(MARGIN); // inputs first: the left edge at the margin
    expect(480 / 2 - f.ty).toBeCloseTo(600); // the start of the computation in the middle
    // a start near the top: the drawing's top edge at the margin, headers not cut
    const near = frameDrawing({ box, paneW: 800, maxH: 480, minH: 120, labelPx: 11, startY: 300 });
    expect(onScreen(near, box).y).toBeCloseTo(MARGIN);
  });

  it("uses the presentation floor: 14 px", () => {
    const box = { x: 0, y: 0, w: 1400, h: 200 };
    // labels 14 px at zoom 1 in presentation mode: no zooming out at all
    const p = frameDrawing({ box, paneW: 1200, maxH: 400, labelPx: 14, present: true });
    expect(p.framed).toBe("part");
    expect(p.textPx).toBe(PRESENT_PX);
    // the same drawing at a desk with 11 px labels is too wide as well; with 28 px labels it fits
    const big = frameDrawing({ box, paneW: 1200, maxH: 400, labelPx: 28, present: true });
    expect(big.framed).toBe("whole");
    expect(big.textPx).toBeGreaterThanOrEqual(PRESENT_PX);
  });

  it("never zooms above 1, even with room to spare", () => {
    const f = frameDrawing({ box: { x: 0, y: 0, w: 100, h: 50 }, paneW: 2000, maxH: 1000, labelPx: 20 });
    expect(f.scale).toBe(1);
  });

  it("centres anchors in a part, all of them when they fit, else the first", () => {
    const box = { x: 0, y: 0, w: 4000, h: 2000 };
    const a = { x: 3000, y: 1500, w: 100, h: 40 }, b = { x: 3200, y: 1400, w: 100, h: 40 };
    const both = frameDrawing({ box, paneW: 800, maxH: 480, labelPx: 11, anchors: [a, b] });
    const u = unionBox([a, b]);
    expect(both.framed).toBe("part");
    expect(both.tx + (u.x + u.w / 2) * both.scale).toBeCloseTo(400);
    expect(both.ty + (u.y + u.h / 2) * both.scale).toBeCloseTo(240);
    const far = { x: 100, y: 100, w: 100, h: 40 };
    const first = frameDrawing({ box, paneW: 800, maxH: 480, labelPx: 11, anchors: [a, far] });
    expect(first.tx + (a.x + a.w / 2) * first.scale).toBeCloseTo(400);
    // an anchor at the drawing's corner: clamped, so no gap wider than the margin
    const corner = frameDrawing({ box, paneW: 800, maxH: 480, labelPx: 11, anchors: [{ x: 3950, y: 1980, w: 50, h: 20 }] });
    const r = onScreen(corner, box);
    expect(r.x + r.w).toBeCloseTo(800 - MARGIN);
    expect(r.y + r.h).toBeCloseTo(480 - MARGIN);
  });

  it("ignores anchors when the whole drawing fits", () => {
    const box = { x: 0, y: 0, w: 400, h: 200 };
    const f = frameDrawing({ box, paneW: 800, maxH: 480, labelPx: 11, anchors: [{ x: 350, y: 150, w: 50, h: 50 }] });
    expect(f.framed).toBe("whole");
    expect(onScreen(f, box).x).toBeCloseTo(200);
  });

  it("keeps a height the reader chose, and shrinks a wide short part to its drawing", () => {
    const box = { x: 0, y: 0, w: 3000, h: 120 };
    const f = frameDrawing({ box, paneW: 800, maxH: 480, minH: 100, labelPx: 11 });
    expect(f.framed).toBe("part");
    expect(f.paneHeight).toBe(120 + 2 * MARGIN); // no band above or below
    expect(onScreen(f, box).y).toBeCloseTo(MARGIN);
    const fixed = frameDrawing({ box: { x: 0, y: 0, w: 500, h: 900 }, paneW: 800, maxH: 480, fixedH: 1000, labelPx: 11 });
    expect(fixed.paneHeight).toBe(1000);
    expect(fixed.framed).toBe("whole"); // the taller pane holds it
  });

  it("puts the anchor near the pane's top with anchorTop, never leaving a gap above the drawing", () => {
    const box = { x: 0, y: 0, w: 4000, h: 2000 };
    const low = { x: 2000, y: 1500, w: 80, h: 30 };
    const f = frameDrawing({ box, paneW: 800, maxH: 400, labelPx: 11, anchors: [low], anchorTop: true });
    expect(f.framed).toBe("part");
    expect(f.ty + low.y * f.scale).toBeCloseTo(1.5 * MARGIN, 5); // anchor top 1.5 margins below the pane's top
    const centred = frameDrawing({ box, paneW: 800, maxH: 400, labelPx: 11, anchors: [low] });
    expect(centred.ty + low.y * centred.scale).toBeGreaterThan(f.ty + low.y * f.scale + 100);
    const high = { x: 2000, y: 5, w: 80, h: 30 }; // near the drawing's top: the top edge stays at the margin
    const g = frameDrawing({ box, paneW: 800, maxH: 400, labelPx: 11, anchors: [high], anchorTop: true });
    expect(g.ty + box.y * g.scale).toBeCloseTo(MARGIN, 5);
    // a wide, short drawing sits uncut at the pane's top when its anchor is then in the upper half
    const short = { x: 0, y: 0, w: 4000, h: 120 }, mid = { x: 2000, y: 40, w: 80, h: 30 };
    const s = frameDrawing({ box: short, paneW: 800, maxH: 400, minH: 260, labelPx: 11, anchors: [mid], anchorTop: true });
    expect(s.framed).toBe("part");
    expect(s.ty + short.y * s.scale).toBeCloseTo(MARGIN, 5);
    expect(s.ty + (mid.y + mid.h) * s.scale).toBeLessThanOrEqual(s.paneHeight / 2);
  });
});
