// The timeline's pure parts: reading a document, pixel-bucket aggregation (sums equal
// raw sums in any window), summary rows and their sort, lookups, miss reasons, time
// labels, and one frame drawn on a recording 2D context (small and 100,000 calls).
import { describe, it, expect } from "vitest";
import {
  readTimeline, aggregate, bucketRow, laneRows, sortRows, callAt, spanAt, whatChanged, stepMiss,
  dispatchOf, deviceOf, callNumber, sortedFindings, persistentIn, FIELDS,
} from "../../widgets/timeline/model.js";
import { callTip, spanTip } from "../../widgets/timeline/details.js";
import { fmtUs, ticks, niceStep, tickLabel } from "../../widgets/timeline/time.js";
import { drawFrame, frameLayout, fitText } from "../../widgets/timeline/draw.js";
import { fixture } from "./helpers.js";
import { bigTimeline, recorder } from "./timeline-helpers.js";

const small = () => readTimeline(fixture("timeline-small"));
const sum = (a) => a.reduce((x, y) => x + y, 0);
const lanesOf = (tl) => tl.lanes.map((l) => l.pos);
/** Sum of one field over a row's buckets. */
const rowSum = (agg, field, r) => sum(Array.from(bucketRow(agg, field, r)));
const overlap = (s, e, a, b) => Math.max(0, Math.min(e, b) - Math.max(s, a));

/** Raw sums of lane `l` in window [a, b), computed call by call, span by span. */
function rawSums(tl, l, a, b) {
  const out = { trace: 0, lower: 0, compile: 0, exec: 0, device: 0, hits: 0, misses: 0, storm: 0 };
  const { calls, spans } = tl;
  for (let c = 0; c < calls.n; c++) {
    if (calls.lane[c] !== l) continue;
    out.exec += overlap(calls.start[c], calls.end[c], a, b);
    if (calls.ready[c] > calls.end[c]) out.device += overlap(calls.end[c], calls.ready[c], a, b);
    if (calls.start[c] >= a && calls.start[c] < b) {
      if (calls.hit[c]) out.hits++;
      else {
        out.misses++;
        out.storm += tl.storm[c];
      }
    }
  }
  for (let i = 0; i < spans.n; i++) {
    if (spans.lane[i] !== l) continue;
    const ph = ["trace", "lower", "compile"][spans.phase[i]];
    out[ph] += overlap(spans.start[i], spans.end[i], a, b);
    const c = spans.call[i];
    if (c >= 0) out.exec -= overlap(Math.max(spans.start[i], calls.start[c]), Math.min(spans.end[i], calls.end[c]), a, b);
  }
  return out;
}

function expectSums(tl, agg, a, b) {
  agg.lanes.forEach((l, r) => {
    const raw = rawSums(tl, l, a, b);
    for (const f of FIELDS) expect(rowSum(agg, f, r), `${f} lane ${l} [${a}, ${b})`).toBeCloseTo(raw[f], 6);
    for (const f of ["hits", "misses", "storm"]) expect(rowSum(agg, f, r), `${f} lane ${l}`).toBe(raw[f]);
  });
}

const PAL = new Proxy({ mono: "monospace", sans: "sans-serif" }, { get: (t, k) => t[k] ?? `c-${String(k)}` });
const count = (ctx, name) => ctx.calls.filter((c) => c[0] === name).length;

