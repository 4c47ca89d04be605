// @vitest-environment jsdom
// The mounted timeline view: header, status, table (sort, focus), findings, details
// after a click on the canvas, tooltips, keyboard, brushing, the misses-only filter,
// hostile strings, unknown versions, an empty capture and 100,000 calls.
import { describe, it, expect } from "vitest";
import { fixture } from "./helpers.js";
import { useMounting, click } from "./mounting.js";
import { bigTimeline, useRecordingCanvas } from "./timeline-helpers.js";
import { readTimeline, callNumber } from "../../widgets/timeline/model.js";
import { statusText } from "../../widgets/timeline/view.js";

const render = useMounting();
const EVIL = "<img src=x onerror=alert(1)>";

useRecordingCanvas();

const doc = () => fixture("timeline-small");
const canvasOf = (el) => el.querySelector(".jm-tl-canvas");
const probe = (el) => canvasOf(el).jmProbe;
const pointer = (el, type, p, init = {}) =>
  canvasOf(el).dispatchEvent(new MouseEvent(type, { bubbles: true, cancelable: true, clientX: p.x, clientY: p.y, button: 0, ...init }));
const key = (el, k) => el.querySelector(".jm-root").dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true }));
const button = (el, label) => [...el.querySelectorAll(".jm-btn")].find((b) => b.textContent === label);
const details = (el) => el.querySelector(".jm-details").textContent;
const rowNames = (el) => [...el.querySelectorAll(".jm-tl-table tr[data-lane]")].map((tr) => tr.querySelector("td").firstChild.textContent);
/** Wait until the plot has drawn again (draws are coalesced to an animation frame). */
async function drawn(el, after) {
  const plot = el.querySelector(".jm-tl-plot");
  for (let i = 0; i < 100; i++) {
    if (Number(plot.getAttribute("data-draws")) > after) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("no redraw");
}
const draws = (el) => Number(el.querySelector(".jm-tl-plot").getAttribute("data-draws"));
const laneCalls = (d, name) => {
  const l = d.lanes.findIndex((x) => x.name === name);
  return d.calls.lane.map((x, c) => (x === l ? c : -1)).filter((c) => c >= 0);
};

describe("timeline view", () => {
  it("renders header, status, one table row per lane and the findings, severity first", () => {
    const d = doc();
    const el = render(d);
    expect(el.querySelector(".jm-title").textContent).toBe(d.title);
    expect(el.querySelector(".jm-notes").textContent).toContain("jax.monitoring");
    expect(el.querySelector(".jm-error-msg").textContent).toContain("ValueError");
    const st = el.querySelector(".jm-status").textContent;
    expect(st).toContain(statusText(readTimeline(d)));
    expect(st).toMatch(/^47 calls, 25 hits, 22 misses, 22 compiles in 76\.2 ms/);
    expect(rowNames(el)).toEqual(d.lanes.map((l) => l.name));
    const f = [...el.querySelectorAll(".jm-tl-finding")];
    expect(f.map((b) => b.getAttribute("data-kind"))).toEqual(["recompile_storm", "compile_dominates"]);
    expect(f[0].querySelector(".jm-tl-sev").textContent).toBe("bug");
    expect(details(el)).toContain("persistent cache1 hit, 2 misses, saved 2.4 ms");
    expect(el.querySelector(".jm-tl-plot").getAttribute("data-draws")).toBe("1");
  });

  it("sorts the table by a header click and reverses on the second", () => {
    const d = doc();
    const el = render(d);
    const th = (k) => el.querySelector(`.jm-tl-table th[data-key="${k}"]`);
    click(th("misses"));
    const byMisses = d.lanes.map((l) => l).sort((a, b) => b.misses - a.misses || d.lanes.indexOf(a) - d.lanes.indexOf(b)).map((l) => l.name);
    expect(rowNames(el)).toEqual(byMisses);
    expect(th("misses").getAttribute("aria-sort")).toBe("descending");
    click(th("misses"));
    expect(th("misses").getAttribute("aria-sort")).toBe("ascending");
    expect(rowNames(el)[rowNames(el).length - 1]).toBe("pad_and_run");
    click(th("name"));
    expect(rowNames(el)).toEqual(d.lanes.map((l) => l.name).sort((a, b) => a.localeCompare(b)));
    expect(th("name").getAttribute("aria-sort")).toBe("ascending");
    // device: lanes that never measured it say "—"
    expect([...el.querySelectorAll(".jm-tl-table td")].some((td) => td.textContent === "—")).toBe(true);
  });

  it("a table row focuses its lane: highlighted row, lane details", () => {
    const el = render(doc());
    click(el.querySelector('.jm-tl-table tr[data-lane="2"] td'));
    expect(el.querySelector(".jm-tl-focus").getAttribute("data-lane")).toBe("2");
    expect(details(el)).toContain("scale");
    expect(details(el)).toContain("Totals");
    expect(details(el)).toContain("scale spent 7.8 ms compiling"); // its finding
  });

  it("a click on a miss shows why: words, before/after, fix, JAX's text verbatim, call site", () => {
    const d = doc();
    const el = render(d);
    const m = d.misses.find((x) => x.kind === "static");
    const p = probe(el).pointOf(m.call);
    expect(p).toBeTruthy();
    pointer(el, "click", p);
    const det = el.querySelector(".jm-details");
    expect(det.textContent).toContain("call 4 of 5");
    expect(det.querySelector(".jm-tl-badge").textContent).toBe("miss · static");
    expect(det.textContent).toContain(m.words);
    const cells = [...det.querySelector(".jm-tl-grid").querySelectorAll("td")].map((td) => td.textContent);
    expect(cells).toEqual(["n", "static", "3", "4"]);
    expect(det.querySelector(".jm-tl-fix").textContent).toContain(m.fix);
    expect(det.querySelector(".jm-tl-jax").textContent).toBe(m.jax);
    expect(det.querySelector(".jm-tl-jax").tagName).toBe("PRE");
    expect(det.textContent).toContain("agree"); // from: both
    expect(det.textContent).toContain("z = scale(x, n=k)"); // call site
    expect(det.textContent).toContain("f32[16], n=4"); // signature
    expect(el.querySelector(".jm-tl-focus").getAttribute("data-lane")).toBe(String(d.calls.lane[m.call]));
    // a hit says so
    const hit = laneCalls(d, "train_step")[4];
    pointer(el, "click", probe(el).pointOf(hit));
    expect(det.querySelector(".jm-tl-badge").textContent).toBe("hit");
    expect(det.textContent).toContain("cache hit, same signature");
    // empty space in a lane focuses the lane; Escape clears everything
    key(el, "Escape");
    expect(details(el)).toContain("Capture");
    expect(el.querySelector(".jm-tl-focus")).toBe(null);
  });

  it("hover shows a tooltip with function, call number, start, dispatch vs device, signature and reason", () => {
    const d = doc();
    const el = render(d);
    const tl = readTimeline(d);
    const c = laneCalls(d, "pad_and_run")[4];
    pointer(el, "pointermove", probe(el).pointOf(c));
    const tip = el.querySelector(".jm-tl-tip");
    expect(tip.hidden).toBe(false);
    const text = tip.textContent;
    expect(text).toContain(`pad_and_run · call ${callNumber(tl, c)} of 15`);
    expect(text).toMatch(/start \d/);
    expect(text).toMatch(/\ndispatch \d.*\ndevice \d/);
    expect(text).toContain("(f32[11,128])");
    expect(text).toContain("cache miss (shape): x changed shape from (9, 128) to (11, 128)");
    pointer(el, "pointerleave", { x: 0, y: 0 });
    expect(tip.hidden).toBe(true);
    // over the events lane: the span under the pointer
    const ev = tl.lanes.find((l) => l.origin === "events").pos;
    const rows = probe(el).rows();
    expect(rows).toContain(ev);
  });

  it("findings select their lane and first call; n / p step through misses", () => {
    const d = doc();
    const el = render(d);
    click(el.querySelector('.jm-tl-finding[data-kind="recompile_storm"]'));
    const pad = d.lanes.findIndex((l) => l.name === "pad_and_run");
    expect(el.querySelector(".jm-tl-focus").getAttribute("data-lane")).toBe(String(pad));
    expect(details(el)).toContain("first call of pad_and_run");
    key(el, "n");
    expect(details(el)).toContain("x changed shape from (8, 128) to (9, 128)");
    key(el, "n");
    expect(details(el)).toContain("from (9, 128) to (10, 128)");
    key(el, "p");
    expect(details(el)).toContain("from (8, 128) to (9, 128)");
  });

  it("keyboard and buttons zoom, pan (a / d) and fit; the wheel zooms around the pointer", () => {
    const el = render(doc());
    const w0 = probe(el).window();
    key(el, "+");
    const w1 = probe(el).window();
    expect(w1.t1 - w1.t0).toBeCloseTo((w0.t1 - w0.t0) / 2, 3);
    key(el, "d"); // pan (← → step the playback, as in every view)
    const w2 = probe(el).window();
    expect(w2.t0).toBeGreaterThan(w1.t0);
    button(el, "Fit").click();
    expect(probe(el).window()).toEqual(w0);
    // wheel: the time under the pointer stays under it
    const c = 30;
    const p = probe(el).pointOf(c);
    const before = probe(el).window();
    canvasOf(el).dispatchEvent(new WheelEvent("wheel", { bubbles: true, cancelable: true, clientX: p.x, clientY: p.y, deltaY: -200 }));
    const after = probe(el).window();
    expect(after.t1 - after.t0).toBeLessThan(before.t1 - before.t0);
    const q = probe(el).pointOf(c);
    expect(Math.abs(q.x - p.x)).toBeLessThan(1);
    key(el, "-");
    expect(probe(el).window().t1 - probe(el).window().t0).toBeGreaterThan(after.t1 - after.t0);
  });

  it("shift-drag brushes a range: the table counts what starts in it; the overview picks the window", async () => {
    const d = doc();
    const el = render(d);
    const pad = laneCalls(d, "pad_and_run");
    const a = probe(el).pointOf(pad[0]), b = probe(el).pointOf(pad[5]);
    pointer(el, "pointerdown", { x: a.x - 40, y: a.y }, { shiftKey: true }); // before pad_and_run's first call starts
    pointer(el, "pointermove", { x: (a.x + b.x) / 2, y: a.y }, { shiftKey: true });
    pointer(el, "pointermove", { x: b.x + 1, y: a.y }, { shiftKey: true });
    pointer(el, "pointerup", { x: b.x + 1, y: a.y });
    pointer(el, "click", { x: b.x + 1, y: a.y }); // the click ending a drag selects nothing
    expect(el.querySelector(".jm-tl-range").hidden).toBe(false);
    expect(el.querySelector(".jm-tl-caption").textContent).toMatch(/^In /);
    const row = el.querySelector(`.jm-tl-table tr[data-lane="${d.lanes.findIndex((l) => l.name === "pad_and_run")}"]`);
    expect(row.children[1].textContent).toBe("6"); // calls 0..5 of pad_and_run start in the range
    expect(details(el)).toContain("Capture");
    // zoom to it
    button(el, "Zoom").click();
    const w = probe(el).window();
    expect(w.t1 - w.t0).toBeLessThan(d.duration_us / 2);
    button(el, "✕").click();
    expect(el.querySelector(".jm-tl-range").hidden).toBe(true);
    expect(el.querySelector(".jm-tl-caption").textContent).toBe("");
    // overview: drag picks the window
    const o1 = probe(el).overviewPoint(d.duration_us * 0.1), o2 = probe(el).overviewPoint(d.duration_us * 0.3);
    pointer(el, "pointerdown", o1);
    pointer(el, "pointermove", o2);
    pointer(el, "pointerup", o2);
    const ow = probe(el).window();
    expect(ow.t0).toBeCloseTo(d.duration_us * 0.1, -2);
    expect(ow.t1).toBeCloseTo(d.duration_us * 0.3, -2);
    const n = draws(el);
    await drawn(el, n - 1);
  });

  it("misses only: hits are neither drawn nor under the pointer", async () => {
    const d = doc();
    const el = render(d);
    const ctx = canvasOf(el).__ctx;
    /** Rectangles of the last frame (the recorder keeps every call; a frame starts with setTransform). */
    const lastFrameRects = () => {
      const names = ctx.calls.map((c) => c[0]);
      return names.slice(names.lastIndexOf("setTransform")).filter((n) => n === "rect").length;
    };
    const before = lastFrameRects();
    const hit = laneCalls(d, "train_step")[10];
    pointer(el, "pointermove", probe(el).pointOf(hit));
    expect(el.querySelector(".jm-tl-tip").textContent).toContain("cache hit, same signature");
    const box = el.querySelector(".jm-tl-misses-only");
    const n = draws(el);
    box.checked = true;
    box.dispatchEvent(new Event("change", { bubbles: true }));
    await drawn(el, n);
    // 25 hits drop out: their ticks and their dispatch bars
    expect(lastFrameRects()).toBeLessThan(before - 20);
    pointer(el, "pointermove", probe(el).pointOf(hit));
    expect(el.querySelector(".jm-tl-tip").textContent).not.toContain("cache hit");
  });

  it("hostile strings stay text: title, table, details, tooltip; the canvas draws them with fillText", () => {
    const d = doc();
    const el = render(d);
    const evilCall = laneCalls(d, EVIL)[0];
    pointer(el, "pointermove", probe(el).pointOf(evilCall));
    expect(el.querySelector(".jm-tl-tip").textContent).toContain(EVIL);
    pointer(el, "click", probe(el).pointOf(evilCall));
    expect(el.querySelectorAll("img").length).toBe(0);
    for (const node of el.querySelectorAll("*")) {
      for (const attr of node.attributes) expect(attr.name.startsWith("on"), attr.name).toBe(false);
    }
    const det = el.querySelector(".jm-details");
    expect(det.querySelector(".jm-d-prim").textContent).toBe(EVIL);
    expect(det.querySelector(".jm-tl-jax").textContent).toBe(EVIL);
    expect(det.querySelector(".jm-tl-err").textContent).toBe(`${EVIL}Error: ${EVIL}`);
    expect([...det.querySelector(".jm-tl-grid").querySelectorAll("td")].map((t) => t.textContent)).toEqual([EVIL, EVIL, EVIL, EVIL]);
    expect(rowNames(el)).toContain(EVIL);
    expect(el.querySelector(".jm-notes").textContent).toContain(EVIL);
    const texts = canvasOf(el).__ctx.calls.filter((c) => c[0] === "fillText").map((c) => c[1]);
    expect(texts.some((t) => t.startsWith("<img"))).toBe(true);
  });

  it("an unknown version says it cannot show it; an empty capture says nothing was recorded", () => {
    const el = render({ ...doc(), version: 2 });
    expect(el.querySelector(".jm-unsupported").textContent).toContain("cannot show timeline documents of version 2");
    expect(el.querySelector(".jm-tl-canvas")).toBe(null);
    const empty = render({ schema: "jaxmagic", version: 1, kind: "timeline", title: "%%trace — 0 calls", notes: [], error: null,
      duration_us: 10, lanes: [], calls: { lane: [], start: [], end: [], hit: [], ready: [], sig: [], miss: [], site: [], errors: {} },
      spans: { lane: [], call: [], phase: [], start: [], end: [] }, misses: [], signatures: [], sites: [], findings: [], cache: null, options: {} });
    expect(empty.querySelector(".jm-empty").textContent).toContain("Nothing was recorded");
    expect(empty.querySelector(".jm-title").textContent).toBe("%%trace — 0 calls");
  });

  it("100,000 calls mount quickly, draw, and select by click", () => {
    const d = bigTimeline(100000);
    const t = performance.now();
    const el = render(d);
    const ms = performance.now() - t;
    expect(ms).toBeLessThan(3000); // generous: readTimeline ~80 ms, first frame ~10 ms in node
    expect(el.querySelector(".jm-status").textContent).toMatch(/^100,000 calls, \d{1,3}(,\d{3})* hits, \d{1,3}(,\d{3})* misses/); // counts grouped, as Python writes them
    expect(el.querySelectorAll(".jm-tl-table tr[data-lane]").length).toBe(4);
    expect(el.querySelector(".jm-tl-plot").getAttribute("data-draws")).toBe("1");
    const ctx = canvasOf(el).__ctx;
    expect(ctx.calls.filter((c) => c[0] === "rect" || c[0] === "moveTo").length).toBeLessThan(20000);
    key(el, "n");
    expect(el.querySelector(".jm-tl-badge").textContent).toMatch(/^miss/);
    expect(details(el)).toContain("call 1 of");
  });
});
