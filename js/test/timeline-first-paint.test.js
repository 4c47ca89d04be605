// @vitest-environment jsdom
// First paint of the timeline: nothing is drawn before the widget's element is in a document
// (its colours would read "" and the canvas would paint black), every fill is a real colour,
// the host's theme switch redraws; the status line's two parts, the call counts over dense
// stretches, the legend and the pane's contract attributes.
import { describe, it, expect, afterEach } from "vitest";
import { fixture } from "./helpers.js";
import { useRecordingCanvas, bigTimeline } from "./timeline-helpers.js";
import { mount } from "../../widgets/index.js";
import { readTimeline, firstRecompile, whatChanged } from "../../widgets/timeline/model.js";
import { statusLine, statusText, windowText } from "../../widgets/timeline/view.js";
import { countText, drawFrame } from "../../widgets/timeline/draw.js";
import { recorder } from "./timeline-helpers.js";
import { legendEntries } from "../../widgets/timeline/legend.js";
import { readVars, hostDark, FALLBACK } from "../../widgets/ui/theme-watch.js";

useRecordingCanvas();
const cleanups = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()();
  document.body.textContent = "";
  document.body.removeAttribute("data-jp-theme-light");
  document.body.removeAttribute("data-jp-theme-name");
});
const frame = () => new Promise((r) => setTimeout(r, 40));
const fills = (canvas) => canvas.getContext("2d").calls.filter((c) => c[0] === "set:fillStyle").map((c) => c[1]);
const plotOf = (el) => el.querySelector(".jm-tl-plot");

describe("timeline colours on first paint", () => {
  it("draws nothing while detached, then draws with resolved colours once attached", async () => {
    const el = document.createElement("div"); // as anywidget may: render into an element not in the page
    cleanups.push(mount(el, fixture("timeline-small")));
    const canvas = el.querySelector("canvas.jm-tl-canvas");
    await frame();
    expect(plotOf(el).hasAttribute("data-draws")).toBe(false);
    expect(fills(canvas)).toEqual([]);
    document.body.appendChild(el);
    for (let i = 0; i < 20 && !plotOf(el).hasAttribute("data-draws"); i++) await frame();
    expect(Number(plotOf(el).getAttribute("data-draws"))).toBeGreaterThan(0);
    const used = fills(canvas);
    expect(used.length).toBeGreaterThan(5);
    expect(used.filter((f) => typeof f !== "string" || !f.trim())).toEqual([]); // never "": the canvas would keep black
  });

  it("redraws with the other theme's colours when JupyterLab switches theme", async () => {
    const el = document.createElement("div");
    document.body.appendChild(el);
    document.body.setAttribute("data-jp-theme-light", "true");
    cleanups.push(mount(el, fixture("timeline-small")));
    const before = Number(plotOf(el).getAttribute("data-draws"));
    const canvas = el.querySelector("canvas.jm-tl-canvas");
    canvas.getContext("2d").calls.length = 0;
    document.body.setAttribute("data-jp-theme-light", "false");
    document.body.setAttribute("data-jp-theme-name", "JupyterLab Dark");
    for (let i = 0; i < 20 && Number(plotOf(el).getAttribute("data-draws")) === before; i++) await frame();
    expect(Number(plotOf(el).getAttribute("data-draws"))).toBeGreaterThan(before);
    // jsdom resolves no custom property: the dark fallback palette is what the redraw used
    expect(fills(canvas)).toContain(FALLBACK.dark.bg2);
    expect(fills(canvas)).not.toContain(FALLBACK.light.bg2);
  });

  it("takes an unresolved variable from the host theme's fallback palette", () => {
    const el = document.createElement("div");
    document.body.appendChild(el);
    expect(readVars(el, ["teal"]).teal).toBe(FALLBACK.light.teal);
    document.body.setAttribute("data-jp-theme-light", "false");
    expect(hostDark(document)).toBe(true);
    expect(readVars(el, ["teal", "nothing-such"], { "nothing-such": "#123456" })).toEqual({ teal: FALLBACK.dark.teal, "nothing-such": "#123456" });
  });
});

