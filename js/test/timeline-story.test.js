// @vitest-environment jsdom
// Playback of the timeline view (widgets/timeline/story.js, playback.js): the steps of a real
// %%trace capture (fixtures/timeline-real.json, recorded by dev/timeline_fixtures.py) in
// wall-clock order, their labels against what JAX answered, the counters so far, the mounted
// view stepping and coming back to its ordinary state, and the time of one step.
import { describe, it, expect } from "vitest";
import { fixture } from "./helpers.js";
import { useMounting, click } from "./mounting.js";
import { bigTimeline, useRecordingCanvas } from "./timeline-helpers.js";
import { readTimeline, laneRows } from "../../widgets/timeline/model.js";
import { timelineStory, stepLabel, stepState, stepCalls, stepSpans, STEP, HIT_RUN, missReason } from "../../widgets/timeline/story.js";
import { timelinePlayback } from "../../widgets/timeline/playback.js";
import { rowsSoFar } from "../../widgets/timeline/sofar.js";

useRecordingCanvas();
const render = useMounting();

const real = () => fixture("timeline-real");
const story = (doc) => {
  const tl = readTimeline(doc);
  return { tl, st: timelineStory(tl) };
};
const callsInSteps = (st) => Array.from({ length: st.n }, (_, s) => stepCalls(st, s)).flat();

