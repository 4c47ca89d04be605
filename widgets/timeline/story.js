/**
 * The %%trace story for playback (widgets/ui/playback.js): what the cell did, step by step, in
 * the wall-clock order JAX reported it. Pure: no DOM.
 *
 * A step is one of
 * - CALL: one call of a jitted function, with its cache hit or miss, and for a miss the reason
 *   the document gives and the trace / lower / compile spans inside the call;
 * - HITS: a run of cache hits of one function with nothing else in between (a loop): after the
 *   run's first hit, which is a CALL step of its own, the rest are one step when there are at
 *   least HIT_RUN of them. A loop of 200 hits is otherwise 200 identical steps, 25 s at 8×,
 *   and a speaker would skip it anyway;
 * - EVENTS: what JAX compiled outside every recorded call between two calls (eager ops such as
 *   `jnp.ones`, a library's internal jit): their compile spans are in the document, so they
 *   appear when they happened instead of all at once.
 * Spans without a call that lie inside a recorded call's [start, end] belong to that call's step.
 *
 * Steps are columns (typed arrays), like the document's calls: a capture of 100,000 calls
 * makes up to 100,000 steps and labels are written only when asked for.
 */
import { fmtUs } from "./time.js";
import { PHASES, phasesOf, callNumber, whatChanged, signatureOf, errorOf, persistentIn } from "./model.js";

export const STEP = { CALL: 0, HITS: 1, EVENTS: 2 };
/** A run of hits after its first one becomes one step from this many calls on. */
export const HIT_RUN = 3;
/** Signature text in a label is cut here: a label is one line read from across a room. */
const SIG_CHARS = 64;
const DONE = { trace: "traced", lower: "lowered", compile: "compiled" };

import { plural } from "../ui/words.js";

/**
 * Indices 0..n-1 ordered by `start` (ties: index order), without sorting when already in order.
 * @param {number} n
 * @param {ArrayLike<number>} start
 * @param {(i: number) => boolean} [keep]  which indices to take (all by default)
 */
function byStart(n, start, keep = () => true) {
  const idx = [];
  let sorted = true;
  for (let i = 0; i < n; i++) {
    if (!keep(i)) continue;
    if (idx.length && start[i] < start[idx[idx.length - 1]]) sorted = false;
    idx.push(i);
  }
  if (!sorted) idx.sort((a, b) => start[a] - start[b] || a - b);
  return Int32Array.from(idx);
}