describe("reading a timeline document", () => {
  it("indexes lanes, calls and spans; totals match the document", () => {
    const tl = small();
    const doc = fixture("timeline-small");
    expect(tl.lanes.map((l) => l.name)).toEqual(doc.lanes.map((l) => l.name));
    expect(tl.calls.n).toBe(doc.calls.lane.length);
    expect(tl.totals.hits).toBe(sum(doc.lanes.map((l) => l.hits)));
    expect(tl.totals.misses).toBe(sum(doc.lanes.map((l) => l.misses)));
    expect(tl.totals.compiles).toBe(sum(doc.lanes.map((l) => l.compiles)));
    expect(tl.duration).toBe(doc.duration_us);
    const ev = tl.lanes.find((l) => l.origin === "events");
    expect(tl.perLane[ev.pos].calls.length).toBe(0);
    expect(tl.perLane[ev.pos].spans.length).toBe(3);
    for (const pl of tl.perLane) {
      for (let j = 1; j < pl.calls.length; j++) expect(tl.calls.start[pl.calls[j]]).toBeGreaterThanOrEqual(tl.calls.start[pl.calls[j - 1]]);
    }
    // ready: null reads NaN; the storm finding marks its calls
    expect(Number.isNaN(tl.calls.ready[doc.calls.ready.indexOf(null)])).toBe(true);
    const storm = doc.findings.find((f) => f.kind === "recompile_storm");
    expect(storm.calls.length).toBe(13);
    expect(sum(Array.from(tl.storm))).toBe(13);
  });

  it("reads empty and malformed documents as empty", () => {
    for (const d of [{}, { lanes: null, calls: 3, spans: "x" }, { lanes: [], calls: { lane: [] } }]) {
      const tl = readTimeline(d);
      expect(tl.lanes.length).toBe(0);
      expect(tl.calls.n).toBe(0);
      expect(laneRows(tl)).toEqual([]);
      expect(stepMiss(tl, -1, 1)).toBe(-1);
      const agg = aggregate(tl, [], 0, 100, 200);
      expect(agg.nb).toBe(200);
    }
  });

  it("sorts calls by start inside each lane even when the columns are not", () => {
    const doc = fixture("timeline-small");
    const c = doc.calls;
    const swap = (i, j) => { for (const k of ["lane", "start", "end", "hit", "ready", "sig", "miss", "site"]) [c[k][i], c[k][j]] = [c[k][j], c[k][i]]; };
    swap(1, 5);
    const tl = readTimeline(doc);
    const idx = tl.perLane[0].calls;
    for (let j = 1; j < idx.length; j++) expect(tl.calls.start[idx[j]]).toBeGreaterThan(tl.calls.start[idx[j - 1]]);
  });
});

describe("aggregation into pixel buckets", () => {
  it("bucket sums equal the raw sums over the whole capture", () => {
    const tl = small();
    for (const [w, px] of [[300, 1], [777, 2], [50, 1]]) {
      const agg = aggregate(tl, lanesOf(tl), 0, tl.duration, w, { bucketPx: px });
      expect(agg.nb).toBe(Math.ceil(w / px));
      expectSums(tl, agg, 0, tl.duration);
    }
    // whole capture: the document's lane totals
    const agg = aggregate(tl, lanesOf(tl), 0, tl.duration + 1, 400);
    tl.lanes.forEach((l, r) => {
      expect(rowSum(agg, "hits", r)).toBe(l.hits);
      expect(rowSum(agg, "misses", r)).toBe(l.misses);
      expect(rowSum(agg, "compile", r)).toBeCloseTo(l.compile_us, 6);
      expect(rowSum(agg, "trace", r)).toBeCloseTo(l.trace_us, 6);
      expect(rowSum(agg, "exec", r)).toBeCloseTo(l.dispatch_us, 6);
    });
  });

  it("bucket sums equal the raw sums in zoomed windows, and reused buffers start clean", () => {
    const tl = small();
    let reuse = null;
    let x = 12345;
    const rnd = () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (let k = 0; k < 40; k++) {
      const a = rnd() * tl.duration, b = a + 1 + rnd() * (tl.duration - a);
      const agg = aggregate(tl, lanesOf(tl), a, b, 100 + Math.floor(rnd() * 900), { reuse });
      expectSums(tl, agg, a, b);
      reuse = agg;
    }
  });

  it("a lane with only spans has phases and no calls; misses only drops the hits", () => {
    const tl = small();
    const ev = tl.lanes.find((l) => l.origin === "events").pos;
    const agg = aggregate(tl, [ev], 0, tl.duration, 500);
    expect(rowSum(agg, "exec", 0)).toBe(0);
    expect(rowSum(agg, "hits", 0) + rowSum(agg, "misses", 0)).toBe(0);
    expect(rowSum(agg, "compile", 0)).toBeCloseTo(700, 6);
    const m = aggregate(tl, lanesOf(tl), 0, tl.duration, 500, { missesOnly: true });
    tl.lanes.forEach((l, r) => {
      expect(rowSum(m, "hits", r)).toBe(0);
      expect(rowSum(m, "misses", r)).toBe(l.misses);
    });
  });

  it("100,000 calls: sums hold and a window costs only what it holds", () => {
    const tl = readTimeline(bigTimeline(100000));
    expect(tl.calls.n).toBe(100000);
    const agg = aggregate(tl, lanesOf(tl), 0, tl.duration, 1200);
    expect(sum(tl.lanes.map((_, r) => rowSum(agg, "hits", r) + rowSum(agg, "misses", r)))).toBe(100000);
    expectSums(tl, agg, 0, tl.duration);
    const a = tl.duration * 0.4, b = a + 3000;
    expectSums(tl, aggregate(tl, lanesOf(tl), a, b, 800), a, b);
  });
});

