/**
 * Test helpers of the timeline view: a big document built in memory (never
 * committed) and a recording 2D context (jsdom and node have no canvas).
 */
import { beforeAll, afterAll } from "vitest";

/** A 2D context that records calls: [name, ...args] and ["set:prop", value]. */
export function recorder() {
  const calls = [];
  return new Proxy({ calls }, {
    get(t, k) {
      if (k in t) return t[k];
      if (k === "measureText") return (s) => ({ width: String(s).length * 7 });
      return (...args) => calls.push([k, ...args]);
    },
    set(t, k, v) {
      calls.push(["set:" + String(k), v]);
      return true;
    },
  });
}

/**
 * A big timeline document: `n` calls over three
 * jitted functions, a miss with trace/lower/compile spans every `missEvery` calls
 * (those of lane 1 inside a recompile-storm finding), readiness known for every
 * other call, and one lane seen only through compile events.
 */
export function bigTimeline(n = 100000, { missEvery = 1000 } = {}) {
  const calls = { lane: [], start: [], end: [], hit: [], ready: [], sig: [], miss: [], site: [], errors: {} };
  const spans = { lane: [], call: [], phase: [], start: [], end: [] };
  const misses = [];
  const storm = [];
  let t = 10;
  for (let c = 0; c < n; c++) {
    const lane = c % 3;
    const start = t + 3;
    let end = start + 4 + (c % 7);
    const miss = c % missEvery === lane;
    if (miss) {
      let s = start + 2;
      for (const [phase, d] of [["trace", 300], ["lower", 120], ["compile", 900]]) {
        spans.lane.push(lane);
        spans.call.push(c);
        spans.phase.push(phase);
        spans.start.push(s);
        spans.end.push(s + d);
        s += d;
      }
      end = s + 5;
      calls.miss.push(misses.length);
      misses.push({ call: c, kind: c < 3 ? "first" : "shape", changes: [{ path: "x", kind: "shape", before: "f32[8]", after: "f32[9]" }],
        words: "x changed shape", fix: "pad inputs", jax: null, from: "diff" });
      if (lane === 1) storm.push(c);
    } else calls.miss.push(-1);
    calls.lane.push(lane);
    calls.start.push(start);
    calls.end.push(end);
    calls.hit.push(miss ? 0 : 1);
    calls.ready.push(c % 2 ? end + 6 : null);
    calls.sig.push(c < 96 ? 0 : -1);
    calls.site.push(0);
    t = end;
  }
  for (let k = 0; k < 4; k++) {
    spans.lane.push(3);
    spans.call.push(-1);
    spans.phase.push("compile");
    spans.start.push(Math.round((t * (k + 1)) / 5));
    spans.end.push(Math.round((t * (k + 1)) / 5) + 500);
  }
  const lanes = ["step", "pad", "eval", "jit(cos)"].map((name, i) => {
    const idx = calls.lane.map((l, c) => (l === i ? c : -1)).filter((c) => c >= 0);
    const m = idx.filter((c) => !calls.hit[c]).length;
    return { id: `f${i}`, name, origin: i === 3 ? "events" : "call", source: null, calls: idx.length, hits: idx.length - m,
      misses: m, traces: i === 3 ? 0 : m, compiles: i === 3 ? 4 : m, trace_us: 300 * m, lower_us: 120 * m,
      compile_us: 900 * m + (i === 3 ? 2000 : 0), dispatch_us: 0, device_us: null, device_calls: 0 };
  });
  return {
    schema: "jaxmagic", version: 1, kind: "timeline", title: `%%trace — ${n} calls`, notes: [], error: null,
    duration_us: t + 10, lanes, calls, spans, misses,
    signatures: [{ text: "f32[8]", args: [{ path: "x", aval: "f32[8]", weak: false, static: false, sharding: null }] }],
    sites: [{ file: "cell.py", line: 3, col: 0, func: null, code: "f(x)" }],
    findings: [{ kind: "recompile_storm", severity: "bug", message: "pad was compiled many times", lane: 1, calls: storm, source: null }],
    cache: { enabled: false, hits: 0, misses: 0, saved_us: null, events: [] }, options: { sync: false, storm: 5 },
  };
}

/**
 * jsdom has no canvas: for the tests of one file, every canvas draws on a recording context
 * (`recorder()`), restored afterwards. Call at the top level of a test file.
 */
export function useRecordingCanvas() {
  let real;
  beforeAll(() => {
    real = HTMLCanvasElement.prototype.getContext;
    HTMLCanvasElement.prototype.getContext = function () {
      return (this.__ctx ||= recorder());
    };
  });
  afterAll(() => {
    HTMLCanvasElement.prototype.getContext = real;
  });
}