describe("timeline words and contract", () => {
  it("writes the status line as two parts with a separator", () => {
    const tl = readTimeline(fixture("timeline-small"));
    expect(statusLine(tl, 0, tl.duration)).toBe(`${statusText(tl)} · showing 0 µs – 76.2 ms`);
    expect(windowText(tl, -5, tl.duration * 2)).toBe("showing 0 µs – 76.2 ms");
    const one = readTimeline({ ...fixture("timeline-small"), lanes: [{ name: "f", calls: 1, compiles: 1 }], calls: { lane: [0], start: [0], end: [5], hit: [0] } });
    expect(statusText(one)).toMatch(/^1 call, 0 hits, 1 miss, 1 compile in /);
  });

  it("keeps the two parts apart in the mounted view", () => {
    const el = document.createElement("div");
    document.body.appendChild(el);
    cleanups.push(mount(el, fixture("timeline-small")));
    const parts = [...el.querySelector(".jm-tl-status").children].map((c) => c.textContent);
    expect(parts[0]).toMatch(/ in 76\.2 ms$/);
    expect(parts[parts.length - 1]).toMatch(/^showing /);
    expect(parts.length).toBe(3);
  });

  it("says what a count over a dense stretch counts", () => {
    expect(countText(3)).toBe("3 calls");
    expect(countText(999)).toBe("999 calls");
    expect(countText(1000)).toBe("1k calls");
    expect(countText(3456)).toBe("3.5k calls");
    expect(countText(45678)).toBe("46k calls");
  });

  it("never writes two counts over each other, even where the plot's end cuts a cell short", () => {
    const tl = readTimeline(bigTimeline(3000));
    for (const w of [437, 500, 611, 800, 1003]) {
      const ctx = recorder();
      drawFrame(ctx, tl, { w, h: 200, dpr: 1, t0: 0, t1: tl.duration, rows: [0, 1, 2], focus: null, k: 1 }, { selected: -1, brush: null, missesOnly: false }, {});
      const counts = ctx.calls.filter((c) => c[0] === "fillText" && / calls$/.test(c[1]));
      expect(counts.length).toBeGreaterThan(0);
      const byRow = new Map();
      for (const [, text, x, y] of counts) byRow.set(y, [...(byRow.get(y) || []), [text, x]]);
      for (const row of byRow.values()) {
        for (let i = 1; i < row.length; i++) expect(row[i][1] - row[i][0].length * 6.6, `${w}px: ${row[i - 1][0]} / ${row[i][0]}`).toBeGreaterThanOrEqual(row[i - 1][1]);
      }
    }
  });

  it("lists in its legend only what the capture draws", () => {
    const words = (d) => legendEntries(readTimeline(d)).map((e) => e[2]);
    const big = words(bigTimeline(3000));
    expect(big).toEqual(["trace", "lower", "compile", "run (dispatch)", "on device until ready", "cache hit", "cache miss: traced and compiled", "miss in a recompile storm"]);
    const d = fixture("timeline-small");
    const noReady = { ...d, calls: { ...d.calls, ready: d.calls.lane.map(() => null) }, findings: [] };
    expect(words(noReady)).not.toContain("on device until ready");
    expect(words(noReady)).not.toContain("miss in a recompile storm");
  });

  it("publishes the pane, its framing, text size, drawing and the first recompile's marker", () => {
    const el = document.createElement("div");
    document.body.appendChild(el);
    const d = fixture("timeline-small");
    cleanups.push(mount(el, d));
    const pane = el.querySelector('[data-jm-pane="timeline"]');
    expect(pane).toBe(plotOf(el));
    expect(pane.getAttribute("data-jm-framed")).toBe("whole");
    expect(Number(pane.getAttribute("data-jm-text-px"))).toBeGreaterThanOrEqual(11);
    const [x, y, w, h] = pane.getAttribute("data-jm-drawing").split(",").map(Number);
    expect([x, y]).toEqual([0, 0]);
    expect(w).toBeGreaterThan(100);
    expect(h).toBeGreaterThan(50);
    const tl = readTimeline(d);
    const c = firstRecompile(tl);
    expect(c).toBeGreaterThan(0);
    expect(whatChanged(tl, c).kind).not.toBe("first");
    const rect = pane.getAttribute("data-jm-key-rect").split(",").map(Number);
    expect(rect).toHaveLength(4);
    expect(rect[0]).toBeGreaterThan(150); // in the plot, right of the lane names
    expect(el.querySelectorAll("[data-jm-legend] .jm-tl-legend-item").length).toBeGreaterThanOrEqual(6);
  });
});