describe("summary rows", () => {
  it("counted over the whole capture from the columns, they equal the document's totals", () => {
    const tl = small();
    const whole = laneRows(tl, [0, tl.duration + 1]);
    const doc = laneRows(tl);
    for (const k of ["calls", "hits", "misses", "traces", "compiles", "trace_us", "lower_us", "compile_us", "dispatch_us", "device_us", "device_calls"]) {
      expect(whole.map((r) => r[k]), k).toEqual(doc.map((r) => r[k]));
    }
  });

  it("a range counts what starts in it", () => {
    const tl = small();
    const pad = tl.lanes.find((l) => l.name === "pad_and_run").pos;
    const idx = Array.from(tl.perLane[pad].calls);
    const r0 = tl.calls.start[idx[3]], r1 = tl.calls.start[idx[7]];
    const row = laneRows(tl, [r0, r1])[pad];
    expect(row.calls).toBe(4);
    expect(row.hits + row.misses).toBe(4);
    expect(row.compiles).toBe(row.misses); // each miss of pad_and_run compiled once
  });

  it("sort by any column, reversed, missing values last, ties in lane order", () => {
    const tl = small();
    const rows = laneRows(tl);
    expect(sortRows(rows, "misses", true).map((r) => r.misses)).toEqual(rows.map((r) => r.misses).sort((a, b) => b - a));
    expect(sortRows(rows, "misses", false).map((r) => r.misses)).toEqual(rows.map((r) => r.misses).sort((a, b) => a - b));
    const names = sortRows(rows, "name").map((r) => r.name);
    expect(names).toEqual(rows.map((r) => r.name).sort((a, b) => a.localeCompare(b)));
    expect(sortRows(rows, "name", true).map((r) => r.name)).toEqual(names.slice().reverse());
    for (const desc of [false, true]) {
      const dev = sortRows(rows, "device_us", desc);
      const nulls = dev.filter((r) => r.device_us == null);
      expect(nulls.length).toBeGreaterThan(0);
      expect(dev.slice(-nulls.length).every((r) => r.device_us == null)).toBe(true);
      expect(nulls.map((r) => r.lane)).toEqual(nulls.map((r) => r.lane).sort((a, b) => a - b));
    }
    // ties keep lane order: hits 0 for several lanes
    const zero = sortRows(rows, "hits").filter((r) => r.hits === 0).map((r) => r.lane);
    expect(zero).toEqual(zero.slice().sort((a, b) => a - b));
    expect(rows.map((r) => r.lane)).toEqual(tl.lanes.map((l) => l.pos)); // not sorted in place
  });
});