/** Last position j in `order` with start[order[j]] <= t, or -1. */
function lastAtOrBefore(order, start, t) {
  let lo = 0, hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (start[order[mid]] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/**
 * The steps of `tl` (readTimeline): `{n, kind, a, b, t0, t1, until, order, free}`.
 * - `kind[s]`: STEP.*; `a[s]`, `b[s]`: first and last position (inclusive) in `order` (calls
 *   in wall-clock order) for CALL and HITS, in `free` (spans outside every call) for EVENTS;
 * - `t0[s]`, `t1[s]`: when the step's first item started and its last one returned (µs);
 * - `until[s]`: when the next step starts (Infinity for the last): everything that started
 *   before it has happened once step s is taken.
 */
export function timelineStory(tl) {
  const { calls, spans } = tl;
  const L = tl.lanes.length;
  const order = byStart(calls.n, calls.start, (c) => calls.lane[c] >= 0 && calls.lane[c] < L);
  const inCall = (i) => {
    const j = lastAtOrBefore(order, calls.start, spans.start[i]);
    return j >= 0 && spans.start[i] < calls.end[order[j]];
  };
  const free = byStart(spans.n, spans.start, (i) => spans.call[i] < 0 && spans.lane[i] >= 0 && spans.lane[i] < L && !inCall(i));

  const cap = order.length + free.length; // at most one step per call or free span
  const kind = new Uint8Array(cap), a = new Int32Array(cap), b = new Int32Array(cap), t0 = new Float64Array(cap), t1 = new Float64Array(cap);
  let n = 0;
  const push = (k, x, y, s, e) => {
    kind[n] = k; a[n] = x; b[n] = y; t0[n] = s; t1[n++] = e;
  };
  const nextFree = (f) => (f < free.length ? spans.start[free[f]] : Infinity);
  const raised = new Uint8Array(calls.n);
  for (const key of Object.keys(calls.errors)) if (Number(key) >= 0 && Number(key) < calls.n) raised[Number(key)] = 1;
  const plainHit = (c) => calls.hit[c] === 1 && !raised[c];
  let i = 0, f = 0;
  while (i < order.length || f < free.length) {
    const c = i < order.length ? order[i] : -1;
    if (c < 0 || nextFree(f) < calls.start[c]) {
      // Compiles outside the calls until the next call: one step.
      const stop = c < 0 ? Infinity : calls.start[c];
      const f0 = f;
      let end = -Infinity;
      while (f < free.length && spans.start[free[f]] < stop) end = Math.max(end, spans.end[free[f++]]);
      push(STEP.EVENTS, f0, f - 1, spans.start[free[f0]], end);
      continue;
    }
    push(STEP.CALL, i, i, calls.start[c], calls.end[c]);
    i++;
    if (!plainHit(c)) continue;
    // A run of plain hits of the same function that nothing else interrupts.
    let j = i;
    while (j < order.length && plainHit(order[j]) && calls.lane[order[j]] === calls.lane[c] && calls.start[order[j]] < nextFree(f)) j++;
    if (j - i >= HIT_RUN) {
      push(STEP.HITS, i, j - 1, calls.start[order[i]], calls.end[order[j - 1]]);
      i = j;
    }
  }
  const until = new Float64Array(n);
  for (let s = 0; s < n; s++) until[s] = s + 1 < n ? t0[s + 1] : Infinity;
  return { n, order, free, until, kind: kind.slice(0, n), a: a.slice(0, n), b: b.slice(0, n), t0: t0.slice(0, n), t1: t1.slice(0, n) };
}

/** Calls of step `s` (CALL and HITS), in order. */
export function stepCalls(story, s) {
  if (story.kind[s] === STEP.EVENTS) return [];
  return Array.from(story.order.subarray(story.a[s], story.b[s] + 1));
}

/** Spans of an EVENTS step `s` (indices into tl.spans). */
export const stepSpans = (story, s) => (story.kind[s] === STEP.EVENTS ? Array.from(story.free.subarray(story.a[s], story.b[s] + 1)) : []);

/**
 * What step `s` marks on the drawing: `[{lane, t0, t1}]`, one extent per lane it touched
 * (a call, a run of hits, the compiles of one or more lanes outside the calls).
 */
export function stepMarks(tl, story, s) {
  if (story.kind[s] !== STEP.EVENTS) {
    const first = story.order[story.a[s]], last = story.order[story.b[s]];
    return [{ lane: tl.calls.lane[first], t0: tl.calls.start[first], t1: tl.effEnd[last] }];
  }
  const by = new Map();
  for (const i of stepSpans(story, s)) {
    const l = tl.spans.lane[i], m = by.get(l);
    if (m) {
      m.t0 = Math.min(m.t0, tl.spans.start[i]);
      m.t1 = Math.max(m.t1, tl.spans.end[i]);
    } else by.set(l, { lane: l, t0: tl.spans.start[i], t1: tl.spans.end[i] });
  }
  return [...by.values()];
}

/** `f(x: f32[4], n=3)` from a recorded signature, `f` without one; cut to SIG_CHARS. */
export function callee(tl, c) {
  const name = (tl.lanes[tl.calls.lane[c]] || {}).name || "?";
  const sig = signatureOf(tl, c);
  const args = sig && Array.isArray(sig.args) ? sig.args.filter((x) => x && typeof x === "object") : null;
  if (!args) return sig && sig.text ? `${name}(${cut(String(sig.text), SIG_CHARS)})` : name;
  const parts = args.map((x) => {
    const path = String(x.path ?? ""), aval = String(x.aval ?? "?");
    return !path ? aval : x.static ? `${path}=${aval}` : `${path}: ${aval}`;
  });
  return `${name}(${cut(parts.join(", "), SIG_CHARS)})`;
}

function cut(s, n) {
  return s.length <= n ? s : s.slice(0, n - 1) + "…";
}

/**
 * Why call `c` missed, short: the document's leading change with "from A to B" written
 * "A → B" ("x changed shape f32[3] → f32[4]"), and how many other changes it lists.
 */
export function missReason(tl, c) {
  const why = whatChanged(tl, c);
  if (why.kind === "first") return "first call, nothing compiled for it yet";
  let main = String(why.words).split("; ")[0];
  const ch = why.changes[0];
  if (ch && ch.before != null && ch.after != null) {
    const tail = ` from ${ch.before} to ${ch.after}`;
    if (main.endsWith(tail)) main = `${main.slice(0, -tail.length)} ${ch.before} → ${ch.after}`;
  }
  const more = why.changes.length - 1;
  return more > 0 ? `${main} (+${plural(more, "other change")})` : main;
}

/** "traced 2.1 ms, lowered 6.7 ms, compiled 29 ms" for phase times `ph` ({trace, lower, compile} µs). */
export function phaseText(ph) {
  return PHASES.filter((p) => ph[p] > 0).map((p) => `${DONE[p]} ${fmtUs(ph[p])}`).join(", ");
}

/** Label of one call: `call 3 of 4 · f(x: f32[4]) · miss: x changed shape f32[3] → f32[4] · traced …`. */
function callLabel(tl, c) {
  const { calls } = tl;
  const lane = tl.lanes[calls.lane[c]] || {};
  const parts = [`call ${callNumber(tl, c)} of ${lane.calls ?? "?"}`, callee(tl, c)];
  if (calls.hit[c]) parts.push("cache hit", fmtUs(calls.end[c] - calls.start[c]));
  else {
    parts.push(`miss: ${missReason(tl, c)}`);
    const timing = phaseText(phasesOf(tl, c));
    const disk = persistentIn(tl, calls.lane[c], calls.start[c], calls.end[c]);
    parts.push((timing || `took ${fmtUs(calls.end[c] - calls.start[c])}`) + (disk.startsWith("hit") ? " (executable loaded from the persistent cache)" : ""));
  }
  const err = errorOf(tl, c);
  if (err) parts.push(`raised ${cut(err, 80)}`);
  return parts.join(" · ");
}

/** The line playback shows after step `p` (1-based; 0: the start). */
export function stepLabel(tl, story, p) {
  if (p <= 0) {
    const fns = tl.lanes.filter((l) => l.origin === "call").length;
    return `start of the cell · nothing traced or compiled yet · ${plural(tl.calls.n, "call")} of ${plural(fns, "function")} to replay`;
  }
  const s = Math.min(p, story.n) - 1;
  if (story.kind[s] === STEP.CALL) return callLabel(tl, story.order[story.a[s]]);
  if (story.kind[s] === STEP.HITS) {
    const cs = stepCalls(story, s);
    const lane = tl.lanes[tl.calls.lane[cs[0]]] || {};
    const first = callNumber(tl, cs[0]);
    let total = 0;
    for (const c of cs) total += tl.calls.end[c] - tl.calls.start[c];
    return `calls ${first}–${first + cs.length - 1} of ${lane.calls ?? "?"} · ${lane.name} · ${cs.length} cache hits in a row · ` +
      `${fmtUs(total / cs.length)} each on average`;
  }
  const names = [], ph = { trace: 0, lower: 0, compile: 0 };
  for (const i of stepSpans(story, s)) {
    const name = (tl.lanes[tl.spans.lane[i]] || {}).name || "?";
    if (!names.includes(name)) names.push(name);
    ph[PHASES[tl.spans.phase[i]]] += tl.spans.end[i] - tl.spans.start[i];
  }
  const shown = names.slice(0, 3).join(", ") + (names.length > 3 ? ` and ${names.length - 3} more` : "");
  return `outside your calls · JAX compiled ${shown} (eager ops or a library's jit) · ${phaseText(ph)}`;
}

/**
 * The state after `p` steps (0 ≤ p < n; position n is the ordinary view):
 * `{now, until, marks, call}`: what has returned by `now` is drawn, the rest faded;
 * `until` bounds the counters (everything starting before it); `marks` are the step's
 * extents; `call` the call whose details to show (-1: none; the last of a run).
 */
export function stepState(tl, story, p) {
  if (p <= 0) return { now: story.n ? story.t0[0] : 0, until: story.n ? story.t0[0] : 0, marks: [], call: -1, lane: null };
  const s = p - 1;
  const marks = stepMarks(tl, story, s);
  const call = story.kind[s] === STEP.EVENTS ? -1 : story.order[story.b[s]];
  return { now: story.t1[s], until: story.until[s], marks, call, lane: marks.length ? marks[0].lane : null };
}