describe("the story of a real capture", () => {
  it("replays every call once, in the order the calls were made, with JAX's hit or miss", () => {
    const doc = real();
    const { tl, st } = story(doc);
    const n = doc.calls.lane.length;
    expect(callsInSteps(st)).toEqual([...Array(n).keys()]); // calls are stored in call order
    for (let s = 1; s < st.n; s++) expect(st.t0[s]).toBeGreaterThanOrEqual(st.t1[s - 1]); // wall clock
    for (let s = 0; s < st.n; s++) {
      if (st.kind[s] !== STEP.CALL) continue;
      const c = stepCalls(st, s)[0], label = stepLabel(tl, st, s + 1);
      expect(label.startsWith("call ")).toBe(true);
      expect(label.includes(" · cache hit · ")).toBe(doc.calls.hit[c] === 1);
      expect(label.includes(" · miss: ")).toBe(doc.calls.hit[c] === 0);
    }
    // JAX compiled once per distinct (function, signature): f32[3], f32[4], i32[3] of f; n=2, n=3 of g.
    const missLabels = Array.from({ length: st.n }, (_, s) => stepLabel(tl, st, s + 1)).filter((l) => l.includes(" · miss: "));
    const distinct = new Set(doc.calls.sig.map((s, c) => (s >= 0 ? `${doc.calls.lane[c]}/${doc.signatures[s].text}` : null)).filter(Boolean));
    expect(missLabels.length).toBe(distinct.size);
    expect(missLabels.length).toBe(5);
    expect(missLabels[1]).toMatch(/^call 3 of 11 · \S*f\(x: f32\[4\]\) · miss: x changed shape f32\[3\] → f32\[4\] · traced [\d.]+ [µm]s, lowered .*, compiled /);
    expect(missLabels[2]).toMatch(/miss: x changed dtype f32\[3\] → i32\[3\]/);
    expect(missLabels[4]).toMatch(/g\(x: f32\[4\], n=3\) · miss: static argument n changed 2 → 3/);
    expect(missLabels[0]).toMatch(/miss: first call/);
  });

  it("a loop of hits is the first hit, then one step for the rest", () => {
    const doc = real();
    const { tl, st } = story(doc);
    const runs = [...Array(st.n).keys()].filter((s) => st.kind[s] === STEP.HITS);
    expect(runs.length).toBe(1);
    const cs = stepCalls(st, runs[0]);
    expect(cs.length).toBeGreaterThanOrEqual(HIT_RUN);
    expect(cs.every((c) => doc.calls.hit[c] === 1 && doc.calls.lane[c] === doc.calls.lane[cs[0]])).toBe(true);
    expect(st.kind[runs[0] - 1]).toBe(STEP.CALL); // the run's first hit is a step of its own
    expect(doc.calls.hit[stepCalls(st, runs[0] - 1)[0]]).toBe(1);
    expect(stepLabel(tl, st, runs[0] + 1)).toMatch(new RegExp(`^calls 7–11 of 11 · \\S*f · ${cs.length} cache hits in a row · `));
    // Two hits after a first one stay single steps (the hand-made fixture's scale: hit, hit).
    const small = story(fixture("timeline-small"));
    const labels = Array.from({ length: small.st.n }, (_, s) => stepLabel(small.tl, small.st, s + 1));
    expect(labels.filter((l) => / · scale\(/.test(l) && l.includes("cache hit")).length).toBe(3);
    expect(labels).toContain("calls 3–21 of 21 · train_step · 19 cache hits in a row · 20.6 µs each on average");
  });

  it("compiles outside the calls are steps of their own, between the calls they happened between", () => {
    const doc = real();
    const { tl, st } = story(doc);
    const events = [...Array(st.n).keys()].filter((s) => st.kind[s] === STEP.EVENTS);
    const spans = events.flatMap((s) => stepSpans(st, s));
    const outside = doc.spans.call.map((c, i) => (c < 0 ? i : -1)).filter((i) => i >= 0 &&
      !doc.calls.start.some((s, c) => doc.spans.start[i] >= s && doc.spans.start[i] < doc.calls.end[c]));
    expect(spans.sort((a, b) => a - b)).toEqual(outside);
    expect(outside.length).toBeGreaterThan(0);
    for (const s of events) {
      const label = stepLabel(tl, st, s + 1);
      expect(label).toMatch(/^outside your calls · JAX compiled /);
      for (const i of stepSpans(st, s)) expect(label).toContain(doc.lanes[doc.spans.lane[i]].name);
    }
    expect(st.kind[0]).toBe(STEP.EVENTS); // jnp.ones(3) is compiled before f is first called
  });

  it("the counters so far grow step by step and end at the document's own totals", () => {
    const doc = real();
    const { tl, st } = story(doc);
    let before = 0;
    for (let p = 0; p < st.n; p++) {
      const s = stepState(tl, st, p);
      const rows = laneRows(tl, [-Infinity, s.until]);
      const calls = rows.reduce((a, r) => a + r.calls, 0);
      expect(calls).toBe(Array.from({ length: p }, (_, k) => stepCalls(st, k).length).reduce((a, b) => a + b, 0));
      expect(calls).toBeGreaterThanOrEqual(before);
      before = calls;
    }
    const end = laneRows(tl, [-Infinity, Infinity]);
    for (const [l, lane] of doc.lanes.entries()) {
      for (const key of ["calls", "hits", "misses", "compiles", "traces"]) expect(end[l][key], `${lane.name} ${key}`).toBe(lane[key]);
    }
  });

  it("the counters so far from running sums equal a count over the calls, at every time", () => {
    for (const doc of [real(), fixture("timeline-small"), bigTimeline(3000, { missEvery: 40 })]) {
      const tl = readTimeline(doc);
      const times = [-1, 0, ...Array.from({ length: 60 }, (_, i) => Math.round(((i + 0.5) / 60) * tl.duration)), ...tl.calls.start.slice(0, 30), tl.duration + 1, Infinity];
      for (const t of times) expect(rowsSoFar(tl, t)).toEqual(laneRows(tl, [-Infinity, t]));
    }
  });

  it("the why of a miss is the document's leading change, 'from A to B' written 'A → B'", () => {
    const { tl } = story(real());
    const c = tl.misses.find((m) => m.kind === "shape").call;
    expect(missReason(tl, c)).toBe("x changed shape f32[3] → f32[4]");
    const hostile = story(fixture("timeline-small"));
    const evil = hostile.tl.calls.n - 1;
    expect(missReason(hostile.tl, evil)).toBe("first call, nothing compiled for it yet");
  });

  it("position 0 has nothing happened; every step's state names the step's call", () => {
    const { tl, st } = story(real());
    const s0 = stepState(tl, st, 0);
    expect(laneRows(tl, [-Infinity, s0.until]).every((r) => r.calls === 0 && r.compiles === 0)).toBe(true);
    expect(stepLabel(tl, st, 0)).toMatch(/^start of the cell · nothing traced or compiled yet · 14 calls of 2 functions/);
    for (let p = 1; p < st.n; p++) {
      const s = stepState(tl, st, p), k = p - 1;
      if (st.kind[k] === STEP.EVENTS) expect(s.call).toBe(-1);
      else expect(s.call).toBe(stepCalls(st, k).at(-1));
      expect(s.now).toBe(st.t1[k]);
      expect(s.marks.length).toBeGreaterThan(0);
    }
  });
});

describe("playback in the mounted view", () => {
  const ctl = (el) => ({
    count: () => el.querySelector(".jm-pb-count").textContent,
    label: () => el.querySelector(".jm-pb-label").textContent,
    btn: (c) => el.querySelector(`.jm-pb-${c}`),
  });
  const key = (el, k) => el.querySelector(".jm-root").dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true }));
  const snapshot = (el) => ({
    table: el.querySelector(".jm-tl-table").outerHTML,
    caption: el.querySelector(".jm-tl-caption").textContent,
    details: el.querySelector(".jm-tl-details").outerHTML,
    playback: el.querySelector(".jm-tl-canvas").jmProbe.playback(),
    window: el.querySelector(".jm-tl-canvas").jmProbe.window(),
  });
  const row = (el, name, doc) => el.querySelector(`.jm-tl-table tr[data-lane="${doc.lanes.findIndex((l) => l.name.endsWith(name))}"]`);

  it("steps from the start to the end; the table counts so far; the end is the view it started from", () => {
    const doc = real();
    const el = render(doc);
    const c = ctl(el);
    const { st } = story(doc);
    expect(c.count()).toBe(`${st.n} / ${st.n}`);
    const before = snapshot(el);
    c.btn("first").click();
    expect(c.count()).toBe(`0 / ${st.n}`);
    expect(el.querySelectorAll(".jm-tl-table tr.jm-pb-future").length).toBe(doc.lanes.length); // nothing happened yet
    expect(el.querySelector(".jm-tl-caption").textContent).toMatch(/^So far/);
    const f = ".f";
    for (let p = 1; p <= 3; p++) c.btn("fwd").click();
    // Steps: eager compiles, f miss, f hit: f has 2 calls, 1 hit, 1 miss, 1 compile so far.
    const cells = [...row(el, f, doc).children].map((td) => td.textContent);
    expect(cells.slice(1, 5)).toEqual(["2", "1", "1", "1"]);
    expect(row(el, f, doc).classList.contains("jm-pb-current")).toBe(true);
    expect(row(el, ".g", doc).classList.contains("jm-pb-future")).toBe(true);
    expect(c.label()).toMatch(/^call 2 of 11 · \S*f\(x: f32\[3\]\) · cache hit/);
    expect(el.querySelector(".jm-tl-details").textContent).toContain("call 2 of 11");
    const pbState = el.querySelector(".jm-tl-canvas").jmProbe.playback();
    expect(pbState.marks[0].t0).toBe(doc.calls.start[1]);
    c.btn("back").click();
    expect(el.querySelector(".jm-tl-details").textContent).toContain("Why it missed");
    c.btn("last").click();
    expect(c.count()).toBe(`${st.n} / ${st.n}`);
    expect(snapshot(el)).toEqual(before);
  });

  it("space, arrows, Home and End drive playback; a and d pan; the axis never moves while stepping", () => {
    const el = render(real());
    const c = ctl(el);
    const probe = el.querySelector(".jm-tl-canvas").jmProbe;
    const w0 = probe.window();
    key(el, "Home");
    expect(c.count()).toMatch(/^0 \//);
    key(el, "ArrowRight");
    key(el, "ArrowRight");
    expect(c.count()).toMatch(/^2 \//);
    key(el, "ArrowLeft");
    expect(c.count()).toMatch(/^1 \//);
    expect(probe.window()).toEqual(w0);
    key(el, "d");
    expect(probe.window().t0).toBeGreaterThan(w0.t0);
    key(el, "f");
    key(el, " ");
    expect(el.querySelector(".jm-root").classList.contains("jm-playing")).toBe(true);
    key(el, " ");
    expect(el.querySelector(".jm-root").classList.contains("jm-playing")).toBe(false);
    key(el, "End");
    expect(probe.playback()).toBeNull();
  });

  it("a click during playback selects the call; the end gives back that selection's view", () => {
    const doc = real();
    const el = render(doc);
    const c = ctl(el);
    c.btn("first").click();
    click(el.querySelector('.jm-tl-table tr[data-lane="1"] td'));
    c.btn("fwd").click();
    c.btn("last").click();
    expect(el.querySelector(".jm-tl-focus").getAttribute("data-lane")).toBe("1");
    expect(el.querySelector(".jm-tl-details").textContent).toContain("Totals");
  });

  it("a forward step sweeps the present over the step; reduced motion shows it at once", async () => {
    const doc = real();
    const tl = readTimeline(doc);
    const calls = [];
    const plot = { setPlayback: (s) => calls.push(["set", s && s.now]), sweep: (s, from, ms) => calls.push(["sweep", from, s.now, ms]) };
    let motion = true;
    const { spec, story: st } = timelinePlayback(tl, { plot, onStep: () => {}, animate: () => motion });
    spec.show(2, 1);
    expect(calls.at(-1)).toEqual(["sweep", st.t1[0], st.t1[1], expect.any(Number)]);
    spec.show(1, 2); // back: at once
    expect(calls.at(-1)).toEqual(["set", st.t1[0]]);
    motion = false;
    spec.show(2, 1);
    expect(calls.at(-1)).toEqual(["set", st.t1[1]]);
    spec.show(st.n, st.n - 1); // the end is the ordinary view
    expect(calls.at(-1)).toEqual(["set", null]);
  });

  it("one step of 5,000 and 100,000 calls: state, counters and label without the DOM (printed, not asserted)", () => {
    for (const n of [5000, 100000]) {
      const tl = readTimeline(bigTimeline(n, { missEvery: 50 }));
      let t = performance.now();
      const drawn = [];
      const { spec } = timelinePlayback(tl, { plot: { setPlayback: (s) => drawn.push(s), sweep: () => {} }, onStep: () => {}, animate: () => false });
      const build = performance.now() - t;
      spec.show(1, 0); // the running sums are built on the first step
      const times = [];
      for (let i = 1; i <= 200; i++) {
        const p = Math.round((i / 201) * spec.steps);
        t = performance.now();
        spec.show(p, 0);
        spec.label(p);
        times.push(performance.now() - t);
      }
      expect(drawn.at(-1).counts.reduce((a, r) => a + r.calls, 0)).toBeGreaterThan(0);
      times.sort((a, b) => a - b);
      console.log(`[timeline playback] ${n} calls, ${spec.steps} steps: story ${build.toFixed(0)} ms; one step ${times[100].toFixed(3)} ms median, ${times[190].toFixed(3)} ms p95 (state, counters, label)`);
    }
  }, 60_000);
});