describe("lookups and reasons", () => {
  const tl = small();
  const step = tl.lanes.find((l) => l.name === "train_step").pos;
  const idx = Array.from(tl.perLane[step].calls);
  const { start, end } = tl.calls;

  it("finds the call under a time, nearest within the tolerance", () => {
    const c = idx[5];
    expect(callAt(tl, step, (start[c] + end[c]) / 2, 0)).toBe(c);
    expect(callAt(tl, step, end[c] + 2, 3)).toBe(c);
    expect(callAt(tl, step, end[c] + 2, 1)).toBe(-1);
    const gapMid = (end[c] + start[idx[6]]) / 2;
    const near = gapMid - end[c] <= start[idx[6]] - gapMid ? c : idx[6];
    expect(callAt(tl, step, gapMid, 1000)).toBe(near);
    expect(callAt(tl, step, tl.duration * 10, 5)).toBe(-1);
    // misses only: the hit under the pointer is not found, the miss is
    expect(callAt(tl, step, (start[c] + end[c]) / 2, 1e9, { missesOnly: true })).toBe(idx[0]);
    const ev = tl.lanes.find((l) => l.origin === "events").pos;
    const s = tl.perLane[ev].spans[2];
    expect(spanAt(tl, ev, (tl.spans.start[s] + tl.spans.end[s]) / 2, 1)).toBe(s);
    expect(spanAt(tl, ev, 0, 1)).toBe(-1);
  });

  it("says what changed: hits are the same signature, misses carry the document's reason", () => {
    expect(whatChanged(tl, idx[3])).toMatchObject({ hit: true, words: "cache hit, same signature" });
    const m = tl.misses.find((x) => x.kind === "static");
    const w = whatChanged(tl, m.call);
    expect(w).toMatchObject({ hit: false, kind: "static", words: m.words, fix: m.fix, jax: m.jax, from: "both" });
    expect(w.changes).toEqual([{ path: "n", kind: "static", before: "3", after: "4" }]);
    expect(callNumber(tl, m.call)).toBe(4);
    expect(callNumber(tl, idx[0])).toBe(1);
  });

  it("a miss shows JAX's guess as a hint beside the reason, never as it", () => {
    const doc = fixture("timeline-small");
    const k = doc.misses.findIndex((x) => x.kind === "static");
    const hint = "JAX suggests: seen another function defined on the same line; maybe <b>re-defined</b>?";
    const withHint = readTimeline({ ...doc, misses: doc.misses.map((x, i) => (i === k ? { ...x, hint } : x)) });
    const m = withHint.misses[k];
    expect(whatChanged(withHint, m.call)).toMatchObject({ words: m.words, hint });
    expect(callTip(withHint, m.call)).toContain(`${m.words}\n${hint}`);
    expect(whatChanged(tl, m.call).hint).toBe("");
    expect(callTip(tl, m.call)).not.toContain("JAX suggests");
  });

  it("dispatch and device time of a call leave out its compile phases", () => {
    const c = idx[0]; // the first call: trace + lower + compile inside
    const ph = 1500 + 700 + 5200;
    expect(dispatchOf(tl, c)).toBe(end[c] - start[c] - ph);
    expect(deviceOf(tl, c)).toBe(tl.calls.ready[c] - start[c] - ph);
    expect(deviceOf(tl, idx.find((k) => Number.isNaN(tl.calls.ready[k])))).toBe(null);
  });

  it("steps through misses in call order", () => {
    const all = [];
    for (let c = stepMiss(tl, -1, 1); c >= 0; c = stepMiss(tl, c, 1)) all.push(c);
    expect(all).toEqual(Array.from(tl.missCalls));
    expect(all.length).toBe(tl.totals.misses);
    expect(stepMiss(tl, -1, -1)).toBe(all[all.length - 1]);
    expect(stepMiss(tl, all[3], -1)).toBe(all[2]);
  });

  it("findings come severity first", () => {
    expect(sortedFindings(tl).map((f) => f.severity)).toEqual(["bug", "info"]);
  });
});

