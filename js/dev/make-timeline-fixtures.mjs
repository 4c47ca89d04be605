/**
 * Writes js/test/fixtures/timeline-small.json: a hand-made `kind: "timeline"` document
 * (docs/schema.md) shaped like what `%%trace` records, with every case the view must
 * handle: a recompile storm of 12 shape changes, a static-argument miss, a lambda
 * redefined on every call, plain cache hits, a lane seen only through compile events
 * (spans, no calls), two findings, a call that raised (the `errors` map), and hostile
 * strings (`<img src=x onerror=alert(1)>`) in names, signatures, source and reasons.
 *
 * Lane totals are computed from the columns with the schema's definitions (dispatch =
 * duration minus the call's phases; device = ready − start minus them), so tests can
 * check the front end's range sums against them.
 *
 * (js/test/fixtures/timeline-real.json, a real capture of a small cell, is recorded by
 * dev/timeline_fixtures.py.)
 *
 *   node dev/make-timeline-fixtures.mjs [OUT_DIR]    (run by ./dev fixtures: tools/make_fixtures.py)
 */
import { writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const EVIL = "<img src=x onerror=alert(1)>";
const out = resolve(process.argv[2] || resolve(dirname(fileURLToPath(import.meta.url)), "../test/fixtures"), "timeline-small.json");
const FILE = "/home/user/notebook.ipynb#cell3";

class Timeline {
  constructor() {
    this.lanes = [];
    this.calls = { lane: [], start: [], end: [], hit: [], ready: [], sig: [], miss: [], site: [], errors: {} };
    this.spans = { lane: [], call: [], phase: [], start: [], end: [] };
    this.misses = [];
    this.signatures = [];
    this.sites = [];
    this.t = 40;
  }
  lane(name, origin = "call", source = null) {
    this.lanes.push({ id: `f${this.lanes.length}`, name, origin, source });
    return this.lanes.length - 1;
  }
  sig(text, args) {
    let i = this.signatures.findIndex((s) => s.text === text);
    if (i < 0) i = this.signatures.push({ text, args }) - 1;
    return i;
  }
  site(line, code, file = FILE) {
    let i = this.sites.findIndex((s) => s.file === file && s.line === line);
    if (i < 0) i = this.sites.push({ file, line, col: 0, func: null, code }) - 1;
    return i;
  }
  /** Phases in order starting at `t`; returns the end. */
  phases(lane, call, t, durations) {
    for (const [phase, d] of Object.entries(durations)) {
      if (!d) continue;
      this.spans.lane.push(lane);
      this.spans.call.push(call);
      this.spans.phase.push(phase);
      this.spans.start.push(t);
      this.spans.end.push(t + d);
      t += d;
    }
    return t;
  }
  /**
   * One call after `gap` µs: its phases (a miss), `exec` µs of dispatch, outputs ready
   * `device` µs after it returned (null: not measured), the miss reason, signature, site.
   */
  call(lane, { gap = 30, phases = null, exec = 12, device = null, miss = null, sig = -1, site = -1, error = null } = {}) {
    const c = this.calls.lane.length;
    const start = this.t + gap;
    const end = this.phases(lane, c, start + 4, phases || {}) + exec;
    const C = this.calls;
    C.lane.push(lane);
    C.start.push(start);
    C.end.push(end);
    C.hit.push(miss ? 0 : 1);
    C.ready.push(device == null ? null : end + device);
    C.sig.push(sig);
    C.site.push(site);
    C.miss.push(miss ? this.misses.push({ call: c, changes: [], fix: null, jax: null, from: "diff", hint: null, ...miss }) - 1 : -1);
    if (error) C.errors[String(c)] = error;
    this.t = end;
    return c;
  }
  /** Compile events outside any recorded call (a library's internal jit). */
  events(lane, durations, gap = 50) {
    this.t = this.phases(lane, -1, this.t + gap, durations);
  }
  /** Lane totals from the columns, as the schema defines them. */
  totals() {
    const C = this.calls, S = this.spans;
    for (const [i, l] of this.lanes.entries()) {
      Object.assign(l, { calls: 0, hits: 0, misses: 0, traces: 0, compiles: 0, trace_us: 0, lower_us: 0, compile_us: 0,
        dispatch_us: 0, device_us: null, device_calls: 0 });
      C.lane.forEach((li, c) => {
        if (li !== i) return;
        let ph = 0;
        S.call.forEach((sc, s) => { if (sc === c) ph += S.end[s] - S.start[s]; });
        l.calls++;
        if (C.hit[c]) l.hits++;
        else l.misses++;
        l.dispatch_us += C.end[c] - C.start[c] - ph;
        if (C.ready[c] != null) {
          l.device_us = (l.device_us || 0) + C.ready[c] - C.start[c] - ph;
          l.device_calls++;
        }
      });
      S.lane.forEach((li, s) => {
        if (li !== i) return;
        l[`${S.phase[s]}_us`] += S.end[s] - S.start[s];
        if (S.phase[s] === "trace") l.traces++;
        if (S.phase[s] === "compile") l.compiles++;
      });
    }
  }
}

const tl = new Timeline();
const src = (line, func, code) => ({ file: FILE, line, col: 0, func, code });
const arg = (path, aval, extra = {}) => ({ path, aval, weak: false, static: false, sharding: null, ...extra });
const COMPILE = { trace: 900, lower: 400, compile: 2600 };

// Lanes, in the order a cell would first call them.
const step = tl.lane("train_step", "call", src(3, "train_step", "def train_step(params, x):"));
const pad = tl.lane("pad_and_run", "call", src(12, "pad_and_run", "def pad_and_run(x):"));
const scale = tl.lane("scale", "call", src(20, "scale", "def scale(x, n):"));
const lam = tl.lane("<lambda>", "call", src(31, null, "    y = jax.jit(lambda v: v * 2)(x)"));
const evil = tl.lane(EVIL, "call", { file: EVIL, line: 40, col: 0, func: EVIL, code: EVIL });
const cos = tl.lane("jit(cos)", "events", null);

// train_step: compiled once, then cache hits, outputs ready a little after each return.
const sStep = tl.sig("f32[64,64], f32[32,64]", [arg("params", "f32[64,64]"), arg("x", "f32[32,64]")]);
const siteStep = tl.site(50, "    params = train_step(params, x)");
tl.call(step, { phases: { trace: 1500, lower: 700, compile: 5200 }, exec: 40, device: 60, sig: sStep, site: siteStep,
  miss: { kind: "first", words: "first call of train_step: traced and compiled", from: "diff" } });
for (let i = 0; i < 20; i++) tl.call(step, { gap: 20, exec: 15 + (i % 4), device: i % 3 ? 80 : null, sig: i < 8 ? sStep : -1, site: siteStep });

// jit(cos): an eager op compiled between calls, seen only through JAX's events.
tl.events(cos, { trace: 120, lower: 90, compile: 700 });

// pad_and_run: a recompile storm: 12 shape changes (first call, then 12 new lengths; repeats hit).
const sitePad = tl.site(58, "    out = pad_and_run(batch[:n])");
const lengths = [8, 9, 10, 9, 11, 12, 13, 8, 14, 15, 16, 17, 18, 19, 20];
const seen = new Set();
let prev = null;
for (const n of lengths) {
  const sig = tl.sig(`f32[${n},128]`, [arg("x", `f32[${n},128]`)]);
  if (seen.has(n)) tl.call(pad, { exec: 20, sig, site: sitePad, device: 30 });
  else {
    const miss = prev == null
      ? { kind: "first", words: "first call of pad_and_run: traced and compiled", from: "diff" }
      : {
        kind: "shape", words: `x changed shape from (${prev}, 128) to (${n}, 128)`,
        changes: [{ path: "x", kind: "shape", before: `f32[${prev},128]`, after: `f32[${n},128]` }],
        fix: "pad or bucket inputs to a few fixed shapes",
        jax: `TRACING CACHE MISS at ${FILE}:58 because:\n  for pad_and_run defined at ${FILE}:12\n  never seen input type signature:\n    x: f32[${n},128]\n  closest seen input type signature has 1 mismatches, including:\n    * at x, seen f32[${prev},128], but now given f32[${n},128]`,
        from: "both",
      };
    tl.call(pad, { phases: COMPILE, exec: 25, sig, site: sitePad, device: 30, miss });
  }
  seen.add(n);
  prev = n;
}

// scale: a static argument changes value once.
const siteScale = tl.site(64, "    z = scale(x, n=k)");
const s3 = tl.sig("f32[16], n=3", [arg("x", "f32[16]"), arg("n", "3", { static: true })]);
const s4 = tl.sig("f32[16], n=4", [arg("x", "f32[16]"), arg("n", "4", { static: true })]);
tl.call(scale, { phases: COMPILE, sig: s3, site: siteScale, miss: { kind: "first", words: "first call of scale: traced and compiled" } });
tl.call(scale, { sig: s3, site: siteScale });
tl.call(scale, { sig: s3, site: siteScale });
tl.call(scale, {
  phases: COMPILE, sig: s4, site: siteScale,
  miss: {
    kind: "static", words: "static argument n changed value from 3 to 4",
    changes: [{ path: "n", kind: "static", before: "3", after: "4" }],
    fix: "make the changing argument a traced one, or use few distinct static values",
    jax: "TRACING CACHE MISS at notebook.ipynb:64 because:\n  never seen passing static argument n=4\n  closest seen static args: n=3",
    from: "both",
  },
});
tl.call(scale, { sig: s4, site: siteScale });

// <lambda>: a new function object on every call: every call misses.
const siteLam = tl.site(31, "    y = jax.jit(lambda v: v * 2)(x)");
const sLam = tl.sig("f32[16]", [arg("v", "f32[16]")]);
for (let i = 0; i < 5; i++) {
  tl.call(lam, {
    phases: { trace: 300, lower: 150, compile: 900 }, sig: sLam, site: siteLam,
    miss: i === 0
      ? { kind: "first", words: "first call of <lambda>: traced and compiled" }
      : { kind: "new_function", words: "a new function object: the lambda is made anew on every call", fix: "define and jit the function once, outside the loop", from: "diff" },
  });
}

// Hostile strings everywhere a document carries text; the call raised.
const sEvil = tl.sig(EVIL, [arg(EVIL, EVIL, { sharding: EVIL })]);
const siteEvil = tl.site(66, EVIL, EVIL);
tl.call(evil, {
  phases: { trace: 200 }, exec: 0, sig: sEvil, site: siteEvil, error: `${EVIL}Error: ${EVIL}`,
  miss: { kind: "first", words: EVIL, changes: [{ path: EVIL, kind: EVIL, before: EVIL, after: EVIL }], fix: EVIL, jax: EVIL, from: "jax" },
});

tl.totals();
const C = tl.calls;
const missCallsOf = (lane) => C.lane.map((l, c) => (l === lane && !C.hit[c] ? c : -1)).filter((c) => c >= 0);
const doc = {
  schema: "jaxmagic", version: 1, kind: "timeline",
  title: `%%trace — ${C.lane.length} calls of 5 jitted functions`,
  caption: [],
  notes: ["hit/miss per call comes from jax.monitoring events", EVIL],
  error: { type: "ValueError", message: EVIL, file: FILE, line: 66, code: EVIL },
  duration_us: tl.t + 120,
  lanes: tl.lanes, calls: tl.calls, spans: tl.spans, misses: tl.misses,
  signatures: tl.signatures, sites: tl.sites,
  findings: [
    { kind: "compile_dominates", severity: "info", function: "scale", call: null, lane: scale, calls: missCallsOf(scale).slice(0, 1), source: tl.lanes[scale].source,
      message: "scale spent 7.8 ms compiling and 0.06 ms running: compiling dominates." },
    { kind: "recompile_storm", severity: "bug", function: "pad_and_run", call: null, lane: pad, calls: missCallsOf(pad), source: tl.lanes[pad].source,
      message: `pad_and_run was compiled ${missCallsOf(pad).length} times in this cell (12 × shape): pad or bucket inputs to a few fixed shapes.` },
  ],
  cache: { enabled: true, hits: 1, misses: 2, saved_us: 2400, events: [{ t: 100, lane: step, kind: "miss" }] },
  options: { sync: false, storm: 5 },
};
writeFileSync(out, JSON.stringify(doc, null, 1) + "\n");
console.log(`wrote ${out}: ${C.lane.length} calls, ${tl.spans.lane.length} spans, ${tl.misses.length} misses`);