describe("time labels", () => {
  it("formats durations in µs, ms and s", () => {
    expect(fmtUs(750)).toBe("750 µs");
    expect(fmtUs(1250)).toBe("1.25 ms");
    expect(fmtUs(2500000)).toBe("2.5 s");
    expect(fmtUs(null)).toBe("—");
    expect(niceStep(37)).toBe(50);
    expect(niceStep(0.3)).toBe(1);
  });

  it("ticks are 1-2-5 steps with one unit and exact labels", () => {
    expect(ticks(0, 3000, 600, 100).map((t) => t.label)).toEqual(["0", "0.5 ms", "1.0 ms", "1.5 ms", "2.0 ms", "2.5 ms", "3.0 ms"]);
    expect(ticks(0, 400, 400, 100).map((t) => t.label)).toEqual(["0", "100 µs", "200 µs", "300 µs", "400 µs"]);
    expect(ticks(1e6, 3e6, 400, 100).map((t) => t.label)).toEqual(["1.0 s", "1.5 s", "2.0 s", "2.5 s", "3.0 s"]);
    expect(tickLabel(12e6, 2e6)).toBe("12 s");
    const tk = ticks(123456, 123556, 1000, 90);
    expect(tk.length).toBeGreaterThan(3);
    expect(new Set(tk.map((t) => t.label)).size).toBe(tk.length); // every label distinct
    expect(ticks(5, 5, 100)).toEqual([]);
  });
});

describe("drawing one frame", () => {
  const view = (tl, extra = {}) => ({ w: 1000, h: 600, dpr: 2, t0: 0, t1: tl.duration, rows: lanesOf(tl), focus: null, ...extra });
  const st = { selected: -1, brush: null, missesOnly: false };

  it("draws lane names as canvas text, ticks, bars per colour batch and storm misses in red", () => {
    const tl = small();
    const ctx = recorder();
    const out = drawFrame(ctx, tl, view(tl), st, PAL);
    const texts = ctx.calls.filter((c) => c[0] === "fillText").map((c) => c[1]);
    for (const l of tl.lanes) expect(texts.some((t) => t === l.name || (t.endsWith("…") && l.name.startsWith(t.slice(0, -1))))).toBe(true);
    expect(texts).toContain("0");
    expect(ctx.calls[0]).toEqual(["setTransform", 2, 0, 0, 2, 0, 0]); // HiDPI
    const fills = ctx.calls.filter((c) => c[0] === "set:fillStyle").map((c) => c[1]);
    for (const k of ["compile", "trace", "lower", "exec", "teal", "grad", "red"]) expect(fills, k).toContain(PAL[k]);
    // batched: far fewer fill() calls than rectangles
    expect(count(ctx, "fill")).toBeLessThan(20);
    expect(count(ctx, "rect")).toBeGreaterThan(count(ctx, "fill"));
    expect(out.agg.nb).toBe(frameLayout(1000, tl.lanes.length).plotW);
    // without the storm finding no miss is red
    const doc = fixture("timeline-small");
    doc.findings = doc.findings.filter((f) => f.kind !== "recompile_storm");
    const tl2 = readTimeline(doc);
    const ctx2 = recorder();
    drawFrame(ctx2, tl2, view(tl2), st, PAL);
    expect(ctx2.calls.filter((c) => c[0] === "set:fillStyle").map((c) => c[1])).not.toContain(PAL.red);
  });

  it("a long compile is one rectangle, the selection and brush are drawn, misses only draws no hit ticks", () => {
    const tl = small();
    const step = tl.lanes.find((l) => l.name === "train_step").pos;
    const sp = Array.from(tl.perLane[step].spans).find((i) => tl.spans.phase[i] === 2);
    const a = tl.spans.start[sp], b = tl.spans.end[sp];
    const ctx = recorder();
    drawFrame(ctx, tl, view(tl, { t0: a + 100, t1: b - 100, rows: [step] }), st, PAL);
    // exactly one compile rectangle: set fillStyle(compile), beginPath, rect, fill
    const i = ctx.calls.findIndex((c) => c[0] === "set:fillStyle" && c[1] === PAL.compile);
    const j = ctx.calls.findIndex((c, k) => k > i && c[0] === "fill");
    expect(ctx.calls.slice(i, j).filter((c) => c[0] === "rect").length).toBe(1);

    const c = tl.perLane[step].calls[0];
    const sel = recorder();
    drawFrame(sel, tl, view(tl), { ...st, selected: c, brush: [100, 2000] }, PAL);
    expect(sel.calls.filter((x) => x[0] === "set:strokeStyle" && x[1] === PAL.brand).length).toBeGreaterThanOrEqual(3);
    expect(count(sel, "strokeRect")).toBeGreaterThanOrEqual(3); // brush, selection, overview window

    const mo = recorder();
    drawFrame(mo, tl, view(tl), { ...st, missesOnly: true }, PAL);
    expect(mo.calls.filter((x) => x[0] === "set:fillStyle").map((x) => x[1])).not.toContain(PAL.teal);
  });

  it("100,000 calls: aggregation and drawing of a frame take a few ms, never a shape per call", () => {
    const tl = readTimeline(bigTimeline(100000));
    const cache = {};
    drawFrame(recorder(), tl, view(tl), st, PAL, cache); // warm up (JIT, overview)
    const times = [];
    let ctx;
    for (let k = 0; k < 5; k++) {
      ctx = recorder();
      const t = performance.now();
      drawFrame(ctx, tl, view(tl, { t0: k * 1000, t1: tl.duration - k * 1000 }), st, PAL, cache);
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    expect(times[2]).toBeLessThan(250); // generous: ~10 ms on a laptop
    const shapes = count(ctx, "rect") + count(ctx, "moveTo") + count(ctx, "fillText");
    expect(shapes).toBeLessThan(20000);
  });

  it("cuts names to fit", () => {
    const ctx = recorder();
    expect(fitText(ctx, "short", 100, 12)).toBe("short");
    const cut = fitText(ctx, "a".repeat(100), 70, 12);
    expect(cut.endsWith("…")).toBe(true);
    expect(cut.length * 7).toBeLessThanOrEqual(70);
  });
});

describe("persistent compilation cache outcomes", () => {
  const withEvents = (events) => {
    const doc = fixture("timeline-small");
    return readTimeline({ ...doc, cache: { ...doc.cache, events } });
  };

  it("finds the events of one lane inside a window, and words one or several", () => {
    const tl = withEvents([{ t: 100, lane: 0, kind: "miss" }, { t: 8600, lane: 5, kind: "hit" },
      { t: 8700, lane: 5, kind: "hit" }, { t: 9000, lane: 5, kind: "miss" }, { t: 8600, lane: 4, kind: "hit" }]);
    expect(persistentIn(tl, 0, 0, 8000)).toBe("miss");
    expect(persistentIn(tl, 0, 200, 8000)).toBe("");
    expect(persistentIn(tl, 5, 8584, 8650)).toMatch(/^hit: the executable was loaded/);
    expect(persistentIn(tl, 5, 8584, 9284)).toBe("2 hits, 1 miss");
    expect(persistentIn(tl, 1, 0, 1e9)).toBe("");
  });

  it("shows in the call tooltip and in the tooltip of the compile span it happened in", () => {
    const tl = withEvents([{ t: 100, lane: 0, kind: "miss" }, { t: 8600, lane: 5, kind: "hit" }]);
    expect(callTip(tl, 0)).toContain("persistent cache miss");
    const compileSpan = Array.from(tl.spans.lane).findIndex((l, i) => l === 5 && tl.spans.phase[i] === 2);
    expect(spanTip(tl, compileSpan)).toContain("persistent cache hit: the executable was loaded");
    const traceSpan = Array.from(tl.spans.lane).findIndex((l, i) => l === 5 && tl.spans.phase[i] === 0);
    expect(spanTip(tl, traceSpan)).not.toContain("persistent cache");
  });

  it("says nothing when the cache was off or events are malformed", () => {
    const doc = fixture("timeline-small");
    const off = readTimeline({ ...doc, cache: null });
    expect(persistentIn(off, 0, 0, 1e9)).toBe("");
    const bad = withEvents([null, { t: "x", lane: 0, kind: "hit" }, { t: 100, lane: 0, kind: "<b>" }]);
    expect(persistentIn(bad, 0, 0, 1e9)).toBe("");
  });
});
